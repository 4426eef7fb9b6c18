"""Between the sandbox and the host, and between two calls running at the same time: System V shared memory
and message queues (by key and by enumeration), abstract unix sockets, signals, and each other's scratch
files (workspace, /tmp, /dev/shm).

The concurrent attacks run a planter call (Python) that plants something, names its process with a marker
and waits; once the host sees the marker, the attacking call runs; then the host tells the planter to
return (SIGUSR2 to its host pid). The planter must still be alive at that point (checked: otherwise the
test proves nothing and fails as such)."""
import ctypes
import os
import random
import signal
import secrets
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import describe, host_pids_matching, ok, req

from .attacklib import c_code, parse_c, stopped, token
from .conftest import attack

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
IPC_CREAT, IPC_RMID, IPC_NOWAIT = 0o1000, 0, 0o4000


class HostSysV:
    """A System V shared memory segment and a message queue on the host, world-accessible, holding a canary."""

    def __init__(self):
        self.text = token("SYSV-CANARY-")
        self.shm_key = random.randrange(0x10000000, 0x7fffffff)
        self.msg_key = self.shm_key + 1
        self.shmid = libc.shmget(self.shm_key, 4096, IPC_CREAT | 0o666)
        assert self.shmid >= 0, f"host shmget: errno {ctypes.get_errno()}"
        addr = libc.shmat(self.shmid, None, 0)
        ctypes.memmove(addr, self.text.encode(), len(self.text))
        libc.shmdt(ctypes.c_void_p(addr))
        self.msqid = libc.msgget(self.msg_key, IPC_CREAT | 0o666)
        assert self.msqid >= 0, f"host msgget: errno {ctypes.get_errno()}"
        body = self.text.encode()
        msg = ctypes.create_string_buffer(8 + len(body))
        ctypes.memmove(msg, ctypes.byref(ctypes.c_long(1)), 8)
        ctypes.memmove(ctypes.addressof(msg) + 8, body, len(body))
        assert libc.msgsnd(self.msqid, msg, len(body), IPC_NOWAIT) == 0

    def message_still_queued(self):
        buf = ctypes.create_string_buffer(8 + 256)
        n = libc.msgrcv(self.msqid, buf, 256, 0, IPC_NOWAIT)
        return n > 0

    def close(self):
        libc.shmctl(self.shmid, IPC_RMID, None)
        libc.msgctl(self.msqid, IPC_RMID, None)


@pytest.fixture
def sysv():
    s = HostSysV()
    yield s
    s.close()


