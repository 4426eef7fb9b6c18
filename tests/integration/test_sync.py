"""`fnbox sync`: apply reported changes to host directories, end to end on temp dirs.

Checks the report and the exit codes (0 all synced/skipped, 1 some change failed, 2 invalid input naming the
field), both input shapes (a change array, or a result's `files` object), rollback leaving the host byte for
byte as before with no temporary file behind, the rules' final check, and the escapes (`..`, `/data` vs
`/database`, a host symlink planted in place of a directory)."""
import base64
import json
import os

import pytest

from fnboxlib import run_cli

ALLOW_ALL = {"default": {"create": True, "modify": True, "delete": True}}


def sync(payload, argv=("sync", "-"), cwd=None):
    """Run `fnbox sync` on payload (dict, or raw text); returns (report, exit code, stderr)."""
    raw = payload if isinstance(payload, (str, bytes)) else json.dumps(payload)
    if cwd is not None:
        old = os.getcwd()
        os.chdir(cwd)
    try:
        proc = run_cli(list(argv), input=raw)
    finally:
        if cwd is not None:
            os.chdir(old)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.stdout, f"no report on stdout (exit {proc.returncode}); stderr: {stderr[-1500:]}"
    report = json.loads(proc.stdout.decode("utf-8"))  # exactly one JSON document
    assert isinstance(report, dict)
    for key in ("success", "synced", "failed", "skipped"):
        assert key in report, f"report lacks {key}: {report}"
    return report, proc.returncode, stderr


def leftovers(top):
    return [os.path.join(d, n) for d, dirs, files in os.walk(top) for n in dirs + files
            if n.startswith(".fnbox-sync-")]


@pytest.fixture(name="host")
def host_fixture(tmp_path):
    for d in ("data", "database", "outside"):
        (tmp_path / d).mkdir()
    return tmp_path


def mount(host, **extra):
    m = {"dirs": {"/data": str(host / "data")}, "permissions": ALLOW_ALL}
    m.update(extra)
    return m


def test_created_modified_deleted(host):
    (host / "data" / "old.txt").write_text("old")
    (host / "data" / "gone.txt").write_text("bye")
    payload = {"changes": [
        {"path": "/data/out/a.txt", "type": "file", "size": 6, "content": "hello\n", "kind": "created"},
        {"path": "/data/out/b.bin", "type": "file", "content": {"base64": base64.b64encode(b"\0\1\2\xff").decode()},
         "operation": "created"},
        {"path": "/data/old.txt", "type": "file", "content": "new", "kind": "modified"},
        {"path": "/data/gone.txt", "type": "file", "kind": "deleted"},
        {"path": "/data/emptydir", "type": "directory", "kind": "created"},
    ], "mount": mount(host)}
    report, code, _ = sync(payload)
    assert code == 0, report
    assert report["success"] is True
    assert sorted(report["synced"]) == sorted(c["path"] for c in payload["changes"])
    assert report["failed"] == [] and report["skipped"] == []
    assert (host / "data/out/a.txt").read_text() == "hello\n"
    assert (host / "data/out/b.bin").read_bytes() == b"\0\1\2\xff"
    assert (host / "data/old.txt").read_text() == "new"
    assert not (host / "data/gone.txt").exists()
    assert (host / "data/emptydir").is_dir()
    details = {d["path"]: d for d in report["details"]}
    assert details["/data/out/a.txt"]["realPath"] == str(host / "data/out/a.txt")
    assert details["/data/old.txt"]["operation"] == "modify"
    assert leftovers(host) == []


def test_files_object_from_a_result(host, tmp_path):
    """A result's whole `files` object, from a file argument; `denied` and other members are not changes."""
    (host / "data" / "m.txt").write_text("before")
    files = {"created": [{"path": "/data/c.txt", "type": "file", "size": 1, "content": "c"}],
             "modified": [{"path": "/data/m.txt", "type": "file", "size": 5, "content": "after"}],
             "deleted": [],
             "denied": [{"path": "/data/x", "operation": "read", "rule": "default"}]}
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"changes": files, "mount": mount(host)}))
    report, code, _ = sync(None, argv=("sync", str(f)))
    assert code == 0, report
    assert sorted(report["synced"]) == ["/data/c.txt", "/data/m.txt"]
    assert (host / "data/m.txt").read_text() == "after"


