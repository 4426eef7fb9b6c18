"""Absolute virtual paths anywhere (issue 11, item 5): as in the seed, request `files` may sit at any absolute
path, and a function may create directories and files at any absolute path that is not a system directory.
They live in the sandbox's own size-limited root tmpfs: reported in `files` like /tmp's, never synced, never
on the host. System directories stay read-only."""
import os
import secrets
import shutil
import tempfile

import pytest

from fnboxlib import call, describe, ok, req

CREATE = {
    "python": ("import os\n"
               "def f(d, name, text):\n"
               "    os.makedirs(d, exist_ok=True)\n"
               "    with open(os.path.join(d, name), 'w') as fh:\n"
               "        fh.write(text)\n"
               "    return open('/custom/path/file.txt').read()\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f(d, name, text) {\n"
                   "  fs.mkdirSync(d, { recursive: true });\n"
                   "  fs.writeFileSync(d + '/' + name, text);\n"
                   "  return fs.readFileSync('/custom/path/file.txt', 'utf8');\n}\n"),
    "ruby": ("require 'fileutils'\n"
             "def f(d, name, text)\n"
             "  FileUtils.mkdir_p(d)\n"
             "  File.write(File.join(d, name), text)\n"
             "  File.read('/custom/path/file.txt')\n"
             "end\n"),
    "php": ("function f($d, $name, $text) {\n"
            "  if (!is_dir($d)) mkdir($d, 0777, true);\n"
            "  file_put_contents($d . '/' . $name, $text);\n"
            "  return file_get_contents('/custom/path/file.txt');\n"
            "}\n"),
}


def test_files_and_creations_at_any_absolute_path(lang):
    tok = "fnbox-abs-" + secrets.token_hex(6)
    d = f"/{tok}/nested"
    res = call(req(lang, CREATE[lang], "f", [d, "x.txt", "hello"],
                   files={"/custom/path/file.txt": "seed"}))
    assert ok(res) == "seed"
    files = res.result["files"]
    created = {c["path"]: c for c in files["created"]}
    assert created[f"{d}/x.txt"]["content"] == "hello", describe(files)
    assert created[f"/{tok}"]["type"] == "directory", describe(files)
    # the request's own file is where the function started, not a change it made
    assert "/custom/path/file.txt" not in created and not files["modified"] and not files["deleted"], describe(files)
    assert not os.path.lexists(f"/{tok}"), "a scratch-root file reached the host"


def test_path_sharing_a_prefix_with_a_mount_never_reaches_the_host():
    """/database next to a /data mount with batch sync: only /data's changes go to the host."""
    host = tempfile.mkdtemp(prefix="fnbox-scratch-")
    try:
        code = ("import os\n"
                "def f():\n"
                "    os.makedirs('/database', exist_ok=True)\n"
                "    open('/database/x.txt', 'w').write('scratch')\n"
                "    open('/data/y.txt', 'w').write('synced')\n"
                "    return sorted(os.listdir('/database'))\n")
        res = call(req("python", code, "f", [], mount={
            "dirs": {"/data": host},
            "permissions": {"default": {"read": True, "list": True, "create": True, "modify": True}},
            "sync": {"mode": "batch"}}))
        assert ok(res) == ["x.txt"]
        created = {c["path"] for c in res.result["files"]["created"]}
        assert {"/database", "/database/x.txt", "/data/y.txt"} <= created, describe(res.result["files"])
        assert sorted(os.listdir(host)) == ["y.txt"], os.listdir(host)
        assert not os.path.lexists(os.path.join(os.path.dirname(host), "database"))
        assert not os.path.lexists("/database/x.txt")
        assert res.result["sync"]["synced"] == ["/data/y.txt"], describe(res.result["sync"])
    finally:
        shutil.rmtree(host, ignore_errors=True)


