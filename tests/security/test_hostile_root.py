"""Defence: an environment's root is untrusted content (src/sandbox/rootfs.c, spec.sysroot; issue 30).

The test builds a hostile root: the trixie test root (scripts/build-root.sh) copied as hard links, with
  - a planted setuid-root shell (a copy of its dash, mode 4755) and a setgid one;
  - device nodes: a block device of the host's root disk (mode 0666) in /usr and as /etc/ld.so.cache (an
    entry fnbox copies into the sandbox's /etc), and a /dev/mem-like character device;
  - absolute symlinks to host paths: /etc/ssl -> a host directory holding an openssl.cnf with a marker (the
    sandbox's /etc takes ssl/openssl.cnf), /etc/python3 -> another (debian_config), /usr/lib/hostetc -> /etc
    and /etc/mime.types -> /etc/shadow.
What must hold:
  - nothing of the host comes in through the symlinks: fnbox opens every path of the root with
    openat2(RESOLVE_IN_ROOT), so /etc/ssl -> /host/dir is <root>/host/dir while it builds; inside, an absolute
    link resolves in the sandbox's own root. test_symlinks_resolve_inside_when_not_defended runs the
    defence-switch build with FNBOX_DISABLE_DEFENCES=sysroot-resolve (the links followed as the host
    would) and sees the marker come in: the check above would then fail.
  - no setuid/setgid bit takes effect: every mount of the root is nosuid (checked in mountinfo), the program
    has no_new_privs, and the owner (host root) has no mapping in the sandbox's user namespace. Any one
    stops it; the test checks the outcome (ids unchanged, no capability) and each layer's presence.
  - device nodes open nothing: the root's mounts are nodev (mountinfo), and fnbox copies only regular files
    into /etc (the block device planted as ld.so.cache is not read; a fifo planted as
    python3.13/sitecustomize.py, which fnbox copies, would otherwise block the set-up)."""
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from fnboxlib import describe, env_exec, environment, test_root

MARKER = "fnbox-hostile-root-marker-7d1c"


def _hardlink_copy(src, dst):
    """The root as hard links (fast, no space); planted entries replace names, never touch shared inodes."""
    if subprocess.run(["cp", "-al", src, dst], capture_output=True).returncode != 0:
        shutil.rmtree(dst, ignore_errors=True)
        subprocess.run(["cp", "-a", src, dst], check=True)


def _replace(path):
    if os.path.islink(path) or os.path.isfile(path) or stat.S_ISBLK(os.lstat(path).st_mode if os.path.lexists(path) else 0):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("planting a setuid-root file and device nodes needs root")
    base = tmp_path_factory.mktemp("hostile")
    for d in (base.parent.parent, base.parent, base):  # the sandbox's outer uid (nobody) walks to the root
        os.chmod(d, 0o755)
    root = str(base / "root")
    _hardlink_copy(test_root("trixie"), root)
    # host directories the root's symlinks point at: not under /tmp, where the sandbox's root is assembled
    # (its tmpfs would hide them from an undefended build too)
    host = Path(tempfile.mkdtemp(prefix="fnbox-hostile-", dir="/var/tmp"))
    os.chmod(host, 0o755)
    (host / "ssl").mkdir(parents=True)
    (host / "ssl" / "openssl.cnf").write_text(MARKER + "\n")
    (host / "py").mkdir()
    (host / "py" / "debian_config").write_text(MARKER + "\n")
    for d in (host, host / "ssl", host / "py"):
        os.chmod(d, 0o755)
    for f in (host / "ssl" / "openssl.cnf", host / "py" / "debian_config"):
        os.chmod(f, 0o644)
    etc = os.path.join(root, "etc")
    for name, target in (("ssl", str(host / "ssl")), ("python3", str(host / "py")), ("mime.types", "/etc/shadow")):
        p = os.path.join(etc, name)
        if os.path.lexists(p):
            _replace(p)
        os.symlink(target, p)
    os.symlink("/etc", os.path.join(root, "usr", "lib", "hostetc"))
    # setuid/setgid shells: new files (a copy), never the shared inode
    hb = os.path.join(root, "usr", "local", "bin")
    os.makedirs(hb, exist_ok=True)
    for name, mode in (("suid-sh", 0o4755), ("sgid-sh", 0o2755)):
        p = os.path.join(hb, name)
        shutil.copyfile(os.path.join(root, "usr", "bin", "dash"), p)
        os.chown(p, 0, 0)
        os.chmod(p, mode)
    # device nodes: the host's root disk (world-readable) and /dev/mem's numbers
    dev = os.stat("/").st_dev
    share = os.path.join(root, "usr", "share", "hostile")
    os.makedirs(share, exist_ok=True)
    os.mknod(os.path.join(share, "disk"), 0o666 | stat.S_IFBLK, dev)
    os.mknod(os.path.join(share, "mem"), 0o666 | stat.S_IFCHR, os.makedev(1, 1))
    cache = os.path.join(etc, "ld.so.cache")
    if os.path.lexists(cache):
        os.unlink(cache)
    os.mknod(cache, 0o666 | stat.S_IFBLK, dev)
    # a fifo where fnbox copies a file: opened for reading it would block the sandbox's set-up for good
    pydir = os.path.join(etc, "python3.13")
    os.makedirs(pydir, exist_ok=True)
    site = os.path.join(pydir, "sitecustomize.py")
    if os.path.lexists(site):
        os.unlink(site)
    os.mkfifo(site, 0o666)
    yield {"root": root, "host": str(host)}
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(host, ignore_errors=True)


