"""fnbox run by an unprivileged user (unprivileged user namespaces): the call still works, the code runs as
the caller's own uid outside (never root), and without a writable cgroup the rlimit fallback is used."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from fnboxlib import FNBOX, check_sanitizers, require_binary

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