def test_system_directories_stay_read_only():
    code = ("import errno, os\n"
            "def f(paths):\n"
            "    out = {}\n"
            "    for p in paths:\n"
            "        try:\n"
            "            open(p, 'w').write('x')\n"
            "            out[p] = 'WROTE'\n"
            "        except OSError as e:\n"
            "            out[p] = errno.errorcode[e.errno]\n"
            "    return out\n")
    paths = ["/usr/x", "/usr/bin/x", "/etc/passwd", "/etc/x", "/.fnbox/x", "/dev/x", "/proc/self/comm", "/bin/x"]
    got = ok(call(req("python", code, "f", [paths])))
    assert all(v == "EROFS" for v in got.values()), describe(got)


def test_scratch_root_is_size_limited():
    """The root's scratch space is bounded like /tmp (tmpBytes): filling it is ENOSPC in the function."""
    code = ("import errno\n"
            "def f():\n"
            "    n = 0\n"
            "    try:\n"
            "        with open('/big.bin', 'wb') as fh:\n"
            "            for _ in range(64):\n"
            "                fh.write(b'x' * (1 << 20))\n"
            "                n += 1\n"
            "                fh.flush()\n"
            "    except OSError as e:\n"
            "        return [errno.errorcode[e.errno], n]\n"
            "    return ['no error', n]\n")
    got = ok(call(req("python", code, "f", [], limits={"tmpBytes": 8 << 20},
                      resultOptions={"includeContents": False})))
    assert got[0] == "ENOSPC" and 8 <= got[1] < 16, got


@pytest.mark.parametrize("path, field_says", [
    ("/usr/local/x.txt", "read-only system directory"),
    ("/etc/x.conf", "read-only system directory"),
    ("/proc/x", "read-only system directory"),
    ("/.fnbox/harness.py", "read-only system directory"),
    ("/workspace", "must be"),          # the workdir's own place
    ("/tmp", "must be"),
])
def test_request_files_refused_where_the_sandbox_needs_the_path(path, field_says):
    res = call(req("python", "def f(): return 1\n", "f", [], files={path: "x"}))
    err = res.result["error"]
    assert res.code == 2 and err["type"] == "InvalidRequest", describe(res.result)
    assert err["message"].startswith(f'files["{path}"]') and field_says in err["message"], err["message"]


def test_scratch_root_files_are_fresh_per_call():
    tok = "fnbox-fresh-" + secrets.token_hex(6)
    code = ("import os\n"
            "def f(p, write):\n"
            "    existed = os.path.exists(p)\n"
            "    if write:\n"
            "        open(p, 'w').write('x')\n"
            "    return existed\n")
    assert ok(call(req("python", code, "f", [f"/{tok}", True]))) is False
    assert ok(call(req("python", code, "f", [f"/{tok}", False]))) is False


def test_include_changes_false_still_runs():
    """Without change tracking, the scratch root works the same (nothing handed out to walk)."""
    code = "def f():\n    open('/x.txt', 'w').write('y')\n    return open('/x.txt').read()\n"
    assert ok(call(req("python", code, "f", [], resultOptions={"includeChanges": False}))) == "y"



def test_request_files_in_the_root_modified_and_deleted_are_reported():
    code = ("import os\n"
            "def f():\n"
            "    os.remove('/seed/gone.txt')\n"
            "    open('/seed/edit.txt', 'w').write('new')\n"
            "    open('/seed/same.txt', 'w').write('same')\n"
            "    os.remove('/workspace/in.txt')\n")
    res = call(req("python", code, "f", [], files={"/seed/gone.txt": "a", "/seed/edit.txt": "old",
                                                     "/seed/same.txt": "same", "in.txt": "w"}))
    ok(res)
    files = res.result["files"]
    assert [c["path"] for c in files["deleted"]] == ["/seed/gone.txt", "/workspace/in.txt"], describe(files)
    assert [(c["path"], c["content"]) for c in files["modified"]] == [("/seed/edit.txt", "new")], describe(files)
    assert files["created"] == [], describe(files)
