"""C end to end in the real sandbox: every supported parameter and return type (64-bit exact), NULL strings,
void, prints + return, compile errors with diagnostics, crashes, timeouts, unsupported types refused before
compiling, argument errors, hostile strings, and the compile cache (hit, miss, corruption, concurrent first
use, bounded size, entry checksums). C has no default arguments: every parameter is required (a missing one
is an ArgumentError), and kwargs only name parameters."""
import hashlib
import json
import os
import resource
import struct
import subprocess
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import FNBOX, call, describe, failed, ok, req


@pytest.fixture(autouse=True, scope="module")
def cache_dir():
    d = tempfile.mkdtemp(prefix="fnbox-cache-test-")
    old = os.environ.get("FNBOX_CACHE_DIR")
    os.environ["FNBOX_CACHE_DIR"] = d
    yield d
    if old is None:
        del os.environ["FNBOX_CACHE_DIR"]
    else:
        os.environ["FNBOX_CACHE_DIR"] = old
    shutil.rmtree(d, ignore_errors=True)


def c(code, fn="f", args=None, kwargs=None, **extra):
    return call(req("c", code, fn, args, kwargs, **extra), timeout=120)


HEAD = "#include <stdint.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <string.h>\n"

# (C type, values that round-trip exactly)
SCALARS = [
    ("int", [0, 1, -1, 2**31 - 1, -2**31]),
    ("unsigned int", [0, 2**32 - 1]),
    ("short", [-2**15, 2**15 - 1]),
    ("unsigned short", [2**16 - 1]),
    ("long", [2**63 - 1, -2**63]),
    ("long long", [2**63 - 1, -2**63, 2**53 + 1]),
    ("unsigned long long", [0, 2**63, 2**64 - 1]),
    ("int8_t", [-128, 127]),
    ("uint8_t", [255]),
    ("int16_t", [-32768]),
    ("uint16_t", [65535]),
    ("int32_t", [-2**31]),
    ("uint32_t", [2**32 - 1]),
    ("int64_t", [-2**63, 2**63 - 1]),
    ("uint64_t", [2**64 - 1, 12345678901234567890]),
    ("size_t", [2**64 - 1]),
    ("signed char", [-128, 127]),
    ("unsigned char", [0, 255]),
    ("double", [0.0, 1.5, -0.25, 1e300, 1e-7, 0.1]),
    ("float", [0.5, -2.0, 0.1]),
    ("bool", [True, False]),
]


@pytest.mark.parametrize("ctype,values", SCALARS, ids=[s[0] for s in SCALARS])
def test_scalar_roundtrip(ctype, values):
    code = HEAD + f"{ctype} f({ctype} x) {{ return x; }}\n"
    for v in values:
        res = c(code, args=[v])
        got = ok(res)
        if ctype == "float":
            assert got == pytest.approx(v, rel=1e-7)
        else:
            assert got == v and type(got) is type(v), describe(res.result)


def test_uint64_max_exact_in_raw_output():
    res = c(HEAD + "uint64_t f(uint64_t a, uint64_t b) { return a + b; }", args=[2**64 - 2, 1])
    assert ok(res) == 2**64 - 1
    assert "18446744073709551615" in res.raw


def test_int_out_of_range_is_argument_error():
    err = failed(c(HEAD + "int f(int x) { return x; }", args=[2**31]))
    assert err["type"] == "ArgumentError" and "2147483647" in err["message"]
    err = failed(c(HEAD + "uint8_t f(uint8_t x) { return x; }", args=[-1]))
    assert err["type"] == "ArgumentError"
    err = failed(c(HEAD + "int64_t f(int64_t x) { return x; }", args=[2**64 - 1]))
    assert err["type"] == "ArgumentError"


def test_wrong_json_type_is_argument_error():
    err = failed(c(HEAD + "int f(int x) { return x; }", args=["12"]))
    assert err["type"] == "ArgumentError" and "'x'" in err["message"]
    err = failed(c(HEAD + "double f(double x) { return x; }", args=[[1]]))
    assert err["type"] == "ArgumentError"


def test_char_param_and_return():
    code = HEAD + "char f(char c) { return (char)(c + 1); }"
    assert ok(c(code, args=["a"])) == "b"
    assert ok(c(code, args=[65])) == "B"


def test_strings_and_null():
    code = HEAD + ("const char *f(const char *s) { return s; }\n")
    for s in ["", "plain", "unicode é ü 😀 中文", "tab\tnew\nline", "quote\"back\\slash", "#{x} $& %s %n"]:
        assert ok(c(code, args=[s])) == s
    assert ok(c(code, args=[None])) is None


