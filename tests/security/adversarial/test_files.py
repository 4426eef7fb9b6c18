"""Files: read a host canary, write outside the workspace, and escape a host mount (`mount.dirs`) through
host symlinks, links the function makes, `..`, hard links and the mount's permission rules."""
import json
import os
import shutil
import stat
import tempfile

import pytest

from fnboxlib import ok, req

from .attacklib import C_PRELUDE, READ, WRITE, lines, parse_c, stopped, token
from .conftest import attack


def read_paths(box, lang, paths, **extra):
    arg = lines(paths) if lang == "c" else paths
    got = ok(box.call(req(lang, READ[lang], "f", [arg], timeout=20, **extra)))
    return parse_c(got) if lang == "c" else got


def escapes(path):
    """Ways to name a host path from inside: directly, through /proc/*/root and cwd, by `..` from the
    workdir and from /dev/fd."""
    rel = path.lstrip("/")
    out = [path, "../../../../../../" + rel, "/dev/fd/../../../../" + rel, "/proc/self/cwd/../../../../" + rel,
           "/proc/thread-self/root/" + rel, "/proc/self/root/" + rel, "/proc/1/cwd/../../../" + rel]
    out += [f"/proc/{pid}/root/{rel}" for pid in range(1, 7)]
    return out


@attack("files", "read_canary")
def test_read_canary(lang, box, canary):
    """Read a 0644 canary in the host's /tmp and /var/tmp by every path that could lead to it."""
    paths = []
    for p in canary.files:
        paths += escapes(p)
        paths += escapes(os.path.dirname(p))  # listing its directory would show its name
    got = read_paths(box, lang, paths)
    assert set(got) == set(paths), f"the attack did not try every path: {sorted(set(paths) - set(got))[:5]}"
    stopped("read the host canary", canary.found_in(got))


FIND = r'''
import os
from collections import deque
def f(name, text):
    # Breadth first, and done at the first hit: a sandbox that leaks shows it near the top (the host's /tmp)
    # without a walk of every file of a large host; a sandbox that holds walks all it can see.
    hits, scanned = [], 0
    roots = ['/'] + ['/proc/%s/root/' % p for p in os.listdir('/proc') if p.isdigit()]
    for root in roots:
        queue = deque([root])
        while queue and not hits:
            d = queue.popleft()
            try:
                entries = list(os.scandir(d))
            except OSError:
                continue
            top = os.path.normpath(d) == os.path.normpath(root)
            for e in entries:
                if top and e.name in ('proc', 'sys', 'usr'):
                    continue
                if name in e.name:
                    hits.append(e.path)
                try:
                    if e.is_dir(follow_symlinks=False):
                        queue.append(e.path)
                        continue
                    scanned += 1
                    # stat, not the dirent: a device can be bound over a regular file's entry (/dev/full)
                    if os.path.isfile(e.path) and os.path.getsize(e.path) < 65536:
                        with open(e.path, 'rb') as fh:
                            if text.encode() in fh.read():
                                hits.append('content:' + e.path)
                except OSError:
                    pass
        if hits:
            break
    return {'hits': hits, 'scanned': scanned}
'''


@attack("files", "find_canary")
def test_find_canary(lang, box, canary):
    """Walk every file system the sandbox can see (and every /proc/<pid>/root) looking for the canary."""
    got = ok(box.call(req(lang, FIND, "f", [canary.name, canary.text], timeout=20)))
    assert got["scanned"] > 5, f"the walk saw nothing: {got}"
    stopped("found the host canary", got["hits"])


@attack("files", "write_outside")
def test_write_outside(lang, box, host_dir):
    """Write to an empty world-writable host directory and to host system directories: nothing may appear."""
    mark = token("fnbox-adv-write-")
    target = str(host_dir / mark)
    host_paths = [f"/tmp/{mark}", f"/var/tmp/{mark}", f"/usr/local/{mark}", f"/usr/{mark}", f"/etc/{mark}",
                  f"/{mark}", f"/usr/bin/{mark}", f"/usr/lib/{mark}"]
    paths = escapes(target) + [p for hp in host_paths for p in escapes(hp)[:3]] + [f"/workspace/{mark}"]
    try:
        got = write_paths(box, lang, paths, mark)
        assert got.get(f"/workspace/{mark}") == "WROTE", f"the workspace must be writable: {got}"
        leaked = [p for p in host_paths if os.path.lexists(p)] + [str(p) for p in host_dir.iterdir()]
        stopped("wrote outside the sandbox", leaked)
    finally:
        for p in host_paths:
            if os.path.lexists(p) and not os.path.isdir(p):
                os.unlink(p)


