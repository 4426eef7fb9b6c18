"""Host mounts never reach outside the mounted directory: not through host symlinks, `..`, links the
function makes, hard links, a directory swapped for a symlink during the call, or a process still
writing after the function returned; and an excluded name cannot be told from an absent one, whatever
the function tries. Defences: beneath-only host resolution (openat2 RESOLVE_BENEATH / RESOLVE_NO_SYMLINKS
in fs/mountfs.c and fs/sync.c), link policy in the FUSE server, sync only after every sandboxed process is
dead (core/executor.c), and excluded host entries left out of the view before any operation is decided
(`excluded()` in fs/mountfs.c; FNBOX_DISABLE_DEFENCES=mountfs-exclude on a -DFB_DEFENCE_SWITCHES build
shows the excluded entries again and test_excluded_existence_is_no_oracle fails)."""
import os
import threading
import time

import pytest

from fnboxlib import call, describe, ok, readable_by_all, req

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


# Every way the function can ask about a path, each answer reduced to "ok" or the errno's name (and what a
# successful stat / listing / read shows, but no times: a parent's mtime moves with any entry, shown or not).
ORACLE = ("import ctypes, errno, os\n"
          "libc = ctypes.CDLL(None, use_errno=True)\n"
          "def ask(fn):\n"
          "    try:\n"
          "        r = fn()\n"
          "    except OSError as e:\n"
          "        return errno.errorcode.get(e.errno, str(e.errno))\n"
          "    if isinstance(r, os.stat_result):\n"
          "        return ['stat', r.st_mode, r.st_size, r.st_nlink, r.st_blocks]\n"
          "    return r if isinstance(r, (list, str, bool, int)) or r is None else 'ok'\n"
          "def rename2(a, b, flags):\n"
          "    if libc.renameat2(-100, a.encode(), -100, b.encode(), flags) != 0:\n"
          "        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))\n"
          "def write(p, mode):\n"
          "    with open(p, mode) as fh: fh.write('probe')\n"
          "def f(targets):\n"
          "    open('/data/sub/mine.txt', 'w').write('mine')\n"
          "    out = []\n"
          "    for p in targets:\n"
          "        for name, fn in [\n"
          "            ('stat', lambda: os.stat(p)), ('lstat', lambda: os.lstat(p)),\n"
          "            ('access', lambda: os.access(p, os.F_OK)), ('exists', lambda: os.path.exists(p)),\n"
          "            ('child', lambda: os.stat(p + '/x')), ('list', lambda: sorted(os.listdir(p))),\n"
          "            ('readlink', lambda: os.readlink(p)), ('xattr', lambda: os.listxattr(p)),\n"
          "            ('read', lambda: open(p).read()), ('chmod', lambda: os.chmod(p, 0o600)),\n"
          "            ('utime', lambda: os.utime(p)), ('truncate', lambda: os.truncate(p, 0)),\n"
          "            ('link-from', lambda: os.link(p, '/data/sub/hard')),\n"
          "            ('link-to', lambda: os.link('/data/sub/mine.txt', p)),\n"
          "            ('noreplace', lambda: rename2('/data/sub/mine.txt', p, 1)),\n"
          "            ('rename-from', lambda: os.rename(p, '/data/sub/moved')),\n"
          "            ('excl', lambda: write(p, 'x')), ('mkdir', lambda: os.mkdir(p)),\n"
          "            ('symlink', lambda: os.symlink('mine.txt', p)), ('rename-to', lambda: os.rename('/data/sub/mine.txt', p)),\n"
          "            ('after', lambda: os.stat(p)), ('unlink', lambda: os.unlink(p)), ('rmdir', lambda: os.rmdir(p)),\n"
          "            ('parent', lambda: os.stat(os.path.dirname(p))),\n"
          "            ('siblings', lambda: sorted(os.listdir(os.path.dirname(p)))),\n"
          "        ]:\n"
          "            out.append([p, name, ask(fn)])\n"
          "        if not os.path.exists('/data/sub/mine.txt'): open('/data/sub/mine.txt', 'w').write('mine')\n"
          "    return out\n")

EXCLUDED = ["/data/sub/.env", "/data/sub/node_modules", "/data/sub/node_modules/pkg",
            "/data/sub/node_modules/pkg/index.js", "/data/sub/deep/id_rsa"]


@pytest.mark.parametrize("mode", ["throw", "ignore", "virtual"])
def test_excluded_existence_is_no_oracle(tmp_path, mode):
    """Two host trees, one holding the excluded entries and one without them: whatever the function does
    (stat, access, open, O_EXCL, mkdir, rename with and without RENAME_NOREPLACE, link, symlink, a child's
    stat, the parent's size and link count), it sees exactly the same. EEXIST, ENOTDIR or a size that
    counts the hidden entries would each tell it what the caller excluded."""
    os.chmod(tmp_path, 0o755)
    seen = {}
    for layout in ("present", "absent"):
        data = tmp_path / layout
        (data / "sub" / "deep").mkdir(parents=True)
        if layout == "present":
            (data / "sub" / "node_modules" / "pkg").mkdir(parents=True)
            (data / "sub" / "node_modules" / "pkg" / "index.js").write_text(SECRET)
            (data / "sub" / ".env").write_text(SECRET)
            (data / "sub" / "deep" / "id_rsa").write_text(SECRET)
        readable_by_all(data)
        before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
        m = mount(data, onPermissionDenied=mode, security={"followSymlinks": True},
                  sync={"mode": "batch"})
        m["permissions"]["exclude"] = [".env", "node_modules", "sub/deep/id_rsa"]
        res = call(req("python", ORACLE, "f", [EXCLUDED], mount=m))
        seen[layout] = ok(res)
        assert SECRET not in str(seen[layout]), describe(res.result)
        after = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
        after.pop(data / "sub" / "mine.txt", None)  # the function's own, allowed file
        after.pop(data / "sub" / "moved", None)
        assert after == before, f"an excluded path changed on the host ({layout})"
    differ = [(a, b) for a, b in zip(seen["present"], seen["absent"]) if a != b]
    assert not differ, f"the function can tell excluded entries exist: {differ}"
