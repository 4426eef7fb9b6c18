"""Seed compatibility (issue 11): fnbox behaves as @isdk/sandbox-executor's README says where the two used to differ.

- A mount without a `sync` section (or one without `sync.mode`) is manual: its changes are reported with their
  contents, the host is never written (the seed writes only when `sync.mode` is "batch").
- `includeChanges: false` leaves the result without a `files` key (the seed leaves it undefined); the sync
  itself still runs on every change. `includeDenied: false` drops `files.denied` and the `permissionDenied`
  events.
- `fnbox sync` with a mount that has no `permissions` applies the changes the caller selected (the seed's
  manual-sync example, verbatim); with `permissions` they are checked, and a sync that wrote nothing because of
  them says so.
Every test runs the real interpreters (the `lang` fixture: python, javascript, ruby, php) through the CLI."""
import json
import os

import pytest

from fnboxlib import call, describe, failed, ok, req, run_cli

# Each writes /data/out/new.txt, rewrites /data/keep.txt and removes /data/gone.txt.
CHANGE_ALL = {
    "python": ("import os\n"
               "def f():\n"
               "    os.makedirs('/data/out', exist_ok=True)\n"
               "    open('/data/out/new.txt', 'w').write('new by python')\n"
               "    open('/data/keep.txt', 'w').write('changed')\n"
               "    os.remove('/data/gone.txt')\n"
               "    return 'done'\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  fs.mkdirSync('/data/out', { recursive: true });\n"
                   "  fs.writeFileSync('/data/out/new.txt', 'new by javascript');\n"
                   "  fs.writeFileSync('/data/keep.txt', 'changed');\n"
                   "  fs.unlinkSync('/data/gone.txt');\n"
                   "  return 'done';\n"
                   "}\n"),
    "ruby": ("require 'fileutils'\n"
             "def f\n"
             "  FileUtils.mkdir_p('/data/out')\n"
             "  File.write('/data/out/new.txt', 'new by ruby')\n"
             "  File.write('/data/keep.txt', 'changed')\n"
             "  File.delete('/data/gone.txt')\n"
             "  'done'\n"
             "end\n"),
    "php": ("function f() {\n"
            "  if (!is_dir('/data/out')) mkdir('/data/out');\n"
            "  file_put_contents('/data/out/new.txt', 'new by php');\n"
            "  file_put_contents('/data/keep.txt', 'changed');\n"
            "  unlink('/data/gone.txt');\n"
            "  return 'done';\n"
            "}\n"),
}

ALLOW_ALL = {"default": {"read": True, "list": True, "create": True, "modify": True, "delete": True}}


@pytest.fixture(name="host")
def host_fixture(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "keep.txt").write_text("original")
    (data / "gone.txt").write_text("still here")
    os.chmod(tmp_path, 0o755)
    os.chmod(data, 0o755)
    for p in data.iterdir():
        os.chmod(p, 0o644)
    return data


def snapshot(root):
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def changes(res):
    files = res.result["files"]
    return ({c["path"]: c.get("content") for c in files["created"]},
            {c["path"]: c.get("content") for c in files["modified"]},
            sorted(c["path"] for c in files["deleted"]))


# ---- item 8: no `sync` section, no sync ----

@pytest.mark.parametrize("sync", [None, {"onError": "continue"}, {}], ids=["absent", "no-mode", "empty"])
def test_mount_without_sync_mode_reports_but_never_writes(host, lang, sync):
    before = snapshot(host)
    mount = {"dirs": {"/data": str(host)}, "permissions": ALLOW_ALL}
    if sync is not None:
        mount["sync"] = sync
    res = call(req(lang, CHANGE_ALL[lang], "f", [], mount=mount))
    assert ok(res) == "done"
    created, modified, deleted = changes(res)
    # reported with contents, ready for `fnbox sync`
    assert created == {"/data/out": None, "/data/out/new.txt": f"new by {lang}"}, describe(res.result)
    assert modified == {"/data/keep.txt": "changed"}, describe(res.result)
    assert deleted == ["/data/gone.txt"], describe(res.result)
    # ...and the host untouched: no sync ran, no sync events
    assert snapshot(host) == before, "a mount without sync.mode \"batch\" wrote to the host"
    assert "sync" not in res.result, describe(res.result)
    assert not [e for e in res.result.get("events", []) if e["type"].endswith("Sync") or e["type"] == "syncError"]


def test_batch_mode_still_writes(host, lang):
    mount = {"dirs": {"/data": str(host)}, "permissions": ALLOW_ALL, "sync": {"mode": "batch"}}
    res = call(req(lang, CHANGE_ALL[lang], "f", [], mount=mount))
    assert ok(res) == "done"
    assert res.result["sync"]["success"] is True, describe(res.result)
    assert (host / "out" / "new.txt").read_text() == f"new by {lang}"
    assert (host / "keep.txt").read_text() == "changed"
    assert not (host / "gone.txt").exists()