def write_paths(box, lang, paths, payload):
    arg = lines(paths) if lang == "c" else paths
    got = ok(box.call(req(lang, WRITE[lang], "f", [arg, payload], timeout=20)))
    return parse_c(got) if lang == "c" else got


# ---- host mounts ----------------------------------------------------------------------------------------
class Layout:
    """<base>/data (mounted as /data) and <base>/outside/secret.txt (the canary) side by side on the host."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="fnbox-adv-mount-", dir="/tmp")
        self.secret = token("MOUNT-SECRET-")
        self.data = os.path.join(self.base, "data")
        self.outside = os.path.join(self.base, "outside")
        os.makedirs(os.path.join(self.data, "sub"))
        os.makedirs(os.path.join(self.data, "scratch"))
        os.makedirs(self.outside)
        self.write("outside/secret.txt", self.secret)
        self.write("data/sub/plain.txt", "plain")
        self.protected_text = token("protected-")
        self.write("data/protected.txt", self.protected_text)
        for d, _, _ in os.walk(self.base):
            os.chmod(d, 0o755)

    def write(self, rel, text):
        p = os.path.join(self.base, rel)
        with open(p, "w") as fh:
            fh.write(text)
        os.chmod(p, 0o644)

    def link(self, target, rel):
        os.symlink(target, os.path.join(self.base, "data", rel))

    def outside_state(self):
        return {n: open(os.path.join(self.outside, n), "rb").read() for n in sorted(os.listdir(self.outside))}

    def mount(self, follow=False, **extra):
        m = {"dirs": {"/data": self.data},
             "permissions": {"default": {"read": True, "list": True, "create": True, "modify": True,
                                         "delete": True}},
             "security": {"followSymlinks": follow},
             "sync": {"mode": "batch"}}
        m.update(extra)
        return m

    def leaking_links(self):
        """Symlinks in the host's data dir (after sync) whose target resolves outside it."""
        bad = []
        for dirpath, dirs, files in os.walk(self.data):
            for n in dirs + files:
                p = os.path.join(dirpath, n)
                if os.path.islink(p):
                    try:
                        real = os.path.realpath(p)
                    except OSError:  # e.g. through /proc/1/root: nowhere inside the data dir
                        real = "/"
                    if not (real + "/").startswith(self.data + "/"):
                        bad.append(f"{p} -> {os.readlink(p)}")
        return bad

    def cleanup(self):
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture
def layout():
    lay = Layout()
    yield lay
    lay.cleanup()


# Python reads under both link policies: under `true` the sandbox resolves the links itself, in its own root.
FOLLOW = {"python": ("restricted", True), "javascript": ("restricted",), "c": ("restricted",)}


@attack("files", "mount_host_symlinks")
def test_mount_host_symlinks(lang, box, layout):
    """Host symlinks planted in the mounted directory, absolute and relative, to the file and its directory,
    chained, and `..` paths: none may reach <base>/outside."""
    layout.link(os.path.join(layout.outside, "secret.txt"), "abs")
    layout.link("../outside/secret.txt", "rel")
    layout.link(layout.outside, "dirlink")
    layout.link("../outside", "reldir")
    layout.link("hop", "chain")
    layout.link("../outside/secret.txt", "hop")
    layout.link("../../outside/secret.txt", "sub/up")
    layout.link("/proc/self/root" + layout.outside + "/secret.txt", "magic")
    paths = ["/data/abs", "/data/rel", "/data/dirlink/secret.txt", "/data/dirlink", "/data/reldir/secret.txt",
             "/data/reldir", "/data/chain", "/data/sub/up", "/data/magic", "/data/../outside/secret.txt",
             "/data/sub/../../outside/secret.txt", "/data/./sub/../.." + layout.outside + "/secret.txt",
             "/data/sub/plain.txt"]
    hits = {}
    for follow in FOLLOW[lang]:
        got = read_paths(box, lang, paths, mount=layout.mount(follow))
        assert got["/data/sub/plain.txt"] == "READ:plain", f"the mount does not work: {got}"
        hits.update({f"{p} (followSymlinks {follow})": v for p, v in got.items()
                     if layout.secret in v or (v.startswith("DIR:") and "secret.txt" in v)})
    stopped("read outside the mount through host links", hits)