def test_seed_style_list_without_kind(host):
    """The seed passes `result.files.created` as is: no kind means write it (create or replace)."""
    (host / "data" / "there.txt").write_text("old")
    report, code, _ = sync({"changes": [{"path": "/data/there.txt", "type": "file", "content": "replaced"},
                                        {"path": "/data/fresh.txt", "type": "file", "content": "fresh"}],
                            "mount": mount(host)})
    assert code == 0, report
    assert (host / "data/there.txt").read_text() == "replaced"
    assert (host / "data/fresh.txt").read_text() == "fresh"


def test_relative_host_dir(host):
    report, code, _ = sync({"changes": [{"path": "/w/a.txt", "content": "a", "kind": "created"}],
                            "mount": {"dirs": {"/w": "./data"}, "permissions": ALLOW_ALL}}, cwd=host)
    assert code == 0, report
    assert (host / "data/a.txt").read_text() == "a"


def test_rollback_restores_everything(host):
    (host / "data" / "keep.bin").write_bytes(b"\x00original\xff")
    (host / "data" / "del.txt").write_text("still here")
    (host / "data" / "blocker").write_text("a file, not a directory")
    report, code, _ = sync({"changes": [
        {"path": "/data/keep.bin", "content": "overwritten", "kind": "modified"},
        {"path": "/data/del.txt", "kind": "deleted"},
        {"path": "/data/new.txt", "content": "new", "kind": "created"},
        {"path": "/data/blocker/sub/x.txt", "content": "cannot", "kind": "created"},
    ], "mount": mount(host)})
    assert code == 1, report
    assert report["success"] is False
    assert report["rolledBack"] is True
    assert report["synced"] == []
    assert [f["path"] for f in report["failed"]] == ["/data/blocker/sub/x.txt"]
    assert "not a directory" in report["failed"][0]["error"]
    assert sorted(report["undone"]) == ["/data/del.txt", "/data/keep.bin", "/data/new.txt"]
    assert (host / "data/keep.bin").read_bytes() == b"\x00original\xff"
    assert (host / "data/del.txt").read_text() == "still here"
    assert not (host / "data/new.txt").exists()
    assert sorted(os.listdir(host / "data")) == ["blocker", "del.txt", "keep.bin"]
    assert leftovers(host) == []


@pytest.mark.parametrize("policy,kept", [("continue", True), ("abort", False)])
def test_continue_and_abort(host, policy, kept):
    (host / "data" / "exists.txt").write_text("mine")
    report, code, _ = sync({"changes": [
        {"path": "/data/a.txt", "content": "a", "kind": "created"},
        {"path": "/data/exists.txt", "content": "clobber", "kind": "created"},
        {"path": "/data/z.txt", "content": "z", "kind": "created"},
    ], "mount": mount(host), "onError": policy})
    assert code == 1, report
    assert report["onError"] == policy
    assert (host / "data/exists.txt").read_text() == "mine"
    assert "already exists" in report["failed"][0]["error"]
    assert (host / "data/a.txt").read_text() == "a"
    assert (host / "data/z.txt").exists() is kept
    if not kept:
        assert report["notAttempted"] == ["/data/z.txt"]
    assert leftovers(host) == []


def test_rules_are_checked_again(host):
    report, code, _ = sync({"changes": [
        {"path": "/data/output/ok.txt", "content": "ok", "kind": "created"},
        {"path": "/data/forbidden.txt", "content": "no", "kind": "created"},
    ], "mount": {"dirs": {"/data": str(host / "data")},
                 "permissions": {"rules": [{"pattern": "output/**", "allow": ["create"]}]}}})
    assert code == 0, report
    assert report["synced"] == ["/data/output/ok.txt"]
    assert report["skipped"][0]["path"] == "/data/forbidden.txt"
    assert report["skipped"][0]["rule"] == "default"
    assert "permission denied: create" in report["skipped"][0]["reason"]
    assert not (host / "data/forbidden.txt").exists()


def test_escapes_never_write_outside(host):
    os.symlink(host / "outside", host / "data" / "output")
    report, code, _ = sync({"changes": [
        {"path": "/data/output/x.txt", "content": "through a host symlink", "kind": "created"},
        {"path": "/data/../outside/y.txt", "content": "dotdot", "kind": "created"},
        {"path": "/database/z.txt", "content": "not mounted", "kind": "created"},
    ], "mount": mount(host), "onError": "continue"})
    assert code == 1, report
    failed = {f["path"]: f["error"] for f in report["failed"]}
    assert "symbolic link is in the way" in failed["/data/output/x.txt"]
    assert "'..'" in failed["/data/../outside/y.txt"]
    assert report["skipped"][0]["path"] == "/database/z.txt"
    assert os.listdir(host / "outside") == []
    assert os.listdir(host / "database") == []


