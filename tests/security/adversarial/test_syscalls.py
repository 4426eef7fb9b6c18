"""Raw syscalls (C, and ctypes / Fiddle / PHP FFI): ptrace, mount, unshare, setns, keyctl, bpf, io_uring,
userfaultfd, perf_event_open, personality, TIOCSTI, kill(-1) and raising rlimits.

Each attack is built to work where the filter is absent: where the dropped capabilities would refuse it too,
it first makes a user namespace of its own (in which it would hold every capability). Two of them (bpf with
unprivileged BPF disabled by the host, TIOCSTI with no terminal to inject into) can do no more than reach
the kernel without the filter; for those, reaching the kernel (an errno other than the filter's EPERM) is
what they report."""
import platform
import time

import pytest

from fnboxlib import ok, req

from .attacklib import HostSleeper, host_has_cap, run_c, skip_unless_host_allows, stopped
from .conftest import attack

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="syscall numbers are x86_64")

EPERM, ENOSYS = 1, 38

PY_SYSCALL = r'''
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[a if isinstance(a, (bytes, ctypes.Array, ctypes.c_void_p)) else ctypes.c_long(a) for a in args])
    return r if r >= 0 else 'ERR:%d' % ctypes.get_errno()
def in_child(fn):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = fn()
        except BaseException as e:
            res = {'exception': repr(e)}
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = b''
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.waitpid(pid, 0)
    return json.loads(data or b'{}')
'''

RB_SYSCALL = r'''
require 'fiddle'
LIBC = Fiddle.dlopen(nil)
SYS = Fiddle::Function.new(LIBC['syscall'], [Fiddle::TYPE_LONG] * 6, Fiddle::TYPE_LONG)
def sc(nr, *args)
  r = SYS.call(nr, *(args + [0] * (5 - args.size)))
  r >= 0 ? r : "ERR:#{Fiddle.last_error}"
end
def in_child
  rd, wr = IO.pipe
  pid = fork do
    rd.close
    wr.write(Marshal.dump(yield))
    exit!(0)
  end
  wr.close
  res = Marshal.load(rd.read)
  Process.wait(pid)
  res
end
'''


def succeeded(v):
    """A syscall's outcome as the attacks report it: an int >= 0 is success, 'ERR:<errno>' failure."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def reached_kernel(v):
    """Success, or an errno that is neither the filter's EPERM nor ENOSYS."""
    return succeeded(v) or (isinstance(v, str) and v.startswith("ERR:") and v not in (f"ERR:{EPERM}", f"ERR:{ENOSYS}"))


def run(box, lang, code, args=(), timeout=20):
    if lang == "c":
        return run_c(box, code, args, timeout=timeout)
    return ok(box.call(req(lang, code, "f", list(args), timeout=timeout), timeout=60))


PTRACE = {
    "python": PY_SYSCALL + r'''
import signal, time
def f():
    secret = ctypes.c_long(0x5EC7E7)
    pid = os.fork()
    if pid == 0:
        while True:
            time.sleep(1)
    secret.value = 0        # the parent's copy differs: only a real peek into the child reads 0x5EC7E7
    out = {'attach': sc(101, 16, pid, 0, 0)}   # PTRACE_ATTACH
    if out['attach'] == 0:
        os.waitpid(pid, 0)
        libc.ptrace.restype = ctypes.c_long   # the raw PEEKDATA stores the word at `data`: use libc's wrapper
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        ctypes.set_errno(0)
        word = libc.ptrace(2, pid, ctypes.addressof(secret), None)   # PTRACE_PEEKDATA
        out['peek'] = word if ctypes.get_errno() == 0 else 'ERR:%d' % ctypes.get_errno()
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    out['traceme'] = in_child(lambda: {'r': sc(101, 0, 0, 0, 0)})['r']   # PTRACE_TRACEME
    return out
''',
    "c": r'''
#include <sys/ptrace.h>
static volatile long secret_;
const char *f(void)
{
    begin_();
    secret_ = 0x5EC7E7;
    pid_t child = fork();
    if (child == 0)
        for (;;)
            pause();
    secret_ = 0;
    long r = ptrace(PTRACE_ATTACH, child, 0, 0);
    put_rc("attach", r, errno);
    if (r == 0) {
        waitpid(child, NULL, 0);
        errno = 0;
        long v = ptrace(PTRACE_PEEKDATA, child, (void *)&secret_, 0);
        put_rc("peek", errno ? -1 : v, errno);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    int e;
    long m = sys_(SYS_process_vm_readv, getpid(), 0, 0, 0, 0, &e);
    put_rc("process_vm_readv", m, e);
    return end_();
}
''',
}


