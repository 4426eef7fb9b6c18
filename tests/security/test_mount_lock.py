"""Defence: locked mounts (src/sandbox/userns.c, fb_userns_lock_mounts). The program runs in a user and mount
namespace nested in the sandbox's, created after the mounts: the kernel marks every inherited mount
MNT_LOCKED, so remounting a read-only bind read-write fails (EPERM) and unmounting fails (EINVAL) even for a
process that holds every capability in its namespace, and even with seccomp off.

Four layers stop `mount -o remount,rw /usr` / `umount`: seccomp (mount family refused), the dropped
capabilities, Landlock (a restricted process may not change mounts) and the mount lock. With a build that
has defence switches (`make BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES`, which `make test` builds first),
test_only_the_lock_stands turns the first three off itself, so FNBOX_DISABLE_DEFENCES=mountlock makes it fail.

Also here: the program's starting state the issue promises (fds closed before exec, its own session, stdin
from /dev/null, a non-dumpable init)."""
import json
import os
import subprocess
import tempfile

from fnboxlib import FNBOX, call, check_sanitizers, describe, ok, parse_one_result, req, weak_fnbox

MOUNT_ATTACK_PY = r'''
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_REMOUNT, MS_BIND, MNT_DETACH = 1, 32, 4096, 2

def c(fn, *a):
    ctypes.set_errno(0)
    r = fn(*a)
    return "ok" if r == 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))

def f():
    out = {"status": {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status")
                      if l.startswith(("CapEff", "Seccomp:"))}}
    for path in ("/usr", "/", "/proc/sys", "/etc/alternatives"):
        out["remount rw " + path] = c(libc.mount, None, path.encode(), None, ctypes.c_ulong(MS_REMOUNT | MS_BIND), None)
    for path in ("/usr", "/proc/sys", "/dev/null", "/tmp", "/workspace"):
        out["umount " + path] = c(libc.umount2, path.encode(), 0)
        out["umount -l " + path] = c(libc.umount2, path.encode(), MNT_DETACH)
    try:
        open("/usr/fnbox-mount-lock-probe", "w").close()
        out["write /usr"] = "ok"
    except OSError as e:
        out["write /usr"] = errno.errorcode.get(e.errno, str(e.errno))
    out["/usr entries"] = len(os.listdir("/usr"))
    return out
'''

MOUNT_ATTACK_C = r'''
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

static char out[1024];

const char *f(void) {
    size_t n = 0;
    const char *paths[] = {"/usr", "/", "/proc/sys"};
    for (int i = 0; i < 3; i++) {
        int r = mount(NULL, paths[i], NULL, MS_REMOUNT | MS_BIND, NULL);
        n += (size_t)snprintf(out + n, sizeof out - n, "remount rw %s=%s;", paths[i], r == 0 ? "ok" : strerror(errno));
        r = umount2(paths[i], MNT_DETACH);
        n += (size_t)snprintf(out + n, sizeof out - n, "umount -l %s=%s;", paths[i], r == 0 ? "ok" : strerror(errno));
    }
    return out;
}
'''


def with_disabled(*names):
    """fnbox's environment with these defences switched off (on top of any the run already switches off).
    Honoured only by builds with -DFB_DEFENCE_SWITCHES; other builds keep every defence."""
    have = [n for n in os.environ.get("FNBOX_DISABLE_DEFENCES", "").split(",") if n]
    return {**os.environ, "FNBOX_DISABLE_DEFENCES": ",".join(have + [n for n in names if n not in have])}


def assert_nothing_changed(got):
    changed = {k: v for k, v in got.items() if k.startswith(("remount", "umount", "write")) and v == "ok"}
    assert not changed, f"mounts changed from inside the sandbox: {changed}; all: {describe(got)}"
    assert got["/usr entries"] > 0, "/usr was unmounted"


def test_remount_and_umount_fail_without_seccomp():
    got = ok(call(req("python", MOUNT_ATTACK_PY, "f", []), env=with_disabled("seccomp")))
    assert_nothing_changed(got)


def test_remount_and_umount_fail_from_c_without_seccomp():
    got = ok(call(req("c", MOUNT_ATTACK_C, "f", []), env=with_disabled("seccomp"), timeout=120))
    assert "=ok" not in got, f"mounts changed from C: {got}"


