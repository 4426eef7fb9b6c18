"""Host mounts from each interpreted language: the same behaviours test_mount.py checks in Python, seen through
JavaScript, Ruby and PHP's own file APIs (and Python again, for reference). Reading an allowed file, listing a
directory, creating a file under an allowed pattern (synced to the host), and a denied create / modify /
delete that fails at the operation with the language's own permission error: Python `PermissionError`
(errno 13), Node `EACCES` (`e.code`), Ruby `Errno::EACCES`, PHP a warning and a `false` return
(`error_get_last()` says "Permission denied"). Every denial is in `files.denied`, the host is untouched by
them, and the request's virtual `files` input is readable in each language."""

import pytest

from fnboxlib import call, describe, ok, readable_by_all, req

# Each function returns {read, list, create, deniedCreate, deniedModify, deniedDelete, input}: the value
# read or "ok", or for a failure the language's own name for it.
CODE = {
    "python": (
        "import os\n"
        "def err(e):\n"
        "    return f'{type(e).__name__}:{e.errno}'\n"
        "def f():\n"
        "    out = {}\n"
        "    out['read'] = open('/data/input/a.txt').read()\n"
        "    out['list'] = sorted(os.listdir('/data/input'))\n"
        "    with open('/data/output/made.txt', 'w') as fh:\n"
        "        fh.write('made by python')\n"
        "    out['create'] = 'ok'\n"
        "    try:\n"
        "        open('/data/input/new.txt', 'x').write('no'); out['deniedCreate'] = 'ok'\n"
        "    except OSError as e:\n"
        "        out['deniedCreate'] = err(e)\n"
        "    try:\n"
        "        open('/data/input/a.txt', 'w').write('no'); out['deniedModify'] = 'ok'\n"
        "    except OSError as e:\n"
        "        out['deniedModify'] = err(e)\n"
        "    try:\n"
        "        os.remove('/data/input/b.txt'); out['deniedDelete'] = 'ok'\n"
        "    except OSError as e:\n"
        "        out['deniedDelete'] = err(e)\n"
        "    out['input'] = open('in.txt').read()\n"
        "    return out\n"),
    "javascript": (
        "const fs = require('fs');\n"
        "function attempt(action) {\n"
        "  try { action(); return 'ok'; } catch (e) { return e.code; }\n"
        "}\n"
        "function f() {\n"
        "  const out = {};\n"
        "  out.read = fs.readFileSync('/data/input/a.txt', 'utf8');\n"
        "  out.list = fs.readdirSync('/data/input').sort();\n"
        "  fs.writeFileSync('/data/output/made.txt', 'made by javascript');\n"
        "  out.create = 'ok';\n"
        "  out.deniedCreate = attempt(() => fs.writeFileSync('/data/input/new.txt', 'no', { flag: 'wx' }));\n"
        "  out.deniedModify = attempt(() => fs.writeFileSync('/data/input/a.txt', 'no'));\n"
        "  out.deniedDelete = attempt(() => fs.unlinkSync('/data/input/b.txt'));\n"
        "  out.input = fs.readFileSync('in.txt', 'utf8');\n"
        "  return out;\n"
        "}\n"),
    "ruby": (
        "def attempt\n"
        "  yield\n"
        "  'ok'\n"
        "rescue SystemCallError => e\n"
        "  e.class.name\n"
        "end\n"
        "def f\n"
        "  out = {}\n"
        "  out['read'] = File.read('/data/input/a.txt')\n"
        "  out['list'] = Dir.children('/data/input').sort\n"
        "  File.write('/data/output/made.txt', 'made by ruby')\n"
        "  out['create'] = 'ok'\n"
        "  out['deniedCreate'] = attempt { File.open('/data/input/new.txt', File::WRONLY | File::CREAT | File::EXCL) { |io| io.write('no') } }\n"
        "  out['deniedModify'] = attempt { File.write('/data/input/a.txt', 'no') }\n"
        "  out['deniedDelete'] = attempt { File.delete('/data/input/b.txt') }\n"
        "  out['input'] = File.read('in.txt')\n"
        "  out\n"
        "end\n"),
    "php": (
        "function attempt($ok) {\n"
        "  if ($ok !== false) return 'ok';\n"
        "  $e = error_get_last();\n"
        "  error_clear_last();\n"
        "  return 'false:' . ($e && strpos($e['message'], 'Permission denied') !== false ? 'Permission denied' : json_encode($e));\n"
        "}\n"
        "function f() {\n"
        "  $out = [];\n"
        "  $out['read'] = file_get_contents('/data/input/a.txt');\n"
        "  $names = array_values(array_diff(scandir('/data/input'), ['.', '..']));\n"
        "  sort($names);\n"
        "  $out['list'] = $names;\n"
        "  file_put_contents('/data/output/made.txt', 'made by php');\n"
        "  $out['create'] = 'ok';\n"
        "  error_clear_last();\n"
        "  $out['deniedCreate'] = attempt(@fopen('/data/input/new.txt', 'x'));\n"
        "  $out['deniedModify'] = attempt(file_put_contents('/data/input/a.txt', 'no'));  // its warning: stderr\n"
        "  $out['deniedDelete'] = attempt(@unlink('/data/input/b.txt'));\n"
        "  $out['input'] = file_get_contents('in.txt');\n"
        "  return $out;\n"
        "}\n"),
}