@attack("syscalls", "ptrace")
def test_ptrace(lang, box):
    """Attach to its own child and read its memory (PTRACE_ATTACH + PEEKDATA), PTRACE_TRACEME, process_vm_readv."""
    got = run(box, lang, PTRACE[lang])
    stopped("traced a process", {k: v for k, v in got.items() if succeeded(v)})


MOUNT = {
    "php": r'''<?php
function f() {
  $c = FFI::cdef('int unshare(int flags); int mount(const char *src, const char *dst, const char *type,
                  unsigned long flags, const void *data); int *__errno_location(void);');
  $res = '/workspace/mount.json';
  $pid = pcntl_fork();
  if ($pid === 0) {
    $o = [];
    $o['direct'] = $c->mount('none', '/tmp', 'tmpfs', 0, null) == 0 ? 0 : 'ERR:' . $c->__errno_location()[0];
    $o['unshare'] = $c->unshare(0x10000000 | 0x00020000) == 0 ? 0 : 'ERR:' . $c->__errno_location()[0];
    $o['mount tmpfs'] = $c->mount('none', '/tmp', 'tmpfs', 0, null) == 0 ? 0 : 'ERR:' . $c->__errno_location()[0];
    $o['remount / rw'] = $c->mount('none', '/', null, 0x20 /* MS_REMOUNT */, null) == 0 ? 0 : 'ERR:' . $c->__errno_location()[0];
    file_put_contents($res, json_encode($o));
    FFI::cdef('void _exit(int);')->_exit(0);   // not exit(): the harness would report the child's exit
  }
  pcntl_waitpid($pid, $status);
  return json_decode(file_get_contents($res), true);
}
''',
    "c": r'''
#include <sys/mount.h>
const char *f(void)
{
    int p[2];
    if (pipe(p) < 0)
        return "{}";
    pid_t pid = fork();
    if (pid == 0) {
        begin_();
        TRY("direct", mount("none", "/tmp", "tmpfs", 0, NULL));
        TRY("unshare", unshare(CLONE_NEWUSER | CLONE_NEWNS));
        TRY("mount tmpfs", mount("none", "/tmp", "tmpfs", 0, NULL));
        TRY("bind /proc", mount("/proc", "/workspace", NULL, MS_BIND, NULL));
        TRY("remount /usr rw", mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
        TRY("umount /proc/sys", umount2("/proc/sys", MNT_DETACH));
        const char *o = end_();
        (void)!write(p[1], o, strlen(o));
        _exit(0);
    }
    close(p[1]);
    static char buf[4096];
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    waitpid(pid, NULL, 0);
    return n > 0 ? buf : "{}";
}
''',
}


@attack("syscalls", "mount")
def test_mount(lang, box):
    """Mount a tmpfs, bind /proc, remount read-write, unmount: directly, then in a user + mount namespace of
    its own (where it holds CAP_SYS_ADMIN)."""
    got = run(box, lang, MOUNT[lang])
    assert "unshare" in got, got
    stopped("changed mounts", {k: v for k, v in got.items() if k != "unshare" and succeeded(v)})


