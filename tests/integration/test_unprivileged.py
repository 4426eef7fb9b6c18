"""fnbox run by an unprivileged user (unprivileged user namespaces): the call still works, the code runs as
the caller's own uid outside (never root), and without a writable cgroup the rlimit fallback is used. The same
for `fnbox serve`'s sessions, their files and kernels; without access to /dev/fuse, mounts are refused."""
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from fnboxlib import FNBOX, check_sanitizers, require_binary
from servelib import TOKEN, Server, Session, ok

NOBODY = 65534
# Sleeps so that the test can look at the call's processes from the host while it runs.
CODE = ("import os, time\n"
        "def f():\n"
        "    time.sleep(2)\n"
        "    return os.getuid()\n")


def descendants(root):
    """Host view of root's process tree: [(pid, comm, real uid)] of every descendant."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            try:
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
            except OSError:
                continue
            out.append((pid, fields["Name"].strip(), int(fields["Uid"].split()[0])))
            todo.append(pid)
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_call_as_unprivileged_user():
    require_binary()
    assert shutil.which("setpriv"), "setpriv (util-linux: scripts/install-deps.sh) not installed"
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        exe = os.path.join(d, "fnbox")
        shutil.copy(FNBOX, exe)
        os.chmod(exe, 0o755)
        req = json.dumps({"language": "python", "code": CODE}).encode()
        fin = tempfile.TemporaryFile()
        fin.write(req)
        fin.seek(0)
        p = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", exe, "call"],
                             stdin=fin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d)
        fin.close()
        seen = {}
        deadline = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < deadline:
            for pid, name, uid in descendants(p.pid):
                seen[pid] = (name, uid)
            time.sleep(0.05)
        out, err = p.communicate(timeout=60)
    check_sanitizers(err.decode(errors="replace"))
    assert p.returncode == 0, (p.returncode, out, err)
    res = json.loads(out)
    assert res["status"] == "success", res
    assert res["result"] == 1000  # the sandbox's own uid
    # From the host, every process of the call (fnbox, the sandbox's init, the interpreter) runs as the
    # caller's uid, never root: the sandbox's uid 1000 maps to the caller's own uid.
    assert any(name.startswith("python") for name, _ in seen.values()), seen
    assert {uid for _, uid in seen.values()} == {NOBODY}, seen


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_mount_without_dev_fuse_access_fails_closed():
    """Host mounts are served over FUSE; a user who cannot open /dev/fuse gets a clear refusal (exit 3),
    never a call that runs without the mount's rules."""
    require_binary()
    assert shutil.which("setpriv"), "setpriv (util-linux: scripts/install-deps.sh) not installed"
    if os.stat("/dev/fuse").st_mode & 0o006 == 0o006:
        pytest.skip("/dev/fuse is world read-write here: any user may mount")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        exe = os.path.join(d, "fnbox")
        shutil.copy(FNBOX, exe)
        os.chmod(exe, 0o755)
        data = os.path.join(d, "data")
        os.mkdir(data)
        os.chmod(data, 0o755)
        req = json.dumps({"language": "python", "code": "def f():\n    return 1\n",
                          "mount": {"dirs": {"/data": data}}}).encode()
        p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", exe, "call"],
                           input=req, capture_output=True, timeout=60, cwd=d)
    check_sanitizers(p.stderr.decode(errors="replace"))
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    res = json.loads(p.stdout)
    assert res["status"] == "error" and res["error"]["type"] == "KernelFeatureMissing", res
    assert "/dev/fuse" in res["error"]["message"]


@pytest.fixture
def nobody_fnbox():
    """A copy of fnbox any user can run, and a launcher that runs it as nobody (from /: our working directory
    may be closed to nobody): the Server helper starts the launcher, which execs fnbox in the same process.
    Not under tmp_path: pytest's base temp directory is root's alone."""
    require_binary()
    assert shutil.which("setpriv"), "setpriv (util-linux: scripts/install-deps.sh) not installed"
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        yield _nobody_launcher(Path(d))


