"""Host mounts: the permission rules are enforced at the operation (EACCES as on a real file system),
changes land on the host only through sync, and nothing outside the mounted directory is ever touched."""
import os

import pytest

from fnboxlib import call, describe, ok, readable_by_all, req


@pytest.fixture
def project(tmp_path):
    """A host tree like the seed README's: input/, output/, node_modules/, .git/."""
    root = tmp_path / "data"
    (root / "input").mkdir(parents=True)
    (root / "output").mkdir()
    (root / "node_modules" / "lib").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "input" / "a.txt").write_text("alpha")
    (root / "input" / "b.txt").write_text("beta")
    (root / "node_modules" / "lib" / "x.js").write_text("x")
    (root / ".git" / "config").write_text("[core]")
    (root / "secret.txt").write_text("top secret")
    return readable_by_all(root, tmp_path)


def seed_mount(root, **extra):
    m = {"dirs": {"/data": str(root)},
         "permissions": {"default": {"read": True, "list": True},
                         "rules": [{"pattern": "output/**", "allow": ["create", "modify"]}],
                         "exclude": ["node_modules", ".git"]},
         "sync": {"mode": "batch"}}  # absent sync is manual (the seed's rule): say batch to write back
    m.update(extra)
    return m


PROCESS = ("import os\n"
           "def process_files(input_dir, output_dir):\n"
           "    for name in sorted(os.listdir(input_dir)):\n"
           "        with open(f'{input_dir}/{name}') as f:\n"
           "            data = f.read()\n"
           "        with open(f'{output_dir}/{name}.out', 'w') as f:\n"
           "            f.write(data.upper())\n"
           "    return 'done'\n")


def test_seed_readme_example_batch_sync(project):
    res = call(req("python", PROCESS, "process_files", ["/data/input", "/data/output"], mount=seed_mount(project)))
    assert ok(res) == "done"
    created = {c["path"]: c for c in res.result["files"]["created"]}
    assert set(created) == {"/data/output/a.txt.out", "/data/output/b.txt.out"}, describe(res.result)
    assert created["/data/output/a.txt.out"]["content"] == "ALPHA"
    assert (project / "output" / "a.txt.out").read_text() == "ALPHA"
    assert (project / "output" / "b.txt.out").read_text() == "BETA"
    assert res.result["files"]["denied"] == []
    assert res.result["sync"]["success"] is True
    assert sorted(res.result["sync"]["synced"]) == sorted(created)
    after = [(e["path"], e["success"]) for e in res.result["events"] if e["type"] == "afterSync"]
    assert sorted(after) == [(p, True) for p in sorted(created)]


PROBE = ("import os\n"
         "def f(op, path):\n"
         "    try:\n"
         "        if op == 'read': return open(path).read()\n"
         "        if op == 'list': return sorted(os.listdir(path))\n"
         "        if op == 'create': open(path, 'x').write('new'); return 'ok'\n"
         "        if op == 'modify': open(path, 'w').write('changed'); return 'ok'\n"
         "        if op == 'append': open(path, 'a').write('+'); return 'ok'\n"
         "        if op == 'delete': os.remove(path); return 'ok'\n"
         "        if op == 'mkdir': os.mkdir(path); return 'ok'\n"
         "    except OSError as e:\n"
         "        return [type(e).__name__, e.errno]\n")

EACCES = ["PermissionError", 13]


@pytest.mark.parametrize("op,path", [
    ("create", "/data/input/new.txt"),
    ("modify", "/data/input/a.txt"),
    ("append", "/data/input/a.txt"),
    ("delete", "/data/input/a.txt"),
    ("mkdir", "/data/newdir"),
])
def test_denied_at_the_operation(project, op, path):
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    res = call(req("python", PROBE, "f", [op, path], mount=seed_mount(project)))
    assert ok(res) == EACCES, describe(res.result)
    denied = res.result["files"]["denied"]
    expected_op = {"append": "modify", "mkdir": "create"}.get(op, op)
    assert {"path": path, "operation": expected_op} in [{k: d[k] for k in ("path", "operation")} for d in denied]
    assert all(d["rule"] for d in denied)
    assert any(e["type"] == "permissionDenied" for e in res.result["events"])
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    assert after == before, "the host changed after a denied operation"