def test_char_star_is_a_private_writable_copy():
    code = HEAD + "#include <ctype.h>\nchar *f(char *s) { for (char *p = s; *p; p++) *p = (char)toupper(*p); return s; }"
    assert ok(c(code, args=["abc"])) == "ABC"


def test_invalid_utf8_result_is_replaced():
    code = HEAD + "const char *f(void) { return \"a\\xff b\"; }"
    assert ok(c(code)) == "a\ufffd b"


def test_void_return_and_prints():
    res = c(HEAD + "void f(int n) { for (int i = 0; i < n; i++) printf(\"line %d\\n\", i); fprintf(stderr, \"err\\n\"); }",
            args=[3])
    assert ok(res) is None
    assert res.result["stdout"] == "line 0\nline 1\nline 2\n"
    assert res.result["stderr"] == "err\n"


def test_no_parameters():
    assert ok(c("int answer(void) { return 42; }", fn="answer")) == 42
    assert ok(c("int answer() { return 42; }", fn=None)) == 42


def test_declaration_forms():
    code = (HEAD + "/* int decoy(int x) { */\n"
            "static inline\n__attribute__((noinline)) long long\n"
            "add3 ( const  long long  a , // first\n  long long b,\n  long long c )\n{ return a + b + c; }\n")
    assert ok(c(code, fn="add3", args=[1, 2, 3])) == 6


def test_kwargs_by_parameter_name():
    assert ok(c("int f(int a, int b) { return a - b; }", args=[], kwargs={"b": 1, "a": 10})) == 9


def test_missing_argument_is_argument_error():
    err = failed(c("int f(int a, int b) { return a + b; }", args=[1]))
    assert err["type"] == "ArgumentError" and "'b'" in err["message"]


def test_too_many_arguments():
    err = failed(c("int f(int a) { return a; }", args=[1, 2]))
    assert err["type"] == "ArgumentError"


@pytest.mark.parametrize("decl,what", [
    ("struct p { int x; };\nint f(struct p v) { return v.x; }", "struct p"),
    ("int f(int *v) { return *v; }", "int*"),
    ("int f(int n, ...) { return n; }", "..."),
    ("struct p { int x; };\nstruct p f(int x) { struct p r = {x}; return r; }", "struct p"),
])
def test_unsupported_type_refused_before_compiling(decl, what):
    res = c(decl, args=[1])
    err = failed(res)
    assert err["type"] == "UnsupportedType", describe(res.result)
    assert what in err["message"]
    assert "compile" not in res.result.get("meta", {})


def test_compile_error_has_diagnostics_with_user_lines():
    res = c("int f(int x) {\n  return x +;\n}\n", args=[1])
    err = failed(res)
    assert err["type"] == "CompileError"
    assert "user_code.c:2:" in err["message"], err["message"]


def test_function_not_found():
    err = failed(c("int g(int x) { return x; }", fn="f", args=[1]))
    assert err["type"] == "FunctionNotFound"


def test_segfault_is_crash():
    res = c("int f(void) { volatile int *p = 0; return *p; }")
    err = failed(res, "crash")
    assert "SIGSEGV" in err["message"] or "11" in err["message"], describe(res.result)


def test_abort_is_crash():
    err = failed(c("#include <stdlib.h>\nint f(void) { abort(); }"), "crash")
    assert "SIGABRT" in err["message"], err


def test_stack_overflow_is_crash():
    code = "int f(int n) { volatile char buf[4096]; buf[0] = (char)n; return f(n + 1) + buf[0]; }"
    err = failed(c(code, args=[0]), "crash")
    assert "SIGSEGV" in err["message"], err


def test_prints_without_newline_or_flush_are_captured():
    res = c(HEAD + "int f(void) { printf(\"no newline\"); fputs(\"err, no newline\", stderr); return 7; }")
    assert ok(res) == 7
    assert res.result["stdout"] == "no newline" and res.result["stderr"] == "err, no newline"


def test_prints_before_a_crash_are_kept():
    res = c(HEAD + "#include <unistd.h>\nint f(void) { write(1, \"before\", 6); volatile int *p = 0; return *p; }")
    failed(res, "crash")
    assert res.result["stdout"] == "before"


def test_no_default_arguments_in_c():
    # C has none: `int f(int a, int b)` needs both, by position or by name
    assert ok(c("int f(int a, int b) { return a * 10 + b; }", args=[1], kwargs={"b": 2})) == 12
    err = failed(c("int f(int a, int b) { return a; }", kwargs={"a": 1}))
    assert err["type"] == "ArgumentError" and "'b'" in err["message"]