UNSHARE = {
    "python": PY_SYSCALL + r'''
def become_root():
    out = {'unshare': sc(272, 0x10000000)}      # CLONE_NEWUSER
    if out['unshare'] == 0:
        try:
            with open('/proc/self/uid_map', 'w') as fh:
                fh.write('0 %d 1' % os.geteuid())
        except OSError as e:
            out['uid_map'] = 'ERR:%d' % e.errno
    out['uid'] = os.getuid()
    out['net'] = sc(272, 0x40000000)             # CLONE_NEWNET, now with CAP_SYS_ADMIN if the first worked
    return out
def f():
    return in_child(become_root)
''',
    "ruby": RB_SYSCALL + r'''
def f
  in_child do
    { "unshare user+net" => sc(272, 0x10000000 | 0x40000000), "unshare user" => sc(272, 0x10000000),
      "unshare ipc" => sc(272, 0x08000000), "clone newpid" => sc(56, 0x20000000 | 17, 0, 0, 0, 0) }
  end
end
''',
}


@attack("syscalls", "unshare")
def test_unshare(lang, box):
    """Create namespaces of its own (user, then network / IPC; clone with CLONE_NEWPID)."""
    got = run(box, lang, UNSHARE[lang])
    evidence = {k: v for k, v in got.items() if k != "uid" and succeeded(v)}
    if got.get("uid") == 0:
        evidence["uid"] = 0
    stopped("created namespaces", evidence)


SETNS = r'''
const char *f(void)
{
    int p[2];
    if (pipe(p) < 0)
        return "{}";
    pid_t pid = fork();
    if (pid == 0) {
        begin_();
        int fd0 = open("/proc/self/ns/uts", O_RDONLY);
        TRY("setns own uts", setns(fd0, CLONE_NEWUTS));
        TRY("unshare user", unshare(CLONE_NEWUSER));
        TRY("unshare uts", unshare(CLONE_NEWUTS));
        int fd = open("/proc/self/ns/uts", O_RDONLY);
        TRY("unshare uts again", unshare(CLONE_NEWUTS));
        TRY("setns back", setns(fd, CLONE_NEWUTS));
        int fd1 = open("/proc/1/ns/net", O_RDONLY);
        put_rc("open init's netns", fd1, errno);
        if (fd1 >= 0)
            TRY("setns init's net", setns(fd1, CLONE_NEWNET));
        const char *o = end_();
        (void)!write(p[1], o, strlen(o));
        _exit(0);
    }
    close(p[1]);
    static char buf[4096];
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    waitpid(pid, NULL, 0);
    return n > 0 ? buf : "{}";
}
'''


@attack("syscalls", "setns")
def test_setns(lang, box):
    """Join namespaces: its own UTS namespace, one it made (in a user namespace of its own), init's network."""
    got = run(box, lang, SETNS)
    stopped("joined a namespace", {k: v for k, v in got.items() if k.startswith("setns") and succeeded(v)})


KEYCTL = {
    "python": PY_SYSCALL + r'''
def f():
    return {
        'add_key': sc(248, b'user', b'fnbox-adv', b'payload', 7, -2),       # KEY_SPEC_PROCESS_KEYRING
        'keyctl session': sc(250, 0, -3, 1),                                  # GET_KEYRING_ID, session, create
        'keyctl join': sc(250, 1, b'fnbox-adv-ring'),                          # JOIN_SESSION_KEYRING
        'request_key': sc(249, b'user', b'fnbox-adv', 0, 0),
    }
''',
    "php": r'''<?php
function f() {
  $k = FFI::cdef('long syscall(long n, const char *type, const char *desc, const char *payload, long plen, long ring);
                  int *__errno_location(void);');
  $n = FFI::cdef('long syscall(long n, long a, long b, long c, long d, long e); int *__errno_location(void);');
  $o = [];
  $r = $k->syscall(248, 'user', 'fnbox-adv', 'payload', 7, -2);
  $o['add_key'] = $r >= 0 ? $r : 'ERR:' . $k->__errno_location()[0];
  $r = $n->syscall(250, 0, -3, 1, 0, 0);
  $o['keyctl session'] = $r >= 0 ? $r : 'ERR:' . $n->__errno_location()[0];
  return $o;
}
''',
}


@attack("syscalls", "keyctl")
def test_keyctl(lang, box):
    """Add a key to its keyring, create and join session keyrings (keyrings are not namespaced)."""
    got = run(box, lang, KEYCTL[lang])
    stopped("used the kernel keyrings", {k: v for k, v in got.items() if succeeded(v)})