def _nobody_launcher(d):
    exe = d / "fnbox"
    shutil.copy(FNBOX, exe)
    os.chmod(exe, 0o755)
    launcher = d / "fnbox-as-nobody"
    launcher.write_text("#!/bin/sh\ncd / && exec setpriv --reuid=%d --regid=%d --clear-groups %s \"$@\"\n"
                        % (NOBODY, NOBODY, exe))
    os.chmod(launcher, 0o755)
    tokens = d / "tokens"
    tokens.write_text(TOKEN + "\n")
    os.chown(tokens, NOBODY, NOBODY)
    os.chmod(tokens, 0o600)
    return str(launcher), str(tokens)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_sessions_as_unprivileged_user(nobody_fnbox):
    """Issue 29: a server started by an ordinary user answered every POST /v1/sessions with 503
    `open /proc/N/root: Permission denied` (the session's init is non-dumpable, and only CAP_SYS_PTRACE
    reaches a non-dumpable process's root). A session, its commands, files and kernels work for any user;
    the memory limit falls back to RLIMIT_DATA without a writable cgroup, as `fnbox doctor` says."""
    launcher, tokens = nobody_fnbox
    with Server("--token-file", tokens, exe=launcher) as srv:
        s = Session(srv, {"limits": {"memoryBytes": 64 << 20}})
        res = s.cmd("echo hi > made.txt; id -u")
        assert res["status"] == "success" and res["stdout"] == "1000\n", res
        # From the host, the session's processes run as the server's own user, never root.
        seen = {uid for _, _, uid in descendants(srv.proc.pid)}
        assert seen == {NOBODY}, seen
        assert s.put("sub/up.txt", "from the host").status == 204
        r = s.get("made.txt")
        assert r.status == 200 and r.body == b"hi\n", r
        assert ok(s.cmd("cat sub/up.txt")) == "from the host"
        r = s.ls(".")
        assert r.status == 200, r
        assert {"made.txt", "sub"} <= {e["name"] for e in r.json()}, r
        assert s.rm("made.txt").status == 204
        assert s.get("made.txt").status == 404
        assert s.kernel("x = 40")["status"] == "success"
        res = s.kernel("x + 2")
        assert res["status"] == "success" and res["result"] == 42, res
        res = s.kernel("let y = 6", "javascript")
        assert res["status"] == "success", res
        assert s.kernel("y * 7", "javascript")["result"] == 42
        res = s.code("print(open('sub/up.txt').read())", "python")
        assert res["status"] == "success" and res["stdout"] == "from the host\n", res
        # No cgroup: 64 MiB is RLIMIT_DATA, and 256 MiB cannot be had.
        res = s.cmd("python3 -c 'bytearray(256 << 20)'")
        assert res["exitCode"] != 0 and "MemoryError" in res["stderr"], res
        assert s.close().status == 204


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_session_mount_without_dev_fuse_access_is_refused_clearly(nobody_fnbox):
    """A session with a host mount needs FUSE: a user who cannot open /dev/fuse gets KernelFeatureMissing
    naming it and `fnbox doctor` (as a call does), never a session that runs without the mount's rules."""
    if os.stat("/dev/fuse").st_mode & 0o006 == 0o006:
        pytest.skip("/dev/fuse is world read-write here: any user may mount")
    launcher, tokens = nobody_fnbox
    data = Path(launcher).parent / "data"
    data.mkdir()
    os.chmod(data, 0o755)
    with Server("--token-file", tokens, exe=launcher) as srv:
        r = srv.request("POST", "/v1/sessions", body={"mount": {"dirs": {"/data": str(data)}}}, token=TOKEN)
        assert r.status == 503, r
        err = r.json()["error"]
        assert err["type"] == "KernelFeatureMissing" and "/dev/fuse" in err["message"], err
        assert "fnbox doctor" in err["message"], err
        s = Session(srv)  # and sessions without a mount are unaffected
        assert ok(s.cmd("echo still")) == "still\n"
        assert s.close().status == 204