def test_timeout():
    res = c("int f(void) { for (;;) {} }", timeout=1)
    failed(res, "timeout")


def test_exit_in_function_is_no_result():
    err = failed(c("#include <stdlib.h>\nint f(void) { exit(3); }"))
    assert err["type"] == "NoResult"


def test_nul_inside_a_c_string_is_argument_error():
    err = failed(c(HEAD + "size_t f(const char *s) { return strlen(s); }", args=["a\u0000b"]))
    assert err["type"] == "ArgumentError" and "'s'" in err["message"] and "NUL" in err["message"]


def test_hostile_strings_round_trip():
    code = HEAD + "const char *f(const char *s) { return s; }"
    for s in ["%n%n%n%s%s", "\"\\\"'", "\\u0000", "</script>", "\x7f\x1b[31m", "\U0001F600\u200b\ufeff", "a" * 10000]:
        assert ok(c(code, args=[s])) == s


def test_unicode_arguments_and_results():
    code = HEAD + "size_t f(const char *s) { return strlen(s); }"
    assert ok(c(code, args=["é😀中"])) == len("é😀中".encode())
    assert ok(c(HEAD + "const char *f(void) { return \"Grüße, 世界 🌍\"; }")) == "Grüße, 世界 🌍"


def test_arguments_never_reach_the_source():
    hostile = "\"); system(\"id\"); (\"\n#include </etc/passwd>\n\x01"
    assert ok(c(HEAD + "size_t f(const char *s) { return strlen(s); }", args=[hostile])) == len(hostile.encode())


def test_parallel_calls():
    code = HEAD + "int f(int x) { return x * 2; }"
    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(lambda i: c(code, args=[i]), range(20)))
    assert [ok(r) for r in results] == [i * 2 for i in range(20)]