def test_only_the_lock_stands():
    """With seccomp, the capability drop and Landlock switched off (the function holds every capability of
    its user namespace), the locked mounts alone still refuse: EPERM to remount, EINVAL to unmount (the
    kernel's answer for MNT_LOCKED, where a missing capability would give EPERM). Runs on the defence-switch
    build whichever binary the suite tests: only there can the other three layers be off."""
    got = ok(call(req("python", MOUNT_ATTACK_PY, "f", []), env=with_disabled("seccomp", "caps", "landlock"),
                  exe=weak_fnbox()))
    assert got["status"]["Seccomp"] == "0" and got["status"]["CapEff"] != "0000000000000000", \
        f"the defence-switch build did not switch seccomp and the capability drop off: {got['status']}"
    assert_nothing_changed(got)
    assert got["umount /usr"] == "EINVAL" and got["umount -l /proc/sys"] == "EINVAL", describe(got)
    assert got["remount rw /usr"] == "EPERM", describe(got)


# --- the program's starting state -------------------------------------------------------------------------

STATE_PY = r'''
import os, sys

def f(leaked_fd):
    fds = {}
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            fds[fd] = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            pass
    try:
        os.fstat(leaked_fd)
        leaked = "open"
    except OSError as e:
        leaked = e.errno
    init = {}
    for name in ("environ", "mem", "exe", "cwd"):
        try:
            p = "/proc/1/" + name
            init[name] = os.readlink(p) if name in ("exe", "cwd") else len(open(p, "rb").read(16))
        except OSError as e:
            init[name] = e.errno
    try:
        open("/dev/tty")
        tty = "opened"
    except OSError as e:
        tty = e.errno
    return {"pid": os.getpid(), "sid": os.getsid(0), "pgid": os.getpgid(0), "fds": fds, "leaked": leaked,
            "stdin": os.readlink("/proc/self/fd/0"), "stdin_data": sys.stdin.read(), "tty": tty,
            "init_uid": os.stat("/proc/1/environ").st_uid, "my_uid": os.getuid(), "init": init}
'''


def test_program_starting_state():
    """An fd the caller leaked to fnbox without O_CLOEXEC is closed (close_range before exec); the function
    leads its own session with no terminal (setsid); stdin is /dev/null; init is non-dumpable (its /proc
    files belong to root and refuse the program, which runs as the same uid)."""
    with tempfile.NamedTemporaryFile(prefix="fnbox-leak-") as canary:
        canary.write(b"LEAKED-CANARY")
        canary.flush()
        leaked = os.open(canary.name, os.O_RDONLY)  # inheritable: not O_CLOEXEC
        os.set_inheritable(leaked, True)
        try:
            request = json.dumps(req("python", STATE_PY, "f", [leaked]))
            proc = subprocess.run([FNBOX, "call", "-"], input=request.encode(), capture_output=True, timeout=60,
                                  pass_fds=(leaked,))
        finally:
            os.close(leaked)
        check_sanitizers(proc.stderr.decode("utf-8", "replace"))
        result, _ = parse_one_result(proc.stdout)
        assert result["status"] == "success", describe(result)
        got = result["result"]
        assert got["leaked"] != "open", f"fd {leaked} from fnbox's caller reached the function: {describe(got)}"
        assert not any(canary.name in target for target in got["fds"].values()), describe(got["fds"])
    assert got["sid"] == got["pid"] == got["pgid"], f"not a session leader: {describe(got)}"
    assert got["tty"] != "opened"
    assert got["stdin"] == "/dev/null" and got["stdin_data"] == "", describe(got)
    # fds: 0-2 and the harness's own (result channel, input), nothing of fnbox's (seccomp memfd, sync socket,
    # pipes to the supervisor beyond stdout/stderr)
    extra = {fd: t for fd, t in got["fds"].items() if int(fd) > 4 and "fnbox" in t}
    assert not extra, f"fnbox's own descriptors reached the function: {extra}"
    # (/proc/1 itself shows init's uid, as every world-readable /proc/PID directory does; its files do not)
    assert got["init_uid"] != got["my_uid"], f"init's /proc files belong to the program's uid: {describe(got)}"
    assert all(isinstance(v, int) for v in got["init"].values()), f"init's /proc files readable: {got['init']}"