SYSV = {
    "python": r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
def f(shm_key, msg_key):
    out = {}
    shmid = libc.shmget(shm_key, 0, 0)
    out['shmget'] = shmid if shmid >= 0 else 'ERR:%d' % ctypes.get_errno()
    # every segment by index (SHM_STAT), whatever its key
    for idx in range(0, 64):
        buf = ctypes.create_string_buffer(256)
        sid = libc.shmctl(idx, 13, buf)
        if sid >= 0:
            addr = libc.shmat(sid, None, 0o10000)   # SHM_RDONLY
            if addr not in (None, ctypes.c_void_p(-1).value):
                out['segment %d' % idx] = ctypes.string_at(addr, 64).split(b'\0')[0].decode('latin-1')
    if shmid >= 0:
        addr = libc.shmat(shmid, None, 0o10000)
        if addr not in (None, ctypes.c_void_p(-1).value):
            out['read'] = ctypes.string_at(addr, 64).split(b'\0')[0].decode('latin-1')
    msqid = libc.msgget(msg_key, 0)
    out['msgget'] = msqid if msqid >= 0 else 'ERR:%d' % ctypes.get_errno()
    if msqid >= 0:
        buf = ctypes.create_string_buffer(8 + 256)
        n = libc.msgrcv(msqid, buf, 256, 0, 0o4000)
        out['msgrcv'] = buf.raw[8:8 + n].decode('latin-1') if n > 0 else 'ERR:%d' % ctypes.get_errno()
    return out
''',
    "php": r'''<?php
function f($shm_key, $msg_key) {
  $o = [];
  $o['msg_queue_exists'] = msg_queue_exists($msg_key);
  if ($o['msg_queue_exists']) {
    $q = msg_get_queue($msg_key);
    $o['msg_receive'] = @msg_receive($q, 0, $type, 256, $m, false, MSG_IPC_NOWAIT) ? $m : 'ERR';
  }
  $s = @shmop_open($shm_key, 'a', 0, 0);
  $o['shmop'] = $s ? rtrim(shmop_read($s, 0, 64), "\0") : 'ERR';
  return $o;
}
''',
}


def sysv_evidence(got, text):
    return {k: v for k, v in got.items() if text in str(v) or v is True
            or (k in ("shmget", "msgget") and isinstance(v, int))}


@attack("ipc", "sysv_host")
def test_sysv_host(lang, box, sysv):
    """Open the host's shared memory segment and message queue by key (and every segment by index)."""
    got = ok(box.call(req(lang, SYSV[lang], "f", [sysv.shm_key, sysv.msg_key], timeout=20)))
    evidence = sysv_evidence(got, sysv.text)
    if not sysv.message_still_queued():
        evidence["host queue"] = "the message was taken"
    stopped("reached the host's System V IPC", evidence)


ENUMERATE = r'''
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
const char *f(void)
{
    begin_();
    struct shm_info si;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)&si);
    put_int("shm max index", max);
    for (int i = 0; i <= max && i < 4096; i++) {
        struct shmid_ds ds;
        int id = shmctl(i, SHM_STAT, &ds);
        if (id < 0)
            continue;
        char k[32], v[80] = "";
        snprintf(k, sizeof k, "shm key %d", ds.shm_perm.__key);
        char *p = shmat(id, NULL, SHM_RDONLY);
        if (p != (void *)-1) {
            snprintf(v, sizeof v, "%.64s", p);
            shmdt(p);
        }
        put_str(k, v);
    }
    struct msginfo mi;
    max = msgctl(0, MSG_INFO, (struct msqid_ds *)&mi);
    put_int("msg max index", max);
    for (int i = 0; i <= max && i < 4096; i++) {
        struct msqid_ds ds;
        if (msgctl(i, MSG_STAT, &ds) < 0)
            continue;
        char k[32];
        snprintf(k, sizeof k, "msg key %d", ds.msg_perm.__key);
        put_int(k, (long)ds.msg_qnum);
    }
    return end_();
}
'''


@attack("ipc", "sysv_enumerate")
def test_sysv_enumerate(lang, box, sysv):
    """List every shared memory segment and message queue there is (SHM_STAT / MSG_STAT over all indexes)."""
    got = parse_c(ok(box.call(req(lang, c_code(ENUMERATE), "f", [], timeout=20))))
    found = {k: v for k, v in got.items() if k.startswith(("shm key", "msg key"))}
    stopped("listed System V IPC objects it did not make", found)


# ---- two calls at the same time ------------------------------------------------------------------------
PLANT = r'''
import ctypes, os, signal, socket, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
got = []
done = []
def note(sig, frame):
    got.append(sig)
def finish(sig, frame):
    done.append(sig)
def f(mark, key, text, seconds):
    out = {}
    shmid = libc.shmget(key, 4096, 0o1666)
    if shmid >= 0:
        ctypes.memmove(libc.shmat(shmid, None, 0), text.encode(), len(text))
    out['shmid'] = shmid
    for d in ('/workspace', '/tmp', '/dev/shm'):
        with open(d + '/' + mark + '.txt', 'w') as fh:
            fh.write(text)
    servers = []
    # the exact-length abstract name, and the NUL-padded form Node.js uses (conftest.padded_abstract)
    for addr in ('\0' + mark, '\0' + mark + '\0' * (107 - len(mark))):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(addr)
        srv.listen(8)
        srv.setblocking(False)
        servers.append(srv)
    for s in (signal.SIGURG, signal.SIGCONT, signal.SIGUSR1):
        signal.signal(s, note)
    signal.signal(signal.SIGUSR2, finish)       # the host's "the attack is over"
    libc.prctl(15, mark.encode(), 0, 0, 0)     # the host waits for this name before the attack starts
    end = time.time() + seconds
    accepted = 0
    while time.time() < end and not done:
        for srv in servers:
            try:
                srv.accept()[0].close()
                accepted += 1
            except BlockingIOError:
                pass
        time.sleep(0.01)
    out['accepted'] = accepted
    out['timed out'] = not done
    out['signals'] = got
    return out