# ---- item 6: includeChanges / includeDenied false leave their part out of the result ----

WRITE_SCRATCH = {
    "python": "def f():\n    open('x.txt', 'w').write('x')\n    return 1\n",
    "javascript": "const fs = require('fs');\nfunction f() { fs.writeFileSync('x.txt', 'x'); return 1; }\n",
    "ruby": "def f\n  File.write('x.txt', 'x')\n  1\nend\n",
    "php": "function f() { file_put_contents('x.txt', 'x'); return 1; }\n",
}

# Each tries to create /data/refused.txt (which the default rules refuse) and returns 'refused'.
TRY_DENIED = {
    "python": ("def f():\n"
               "    try:\n"
               "        open('/data/refused.txt', 'w').write('no')\n"
               "        return 'written'\n"
               "    except PermissionError:\n"
               "        return 'refused'\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  try { fs.writeFileSync('/data/refused.txt', 'no'); return 'written'; }\n"
                   "  catch (e) { return e.code === 'EACCES' ? 'refused' : e.code; }\n"
                   "}\n"),
    "ruby": ("def f\n"
             "  File.write('/data/refused.txt', 'no')\n"
             "  'written'\n"
             "rescue Errno::EACCES\n"
             "  'refused'\n"
             "end\n"),
    "php": ("function f() {\n"
            "  return @file_put_contents('/data/refused.txt', 'no') === false ? 'refused' : 'written';\n"
            "}\n"),
}


@pytest.mark.parametrize("shape", ["resultOptions", "options.reporting"])
def test_include_changes_false_leaves_no_files_key(lang, shape):
    r = req(lang, WRITE_SCRATCH[lang], "f", [])
    reporting = {"includeChanges": False}
    if shape == "resultOptions":
        r["resultOptions"] = reporting
    else:
        r["options"] = {"reporting": reporting}
    res = call(r)
    assert ok(res) == 1
    assert "files" not in res.result, describe(res.result)
    # the default still reports
    res = call(req(lang, WRITE_SCRATCH[lang], "f", []))
    assert [c["path"] for c in res.result["files"]["created"]] == ["/workspace/x.txt"], describe(res.result)


def test_include_changes_false_still_syncs_every_change(host, lang):
    mount = {"dirs": {"/data": str(host)}, "permissions": ALLOW_ALL, "sync": {"mode": "batch"}}
    res = call(req(lang, CHANGE_ALL[lang], "f", [], mount=mount, resultOptions={"includeChanges": False}))
    assert ok(res) == "done"
    assert "files" not in res.result, describe(res.result)
    assert res.result["sync"]["success"] is True, describe(res.result)
    assert sorted(res.result["sync"]["synced"]) == ["/data/gone.txt", "/data/keep.txt", "/data/out",
                                                    "/data/out/new.txt"], describe(res.result)
    assert (host / "out" / "new.txt").read_text() == f"new by {lang}"
    assert (host / "keep.txt").read_text() == "changed"
    assert not (host / "gone.txt").exists()


def test_include_denied_false_drops_denials_and_their_events(host, lang):
    mount = {"dirs": {"/data": str(host)}, "permissions": {"default": {"read": True, "list": True}}}
    res = call(req(lang, TRY_DENIED[lang], "f", [], mount=mount))
    assert ok(res) == "refused"
    assert res.result["files"]["denied"] == [{"path": "/data/refused.txt", "operation": "create", "rule": "default"}]
    assert [e["type"] for e in res.result["events"]] == ["permissionDenied"], describe(res.result)
    res = call(req(lang, TRY_DENIED[lang], "f", [], mount=mount, resultOptions={"includeDenied": False}))
    assert ok(res) == "refused"
    assert "denied" not in res.result["files"], describe(res.result)
    assert not [e for e in res.result.get("events", []) if e["type"] == "permissionDenied"], describe(res.result)
    assert not (host / "refused.txt").exists()


# ---- item 9: the seed README's manual-sync example, end to end through `fnbox sync` ----

# The seed's `generate`: a few files in the workspace, of which the caller keeps the .json ones.
GENERATE = {
    "python": ("import json\n"
               "def generate():\n"
               "    for name in ('a', 'b'):\n"
               "        with open(f'/workspace/{name}.json', 'w') as f:\n"
               "            json.dump({'name': name}, f)\n"
               "    open('/workspace/notes.txt', 'w').write('scratch notes')\n"
               "    return 'generated'\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function generate() {\n"
                   "  for (const name of ['a', 'b']) fs.writeFileSync(`/workspace/${name}.json`, JSON.stringify({ name }));\n"
                   "  fs.writeFileSync('/workspace/notes.txt', 'scratch notes');\n"
                   "  return 'generated';\n"
                   "}\n"),
    "ruby": ("require 'json'\n"
             "def generate\n"
             "  %w[a b].each { |name| File.write(\"/workspace/#{name}.json\", JSON.generate({ 'name' => name })) }\n"
             "  File.write('/workspace/notes.txt', 'scratch notes')\n"
             "  'generated'\n"
             "end\n"),
    "php": ("function generate() {\n"
            "  foreach (['a', 'b'] as $name) file_put_contents(\"/workspace/$name.json\", json_encode(['name' => $name]));\n"
            "  file_put_contents('/workspace/notes.txt', 'scratch notes');\n"
            "  return 'generated';\n"
            "}\n"),
}