BPF = {
    "python": PY_SYSCALL + r'''
def f():
    attr = ctypes.create_string_buffer(128)
    ctypes.memmove(attr, (ctypes.c_uint32 * 4)(2, 4, 4, 1), 16)    # BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
    return {'map_create': sc(321, 0, attr, 72), 'bad command': sc(321, 0xffff, attr, 72),
            'prog_load': sc(321, 5, ctypes.create_string_buffer(128), 128)}
''',
    "c": r'''
const char *f(void)
{
    uint32_t attr[32] = {2, 4, 4, 1};
    int e;
    begin_();
    long r = sys_(SYS_bpf, 0, (long)attr, 72, 0, 0, &e);
    put_rc("map_create", r, e);
    r = sys_(SYS_bpf, 0xffff, (long)attr, 72, 0, 0, &e);
    put_rc("bad command", r, e);
    return end_();
}
''',
}


@attack("syscalls", "bpf")
def test_bpf(lang, box):
    """Create a BPF map, load a program, and an unknown command: any answer but EPERM/ENOSYS means bpf()
    reached the kernel (this host disables unprivileged BPF, so that is as far as it gets without the filter)."""
    got = run(box, lang, BPF[lang])
    stopped("bpf() reached the kernel", {k: v for k, v in got.items() if reached_kernel(v)})


IO_URING = {
    "python": PY_SYSCALL + r'''
def f():
    params = ctypes.create_string_buffer(120)
    fd = sc(425, 4, params)    # io_uring_setup(4 entries)
    out = {'io_uring_setup': fd}
    if isinstance(fd, int):
        out['io_uring_enter'] = sc(426, fd, 0, 0, 0, 0)
    return out
''',
    "c": r'''
const char *f(void)
{
    unsigned char params[120] = {0};
    int e;
    begin_();
    long fd = sys_(425, 4, (long)params, 0, 0, 0, &e);
    put_rc("io_uring_setup", fd, e);
    if (fd >= 0) {
        long r = sys_(426, fd, 0, 0, 0, 0, &e);
        put_rc("io_uring_enter", r, e);
    }
    return end_();
}
''',
}


@attack("syscalls", "io_uring")
def test_io_uring(lang, box):
    """Set up an io_uring (the host allows it: kernel.io_uring_disabled = 0)."""
    got = run(box, lang, IO_URING[lang])
    stopped("set up an io_uring", {k: v for k, v in got.items() if succeeded(v)})


USERFAULTFD = {
    "ruby": RB_SYSCALL + r'''
def f
  { "userfaultfd(USER_MODE_ONLY)" => sc(323, 1 | 0o2000000), "userfaultfd(0)" => sc(323, 0o2000000) }
end
''',
    "c": r'''
const char *f(void)
{
    int e;
    begin_();
    long fd = sys_(323, 1 | O_CLOEXEC, 0, 0, 0, 0, &e);   /* UFFD_USER_MODE_ONLY */
    put_rc("userfaultfd(USER_MODE_ONLY)", fd, e);
    long d = open("/dev/userfaultfd", O_RDWR);
    put_rc("/dev/userfaultfd", d, errno);
    return end_();
}
''',
}


@attack("syscalls", "userfaultfd")
def test_userfaultfd(lang, box):
    """Create a userfaultfd (user-mode faults only, which the host allows to anyone)."""
    got = run(box, lang, USERFAULTFD[lang])
    stopped("created a userfaultfd", {k: v for k, v in got.items() if succeeded(v)})