@pytest.mark.parametrize("op,path,expected", [
    ("read", "/data/input/a.txt", "alpha"),
    ("list", "/data", ["input", "output", "secret.txt"]),  # excluded names are not there at all
    ("read", "/data/.git/config", ["FileNotFoundError", 2]),
    ("list", "/data/node_modules", ["FileNotFoundError", 2]),
    ("create", "/data/output/n.txt", "ok"),
])
def test_allowed_operations(project, op, path, expected):
    res = call(req("python", PROBE, "f", [op, path], mount=seed_mount(project)))
    assert ok(res) == expected, describe(res.result)
    assert res.result["files"]["denied"] == []


def test_ignore_mode_pretends_and_leaves_nothing(project):
    code = ("import os\n"
            "def f():\n"
            "    open('/data/input/new.txt', 'w').write('x')\n"
            "    open('/data/input/a.txt', 'w').write('overwritten')\n"
            "    os.remove('/data/input/b.txt')\n"
            "    return [os.path.exists('/data/input/new.txt'), open('/data/input/a.txt').read(),\n"
            "            os.path.exists('/data/input/b.txt')]\n")
    res = call(req("python", code, "f", mount=seed_mount(project, onPermissionDenied="ignore")))
    assert ok(res) == [False, "alpha", True], describe(res.result)
    files = res.result["files"]
    assert files["created"] == [] and files["modified"] == [] and files["deleted"] == []
    ops = sorted(d["operation"] for d in files["denied"])
    assert ops == ["create", "delete", "modify"]
    assert not (project / "input" / "new.txt").exists()
    assert (project / "input" / "a.txt").read_text() == "alpha"


def test_virtual_mode_succeeds_inside_only(project):
    code = ("def f():\n"
            "    open('/data/input/new.txt', 'w').write('virtual')\n"
            "    open('/data/output/real.txt', 'w').write('real')\n"
            "    return open('/data/input/new.txt').read()\n")
    res = call(req("python", code, "f", mount=seed_mount(project, onPermissionDenied="virtual")))
    assert ok(res) == "virtual"
    assert [c["path"] for c in res.result["files"]["created"]] == ["/data/output/real.txt"]
    assert [d["path"] for d in res.result["files"]["denied"]] == ["/data/input/new.txt"]
    assert not (project / "input" / "new.txt").exists()
    assert (project / "output" / "real.txt").read_text() == "real"


def test_manual_sync_reports_but_does_not_write(project):
    code = "def f():\n    open('/data/output/m.txt', 'w').write('manual')\n"
    res = call(req("python", code, "f", mount=seed_mount(project, sync={"mode": "manual"})))
    ok(res)
    assert [c["content"] for c in res.result["files"]["created"]] == ["manual"]
    assert not (project / "output" / "m.txt").exists()


def test_failed_call_syncs_nothing_unless_asked(project):
    code = "def f():\n    open('/data/output/e.txt', 'w').write('partial')\n    raise ValueError('boom')\n"
    res = call(req("python", code, "f", mount=seed_mount(project)))
    assert res.result["status"] == "error" and res.result["error"]["type"] == "ValueError"
    assert [c["path"] for c in res.result["files"]["created"]] == ["/data/output/e.txt"]
    assert not (project / "output" / "e.txt").exists()
    res = call(req("python", code, "f", mount=seed_mount(project, sync={"mode": "batch", "onFunctionError": "sync"})))
    assert res.result["status"] == "error"
    assert (project / "output" / "e.txt").read_text() == "partial"


def test_modify_and_delete_reach_the_host(project):
    m = seed_mount(project)
    m["permissions"]["rules"].append({"pattern": "input/*.txt", "allow": ["modify", "delete"]})
    code = ("import os\n"
            "def f():\n"
            "    open('/data/input/a.txt', 'a').write('!')\n"
            "    os.remove('/data/input/b.txt')\n")
    res = call(req("python", code, "f", mount=m))
    ok(res)
    assert [c["path"] for c in res.result["files"]["modified"]] == ["/data/input/a.txt"]
    assert [c["path"] for c in res.result["files"]["deleted"]] == ["/data/input/b.txt"]
    assert (project / "input" / "a.txt").read_text() == "alpha!"
    assert not (project / "input" / "b.txt").exists()