PROBE = r'''
import errno, json, os
out = {}
def attempt(name, fn):
    try:
        out[name] = fn()
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e.errno))
def read(p, n=4096):
    with open(p, "rb") as f:
        return f.read(n).decode("latin-1")
attempt("ssl", lambda: read("/etc/ssl/openssl.cnf"))
attempt("python3", lambda: read("/etc/python3/debian_config"))
attempt("mime", lambda: read("/etc/mime.types"))
attempt("hostetc shadow", lambda: read("/usr/lib/hostetc/shadow"))
attempt("ld.so.cache", lambda: read("/etc/ld.so.cache", 64))
attempt("disk", lambda: read("/usr/share/hostile/disk", 64))
attempt("mem", lambda: read("/usr/share/hostile/mem", 64))
attempt("fifo", lambda: read("/etc/python3.13/sitecustomize.py", 64))
out["status"] = {l.split(":")[0]: l.split(":", 1)[1].split() for l in open("/proc/self/status")
                 if l.startswith(("Uid", "Gid", "CapEff", "NoNewPrivs"))}
out["mounts"] = {}
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if f[4] in ("/usr", "/etc/alternatives", "/etc/php"):
        out["mounts"][f[4]] = f[5] + "," + line.split(" - ")[1].split()[2]
print(json.dumps(out))
'''

SETID = ('for s in /usr/local/bin/suid-sh /usr/local/bin/sgid-sh; do '
         '$s -p -c "grep -E \'^(Uid|Gid|CapEff)\' /proc/self/status"; done')


def _probe(hostile_root, exe=None):
    res = env_exec({"language": "python", "code": PROBE}, environment("hostile", root=hostile_root), exe=exe)
    assert res.result["exitCode"] == 0, describe(res)
    import json
    out = json.loads(res.result["stdout"])
    print(out)
    return out


def test_symlinks_never_lead_to_the_host(hostile):
    out = _probe(hostile["root"])
    for key in ("ssl", "python3", "mime", "hostetc shadow"):
        assert MARKER not in str(out[key]), f"{key}: a host file came in through the root's symlink: {out}"
        assert out[key] in ("ENOENT",), f"{key}: {out[key]!r}"


def test_device_nodes_open_nothing(hostile):
    out = _probe(hostile["root"])
    assert out["ld.so.cache"] == "ENOENT", f"the block device planted as /etc/ld.so.cache was read: {out}"
    assert out["fifo"] == "ENOENT", out
    assert out["disk"] in ("EACCES", "EPERM"), out
    assert out["mem"] in ("EACCES", "EPERM"), out
    for mnt, opts in out["mounts"].items():
        assert "nodev" in opts.split(","), f"{mnt} is not nodev: {opts}"
    assert "/usr" in out["mounts"], out


def test_setid_bits_take_no_effect(hostile):
    res = env_exec({"command": SETID}, environment("hostile", root=hostile["root"]))
    assert res.result["exitCode"] == 0, describe(res)
    lines = res.result["stdout"].splitlines()
    assert len(lines) == 6, describe(res)
    for line in lines:
        key, *ids = line.split()
        if key == "CapEff:":
            assert int(ids[0], 16) == 0, line
        else:
            assert set(ids) == {"1000"}, f"a planted set-id shell changed ids: {line}"
    out = _probe(hostile["root"])
    assert out["status"]["NoNewPrivs"] == ["1"], out
    for mnt, opts in out["mounts"].items():
        assert "nosuid" in opts.split(","), f"{mnt} is not nosuid: {opts}"


def test_symlinks_resolve_inside_when_not_defended(hostile):
    """The check above can fail: with the root's symlinks followed as the host's (defence-switch build,
    FNBOX_DISABLE_DEFENCES=sysroot-resolve), the marker behind /etc/ssl and /etc/python3 comes in."""
    from fnboxlib import weak_fnbox
    exe = weak_fnbox()
    os.environ["FNBOX_DISABLE_DEFENCES"] = "sysroot-resolve"
    try:
        out = _probe(hostile["root"], exe=exe)
    finally:
        del os.environ["FNBOX_DISABLE_DEFENCES"]
    assert MARKER in str(out["ssl"]) and MARKER in str(out["python3"]), out