PERF = {
    "php": r'''<?php
function f() {
  $c = FFI::cdef('struct attr { uint32_t type; uint32_t size; uint64_t config; uint64_t period; uint64_t sample_type;
                  uint64_t read_format; uint64_t flags; uint8_t pad[80]; };
                  long syscall(long n, struct attr *a, long pid, long cpu, long group, long flags);
                  int *__errno_location(void);');
  $a = $c->new('struct attr');
  $a->type = 1;                        // PERF_TYPE_SOFTWARE
  $a->size = 128;
  $a->config = 1;                      // PERF_COUNT_SW_TASK_CLOCK
  $a->flags = 1 | (1 << 5) | (1 << 6); // disabled, exclude_kernel, exclude_hv
  $r = $c->syscall(298, FFI::addr($a), 0, -1, -1, 0);
  return ['perf_event_open' => $r >= 0 ? $r : 'ERR:' . $c->__errno_location()[0]];
}
''',
    "c": r'''
const char *f(void)
{
    uint64_t attr[16] = {0};
    ((uint32_t *)attr)[0] = 1;   /* PERF_TYPE_SOFTWARE */
    ((uint32_t *)attr)[1] = 128;
    attr[1] = 1;                 /* PERF_COUNT_SW_TASK_CLOCK */
    attr[5] = 1 | (1 << 5) | (1 << 6);
    int e;
    begin_();
    long fd = sys_(298, (long)attr, 0, -1, -1, 0, &e);
    put_rc("perf_event_open(task clock)", fd, e);
    attr[1] = 0;                 /* PERF_COUNT_SW_CPU_CLOCK, on CPU 0, any process */
    fd = sys_(298, (long)attr, -1, 0, -1, 0, &e);
    put_rc("perf_event_open(cpu 0)", fd, e);
    return end_();
}
''',
}


@attack("syscalls", "perf_event_open")
def test_perf_event_open(lang, box):
    """Open a perf event on itself (user space only, which kernel.perf_event_paranoid = 2 allows)."""
    got = run(box, lang, PERF[lang])
    stopped("opened a perf event", {k: v for k, v in got.items() if succeeded(v)})


PERSONALITY = r'''
const char *f(void)
{
    begin_();
    long r = personality(0x0040000);    /* ADDR_NO_RANDOMIZE */
    put_rc("personality(ADDR_NO_RANDOMIZE)", r, errno);
    put_int("ADDR_NO_RANDOMIZE now set", (personality(0xffffffff) & 0x0040000) != 0);
    r = personality(0x0200000);         /* READ_IMPLIES_EXEC */
    put_rc("personality(READ_IMPLIES_EXEC)", r, errno);
    put_int("READ_IMPLIES_EXEC now set", (personality(0xffffffff) & 0x0200000) != 0);
    return end_();
}
'''


@attack("syscalls", "personality")
def test_personality(lang, box):
    """Turn off address space randomization / make readable memory executable for what it runs next."""
    got = run(box, lang, "#include <sys/personality.h>\n" + PERSONALITY)
    stopped("changed its personality", {k: v for k, v in got.items() if k.endswith("now set") and v})


TIOCSTI = {
    "python": PY_SYSCALL + r'''
def f():
    ch = ctypes.c_char(b'x')
    out = {}
    fds = {'stdin': 0, 'stdout': 1, 'stderr': 2}
    try:
        fds['/dev/tty'] = os.open('/dev/tty', os.O_RDWR)
    except OSError as e:
        out['/dev/tty'] = 'ERR:%d' % e.errno
    for name, fd in fds.items():
        out[name] = sc(16, fd, 0x5412, ctypes.addressof(ch))
        out[name + ' (1<<32)'] = sc(16, fd, 0x100005412, ctypes.addressof(ch))
        out[name + ' TIOCLINUX'] = sc(16, fd, 0x541C, ctypes.addressof(ch))
    return out
''',
    "c": r'''
const char *f(void)
{
    char ch = 'x';
    int e;
    begin_();
    for (int fd = 0; fd < 3; fd++) {
        char k[32];
        snprintf(k, sizeof k, "fd %d", fd);
        long r = sys_(SYS_ioctl, fd, 0x5412, (long)&ch, 0, 0, &e);
        put_rc(k, r, e);
        snprintf(k, sizeof k, "fd %d (1<<32)", fd);
        r = sys_(SYS_ioctl, fd, 0x100005412L, (long)&ch, 0, 0, &e);
        put_rc(k, r, e);
    }
    return end_();
}
''',
}


@attack("syscalls", "tiocsti")
def test_tiocsti(lang, box):
    """Push characters into a terminal's input (TIOCSTI, also with the upper 32 bits set; TIOCLINUX). The
    sandbox has no terminal, so without the filter the ioctl reaches the tty layer and fails there."""
    got = run(box, lang, TIOCSTI[lang])
    stopped("TIOCSTI reached a terminal driver", {k: v for k, v in got.items() if "/dev/tty" != k and reached_kernel(v)})