def fnbox_sync(payload):
    proc = run_cli(["sync", "-"], input=json.dumps(payload))
    assert proc.stdout, proc.stderr.decode(errors="replace")
    return json.loads(proc.stdout), proc.returncode


@pytest.fixture(name="output")
def output_fixture(tmp_path):
    out = tmp_path / "output"
    out.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(out, 0o755)
    return out


def generated(lang, output, host_dir=None):
    """executor.execute({..., mount: {dirs: {'/workspace': './output'}, sync: {mode: 'manual'}}}) verbatim: a
    mount without permissions that is not batch-synced lets the call create files (only reported)."""
    mount = {"dirs": {"/workspace": host_dir or str(output)}, "sync": {"mode": "manual"}}
    res = call(req(lang, GENERATE[lang], "generate", [], mount=mount))
    assert ok(res) == "generated"
    assert os.listdir(output) == [], "manual sync wrote to the host during the call"
    return res.result["files"]["created"]


def test_seed_manual_sync_example_verbatim(lang, output, monkeypatch):
    monkeypatch.chdir(output.parent)  # the seed's './output', relative to the caller's directory
    created = generated(lang, output, "./output")
    assert sorted(c["path"] for c in created) == ["/workspace/a.json", "/workspace/b.json", "/workspace/notes.txt"]
    # syncFiles(result.files.created.filter(f => f.path.endsWith('.json')), {dirs: {'/workspace': './output'}})
    to_sync = [c for c in created if c["path"].endswith(".json")]
    report, code = fnbox_sync({"changes": to_sync, "mount": {"dirs": {"/workspace": "./output"}}})
    assert code == 0, report
    assert report["success"] is True and sorted(report["synced"]) == ["/workspace/a.json", "/workspace/b.json"], report
    assert report["skipped"] == [] and report["failed"] == [] and report["deniedByPermissions"] == 0, report
    assert sorted(os.listdir(output)) == ["a.json", "b.json"]
    assert json.loads((output / "a.json").read_text()) == {"name": "a"}
    assert json.loads((output / "b.json").read_text()) == {"name": "b"}


def test_sync_refused_by_permissions_says_why(lang, output):
    created = generated(lang, output)
    to_sync = [c for c in created if c["path"].endswith(".json")]
    # the same changes, to a mount whose permissions allow reading only: nothing may be written
    mount = {"dirs": {"/workspace": str(output)}, "permissions": {"default": {"read": True, "list": True}}}
    report, code = fnbox_sync({"changes": to_sync, "mount": mount})
    assert code == 0, report  # a refusal is policy, not a failure
    assert report["synced"] == [] and report["failed"] == [], report
    assert report["deniedByPermissions"] == 2, report
    assert report["message"].startswith("nothing was written: the mount's permissions refused all 2 changes"), report
    for s in report["skipped"]:
        assert s["rule"] == "default" and s["operation"] == "create", report
        assert "permission denied: create (mount.permissions, rule default)" == s["reason"], report
    assert os.listdir(output) == []
    # a rule that allows some: those are written, the rest named with the rule that refused them
    mount["permissions"]["rules"] = [{"pattern": "a.json", "allow": ["create"]}]
    report, code = fnbox_sync({"changes": to_sync, "mount": mount})
    assert code == 0 and report["synced"] == ["/workspace/a.json"], report
    assert [(s["path"], s["rule"]) for s in report["skipped"]] == [("/workspace/b.json", "default")], report
    assert report["deniedByPermissions"] == 1 and report["message"].startswith("1 of 2 changes written"), report
    assert sorted(os.listdir(output)) == ["a.json"]


def test_batch_mount_without_permissions_still_reads_and_lists_only(output):
    """Only a mount whose changes stay in the sandbox is open for writing by default: with batch sync and no
    permissions the call may read and list, and a create is refused (nothing reaches the host)."""
    mount = {"dirs": {"/workspace": str(output)}, "sync": {"mode": "batch"}}
    res = call(req("python", GENERATE["python"], "generate", [], mount=mount))
    err = failed(res)
    assert err["type"] == "PermissionError", describe(res.result)
    assert [d["operation"] for d in res.result["files"]["denied"]] == ["create"], describe(res.result)
    assert os.listdir(output) == []