DENIED = {
    "python": "PermissionError:13",
    "javascript": "EACCES",
    "ruby": "Errno::EACCES",
    "php": "false:Permission denied",
}


@pytest.fixture
def project(tmp_path):
    """input/a.txt, input/b.txt, output/, node_modules/, .git/ (as test_mount.py's tree)."""
    root = tmp_path / "data"
    (root / "input").mkdir(parents=True)
    (root / "output").mkdir()
    (root / "node_modules" / "lib").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "input" / "a.txt").write_text("alpha")
    (root / "input" / "b.txt").write_text("beta")
    (root / "node_modules" / "lib" / "x.js").write_text("x")
    (root / ".git" / "config").write_text("[core]")
    return readable_by_all(root, tmp_path)


def mount_of(root):
    return {"dirs": {"/data": str(root)},
            "permissions": {"default": {"read": True, "list": True},
                            "rules": [{"pattern": "output/**", "allow": ["create", "modify"]}],
                            "exclude": ["node_modules", ".git"]},
            "sync": {"mode": "batch"}}  # absent sync is manual (the seed's rule): say batch to write back


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_mount_behaviours(project, lang):
    before = snapshot(project)
    res = call(req(lang, CODE[lang], "f", [], mount=mount_of(project), files={"in.txt": "virtual input"}))
    got = ok(res)
    assert got == {
        "read": "alpha",
        "list": ["a.txt", "b.txt"],
        "create": "ok",
        "deniedCreate": DENIED[lang],
        "deniedModify": DENIED[lang],
        "deniedDelete": DENIED[lang],
        "input": "virtual input",
    }, describe(res.result)
    files = res.result["files"]
    # the allowed create is reported and synced; nothing else changed on the host
    assert [(c["path"], c.get("content")) for c in files["created"]] == \
        [("/data/output/made.txt", f"made by {lang}")], describe(res.result)
    assert files["modified"] == [] and files["deleted"] == [], describe(res.result)
    after = snapshot(project)
    assert after.pop("output/made.txt") == f"made by {lang}".encode()
    assert after == before, "a denied operation reached the host"
    # each denial recorded once per operation, with the rule that decided it
    denied = {(d["path"], d["operation"]) for d in files["denied"]}
    assert denied == {("/data/input/new.txt", "create"), ("/data/input/a.txt", "modify"),
                      ("/data/input/b.txt", "delete")}, describe(res.result)
    assert all(d["rule"] for d in files["denied"])
    if lang == "php":  # the one denial not silenced with @ warned as PHP does
        assert "file_put_contents(/data/input/a.txt)" in res.result["stderr"] and \
            "Permission denied" in res.result["stderr"], res.result["stderr"]