OWN_LINKS = r'''
def f(targets)
  out = {}
  targets.each_with_index do |t, i|
    link = "/data/l#{i}"
    out[link] = begin
      File.symlink(t, link)
      "LINKED:" + File.read(link).to_s
    rescue SystemCallError, IOError => e
      "ERR:#{e.class}"
    end
  end
  out
end
'''


@attack("files", "mount_own_symlink")
def test_mount_own_symlink(lang, box, layout):
    """The function makes links in the mount pointing out of it, reads through them, and lets the call
    sync: neither the read nor a link on the host may lead to <base>/outside."""
    secret = os.path.join(layout.outside, "secret.txt")
    targets = [secret, "../outside/secret.txt", "../../outside/secret.txt", "/proc/1/root" + secret,
               "/proc/self/root" + secret, layout.outside]
    got = ok(box.call(req(lang, OWN_LINKS, "f", [targets], mount=layout.mount(True), timeout=20)))
    assert len(got) == len(targets), got
    evidence = {k: v for k, v in got.items() if layout.secret in v}
    evidence.update({f"synced link {i}": lk for i, lk in enumerate(layout.leaking_links())})
    stopped("reached outside the mount through its own links", evidence)


WRITE_THROUGH = r'''
import os
def f(paths):
    out = {}
    for p in paths:
        try:
            with open(p, 'w') as fh:
                fh.write('pwned')
            out[p] = 'WROTE'
        except OSError as e:
            out[p] = 'ERR:' + type(e).__name__
    for src, dst in (('/data/sub/plain.txt', '/data/out/moved.txt'), ('/data/sub/plain.txt', '/data/relout/m2.txt')):
        try:
            os.rename(src, dst)
            out['rename ' + dst] = 'RENAMED'
        except OSError as e:
            out['rename ' + dst] = 'ERR:' + type(e).__name__
    return out
'''


@attack("files", "mount_write_through_symlink")
def test_mount_write_through_symlink(lang, box, layout):
    """Host links in the mount lead out; the function writes and renames through them, with every right
    granted and a batch sync: <base>/outside must stay exactly as it was."""
    layout.link(layout.outside, "out")
    layout.link("../outside", "relout")
    layout.link(os.path.join(layout.outside, "secret.txt"), "secretlink")
    before = layout.outside_state()
    paths = ["/data/out/pwned.txt", "/data/relout/pwned.txt", "/data/secretlink", "/data/out/secret.txt"]
    for follow in ("restricted", True):
        # onError "continue": one failed change (out/ and relout/ lead to the same place) must not roll the
        # rest back, so that only the beneath-only resolution stands between the function and the host
        ok(box.call(req(lang, WRITE_THROUGH, "f", [paths], timeout=20,
                        mount=layout.mount(follow, sync={"mode": "batch", "onError": "continue"}))))
        after = layout.outside_state()
        stopped(f"changed the host outside the mount (followSymlinks {follow})",
                {k: v.decode(errors="replace") for k, v in after.items() if before.get(k) != v})


RULES = {"default": {"read": True, "list": True},
         "rules": [{"pattern": "scratch/**", "allow": ["create", "modify", "delete"], "priority": 0}]}

HARDLINK = r'''<?php
function f() {
  $o = [];
  $o['link'] = @link('/data/protected.txt', '/data/scratch/h') ? 'LINKED' : 'ERR';
  $o['write via link'] = @file_put_contents('/data/scratch/h', 'pwned') === false ? 'ERR' : 'WROTE';
  $o['link into root'] = @link('/data/protected.txt', '/data/p2') ? 'LINKED' : 'ERR';
  $o['symlink'] = @symlink('/data/protected.txt', '/data/scratch/s') ? 'LINKED' : 'ERR';
  $o['write via symlink'] = @file_put_contents('/data/scratch/s', 'pwned', FILE_APPEND) === false ? 'ERR' : 'WROTE';
  $o['rename out'] = @rename('/data/protected.txt', '/data/scratch/moved') ? 'RENAMED' : 'ERR';
  $o['write moved'] = @file_put_contents('/data/scratch/moved', 'pwned') === false ? 'ERR' : 'WROTE';
  $o['copy'] = @copy('/data/scratch/h', '/data/protected.txt') ? 'COPIED' : 'ERR';
  clearstatcache();
  $o['now'] = @file_get_contents('/data/protected.txt');
  return $o;
}
'''


