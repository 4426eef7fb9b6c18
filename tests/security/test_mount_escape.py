"""Host mounts never reach outside the mounted directory: not through host symlinks, `..`, links the
function makes, hard links, a directory swapped for a symlink during the call, or a process still
writing after the function returned. Defences: beneath-only host resolution (openat2 RESOLVE_BENEATH /
RESOLVE_NO_SYMLINKS in fs/mountfs.c and fs/sync.c), link policy in the FUSE server, and sync only after
every sandboxed process is dead (core/executor.c)."""
import os
import threading
import time

import pytest

from fnboxlib import call, describe, ok, req

SECRET = "HOST-SECRET-7f3a"


@pytest.fixture
def layout(tmp_path):
    os.chmod(tmp_path, 0o755)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "sub" / "plain.txt").write_text("plain")
    for p in (outside, data, data / "sub"):
        os.chmod(p, 0o755)
    for p in (outside / "secret.txt", data / "sub" / "plain.txt"):
        os.chmod(p, 0o644)
    return tmp_path, data, outside


def mount(data, **extra):
    m = {"dirs": {"/data": str(data)}, "permissions": {"default": {"create": True, "modify": True, "delete": True}},
         "sync": {"mode": "batch"}}
    m.update(extra)
    return m


READ_ALL = ("import os\n"
            "def f(paths):\n"
            "    out = []\n"
            "    for p in paths:\n"
            "        try: out.append(open(p).read())\n"
            "        except OSError as e: out.append(type(e).__name__)\n"
            "    return out\n")


@pytest.mark.parametrize("follow", [False, True, "restricted"])
def test_host_symlinks_do_not_lead_out(layout, follow):
    _, data, outside = layout
    os.symlink(str(outside / "secret.txt"), data / "abs")
    os.symlink("../outside/secret.txt", data / "rel")
    os.symlink(str(outside), data / "dirlink")
    paths = ["/data/abs", "/data/rel", "/data/dirlink/secret.txt", "/data/../outside/secret.txt",
             "/data/sub/../../outside/secret.txt"]
    got = ok(call(req("python", READ_ALL, "f", [paths], mount=mount(data, security={"followSymlinks": follow}))))
    assert SECRET not in got, (follow, got)


def test_links_made_inside_do_not_lead_out(layout):
    _, data, outside = layout
    code = ("import os\n"
            "def f(target):\n"
            "    out = []\n"
            "    for act in (lambda: os.symlink(target, '/data/l1'), lambda: os.link('/data/sub/plain.txt', '/data/h1')):\n"
            "        try: act(); out.append('made')\n"
            "        except OSError as e: out.append(type(e).__name__)\n"
            "    try: out.append(open('/data/l1').read())\n"
            "    except OSError as e: out.append(type(e).__name__)\n"
            "    return out\n")
    for follow in (False, True):
        res = call(req("python", code, "f", [str(outside / "secret.txt")],
                       mount=mount(data, security={"followSymlinks": follow})))
        got = ok(res)
        assert got[1] == "PermissionError", got          # hard links: never
        assert SECRET not in got, got
        if not follow:
            assert got[0] == "PermissionError", got      # no links in mounts at all
    # a symlink leading outside the mount is never synced to the host, whatever the link policy
    for follow in (True, "restricted"):
        res = call(req("python", code, "f", [str(outside / "secret.txt")],
                       mount=mount(data, security={"followSymlinks": follow})))
        ok(res)
        assert not os.path.islink(data / "l1"), f"a link to outside the mount was synced ({follow})"


def test_directory_swapped_for_symlink_during_the_call(layout):
    _, data, outside = layout
    code = ("import time\n"
            "def f():\n"
            "    seen = set()\n"
            "    end = time.time() + 1.5\n"
            "    while time.time() < end:\n"
            "        for name in ('plain.txt', 'secret.txt'):\n"
            "            try: seen.add(open('/data/sub/' + name).read())\n"
            "            except OSError as e: seen.add(type(e).__name__)\n"
            "    return sorted(seen)\n")

    def swap():
        time.sleep(0.4)
        os.rename(data / "sub", data / "sub.orig")
        os.symlink(str(outside), data / "sub")

    t = threading.Thread(target=swap)
    t.start()
    try:
        got = ok(call(req("python", code, "f", mount=mount(data))))
    finally:
        t.join()
    assert SECRET not in got, got


def test_writes_after_return_are_not_synced(layout):
    _, data, _ = layout
    code = ("import os, time\n"
            "def f():\n"
            "    if os.fork() == 0:\n"
            "        time.sleep(0.3)\n"
            "        open('/data/late.txt', 'w').write('late')\n"
            "        os._exit(0)\n"
            "    open('/data/early.txt', 'w').write('early')\n"
            "    return 'returned'\n")
    res = call(req("python", code, "f", mount=mount(data)))
    assert ok(res) == "returned"
    time.sleep(0.5)
    assert (data / "early.txt").read_text() == "early"
    assert not (data / "late.txt").exists(), "a process outliving the function wrote to the host"
    assert [c["path"] for c in res.result["files"]["created"]] == ["/data/early.txt"], describe(res.result)


def test_sync_never_writes_through_a_host_symlink(layout):
    """The function creates /data/sub/new.txt; a host symlink planted where sub was must not be followed."""
    _, data, outside = layout
    code = ("import time\n"
            "def f():\n"
            "    open('/data/sub/new.txt', 'w').write('payload')\n"
            "    time.sleep(0.8)\n")

    def swap():
        time.sleep(0.4)
        os.rename(data / "sub", data / "sub.orig")
        os.symlink(str(outside), data / "sub")

    t = threading.Thread(target=swap)
    t.start()
    try:
        res = call(req("python", code, "f", mount=mount(data)))
    finally:
        t.join()
    assert not (outside / "new.txt").exists(), "sync wrote through a host symlink"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert res.result["status"] == "success", describe(res.result)