# Reading an excluded file and listing an excluded directory fail as for an absent path: excluded names are
# not loaded at all (the seed's loader leaves them out), so nothing is refused and nothing is recorded.
READ_EXCLUDED = {
    "python": ("import os\n"
               "def f():\n"
               "    out = []\n"
               "    for action in (lambda: open('/data/.git/config').read(), lambda: os.listdir('/data/node_modules')):\n"
               "        try:\n"
               "            action(); out.append('ok')\n"
               "        except OSError as e:\n"
               "            out.append(f'{type(e).__name__}:{e.errno}')\n"
               "    return out\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  return [() => fs.readFileSync('/data/.git/config'), () => fs.readdirSync('/data/node_modules')]\n"
                   "    .map((a) => { try { a(); return 'ok'; } catch (e) { return e.code; } });\n"
                   "}\n"),
    "ruby": ("def f\n"
             "  [-> { File.read('/data/.git/config') }, -> { Dir.children('/data/node_modules') }].map do |a|\n"
             "    a.call\n"
             "    'ok'\n"
             "  rescue SystemCallError => e\n"
             "    e.class.name\n"
             "  end\n"
             "end\n"),
    "php": ("function f() {\n"
            "  $out = [];\n"
            "  foreach ([fn() => @file_get_contents('/data/.git/config'), fn() => @scandir('/data/node_modules')] as $a) {\n"
            "    error_clear_last();\n"
            "    $r = $a();\n"
            "    $e = error_get_last();\n"
            "    $why = $e ? (strpos($e['message'], 'Permission denied') !== false ? 'Permission denied' : (strpos($e['message'], 'No such file') !== false ? 'No such file or directory' : json_encode($e))) : 'null';\n"
            "    $out[] = $r !== false ? 'ok' : 'false:' . $why;\n"
            "  }\n"
            "  return $out;\n"
            "}\n"),
}


ABSENT = {
    "python": "FileNotFoundError:2",
    "javascript": "ENOENT",
    "ruby": "Errno::ENOENT",
    "php": "false:No such file or directory",
}


def test_excluded_read_and_list_absent(project, lang):
    res = call(req(lang, READ_EXCLUDED[lang], "f", [], mount=mount_of(project)))
    assert ok(res) == [ABSENT[lang], ABSENT[lang]], describe(res.result)
    assert res.result["files"]["denied"] == [], describe(res.result)


# A request `files` entry placed inside the mount: readable, and rewriting it under an allowed rule is a change.
FILES_IN_MOUNT = {
    "python": ("def f():\n"
               "    data = open('/data/output/seed.txt').read()\n"
               "    open('/data/output/seed.txt', 'w').write(data.upper())\n"
               "    return data\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  const data = fs.readFileSync('/data/output/seed.txt', 'utf8');\n"
                   "  fs.writeFileSync('/data/output/seed.txt', data.toUpperCase());\n"
                   "  return data;\n"
                   "}\n"),
    "ruby": ("def f\n"
             "  data = File.read('/data/output/seed.txt')\n"
             "  File.write('/data/output/seed.txt', data.upcase)\n"
             "  data\n"
             "end\n"),
    "php": ("function f() {\n"
            "  $data = file_get_contents('/data/output/seed.txt');\n"
            "  file_put_contents('/data/output/seed.txt', strtoupper($data));\n"
            "  return $data;\n"
            "}\n"),
}