def protected_changes(layout):
    p = os.path.join(layout.data, "protected.txt")
    if not os.path.exists(p):
        return ["protected.txt was removed from the host"]
    out = []
    if open(p).read() != layout.protected_text:
        out.append(f"protected.txt now holds {open(p).read()[:100]!r}")
    ino = os.stat(p).st_ino
    for dirpath, _, files in os.walk(layout.data):
        for n in files:
            q = os.path.join(dirpath, n)
            if q != p and not os.path.islink(q) and os.stat(q).st_ino == ino:
                out.append(f"{q} is a hard link to protected.txt on the host")
    return out


@attack("files", "mount_hardlink")
def test_mount_hardlink(lang, box, layout):
    """A file the rules make read-only, attacked through a hard link (and a symlink, a rename) into the
    directory where writes are allowed."""
    res = box.call(req(lang, HARDLINK, "f", [], mount=layout.mount(False, permissions=RULES), timeout=20))
    got = ok(res)
    # writing into scratch/ is allowed: what counts is a link or rename made, or protected.txt changed
    evidence = {k: v for k, v in got.items() if k in ("link", "link into root", "symlink", "rename out", "copy")
                and v != "ERR"}
    if got["now"] != layout.protected_text:
        evidence["protected.txt inside"] = got["now"]
    evidence.update({f"host {i}": c for i, c in enumerate(protected_changes(layout))})
    stopped("modified a read-only file of the mount", evidence)


RULES_BYPASS = r'''
const fs = require('fs');
function f(text) {
  const P = '/data/protected.txt';
  const out = {};
  const ops = {
    writeFile: () => fs.writeFileSync(P, 'pwned'),
    appendFile: () => fs.appendFileSync(P, 'pwned'),
    truncate: () => fs.truncateSync(P, 0),
    'open r+': () => { const fd = fs.openSync(P, 'r+'); try { fs.writeSync(fd, 'pwned'); } finally { fs.closeSync(fd); } },
    'rename over': () => { fs.writeFileSync('/data/scratch/new', 'pwned'); fs.renameSync('/data/scratch/new', P); },
    'copy over': () => fs.copyFileSync('/data/sub/plain.txt', P),
    unlink: () => fs.unlinkSync(P),
    chmod: () => fs.chmodSync(P, 0o777),
    utimes: () => fs.utimesSync(P, 1, 1),
    'rm sub': () => fs.rmSync('/data/sub', { recursive: true }),
    'rename sub': () => fs.renameSync('/data/sub', '/data/scratch/sub'),
    'create in root': () => fs.writeFileSync('/data/new.txt', 'pwned'),
    'mkdir in root': () => fs.mkdirSync('/data/newdir'),
  };
  for (const [name, op] of Object.entries(ops)) {
    try { op(); out[name] = 'DONE'; } catch (e) { out[name] = 'ERR:' + e.code; }
  }
  try { out.now = fs.readFileSync(P, 'utf8'); } catch (e) { out.now = 'ERR:' + e.code; }
  try { out.sub = fs.readdirSync('/data/sub').join(','); } catch (e) { out.sub = 'ERR:' + e.code; }
  return out;
}
'''


@attack("files", "mount_rules_bypass")
def test_mount_rules_bypass(lang, box, layout):
    """Every way Node has to change a file and directories the rules leave read-only."""
    p = os.path.join(layout.data, "protected.txt")
    st = os.stat(p)
    res = box.call(req(lang, RULES_BYPASS, "f", [layout.protected_text],
                       mount=layout.mount(False, permissions=RULES), timeout=20))
    got = ok(res)
    evidence = {k: v for k, v in got.items() if v == "DONE"}
    if got["now"] != layout.protected_text:
        evidence["protected.txt inside"] = got["now"]
    if got["sub"] != "plain.txt":
        evidence["sub inside"] = got["sub"]
    evidence.update({f"host {i}": c for i, c in enumerate(protected_changes(layout))})
    if os.path.exists(p):
        now = os.stat(p)
        if stat.S_IMODE(now.st_mode) != stat.S_IMODE(st.st_mode) or now.st_mtime != st.st_mtime:
            evidence["host metadata"] = f"mode {oct(now.st_mode)} mtime {now.st_mtime}"
    for extra in ("new.txt", "newdir"):
        if os.path.lexists(os.path.join(layout.data, extra)):
            evidence["host " + extra] = "created"
    if sorted(os.listdir(os.path.join(layout.data, "sub"))) != ["plain.txt"]:
        evidence["host sub"] = json.dumps(os.listdir(os.path.join(layout.data, "sub")))
    stopped("bypassed the mount's rules", evidence)


