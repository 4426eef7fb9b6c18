"""Defence: the sandbox's root is a fresh tmpfs with only system dirs bind-mounted (pivot_root + mount
namespace). Host files outside those dirs — a canary in the host's /tmp, in the repository, in the
caller's cwd — cannot be read by absolute path, by ../ traversal, or through /proc/*/root."""
import json
import os
import secrets
import tempfile

import pytest

from fnboxlib import REPO, call, describe, ok, per_path_probe, req

READER = per_path_probe("with open(p, 'rb') as fh:\n"
                        "    out[p] = 'READ:' + fh.read().decode('latin-1')\n",
                        "out[p] = 'READ:' + fs.readFileSync(p, 'latin1');")


@pytest.fixture
def canaries():
    """Canary files with random content in the host's /tmp and in the repository; removed afterwards."""
    secret = "CANARY-" + secrets.token_hex(16)
    paths = []
    fd, tmp_path = tempfile.mkstemp(prefix="fnbox-canary-", dir="/tmp")
    os.write(fd, secret.encode())
    os.close(fd)
    paths.append(tmp_path)
    repo_path = str(REPO / f".fnbox-canary-{secrets.token_hex(6)}")
    with open(repo_path, "w") as f:
        f.write(secret)
    paths.append(repo_path)
    try:
        for p in paths:  # sanity: the host itself can read them, so a failure to read inside means something
            with open(p) as f:
                assert f.read() == secret
        yield secret, paths
    finally:
        for p in paths:
            os.unlink(p)


def test_canary_unreadable(lang, canaries):
    secret, paths = canaries
    attempts = list(paths)
    for p in paths:
        attempts.append("/workspace/../../../../.." + p)    # traversal from the workspace
        attempts.append("/proc/1/root" + p)                 # through the sandbox's pid 1 root
        attempts.append("/proc/self/root" + p)
        attempts.append("/proc/self/cwd/../../.." + p)
    res = call(req(lang, READER[lang], "f", [attempts]))
    got = ok(res)
    read = {p: v for p, v in got.items() if not v.startswith("DENIED:")}
    assert not read, f"host files readable from the sandbox: {json.dumps(read)[:800]}"
    assert secret not in res.raw and secret not in res.stderr


def test_host_home_and_repo_absent(lang, canaries):
    """The repository and the caller's home are not mounted: listing them fails or shows nothing of ours."""
    code = {
        "python": ("import os\ndef f(dirs):\n    out = {}\n    for d in dirs:\n"
                   "        try:\n            out[d] = sorted(os.listdir(d))\n"
                   "        except Exception as e:\n            out[d] = None\n    return out\n"),
        "javascript": ("const fs = require('fs');\nfunction f(dirs) {\n  const out = {};\n"
                       "  for (const d of dirs) {\n    try { out[d] = fs.readdirSync(d).sort(); }\n"
                       "    catch (e) { out[d] = null; }\n  }\n  return out;\n}\n"),
    }[lang]
    repo = str(REPO)
    got = ok(call(req(lang, code, "f", [[repo, os.path.expanduser("~"), "/tmp"]])))
    assert got[repo] is None or "Makefile" not in got[repo], describe(got)
    host_tmp = set(os.listdir("/tmp"))  # holds at least the canary
    leaked = set(got["/tmp"] or []) & host_tmp
    assert not leaked, f"the sandbox's /tmp shows the host's /tmp entries: {sorted(leaked)[:10]}"