def run_measured(request):
    """fnbox call on request (bytes); returns (result, fnbox's own peak RSS in bytes)."""
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout:
        fin.write(request)
        fin.seek(0)
        p = subprocess.Popen([FNBOX, "call", "-"], stdin=fin, stdout=fout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        assert p.returncode == 0, status
        fout.seek(0)
        return json.loads(fout.read()), usage.ru_maxrss * 1024


def test_64mb_string_argument_and_result():
    # 64 MB, not MiB: the result channel is a memfd under the sandbox's 64 MiB RLIMIT_FSIZE (every language)
    big = "x" * (64 * 1000 * 1000)
    code = HEAD + "#include <stdlib.h>\nchar *f(const char *s, int n) { size_t l = strlen(s); char *r = malloc(l + 2);" \
        " memcpy(r, s, l); r[l] = (char)('0' + n); r[l + 1] = 0; return r; }"
    ok(c(code, args=["warm", 1]))  # compiled once, so the measured call is the data path only
    limits = {"resultBytes": 64 * 1024 * 1024}  # the default result limit is 16 MiB
    result, fnbox_rss = run_measured(json.dumps(req("c", code, "f", [big, 7], limits=limits)).encode())
    assert result["status"] == "success", describe(result)
    assert len(result["result"]) == len(big) + 1 and result["result"].endswith("x7")
    # inside the default 256 MiB limit: the parsed argument (freed before the call), the function's copy and
    # its result, the result channel (a memfd, charged too); fnbox itself (request text, parsed request, call
    # input, result channel, result JSON) stays a small multiple as well
    # (success = it fit the cgroup limit; peakMemoryBytes also counts the sandbox's init, a fork of fnbox,
    # which is much bigger in a sanitizer build)
    assert result["usage"]["peakMemoryBytes"] < 8 * len(big), result["usage"]
    sanitized = b"__asan_init" in open(FNBOX, "rb").read()  # ASan's quarantine and shadow add hundreds of MB
    assert sanitized or fnbox_rss < 8 * len(big), f"fnbox peak RSS {fnbox_rss / 1e6:.0f} MB for {len(big) / 1e6:.0f} MB"
    print(f"64 MB string: sandbox peak {result['usage']['peakMemoryBytes'] / 1e6:.0f} MB, "
          f"fnbox peak RSS {fnbox_rss / 1e6:.0f} MB")


# ---- the compile cache ----

def entries(d):
    return sorted(n for n in os.listdir(d) if n.endswith(".bin"))


def test_cache_miss_then_hit(own_cache):
    code = HEAD + f"int f(int x) {{ return x + {time.time_ns() % 100000}; }} /* cache test */"
    first = c(code, args=[1])
    second = c(code, args=[2])
    ok(first), ok(second)
    assert first.result["meta"]["compile"] == "miss"
    assert second.result["meta"]["compile"] == "hit"
    assert second.result["meta"]["duration"] < first.result["meta"]["duration"]


def test_corrupted_entry_is_detected_and_rebuilt(own_cache):
    code = HEAD + f"int f(int x) {{ return x + 1; }} /* corrupt {time.time_ns()} */"
    ok(c(HEAD + "int f(int x) { return x; } /* builds the runtime object once */", args=[0]))
    before = set(entries(own_cache))
    assert ok(c(code, args=[1])) == 2
    (new,) = set(entries(own_cache)) - before
    path = os.path.join(own_cache, new)
    data = bytearray(open(path, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(path, "wb").write(bytes(data))
    res = c(code, args=[1])
    assert ok(res) == 2 and res.result["meta"]["compile"] == "miss"
    # truncated
    with open(path, "r+b") as f:
        f.truncate(100)
    res = c(code, args=[5])
    assert ok(res) == 6 and res.result["meta"]["compile"] == "miss"
    assert c(code, args=[5]).result["meta"]["compile"] == "hit"


def test_concurrent_first_use(own_cache):
    ok(c(HEAD + "int f(int x) { return x; } /* builds the runtime object once */", args=[0]))
    before = set(entries(own_cache))
    code = HEAD + f"int f(int x) {{ return x * 3; }} /* concurrent {time.time_ns()} */"
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: c(code, args=[i]), range(8)))
    assert [ok(r) for r in results] == [i * 3 for i in range(8)]
    assert len(set(entries(own_cache)) - before) == 1  # 8 first calls, one entry
    assert not [n for n in os.listdir(own_cache) if ".tmp." in n]
    assert c(code, args=[1]).result["meta"]["compile"] == "hit"


def test_entries_carry_a_valid_checksum(own_cache):
    ok(c(HEAD + f"int f(int x) {{ return x; }} /* checksum {time.time_ns()} */", args=[1]))
    names = entries(own_cache)
    assert names
    for name in names:
        data = open(os.path.join(own_cache, name), "rb").read()
        if data[:8] != b"FNBXBIN1":
            continue  # junk planted by another test
        (length,) = struct.unpack("<Q", data[8:16])
        assert length == len(data) - 64
        assert data[16:48] == hashlib.sha256(data[64:]).digest(), name  # fnbox's SHA-256 agrees with hashlib
        assert len(name) == 64 + 4 and all(ch in "0123456789abcdef" for ch in name[:64])


def test_cache_off_when_the_directory_is_not_ours(tmp_path):
    d = tmp_path / "notmine"
    d.mkdir()
    os.chown(d, 12345, 12345) if os.geteuid() == 0 else pytest.skip("needs root to make a foreign-owned dir")
    res = call(req("c", "int f(int x) { return x; }", "f", [4]), timeout=120,
               env=dict(os.environ, FNBOX_CACHE_DIR=str(d)))
    assert ok(res) == 4 and res.result["meta"]["compile"] == "off"
    assert os.listdir(d) == []


def test_cache_dir_is_private(own_cache):
    # 0711: others may pass through to a dependency layer (docs/internals/dependencies.md), never list or
    # read an entry
    assert c(HEAD + "int f(int x) { return x; } /* private */", args=[1]).result["status"] == "success"
    assert os.stat(own_cache).st_mode & 0o777 == 0o711
    bins = [n for n in os.listdir(own_cache) if n.endswith(".bin")]
    assert bins and all(os.stat(os.path.join(own_cache, n)).st_mode & 0o077 == 0 for n in bins)


def test_different_code_different_entry(own_cache):
    a = c(HEAD + "int f(int x) { return x; } /* variant a */", args=[1])
    b = c(HEAD + "int f(int x) { return -x; } /* variant a */", args=[1])
    assert ok(a) == 1 and ok(b) == -1


def test_cache_size_is_bounded(own_cache):
    # 300 stale entries (older than anything real): the next write prunes the least recently used
    old = time.time() - 86400
    for i in range(300):
        p = os.path.join(own_cache, f"{i:064x}.bin")
        with open(p, "wb") as f:
            f.write(b"junk")
        os.utime(p, (old + i, old + i))
    code = HEAD + f"int f(int x) {{ return x; }} /* prune {time.time_ns()} */"
    res = c(code, args=[7])
    assert ok(res) == 7 and res.result["meta"]["compile"] == "miss"
    left = entries(own_cache)
    assert len(left) <= 256
    assert f"{0:064x}.bin" not in left  # the oldest went first
    assert c(code, args=[7]).result["meta"]["compile"] == "hit"  # the new one stayed