def test_rename_inside_mount(project):
    m = seed_mount(project)
    code = ("import os\n"
            "def f():\n"
            "    open('/data/output/tmp.part', 'w').write('payload')\n"
            "    os.rename('/data/output/tmp.part', '/data/output/final.txt')\n"
            "    return sorted(os.listdir('/data/output'))\n")
    res = call(req("python", code, "f", mount=m))
    assert ok(res) == ["final.txt"]
    assert [c["path"] for c in res.result["files"]["created"]] == ["/data/output/final.txt"]
    assert (project / "output" / "final.txt").read_text() == "payload"
    assert not (project / "output" / "tmp.part").exists()


def test_mount_as_workdir_with_relative_paths(project):
    m = {"dirs": {"/workspace": str(project)}, "permissions": {"default": {"create": True}},
         "sync": {"mode": "batch"}}
    code = "import os\ndef f():\n    open('made.txt', 'w').write('here')\n    return os.getcwd()\n"
    res = call(req("python", code, "f", mount=m))
    assert ok(res) == "/workspace"
    assert (project / "made.txt").read_text() == "here"


def test_symlinks_never_reach_outside(project, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("host secret")
    os.chmod(outside, 0o644)
    os.symlink(str(outside), project / "input" / "abs_link")
    os.symlink("../../outside.txt", project / "input" / "rel_link")
    os.symlink("a.txt", project / "input" / "inside_link")
    code = ("import os\n"
            "def f():\n"
            "    out = {}\n"
            "    for n in ['abs_link', 'rel_link', 'inside_link']:\n"
            "        try: out[n] = open('/data/input/' + n).read()\n"
            "        except OSError as e: out[n] = type(e).__name__\n"
            "    return out\n")
    for mode, expected_inside in ((False, "FileNotFoundError"), ("restricted", "alpha"), (True, "alpha")):
        m = seed_mount(project, security={"followSymlinks": mode})
        got = ok(call(req("python", code, "f", mount=m)))
        assert got["inside_link"] == expected_inside, (mode, got)
        assert got["abs_link"] != "host secret" and got["rel_link"] != "host secret", (mode, got)


def test_data_does_not_match_database(project, tmp_path):
    other = tmp_path / "database"
    other.mkdir()
    os.chmod(other, 0o755)
    code = ("def f():\n"
            "    try:\n"
            "        open('/database/x.txt', 'w').write('x')\n"
            "        return 'written'\n"
            "    except OSError as e:\n"
            "        return type(e).__name__\n")
    res = call(req("python", code, "f", mount=seed_mount(project, permissions={"default": {"create": True}})))
    assert ok(res) != "written"
    assert list(other.iterdir()) == []


def test_loading_limits_and_explicit_mode(project):
    (project / "input" / "big.txt").write_text("x" * 5000)
    os.chmod(project / "input" / "big.txt", 0o644)
    code = "import os\ndef f():\n    return sorted(os.listdir('/data/input'))\n"
    res = call(req("python", code, "f", mount=seed_mount(project, loading={"mode": "eager", "maxFileSize": 1000})))
    assert ok(res) == ["a.txt", "b.txt"]
    assert [(s["path"], s["reason"]) for s in res.result["files"]["skipped"]] == [("/data/input/big.txt", "maxFileSize")]
    res = call(req("python", code, "f", mount=seed_mount(project, loading={"mode": "explicit", "include": ["input/a.*"]})))
    assert ok(res) == ["a.txt"]


def test_bad_mount_config_names_the_field(project):
    cases = [
        ({"dirs": {"/data": str(project / "missing")}}, "mount.dirs"),
        ({"dirs": {"relative": str(project)}}, "mount.dirs"),
        ({"dirs": {"/data": str(project)}, "permissions": {"rules": [{"pattern": "x", "allow": ["write"]}]}},
         "mount.permissions.rules[0].allow[0]"),
        ({"dirs": {"/data": str(project)}, "sync": {"mode": "sometimes"}}, "mount.sync.mode"),
        ({"dirs": {"/data": str(project)}, "bogus": 1}, "mount.bogus"),
    ]
    for m, needle in cases:
        res = call(req("python", "def f(): pass\n", "f", mount=m))
        assert res.code == 2, describe(res.result)
        assert needle in res.result["error"]["message"], res.result["error"]["message"]
