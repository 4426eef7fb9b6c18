"""fnbox run by an unprivileged user (unprivileged user namespaces): the call still works, the code runs as
the caller's own uid outside (never root), and without a writable cgroup the rlimit fallback is used."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from fnboxlib import FNBOX, check_sanitizers, require_binary

NOBODY = 65534
CODE = ("import os\n"
        "def f():\n"
        "    return [os.getuid(), open('/proc/self/uid_map').read().split()]\n")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_call_as_unprivileged_user():
    require_binary()
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not installed")
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        exe = os.path.join(d, "fnbox")
        shutil.copy(FNBOX, exe)
        os.chmod(exe, 0o755)
        req = json.dumps({"language": "python", "code": CODE}).encode()
        p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", exe, "call"],
                           input=req, capture_output=True, timeout=60, cwd=d)
    check_sanitizers(p.stderr.decode(errors="replace"))
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    res = json.loads(p.stdout)
    assert res["status"] == "success", res
    uid_inside, (inner, outer, count) = res["result"]
    assert uid_inside == 1000
    assert (inner, outer, count) == ("1000", str(NOBODY), "1"), "inner uid must map to the caller's own uid"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
def test_mount_without_dev_fuse_access_fails_closed():
    """Host mounts are served over FUSE; a user who cannot open /dev/fuse gets a clear refusal (exit 3),
    never a call that runs without the mount's rules."""
    require_binary()
    if not shutil.which("setpriv"):
        pytest.skip("setpriv (util-linux) not installed")
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