'''
PLANT_SECONDS = 15  # at most: the host ends the planter (SIGUSR2) as soon as the attack is over


def beside_planter(box, code, args, mark, attack_call):
    """Run the planter call (Python `code` with `args`, naming itself `mark`); once it is visible on the
    host run attack_call() -> its result; then end the planter (SIGUSR2). Return (attack result, planter
    result), failing when the planter was no longer there for the whole attack."""
    with ThreadPoolExecutor(1) as ex:
        fut = ex.submit(box.call, req("python", code, "f", args, timeout=PLANT_SECONDS + 10), 60)
        deadline = time.monotonic() + 20
        while not host_pids_matching(mark):
            assert not fut.done(), f"the planter ended early: {describe(fut.result().result)}"
            assert time.monotonic() < deadline, "the planter never showed up"
            time.sleep(0.01)
        got = attack_call()
        planter = host_pids_matching(mark)
        for pid, _ in planter:
            os.kill(pid, signal.SIGUSR2)
        planted = ok(fut.result())
    assert planter and not planted["timed out"], \
        "the attack finished after the planter: the test proved nothing (machine too slow?)"
    return got, planted


def concurrently(box, attack_call):
    """Run the planter; once it is visible on the host run attack_call(mark, key, text) -> its result;
    return (attack result, planter result)."""
    mark = "pl" + secrets.token_hex(6)
    key = random.randrange(0x10000000, 0x7fffffff)
    text = token("PLANTED-")
    got, planted = beside_planter(box, PLANT, [mark, key, text, PLANT_SECONDS], mark,
                                  lambda: attack_call(mark, key, text))
    assert planted["shmid"] >= 0, planted
    return got, planted, text


@attack("ipc", "sysv_concurrent")
def test_sysv_concurrent(lang, box):
    """Read the shared memory segment another call (running at the same time) made, by its key."""
    def attack_call(mark, key, text):
        return ok(box.call(req(lang, SYSV["php"], "f", [key, key + 1], timeout=20)))
    got, _, text = concurrently(box, attack_call)
    stopped("reached another call's System V IPC", sysv_evidence(got, text))


ABSTRACT_JS = r'''
const net = require('net');
function f(name) {
  return new Promise((resolve) => {
    const s = net.connect({ path: '\0' + name });
    s.on('connect', () => { s.end('hello'); resolve('CONNECTED'); });
    s.on('error', (e) => resolve('ERR:' + e.code));
  });
}
'''


@attack("ipc", "abstract_concurrent")
def test_abstract_concurrent(lang, box):
    """Connect to the abstract unix socket another call (running at the same time) listens on."""
    def attack_call(mark, key, text):
        return ok(box.call(req(lang, ABSTRACT_JS, "f", [mark], timeout=20)))
    got, planted, _ = concurrently(box, attack_call)
    evidence = {}
    if got == "CONNECTED":
        evidence["attacker"] = got
    if planted["accepted"]:
        evidence["planter accepted"] = planted["accepted"]
    stopped("connected to another call's abstract socket", evidence)


SEARCH = {
    "python": r'''
import os
from collections import deque
def f(mark, text):
    # Breadth first, done at the first hit (a leak shows near the top, without walking a whole large host)
    hits, seen = [], 0
    roots = ['/'] + ['/proc/%s/%s/' % (p, w) for p in os.listdir('/proc') if p.isdigit() for w in ('root', 'cwd')]
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
                try:
                    if e.is_dir(follow_symlinks=False):
                        queue.append(e.path)
                        continue
                    seen += 1
                    if mark in e.name:
                        hits.append(e.path)
                    # stat, not the dirent: a device can be bound over a regular file's entry (/dev/full)
                    p = e.path
                    if os.path.isfile(p) and os.path.getsize(p) < 65536 and text.encode() in open(p, 'rb').read():
                        hits.append('content:' + e.path)
                except OSError:
                    pass
        if hits:
            break
    return {'hits': hits, 'seen': seen}
''',
    "javascript": r'''
const fs = require('fs');
const path = require('path');
// Breadth first, done at the first hit (a leak shows near the top, without walking a whole large host).
function walk(root, out, mark, text) {
  const queue = [root];
  while (queue.length && !out.hits.length) {
    const dir = queue.shift();
    let entries;
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch (e) { continue; }
    const top = path.normalize(dir + '/') === path.normalize(root + '/');
    for (const e of entries) {
      if (top && ['proc', 'sys', 'usr'].includes(e.name)) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) { queue.push(p); continue; }
      out.seen++;
      if (e.name.includes(mark)) out.hits.push(p);
      try {
        // stat, not the dirent: /dev/full is a device bound over a regular file's entry
        const st = fs.statSync(p);
        if (st.isFile() && st.size < 65536 && fs.readFileSync(p, 'latin1').includes(text)) out.hits.push('content:' + p);
      } catch (err) {}
    }
  }
}
function f(mark, text) {
  const out = { hits: [], seen: 0 };
  const roots = ['/'];
  for (const p of fs.readdirSync('/proc')) if (/^\d+$/.test(p)) roots.push(`/proc/${p}/root`, `/proc/${p}/cwd`);
  for (const r of roots) if (!out.hits.length) walk(r, out, mark, text);
  return out;
}
''',
}


@attack("ipc", "workspace_concurrent")
def test_workspace_concurrent(lang, box):
    """Search for the files another call (running at the same time) wrote to its workspace, /tmp and /dev/shm."""
    def attack_call(mark, key, text):
        return ok(box.call(req(lang, SEARCH[lang], "f", [mark, text], timeout=20)))
    got, _, _ = concurrently(box, attack_call)
    assert got["seen"] > 0, got
    stopped("found another call's files", got["hits"])


SIGNAL_RB = r'''
def f
  out = {}
  %w[URG CONT].each do |s|   # harmless signals: a broken pidns must not turn this into a kill
    out["kill(-1, #{s})"] = begin
      Process.kill(s, -1)
      "SENT"
    rescue SystemCallError => e
      "ERR:#{e.class}"
    end
  end
  out