def test_virtual_file_inside_mount(project, lang):
    res = call(req(lang, FILES_IN_MOUNT[lang], "f", [], mount=mount_of(project),
                   files={"/data/output/seed.txt": "seeded"}))
    assert ok(res) == "seeded", describe(res.result)
    created = {c["path"]: c.get("content") for c in res.result["files"]["created"]}
    assert created == {"/data/output/seed.txt": "SEEDED"}, describe(res.result)
    assert (project / "output" / "seed.txt").read_text() == "SEEDED"


# Files still open in the mount when the call is killed (timeout): nothing is synced, and fnbox frees what
# it kept for each open file. The server thread stops before it has answered the kernel's pending RELEASE
# requests, so the handles of such files are never freed (an fd of the host file leaks with a read handle);
# under the ASan build LeakSanitizer reports `new_handle` (src/fs/mountfs.c) in about one call in three,
# hence the repeats. The normal build cannot see the leak: there this only checks the outcome.
OPEN_AND_HANG = {
    "python": ("import time\n"
               "def f():\n"
               "    a = open('/data/input/a.txt')\n"
               "    b = open('/data/output/n.txt', 'w')\n"
               "    b.write('x'); b.flush()\n"
               "    time.sleep(30)\n"),
    "javascript": ("const fs = require('fs');\n"
                   "async function f() {\n"
                   "  const a = fs.openSync('/data/input/a.txt', 'r');\n"
                   "  const b = fs.openSync('/data/output/n.txt', 'w');\n"
                   "  fs.writeSync(b, 'x');\n"
                   "  await new Promise((resolve) => setTimeout(resolve, 30000));\n"
                   "}\n"),
    "ruby": ("def f\n"
             "  a = File.open('/data/input/a.txt')\n"
             "  b = File.open('/data/output/n.txt', 'w')\n"
             "  b.write('x'); b.flush\n"
             "  sleep 30\n"
             "end\n"),
    "php": ("function f() {\n"
            "  $a = fopen('/data/input/a.txt', 'r');\n"
            "  $b = fopen('/data/output/n.txt', 'w');\n"
            "  fwrite($b, 'x'); fflush($b);\n"
            "  sleep(30);\n"
            "}\n"),
}


def test_files_open_when_killed(project, lang):
    for _ in range(6):
        res = call(req(lang, OPEN_AND_HANG[lang], "f", [], mount=mount_of(project), timeout=0.5))
        assert res.result["status"] == "timeout", describe(res.result)
        assert [c["path"] for c in res.result["files"]["created"]] == ["/data/output/n.txt"], describe(res.result)
        assert not (project / "output" / "n.txt").exists()  # a failed call syncs nothing


# The mount's space limit (the workspace limit, 64 MiB by default) counts what the function wrote, not the
# upper layer's allocation slack: after a 34 MB file, statvfs still shows ~30 MB free and a 1-byte file
# fits. Today src/fs/overlay.c charges each file its doubled capacity (64 MiB for 34 MB), so statvfs says
# 0 bytes free and the small write fails with ENOSPC (see tests/unit/fs/test_overlay.c
# test_slack_not_counted_as_used). Python only: the accounting is the same whatever writes.
SPACE = ("import os\n"
         "def f():\n"
         "    with open('/data/output/big.bin', 'wb') as fh:\n"
         "        fh.write(b'x' * 34000000)\n"
         "    st = os.statvfs('/data')\n"
         "    try:\n"
         "        with open('/data/output/small.txt', 'w') as fh:\n"
         "            fh.write('y')\n"
         "        small = 'ok'\n"
         "    except OSError as e:\n"
         "        small = e.strerror\n"
         "    return [small, st.f_bavail * st.f_frsize]\n")


def test_mount_space_counts_content(project):
    m = dict(mount_of(project), sync={"mode": "manual"})
    res = call(req("python", SPACE, "f", [], mount=m, resultOptions={"includeContents": False}))
    small, free = ok(res)
    assert small == "ok", f"a 1-byte file after a 34 MB one in a 64 MiB mount: {small} (statvfs free: {free})"
    assert free >= 25 * 1000 * 1000, free
