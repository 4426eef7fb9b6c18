"""Defence: the seccomp filter (and dropped capabilities). ptrace, mount, unshare/setns, bpf, keyctl,
perf_event_open, userfaultfd, io_uring, kexec, module loading, pivot_root/chroot fail from the sandbox,
also through the x32 syscall numbers; clone3 answers ENOSYS so runtimes fall back to clone."""
import errno
import platform
import shutil

import pytest

from fnboxlib import call, describe, ok, req

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="syscall numbers are x86_64")

ATTACKS = r'''
import ctypes, json, os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
X32 = 0x40000000

def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return [r, ctypes.get_errno()]

def call_libc(fn, *args):
    ctypes.set_errno(0)
    r = fn(*args)
    return [r, ctypes.get_errno()]

def isolated(attack):
    # each attempt in its own child: a filter that kills (SIGSYS) stops only that attempt
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = attack()
        except BaseException as e:
            res = ["EXC", type(e).__name__]
        os.write(w, json.dumps(res).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 4096)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return ["KILLED", os.WTERMSIG(status)]
    return json.loads(data)

def f():
    os.makedirs("/workspace/mnt", exist_ok=True)
    nsfd = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    buf = ctypes.create_string_buffer(256)
    ktype, kdesc, tchar = (ctypes.create_string_buffer(b"user"), ctypes.create_string_buffer(b"k"),
                           ctypes.create_string_buffer(b"x"))
    attacks = {
        "ptrace(TRACEME)": lambda: sc(101, 0, 0, 0, 0),
        "ptrace(ATTACH, parent)": lambda: sc(101, 16, os.getppid(), 0, 0),
        "mount tmpfs": lambda: call_libc(libc.mount, b"none", b"/workspace/mnt", b"tmpfs", ctypes.c_ulong(0), None),
        "mount bind /": lambda: call_libc(libc.mount, b"/", b"/workspace/mnt", None, ctypes.c_ulong(4096), None),
        "umount2 /proc": lambda: call_libc(libc.umount2, b"/proc", 2),
        "unshare(NEWUSER)": lambda: sc(272, 0x10000000),
        "unshare(NEWNS)": lambda: sc(272, 0x00020000),
        "unshare(NEWNET)": lambda: sc(272, 0x40000000),
        "x32 unshare(NEWUSER)": lambda: sc(X32 | 272, 0x10000000),
        "clone(NEWUSER)": lambda: sc(56, 0x10000000 | 17, 0, 0, 0, 0),
        "setns(mnt)": lambda: sc(308, nsfd, 0),
        "bpf(PROG_LOAD)": lambda: sc(321, 5, 0, 0),
        "keyctl(GET_KEYRING_ID)": lambda: sc(250, 0, -3, 1),
        "add_key": lambda: sc(248, ctypes.addressof(ktype), ctypes.addressof(kdesc), 0, 0, -3),
        "perf_event_open": lambda: sc(298, 0, 0, -1, -1, 0),
        "userfaultfd": lambda: sc(323, 0),
        "io_uring_setup": lambda: sc(425, 1, ctypes.addressof(buf)),
        "kexec_load": lambda: sc(246, 0, 0, 0, 0),
        "init_module": lambda: sc(175, 0, 0, 0),
        "finit_module": lambda: sc(313, 0, 0, 0),
        "pivot_root": lambda: call_libc(libc.syscall, ctypes.c_long(155), b"/workspace", b"/workspace/mnt"),
        "chroot": lambda: call_libc(libc.chroot, b"/workspace"),
        "iopl": lambda: sc(172, 3),
        "TIOCSTI": lambda: sc(16, 0, 0x5412, ctypes.addressof(tchar)),
        "clone3": lambda: sc(435, 0, 0),
    }
    out = {name: isolated(a) for name, a in attacks.items()}
    os.close(nsfd)
    return out
'''


@pytest.fixture(scope="module")
def attacks():
    return ok(call(req("python", ATTACKS, "f", [])))


def test_dangerous_syscalls_fail(attacks):
    got = dict(attacks)
    clone3 = got.pop("clone3")
    succeeded = {k: v for k, v in got.items() if v[0] not in (-1, "KILLED")}
    assert not succeeded, f"syscalls that must fail succeeded: {succeeded}"
    assert clone3[0] == -1 and clone3[1] == errno.ENOSYS, f"clone3 must answer ENOSYS, got {clone3}"


def test_keyctl_is_refused_by_seccomp(attacks):
    """keyctl works for any unprivileged process without a filter, so EPERM/ENOSYS here is the filter."""
    got = attacks
    r, err = got["keyctl(GET_KEYRING_ID)"]
    assert r == "KILLED" or (r == -1 and err in (errno.EPERM, errno.ENOSYS, errno.EACCES)), describe(got)


@pytest.mark.skipif(not (shutil.which("unshare") and shutil.which("mount")), reason="util-linux not installed")
def test_js_spawned_tools_cannot_escape():
    """From Node: the unshare and mount tools (run as child processes) fail too."""
    code = ("const cp = require('child_process');\n"
            "function f(tools) {\n"
            "  const out = {};\n"
            "  for (const [name, argv] of Object.entries(tools)) {\n"
            "    const r = cp.spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 10000 });\n"
            "    out[name] = { status: r.status, error: r.error ? r.error.code : null, stderr: r.stderr };\n"
            "  }\n"
            "  return out;\n}\n")
    tools = {
        "unshare -U -r": [shutil.which("unshare"), "-U", "-r", "true"],
        "unshare -m": [shutil.which("unshare"), "-m", "true"],
        "mount tmpfs": [shutil.which("mount"), "-t", "tmpfs", "none", "/workspace"],
    }
    got = ok(call(req("javascript", code, "f", [tools])))
    ran = {k: v for k, v in got.items() if v["status"] == 0}
    assert not ran, f"escape tools succeeded in the sandbox: {ran}"