end
'''


@attack("ipc", "signal_concurrent")
def test_signal_concurrent(lang, box):
    """Signal every process it can (kill(-1)) while another call runs: that call must receive nothing."""
    def attack_call(mark, key, text):
        return ok(box.call(req(lang, SIGNAL_RB, "f", [], timeout=20)))
    _, planted, _ = concurrently(box, attack_call)
    stopped("signalled another call", planted["signals"])


# ---- file locks on the shared system tree ---------------------------------------------------------------
# The files every call sees (the runtimes, their libraries, the directories above them): a lock one call takes
# on them must not be visible to another call, or the two can signal each other bit by bit (a covert channel
# that no namespace closes: locks belong to the inode).
LOCK_TARGETS = ["/usr/bin/python3", "/usr", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc/alternatives"]
LOCK_PLANT = r'''
import ctypes, fcntl, os, signal, struct, time
libc = ctypes.CDLL(None, use_errno=True)
done = []
def f(mark, targets, seconds):
    held, fds = {}, []
    for i, p in enumerate(targets):
        try:
            fd = os.open(p, os.O_RDONLY)
            fds.append(fd)
            if i % 2 == 0:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)     # BSD lock (whole file, per open file)
            else:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            if os.path.isfile(p):                                  # and a POSIX read lock on the first byte
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 0)
            held[p] = 'HELD'
        except OSError as e:
            held[p] = 'ERR:%d' % e.errno
    signal.signal(signal.SIGUSR2, lambda s, fr: done.append(s))   # the host's "the probe is over"
    libc.prctl(15, mark.encode(), 0, 0, 0)                         # the host waits for this name
    end = time.time() + seconds
    while time.time() < end and not done:
        time.sleep(0.01)
    return {'held': held, 'timed out': not done}
'''
LOCK_PROBE = {
    "python": r'''
import fcntl, os, struct
def f(targets):
    seen = {}
    for p in targets:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError as e:
            seen[p] = 'OPEN:%d' % e.errno
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen[p] = 'free'
        except BlockingIOError:
            seen[p] = 'LOCKED (flock)'
        if os.path.isfile(p):   # F_GETLK for a write lock over the first byte: who holds a conflicting lock
            res = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 1, 0))
            if struct.unpack('hhqqi', res)[0] != fcntl.F_UNLCK:
                seen[p] += ', LOCKED (fcntl)'
        os.close(fd)
    return seen
''',
    "ruby": r'''
def f(targets)
  seen = {}
  targets.each do |p|
    begin
      fh = File.open(p, File::RDONLY)
    rescue SystemCallError => e
      seen[p] = "OPEN:#{e.class}"
      next
    end
    seen[p] = fh.flock(File::LOCK_EX | File::LOCK_NB) ? 'free' : 'LOCKED (flock)'
    fh.close
  end
  seen
end
''',
}


@attack("ipc", "lock_concurrent")
def test_lock_concurrent(lang, box):
    """Probe the locks another call (running at the same time) holds on the runtime binary, libc and the
    directories every call shares: seeing them is a channel between calls."""
    mark = "lk" + secrets.token_hex(6)
    got, planted = beside_planter(box, LOCK_PLANT, [mark, LOCK_TARGETS, PLANT_SECONDS], mark,
                                  lambda: ok(box.call(req(lang, LOCK_PROBE[lang], "f", [LOCK_TARGETS], timeout=20))))
    assert all(v == "HELD" for v in planted["held"].values()), planted   # the planter holds every lock
    assert all(not v.startswith("OPEN") for v in got.values()), got       # and the probe could try each
    stopped("saw another call's file locks", {p: v for p, v in got.items() if "LOCKED" in v})
