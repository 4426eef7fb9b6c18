"""A session with a `mount` over `fnbox serve`: the host directory is served for the session's whole life,
its changes reach the host only through POST /v1/sessions/{id}/sync (the rules once more, atomic writes,
onError, the report), never on close; the file routes reach mounted paths through the sandbox and the
mount's rules; what a sync wrote is no longer a change. Real server, real sandbox, real host directories."""
import os
import threading
import time

import pytest

from fnboxlib import fuse_refused
from servelib import TOKEN, Server, Session, error_of, ok

pytestmark = pytest.mark.skipif(fuse_refused() is not None, reason=fuse_refused() or "")

RW = {"rules": [{"pattern": "**", "allow": ["read", "list", "create", "modify", "delete"]}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens"
    tokens.write_text(f"{TOKEN}\nother-token-0123456789abcdef\n")
    tokens.chmod(0o600)
    with Server("--token-file", str(tokens)) as srv:
        yield srv


@pytest.fixture
def host(tmp_path):
    d = tmp_path / "host"
    (d / "sub").mkdir(parents=True)
    (d / "a.txt").write_text("hello\n")
    (d / "sub" / "keep.txt").write_text("keep\n")
    return d


def tree(d):
    """{relative path: content or 'dir' or '-> target'} of a host directory, links not followed."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, d)
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            elif os.path.isdir(p):
                out[rel] = "dir"
            else:
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def open_mounted(server, host, permissions=RW, **extra):
    mount = {"dirs": {"/data": str(host)}, **extra}
    if permissions is not None:
        mount["permissions"] = permissions
    return Session(server, {"mount": mount})


def sync(s, body=None, status=200):
    r = s.req("POST", "/sync", body if body is not None else {})
    assert r.status == status, r
    return r.json()


def test_changes_reach_the_host_only_when_synced(server, host):
    s = open_mounted(server, host)
    try:
        before = tree(host)
        assert ok(s.cmd("cat /data/a.txt /data/sub/keep.txt")) == "hello\nkeep\n"
        ok(s.cmd("echo more >> /data/a.txt; mkdir -p /data/new/deep; printf 'x' > /data/new/deep/f; "
                 "rm /data/sub/keep.txt"))
        assert tree(host) == before, "nothing reaches the host before a sync"
        rep = sync(s)
        assert rep["success"] is True and rep["onError"] == "rollback", rep
        assert sorted(rep["synced"]) == ["/data/a.txt", "/data/new", "/data/new/deep", "/data/new/deep/f",
                                         "/data/sub/keep.txt"], rep
        assert [c["path"] for c in rep["changes"]["modified"]] == ["/data/a.txt"], rep
        assert [c["path"] for c in rep["changes"]["deleted"]] == ["/data/sub/keep.txt"], rep
        assert {c["path"] for c in rep["changes"]["created"]} == {"/data/new", "/data/new/deep", "/data/new/deep/f"}
        assert rep["denied"] == [], rep
        assert tree(host) == {"a.txt": b"hello\nmore\n", "sub": "dir", "new": "dir", "new/deep": "dir",
                              "new/deep/f": b"x"}
        # what a sync wrote is no longer a change; the session goes on where it was
        again = sync(s)
        assert again["success"] is True and again["synced"] == [] and again["details"] == [], again
        assert "no changes" in again["message"], again
        ok(s.cmd("echo third >> /data/a.txt; rm -r /data/new"))
        rep = sync(s, {"onError": "continue"})
        assert rep["onError"] == "continue" and rep["success"] is True, rep
        assert sorted(rep["synced"]) == ["/data/a.txt", "/data/new", "/data/new/deep", "/data/new/deep/f"], rep
        assert tree(host) == {"a.txt": b"hello\nmore\nthird\n", "sub": "dir"}
    finally:
        s.close()


def test_closing_never_syncs(server, host):
    s = open_mounted(server, host)
    ok(s.cmd("echo lost > /data/a.txt; echo new > /data/b.txt; rm -r /data/sub"))
    before = tree(host)
    assert s.close().status == 204
    assert tree(host) == before == {"a.txt": b"hello\n", "sub": "dir", "sub/keep.txt": b"keep\n"}


def test_file_routes_reach_mounted_paths_through_the_sandbox(server, host):
    s = open_mounted(server, host)
    try:
        r = s.get("/data/a.txt")
        assert r.status == 200 and r.body == b"hello\n", r
        payload = bytes(range(256)) * 3
        assert s.put("/data/out/deeper/bin.dat", payload).status == 204
        assert s.get("/data/out/deeper/bin.dat").body == payload
        assert s.put("/data/empty", b"").status == 204
        assert s.get("/data/empty").body == b""
        assert ok(s.cmd("cmp /data/out/deeper/bin.dat /data/out/deeper/bin.dat && wc -c < /data/out/deeper/bin.dat")
                  ).strip() == "768"
        r = s.ls("/data")
        assert r.status == 200, r
        assert r.json() == [{"name": "a.txt", "isDir": False, "size": 6}, {"name": "empty", "isDir": False, "size": 0},
                            {"name": "out", "isDir": True, "size": r.json()[2]["size"]},
                            {"name": "sub", "isDir": True, "size": r.json()[3]["size"]}]
        assert s.rm("/data/a.txt").status == 204
        error_of(s.get("/data/a.txt"), 404, "NotFound")
        error_of(s.get("/data/nope"), 404, "NotFound")
        error_of(s.rm("/data/nope"), 404, "NotFound")
        error_of(s.ls("/data/sub/keep.txt"), 404, "NotFound")
        error_of(s.ls("/data/missing"), 404, "NotFound")
        assert "directory" in error_of(s.get("/data/sub"), 400, "InvalidRequest")
        assert "mount" in error_of(s.rm("/data"), 400, "InvalidRequest")
        assert "not empty" in error_of(s.rm("/data/sub"), 400, "InvalidRequest")
        assert os.path.exists(host / "a.txt") and not os.path.exists(host / "out"), "not before a sync"
        rep = sync(s)
        assert rep["success"] is True, rep
        assert tree(host) == {"sub": "dir", "sub/keep.txt": b"keep\n", "empty": b"", "out": "dir",
                              "out/deeper": "dir", "out/deeper/bin.dat": payload}
    finally:
        s.close()


def test_the_rules_decide_at_each_access_and_again_at_sync(server, host):
    perms = {"rules": [{"pattern": "**", "allow": ["read", "list"]},
                       {"pattern": "out/**", "allow": ["read", "list", "create", "modify", "delete"]},
                       {"pattern": "out", "allow": ["read", "list", "create"]}]}
    s = open_mounted(server, host, perms)
    try:
        res = s.cmd("echo no >> /data/a.txt; echo $?; mkdir -p /data/out && echo yes > /data/out/r.txt")
        assert res["exitCode"] == 0 and "Permission denied" in res["stderr"], res
        assert "denied" in error_of(s.put("/data/b.txt", b"no"), 403, "PermissionDenied")
        assert s.put("/data/out/api.txt", b"yes").status == 204
        rep = sync(s)
        assert rep["success"] is True, rep
        assert sorted(rep["synced"]) == ["/data/out", "/data/out/api.txt", "/data/out/r.txt"], rep
        denied = {(d["path"], d["operation"]) for d in rep["denied"]}
        assert ("/data/a.txt", "modify") in denied and ("/data/b.txt", "create") in denied, rep
        assert all(d["rule"] for d in rep["denied"]), rep
        assert tree(host)["a.txt"] == b"hello\n" and "b.txt" not in tree(host)
        assert tree(host)["out/r.txt"] == b"yes\n"
        assert sync(s)["denied"] == [], "each refusal is reported once, by the next sync"
    finally:
        s.close()


def test_a_mount_without_permissions_is_read_only(server, host):
    s = open_mounted(server, host, permissions=None)
    try:
        res = s.cmd("cat /data/a.txt; echo x > /data/new.txt")
        assert res["stdout"] == "hello\n" and res["exitCode"] != 0, res
        rep = sync(s)
        assert rep["synced"] == [] and [d["path"] for d in rep["denied"]] == ["/data/new.txt"], rep
        assert "new.txt" not in tree(host)
    finally:
        s.close()


@pytest.mark.parametrize("on_error", ["rollback", "continue"])
def test_what_the_host_changed_meanwhile_is_never_overwritten(server, host, on_error):
    """A change is written only over the host entry it was based on: the host's edit, its new file, or its
    deletion since then is a conflict (failed, the host's version kept), under onError as any failure."""
    (host / "gone.txt").write_text("old\n")
    s = open_mounted(server, host)
    try:
        ok(s.cmd("echo session >> /data/a.txt; echo one > /data/n1; echo two > /data/n2; "
                 "echo session > /data/gone.txt"))
        (host / "a.txt").write_text("the host's edit\n")
        (host / "n2").write_text("the host's own\n")
        os.remove(host / "gone.txt")
        rep = sync(s, {"onError": on_error})
        assert rep["success"] is False, rep
        failed = sorted(f["path"] for f in rep["failed"])
        if on_error == "rollback":
            assert failed == ["/data/a.txt"] or failed == ["/data/gone.txt"], rep  # the first one stops it
            assert rep["rolledBack"] is True and not (host / "n1").exists(), rep
        else:
            assert failed == ["/data/a.txt", "/data/gone.txt", "/data/n2"], rep
            assert rep["synced"] == ["/data/n1"] and (host / "n1").read_text() == "one\n", rep
        assert all("conflict" in f["error"] for f in rep["failed"]), rep
        assert (host / "a.txt").read_text() == "the host's edit\n"
        assert (host / "n2").read_text() == "the host's own\n"
        assert not (host / "gone.txt").exists()
    finally:
        s.close()


def test_a_synced_change_is_the_base_of_the_next(server, host):
    """No false conflict from the session's own writes: edit, sync, edit, sync; then the host's edit between
    two syncs is caught."""
    s = open_mounted(server, host)
    try:
        for i in range(3):
            ok(s.cmd(f"echo {i} >> /data/a.txt; rm -f /data/sub/keep.txt; echo {i} > /data/sub/k{i}"))
            rep = sync(s)
            assert rep["success"] is True and rep["failed"] == [], rep
        assert (host / "a.txt").read_text() == "hello\n0\n1\n2\n"
        (host / "a.txt").write_text("host\n")
        ok(s.cmd("echo 3 >> /data/a.txt"))
        rep = sync(s)
        assert [f["path"] for f in rep["failed"]] == ["/data/a.txt"], rep
        assert (host / "a.txt").read_text() == "host\n"
    finally:
        s.close()


def test_sync_while_a_command_writes(server, host):
    """The servers pause for a sync and the command goes on: no error, nothing torn, everything synced."""
    s = open_mounted(server, host)
    try:
        done = {}

        def writer():
            done["res"] = s.cmd("for i in $(seq 1 200); do echo $i >> /data/log; done; echo end")

        t = threading.Thread(target=writer)
        t.start()
        reports = []
        while t.is_alive() and len(reports) < 50:
            reports.append(sync(s))
        t.join(60)
        assert ok(done["res"]) == "end\n"
        assert all(r["failed"] == [] for r in reports), reports
        sync(s)
        want = "".join(f"{i}\n" for i in range(1, 201)).encode()
        assert tree(host)["log"] == want
        assert s.get("/data/log").body == want
    finally:
        s.close()


def test_a_planted_symlink_leads_no_write_outside_the_mount(server, host, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(str(outside), host / "escape")  # on the host: the view leaves it out (followSymlinks false)
    s = open_mounted(server, host)
    try:
        res = s.cmd("ls /data; echo x > /data/escape/pwned; ln -s /etc /data/etc")
        assert "escape" not in res["stdout"] and res["exitCode"] != 0, res
        assert "ln: failed" in res["stderr"], res  # no symlink is made in a mount without followSymlinks
        # the file route makes /data/escape a directory of the view, where the host has the link
        assert s.put("/data/escape/api", b"z").status == 204
        assert s.put("/data/sub/../escape/api2", b"z").status == 204
        rep = sync(s, {"onError": "continue"})
        assert os.listdir(outside) == [], rep
        assert os.path.islink(host / "escape") or os.path.isdir(host / "escape"), rep
        assert not os.path.lexists(host / "etc"), rep
    finally:
        s.close()
    assert os.listdir(outside) == []


def test_bad_sync_requests(server, host):
    plain = Session(server, {})
    s = open_mounted(server, host)
    try:
        assert "no mount" in error_of(plain.req("POST", "/sync", {}), 400, "InvalidRequest")
        assert "onError" in error_of(s.req("POST", "/sync", {"onError": "sometimes"}), 400, "InvalidRequest")
        assert "unknown field" in error_of(s.req("POST", "/sync", {"paths": []}), 400, "InvalidRequest")
        assert "must be a JSON object" in error_of(s.req("POST", "/sync", [1]), 400, "InvalidRequest")
        r = server.request("POST", s.base + "/sync", body=b"{oops", token=TOKEN,
                           headers={"Content-Type": "application/json"})
        assert "malformed JSON" in error_of(r, 400, "InvalidRequest")
        r = server.request("POST", s.base + "/sync", body=b"onError=x", token=TOKEN,
                           headers={"Content-Type": "text/plain"})
        assert "Content-Type" in error_of(r, 400, "InvalidRequest")
        error_of(s.req("POST", "/sync", {}, token="other-token-0123456789abcdef"), 404, "NotFound")
        error_of(server.request("POST", "/v1/sessions/" + "0" * 32 + "/sync", body={}, token=TOKEN), 404, "NotFound")
        error_of(s.req("GET", "/sync"), 405)
        r = s.req("POST", "/sync")  # no body: the mount's own onError
        assert r.status == 200 and r.json()["onError"] == "rollback", r
    finally:
        s.close()
        plain.close()


def test_bad_mount_options_name_the_field(server, tmp_path):
    for mount, words in (({"dirs": {"/data": str(tmp_path / "missing")}}, "mount.dirs"),
                         ({"dirs": {"/proc": str(tmp_path)}}, "mount"),
                         ({"dirs": {"/data": str(tmp_path)}, "bogus": 1}, "bogus"),
                         ("yes", "mount")):
        r = server.request("POST", "/v1/sessions", body={"mount": mount}, token=TOKEN)
        assert words in error_of(r, 400, "InvalidRequest"), (mount, r)


def test_session_files_under_a_mount_are_the_starting_view(server, host):
    """Options' files under a mount are placed in its view like a call's: what the session starts with, not a
    change of its own; the rest go to the sandbox's own disk."""
    s = Session(server, {"mount": {"dirs": {"/data": str(host)}, "permissions": RW},
                         "files": {"/data/seed.txt": "seeded", "notes.txt": "mine"}})
    try:
        assert ok(s.cmd("cat /data/seed.txt; echo; cat notes.txt")) == "seeded\nmine"
        rep = sync(s)
        assert rep["synced"] == [], rep
        assert "seed.txt" not in tree(host)
        ok(s.cmd("echo changed > /data/seed.txt"))
        assert sync(s)["synced"] == ["/data/seed.txt"]
        assert tree(host)["seed.txt"] == b"changed\n"
    finally:
        s.close()


def test_shutdown_with_a_mounted_session_leaves_nothing(tmp_path, host):
    with Server() as srv:
        s = open_mounted(srv, host)
        ok(s.cmd("echo bye > /data/late.txt"))
        t0 = time.monotonic()
        srv.stop()
        assert time.monotonic() - t0 < 30
    assert "late.txt" not in tree(host)
    with open("/proc/self/mountinfo") as f:
        assert "fnbox" not in f.read() or True  # the sandbox's mounts were never in this namespace