def test_hostile_names(host):
    long_name = "n" * 256
    report, code, _ = sync({"changes": [
        {"path": "/data/new\nline.txt", "content": "nl", "kind": "created"},
        {"path": "/data/" + long_name, "content": "long", "kind": "created"},
    ], "mount": mount(host), "onError": "continue"})
    assert code == 1, report
    assert report["synced"] == ["/data/new\nline.txt"]
    assert "file name too long" in report["failed"][0]["error"]
    assert (host / "data" / "new\nline.txt").read_text() == "nl"


BAD_INPUTS = [
    ("not json", "input: malformed JSON"),
    ("[]", "input: must be a JSON object"),
    ({"mount": "M"}, "changes: required"),
    ({"changes": "x", "mount": "M"}, "changes: must be an array"),
    ({"changes": {}, "mount": "M"}, "changes: a files object needs"),
    ({"changes": [], "mount": "M", "extra": 1}, "extra: unknown field"),
    ({"changes": []}, "mount: required"),
    ({"changes": [], "mount": "M", "onError": "retry"}, "onError: must be"),
    ({"changes": [{"content": "x"}], "mount": "M"}, "changes[0].path: required"),
    ({"changes": [{"path": 1}], "mount": "M"}, "changes[0].path: must be a string"),
    ({"changes": [{"path": "data/x", "content": "x"}], "mount": "M"}, "changes[0].path: must be an absolute"),
    ({"changes": [{"path": "/data/x", "content": "x", "kind": "renamed"}], "mount": "M"}, "changes[0].kind: must be"),
    ({"changes": [{"path": "/data/x", "content": "x", "kind": "created", "operation": "deleted"}], "mount": "M"},
     "changes[0]: kind \"created\" and operation \"deleted\" disagree"),
    ({"changes": [{"path": "/data/x", "content": "x", "type": "fifo"}], "mount": "M"}, "changes[0].type: must be"),
    ({"changes": [{"path": "/data/x", "content": 5}], "mount": "M"}, "changes[0].content: must be a string"),
    ({"changes": [{"path": "/data/x", "content": {"base64": "!!"}}], "mount": "M"}, "changes[0].content.base64"),
    ({"changes": [{"path": "/data/x", "content": "abc", "size": 5}], "mount": "M"}, "changes[0].size: 5 does not match"),
    ({"changes": [{"path": "/data/x", "content": "x", "mode": "rwx"}], "mount": "M"}, "changes[0].mode"),
    ({"changes": [{"path": "/data/x.txt", "type": "file", "size": 3, "kind": "created"}], "mount": "M"},
     "changes[0].content: /data/x.txt has no content"),
    ({"changes": {"created": [{"path": "/data/x", "content": "x", "kind": "deleted"}]}, "mount": "M"},
     "changes.created[0]: listed under created"),
    ({"changes": [], "mount": {"dirs": {"/data": "./definitely-missing"}}},
     "mount.dirs[\"/data\"]: host directory ./definitely-missing does not exist"),
    ({"changes": [], "mount": {"dirs": {"/etc": "@D"}}}, "mount.dirs[\"/etc\"]: /etc is a system directory"),
    ({"changes": [], "mount": {"dirs": {"/data": "@D"}, "sync": {"onError": "x"}}}, "mount.sync.onError"),
]


@pytest.mark.parametrize("payload,want", BAD_INPUTS, ids=[w for _, w in BAD_INPUTS])
def test_bad_input_names_the_field(host, payload, want):
    if isinstance(payload, dict):
        # "M": a valid mount of /data; "@D": the host directory
        text = json.dumps(payload).replace('"M"', json.dumps({"dirs": {"/data": "@D"}}))
        text = text.replace('"@D"', json.dumps(str(host / "data")))
    else:
        text = payload
    report, code, _ = sync(text, cwd=host)
    assert code == 2, report
    assert report["success"] is False
    assert report["error"]["type"] == "InvalidRequest"
    assert want in report["error"]["message"], report["error"]["message"]
    assert os.listdir(host / "data") == []


def test_help_and_usage():
    proc = run_cli(["sync", "--help"])
    assert proc.returncode == 0
    assert b"exit status" in proc.stdout
    proc = run_cli(["sync", "--bogus"])
    assert proc.returncode == 2
    proc = run_cli(["--help"])
    assert b"sync" in proc.stdout


def test_unreadable_input_file(tmp_path):
    proc = run_cli(["sync", str(tmp_path / "missing.json")])
    assert proc.returncode == 2
    report = json.loads(proc.stdout)
    assert report["error"]["type"] == "InvalidRequest"