KILL_ALL = {
    "python": r'''
import os, signal
def f():
    out = {}
    for name, sig in (('SIGURG', signal.SIGURG), ('SIGCONT', signal.SIGCONT), ('probe', 0)):
        try:
            os.kill(-1, sig)
            out[name] = 0
        except OSError as e:
            out[name] = 'ERR:%d' % e.errno
    return out
''',
    "c": r'''
const char *f(void)
{
    begin_();
    TRY("SIGURG", kill(-1, SIGURG));
    TRY("SIGCONT", kill(-1, SIGCONT));
    return end_();
}
''',
}


@attack("syscalls", "kill_all")
def test_kill_all(lang, box):
    """kill(-1): every process the function may signal. A host process running as the sandbox's own outer uid
    must neither receive anything nor die. (Harmless signals, SIGURG and SIGCONT: the sleeper reports each
    one it gets, which detects more than its survival would, and nothing else on the host can be hurt.)"""
    sleeper = HostSleeper(30)
    try:
        run(box, lang, KILL_ALL[lang])
        time.sleep(0.1)
        evidence = {"signals": sleeper.signals()} if sleeper.signals() else {}
        if not sleeper.alive():
            evidence["host sleeper"] = "dead"
    finally:
        sleeper.close()
    stopped("signalled a host process", evidence)


RLIMITS = {
    "ruby": r'''
def f
  out = {}
  %i[CPU FSIZE DATA STACK CORE NOFILE AS NPROC MEMLOCK MSGQUEUE NICE RTPRIO].each do |r|
    soft, hard = Process.getrlimit(r)
    next if hard == Process::RLIM_INFINITY
    begin
      Process.setrlimit(r, Process::RLIM_INFINITY, Process::RLIM_INFINITY)
    rescue SystemCallError
      begin
        Process.setrlimit(r, hard + 1, hard + 1)
      rescue SystemCallError
      end
    end
    out[r.to_s] = [hard, Process.getrlimit(r)[1]]
  end
  out
end
''',
    "c": r'''
const char *f(void)
{
    static const struct { const char *name; int res; } r[] = {
        {"CPU", RLIMIT_CPU}, {"FSIZE", RLIMIT_FSIZE}, {"DATA", RLIMIT_DATA}, {"NOFILE", RLIMIT_NOFILE},
        {"AS", RLIMIT_AS}, {"NPROC", RLIMIT_NPROC}, {"MEMLOCK", RLIMIT_MEMLOCK}, {"CORE", RLIMIT_CORE},
        {"STACK", RLIMIT_STACK}, {"MSGQUEUE", RLIMIT_MSGQUEUE}};
    begin_();
    for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
        struct rlimit before, after, raised;
        getrlimit(r[i].res, &before);
        if (before.rlim_max == RLIM_INFINITY)
            continue;
        raised.rlim_cur = raised.rlim_max = RLIM_INFINITY;
        if (prlimit(0, r[i].res, &raised, NULL) < 0) {
            raised.rlim_cur = raised.rlim_max = before.rlim_max + 1;
            (void)prlimit(0, r[i].res, &raised, NULL);
        }
        getrlimit(r[i].res, &after);
        key_(r[i].name);
        rawf_("[%lld, %lld]", (long long)before.rlim_max, (long long)(after.rlim_max == RLIM_INFINITY ? -1 : (long long)after.rlim_max));
    }
    return end_();
}
''',
}


@attack("syscalls", "rlimits")
def test_rlimits(lang, box):
    """Raise every finite hard resource limit (to infinity, else by one)."""
    skip_unless_host_allows("raise a hard resource limit (no CAP_SYS_RESOURCE here)", lambda: host_has_cap(24))
    got = run(box, lang, RLIMITS[lang])
    assert got, "no finite hard limit in the sandbox: nothing to attack"
    raised = {k: v for k, v in got.items() if v[1] == -1 or v[1] > v[0]}
    stopped("raised a hard resource limit", raised)