FDS = {
    "python": r"""
import os, stat
def f():
    out = {}
    for fd in sorted(int(x) for x in os.listdir('/proc/self/fd')):
        try:
            st = os.fstat(fd)
            target = os.readlink('/proc/self/fd/%d' % fd)
        except OSError:
            continue
        entry = {'target': target, 'mode': stat.filemode(st.st_mode)}
        if stat.S_ISDIR(st.st_mode) and target != '/proc/self/fd' and not target.startswith('/proc/'):
            try:
                up = os.open('../../../../..', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                entry['climbed'] = sorted(os.listdir(up))
                os.close(up)
            except OSError as e:
                entry['climbed'] = 'ERR:%d' % e.errno
        out[str(fd)] = entry
    try:
        out['init'] = os.listdir('/proc/1/fd')
    except OSError as e:
        out['init'] = 'ERR:%d' % e.errno
    return out
""",
    "c": r"""
const char *f(void)
{
    begin_();
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dirfd(d))
            continue;
        char link[64], target[512] = "";
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = 0;
        struct stat st;
        if (fstat(fd, &st) < 0)
            continue;
        char v[700];
        snprintf(v, sizeof v, "%s %s", S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" :
                 S_ISSOCK(st.st_mode) ? "socket" : S_ISFIFO(st.st_mode) ? "fifo" : S_ISCHR(st.st_mode) ? "chr" : "other",
                 target);
        put_str(e->d_name, v);
        if (S_ISDIR(st.st_mode)) {
            int up = openat(fd, "../../../../..", O_RDONLY | O_DIRECTORY);
            DIR *u = up < 0 ? NULL : fdopendir(up);
            char names[2048] = "";
            for (struct dirent *x; u && (x = readdir(u)) != NULL;) {
                strncat(names, x->d_name, sizeof names - strlen(names) - 2);
                strcat(names, " ");
            }
            if (u)
                closedir(u);
            char k[32];
            snprintf(k, sizeof k, "%d climbed", fd);
            put_str(k, names);
        }
    }
    if (d)
        closedir(d);
    DIR *i = opendir("/proc/1/fd");
    put_str("init", i ? "LISTED" : "ERR");
    if (i)
        closedir(i);
    return end_();
}
""",
}
HOST_ONLY = {"var", "home", "root", "boot", "srv", "opt", "mnt", "run", "sys", "media"}


@attack("files", "leaked_fds")
def test_leaked_fds(lang, box):
    """Look for descriptors the sandbox left open: a directory (climbing `..` from it), a socket, a file
    other than the call's own channels, or init's descriptors. fnbox is started with a host directory
    open and inheritable, as a careless host would leave one."""
    leak = os.open("/etc", os.O_RDONLY | os.O_DIRECTORY)
    try:
        if lang == "c":
            got = parse_c(ok(box.call(req(lang, C_PRELUDE + FDS["c"], "f", [], timeout=20), pass_fds=(leak,))))
            kinds = {k: v for k, v in got.items() if k.isdigit()}
        else:
            got = ok(box.call(req(lang, FDS[lang], "f", [], timeout=20), pass_fds=(leak,)))
            kinds = {k: f"{v['mode']} {v['target']}" for k, v in got.items() if k.isdigit()}
    finally:
        os.close(leak)
    assert "0" in kinds and "1" in kinds, got
    evidence = {}
    for fd, desc in kinds.items():
        own = ("/dev/null" in desc or "pipe:" in desc or "memfd:fnbox-result" in desc or desc.endswith("/proc/self/fd")
               or "/proc/" in desc and "/fd" in desc)
        if not own:
            evidence[fd] = desc
    for k, v in got.items():
        names = v.get("climbed") if isinstance(v, dict) else (v if k.endswith("climbed") else None)
        if names and not str(names).startswith("ERR") and HOST_ONLY & set(names if isinstance(names, list) else names.split()):
            evidence[k + " climbed"] = names
    if got.get("init") not in ("ERR", "ERR:13"):
        evidence["init's fds"] = got.get("init")
    stopped("found a descriptor leading out", evidence)
