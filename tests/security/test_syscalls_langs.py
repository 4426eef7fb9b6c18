"""Defence: the seccomp allowlist, attacked from every language's own raw-syscall path (Python's is
tests/security/test_syscalls.py):

- Ruby: Fiddle calls libc's syscall(2);
- PHP: FFI (the CLI allows FFI::cdef with ffi.enable=preload) calls syscall(2);
- C: the function calls syscall(2) itself (compiled in the sandbox, run in the sandbox);
- Node.js has no raw-syscall API at all: no FFI, and process.binding offers none. Its only path is native
  code, so the attack compiles a shared object with the sandbox's own gcc (which needs a request that
  allows child processes: by default Landlock refuses to execute gcc from Node) and loads it with
  process.dlopen; the object's constructor makes the calls inside the Node process.

Each language attempts the same key attacks; each must fail with the filter's answer (EPERM for a refused
family, ENOSYS for clone3 and what is not on the list), and a syscall through the x32 ABI must kill the
runtime with SIGSYS. All of them but "syscall 1000" (the kernel answers ENOSYS itself) fail with the filter
off (FNBOX_DISABLE_DEFENCES=seccomp on a -DFB_DEFENCE_SWITCHES build)."""
import errno
import os
import platform
import shutil
import tempfile

import pytest

from fnboxlib import call, describe, ok, req

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="syscall numbers are x86_64")

X32 = 0x40000000
# name -> (syscall number, up to 5 integer arguments; "PID" is replaced by the caller's pid)
ATTACKS = {
    "ptrace(TRACEME)": (101, [0, 0, 0, 0]),
    "unshare(NEWUSER)": (272, [0x10000000]),
    "kcmp(self)": (312, ["PID", "PID", 0, 0, 0]),
    "keyctl(GET_KEYRING_ID)": (250, [0, -3, 1]),
    "userfaultfd(USER_MODE_ONLY)": (323, [1]),
    "perf_event_open(NULL)": (298, [0, 0, -1, -1, 0]),
    "clock_settime(NULL)": (227, [0, 0]),
    "TIOCSTI": (16, [0, 0x5412, 0]),
    "TIOCSTI | 1<<32": (16, [0, 0x100005412, 0]),
    "clone3": (435, [0, 0]),
    "personality(ADDR_NO_RANDOMIZE)": (135, [0x0040000]),
    "socket(AF_NETLINK, SOCK_DIAG)": (41, [16, 3, 4]),
    "syscall 1000": (1000, []),
}
EXPECTED = {
    "ptrace(TRACEME)": errno.EPERM, "unshare(NEWUSER)": errno.EPERM,
    "kcmp(self)": errno.EPERM, "keyctl(GET_KEYRING_ID)": errno.EPERM, "userfaultfd(USER_MODE_ONLY)": errno.EPERM,
    "perf_event_open(NULL)": errno.EPERM, "clock_settime(NULL)": errno.EPERM, "TIOCSTI": errno.EPERM,
    "TIOCSTI | 1<<32": errno.EPERM, "clone3": errno.ENOSYS, "personality(ADDR_NO_RANDOMIZE)": errno.ENOSYS,
    "socket(AF_NETLINK, SOCK_DIAG)": errno.ENOSYS, "syscall 1000": errno.ENOSYS,
}


def padded(args):
    return (list(args) + [0] * 5)[:5]


def ruby_code():
    lines = ["require 'fiddle'", "def f",
             "  libc = Fiddle.dlopen(nil)",
             "  sys = Fiddle::Function.new(libc['syscall'], [Fiddle::TYPE_LONG] * 6, Fiddle::TYPE_LONG)",
             "  out = {}"]
    for name, (nr, args) in ATTACKS.items():
        a = ", ".join("Process.pid" if x == "PID" else str(x) for x in padded(args))
        lines.append(f"  r = sys.call({nr}, {a}); out[{name!r}] = [r, r == -1 ? Fiddle.last_error : 0]")
    lines += ["  out", "end", ""]
    return "\n".join(lines)


def php_code():
    lines = ["<?php", "function f() {",
             # a fixed prototype: PHP FFI passes variadic integers as int, not long
             "  $c = FFI::cdef('long syscall(long n, long a, long b, long c, long d, long e);"
             " int *__errno_location(void);');",
             "  $out = [];"]
    for name, (nr, args) in ATTACKS.items():
        a = ", ".join("getmypid()" if x == "PID" else str(x) for x in padded(args))
        lines.append(f"  $r = $c->syscall({nr}, {a}); $out['{name}'] = [$r, $r == -1 ? $c->__errno_location()[0] : 0];")
    lines += ["  return $out;", "}", ""]
    return "\n".join(lines)


