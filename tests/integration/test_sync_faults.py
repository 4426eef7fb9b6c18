"""`fnbox sync` on real failures, injected with an LD_PRELOAD shim (faultshim.c): an fsync or a rename of
a temporary failing in the middle of a sync, and fnbox killed (SIGKILL) in the middle of one.

Under onError "rollback" the host must end byte for byte as before (deletions included); under "continue"
the other changes are kept and the failed one leaves its target untouched; no temporary is ever left
behind by a failure. Killed mid-sync, every target is either wholly old or wholly new: never half written."""
import hashlib
import json
import os
import shutil
import subprocess

import pytest

from test_sync import ALLOW_ALL, leftovers, sync

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler for the fault shim (build-essential: scripts/install-deps.sh)"
    out = tmp_path_factory.mktemp("shim") / "faultshim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", str(out),
                    os.path.join(HERE, "faultshim.c"), "-ldl"], check=True)
    return str(out)


def fault_env(monkeypatch, shim, fault):
    monkeypatch.setenv("LD_PRELOAD", shim)
    monkeypatch.setenv("FNBOX_FAULT", fault)
    # the ASan build wants its runtime first; the shim only wraps four libc calls
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")


def snapshot(top):
    """{relative path: ('dir',) | ('file', sha256, mode)} of everything under top."""
    snap = {}
    for d, dirs, files in os.walk(top):
        for n in dirs:
            snap[os.path.relpath(os.path.join(d, n), top)] = ("dir",)
        for n in files:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                snap[os.path.relpath(p, top)] = ("file", hashlib.sha256(f.read()).hexdigest(),
                                                 os.stat(p).st_mode & 0o7777)
    return snap


@pytest.fixture(name="data")
def data_fixture(tmp_path):
    d = tmp_path / "data"
    (d / "sub").mkdir(parents=True)
    (d / "keep.txt").write_bytes(b"old keep " * 1000)
    (d / "del.txt").write_text("delete me")
    (d / "sub" / "deep.bin").write_bytes(bytes(range(256)) * 64)
    os.chmod(d / "keep.txt", 0o640)
    return d


def changes(n=4):
    big = "new " * 50000
    out = [{"path": "/data/keep.txt", "content": "new keep " + big, "kind": "modified"},
           {"path": "/data/del.txt", "kind": "deleted"},
           {"path": "/data/sub/deep.bin", "content": "replaced", "kind": "modified"}]
    out += [{"path": f"/data/new{i}.txt", "content": f"new file {i} " + big, "kind": "created"} for i in range(n)]
    return out


def payload(data, on_error):
    return {"changes": changes(), "mount": {"dirs": {"/data": str(data)}, "permissions": ALLOW_ALL},
            "onError": on_error}


@pytest.mark.parametrize("fault", ["fsync:1", "fsync:3", "fsync:6", "rename:new2.txt", "rename:keep.txt",
                                   "rename:deep.bin"])
def test_rollback_restores_the_host(data, shim, monkeypatch, fault):
    before = snapshot(data)
    fault_env(monkeypatch, shim, fault)
    report, code, _ = sync(payload(data, "rollback"))
    assert code == 1, report
    assert report["rolledBack"] is True and report["synced"] == [], report
    assert len(report["failed"]) == 1 and "Input/output error" in report["failed"][0]["error"], report
    assert snapshot(data) == before
    assert leftovers(data) == []


@pytest.mark.parametrize("fault,victim", [("fsync:2", None), ("rename:new1.txt", "/data/new1.txt"),
                                          ("rename:keep.txt", "/data/keep.txt")])
def test_continue_keeps_the_rest(data, shim, monkeypatch, fault, victim):
    before = snapshot(data)
    fault_env(monkeypatch, shim, fault)
    report, code, _ = sync(payload(data, "continue"))
    assert code == 1, report
    assert len(report["failed"]) == 1, report
    failed = report["failed"][0]["path"]
    if victim:
        assert failed == victim
    assert len(report["synced"]) == len(changes()) - 1
    after = snapshot(data)
    rel = failed[len("/data/"):]
    assert after.get(rel) == before.get(rel), f"{failed} changed although its sync failed"
    for ch in changes():
        r = ch["path"][len("/data/"):]
        if ch["path"] == failed:
            continue
        if ch["kind"] == "deleted":
            assert r not in after
        else:
            assert (data / r).read_text() == ch["content"]
    assert leftovers(data) == []


@pytest.mark.parametrize("on_error", ["rollback", "continue"])
@pytest.mark.parametrize("n", [1, 3, 5])
def test_killed_mid_sync_leaves_no_half_written_file(data, shim, monkeypatch, n, on_error):
    old = {r: (data / r).read_bytes() for r in ("keep.txt", "sub/deep.bin")}
    fault_env(monkeypatch, shim, f"kill-fsync:{n}")
    proc = subprocess.run([os.environ.get("FNBOX", "build/fnbox"), "sync", "-"],
                          input=json.dumps(payload(data, on_error)).encode(), capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr[-2000:]
    for ch in changes():
        r = ch["path"][len("/data/"):]
        p = data / r
        if ch["kind"] == "deleted" or not p.exists():
            continue  # absent: deleted, or not created yet
        got = p.read_bytes()
        assert got in (old.get(r), ch["content"].encode()), f"{r} is half written ({len(got)} bytes)"
    # a kill can leave only fnbox's own hidden temporaries and backups, never a visible partial file
    assert all(os.path.basename(p).startswith(".fnbox-sync-") for p in leftovers(data))