def c_attacks(out_expr):
    """C statements that run every attack and append `"name": [ret, errno]` to buffer `out_expr`."""
    lines = []
    for name, (nr, args) in ATTACKS.items():
        a = "".join(", (long)getpid()" if x == "PID" else f", {x}L" for x in padded(args))
        lines.append(f"    errno = 0; r = syscall({nr}L{a});")
        lines.append(f"    n += snprintf({out_expr} + n, sizeof {out_expr} - n, \"%s\\\"{name}\\\": [%ld, %d]\", "
                     f"n > 1 ? \", \" : \"\", r, r == -1 ? errno : 0);")
    return "\n".join(lines)


C_HEAD = "#include <errno.h>\n#include <stdio.h>\n#include <sys/syscall.h>\n#include <unistd.h>\n"


def c_code():
    return (C_HEAD + "static char out[8192];\n"
            "const char *f(void) {\n    long r; int n = snprintf(out, sizeof out, \"{\");\n"
            + c_attacks("out") +
            "\n    snprintf(out + n, sizeof out - n, \"}\");\n    return out;\n}\n")


def node_code():
    so_src = (C_HEAD + "#include <fcntl.h>\n#include <string.h>\n"
              "__attribute__((constructor)) static void attack(void) {\n"
              "    static char out[8192]; long r; int n = snprintf(out, sizeof out, \"{\");\n"
              + c_attacks("out") +
              "\n    n += snprintf(out + n, sizeof out - n, \"}\");\n"
              "    int fd = open(\"/tmp/attack.json\", O_WRONLY | O_CREAT | O_TRUNC, 0600);\n"
              "    if (fd >= 0) { (void)!write(fd, out, (size_t)n); close(fd); }\n}\n")
    return ("const fs = require('fs'), cp = require('child_process');\n"
            "function f(src) {\n"
            "  fs.writeFileSync('/tmp/attack.c', src);\n"
            "  const cc = cp.spawnSync('/usr/bin/gcc', ['-shared', '-fPIC', '-o', '/tmp/attack.so', '/tmp/attack.c'],\n"
            "                          { encoding: 'utf8', timeout: 60000 });\n"
            "  if (cc.status !== 0) return { compiled: false, error: String(cc.error || cc.stderr) };\n"
            "  try { process.dlopen({ exports: {} }, '/tmp/attack.so'); } catch (e) { /* not a Node addon */ }\n"
            "  return { compiled: true, results: JSON.parse(fs.readFileSync('/tmp/attack.json', 'utf8')) };\n"
            "}\n"), so_src


@pytest.fixture(scope="module", autouse=True)
def cache_dir():
    d = tempfile.mkdtemp(prefix="fnbox-cache-syscalls-")
    old = os.environ.get("FNBOX_CACHE_DIR")
    os.environ["FNBOX_CACHE_DIR"] = d
    yield d
    if old is None:
        del os.environ["FNBOX_CACHE_DIR"]
    else:
        os.environ["FNBOX_CACHE_DIR"] = old
    shutil.rmtree(d, ignore_errors=True)


def run_attacks(lang):
    if lang == "ruby":
        return ok(call(req("ruby", ruby_code(), "f", [])))
    if lang == "php":
        return ok(call(req("php", php_code(), "f", [])))
    if lang == "c":
        import json
        return json.loads(ok(call(req("c", c_code(), "f", []), timeout=120)))
    js, so_src = node_code()
    # Node may run gcc only when the request allows child processes (Landlock execute rights)
    got = ok(call(req("javascript", js, "f", [so_src], permissions={"childProcess": True}), timeout=120))
    assert got["compiled"], f"gcc could not build a shared object inside the sandbox: {got['error'][:300]}"
    return got["results"]


@pytest.fixture(scope="module", params=["javascript", "ruby", "php", "c"])
def results(request):
    return request.param, run_attacks(request.param)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_refused(results, name):
    lang, got = results
    r, err = got[name]
    want = EXPECTED[name]
    assert r == -1 and err == want, (f"{lang}: {name} must fail with {errno.errorcode[want]}, got {r} "
                                     f"({errno.errorcode.get(err, err)})")


X32_CALLS = {
    "ruby": ("require 'fiddle'\ndef f\n  libc = Fiddle.dlopen(nil)\n"
             "  sys = Fiddle::Function.new(libc['syscall'], [Fiddle::TYPE_LONG], Fiddle::TYPE_LONG)\n"
             f"  sys.call({X32 | 39})\nend\n"),
    "php": ("<?php\nfunction f() {\n  $c = FFI::cdef('long syscall(long n);');\n"
            f"  return $c->syscall({X32 | 39});\n}}\n"),
    "c": f"#include <unistd.h>\n#include <sys/syscall.h>\nlong f(void) {{ return syscall({X32 | 39}L); }}\n",
}


@pytest.mark.parametrize("lang", sorted(X32_CALLS))
def test_x32_syscall_kills_the_runtime(lang):
    """getpid through the x32 ABI (the native arch token, bit 30 set in the number) kills the process."""
    result, code, _ = call(req(lang, X32_CALLS[lang], "f", []), timeout=120)
    assert result["status"] == "crash", describe(result)
    assert "SIGSYS" in result["error"]["message"], describe(result)
