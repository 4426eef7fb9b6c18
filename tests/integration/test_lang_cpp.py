"""C++ end to end in the real sandbox: scalars, std::string, std::vector, std::map (nested), default
arguments, exceptions with their demangled type and what(), compile errors, crashes, timeouts, prints,
hostile and large strings, functions in namespaces and extern "C" blocks, the aliases, and the compile cache.

Naming: functionName is always a plain name. A function inside `namespace m` (nested, inline, anonymous, or in
an `extern "C"` block) is named "f" and called as m::f; if two namespaces both define an f, that name is an
AmbiguousFunction error (rename one)."""
import json
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import call, describe, failed, ok, req


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


def cpp(code, fn="f", args=None, kwargs=None, lang="cpp", **extra):
    return call(req(lang, code, fn, args, kwargs, **extra), timeout=120)


HEAD = ("#include <cstdint>\n#include <iostream>\n#include <map>\n#include <stdexcept>\n#include <string>\n"
        "#include <vector>\n")


@pytest.mark.parametrize("ctype,value", [
    ("int", -5), ("std::int64_t", -2**63), ("std::uint64_t", 2**64 - 1), ("unsigned long long", 2**64 - 1),
    ("double", 0.1), ("bool", True), ("char", "x"), ("std::string", "unicode é 😀"), ("std::string", ""),
    ("const std::string&", "ref"), ("std::vector<int>", [1, -2, 3]), ("std::vector<std::string>", ["a", "", "c"]),
    ("std::vector<std::vector<double>>", [[1.5], [], [2.25, 3.0]]), ("std::map<std::string, int>", {"a": 1, "b": 2}),
    ("std::map<std::string, std::vector<bool>>", {"k": [True, False]}), ("std::vector<std::uint64_t>", [2**64 - 1, 0]),
    ("const std::vector<std::map<std::string, std::string>> &", [{"x": "y"}, {}]),
])
def test_roundtrip(ctype, value):
    base = ctype.replace("const ", "").replace("&", "").strip()
    code = HEAD + f"{base} f({ctype} x) {{ return x; }}\n"
    res = cpp(code, args=[value])
    assert ok(res) == value, describe(res.result)


def test_string_with_nul_inside():
    assert ok(cpp(HEAD + "std::string f(const std::string &s) { return s + \"!\"; }", args=["a\u0000b"])) == "a\u0000b!"


def test_using_namespace_std():
    code = HEAD + "using namespace std;\nvector<string> f(const map<string, int> &m) {\n" \
        "  vector<string> out; for (auto &kv : m) out.push_back(kv.first + \"=\" + to_string(kv.second)); return out; }\n"
    assert ok(cpp(code, args=[{"a": 1, "b": 2}])) == ["a=1", "b=2"]


def test_default_arguments():
    code = HEAD + "int f(int a, int b = 10, int c = 100) { return a + b + c; }"
    assert ok(cpp(code, args=[1])) == 111
    assert ok(cpp(code, args=[1, 2])) == 103
    assert ok(cpp(code, args=[1, 2, 3])) == 6
    err = failed(cpp(code, args=[]))
    assert err["type"] == "ArgumentError"


def test_std_exception_type_and_what():
    code = HEAD + "int f(int x) { if (x < 0) throw std::invalid_argument(\"negative: \" + std::to_string(x)); return x; }"
    err = failed(cpp(code, args=[-3]))
    assert err["type"] == "std::invalid_argument"
    assert err["message"] == "negative: -3"


def test_custom_exception_type():
    code = HEAD + "namespace app { struct Oops : std::runtime_error { using std::runtime_error::runtime_error; }; }\n" \
        "int f() { throw app::Oops(\"custom\"); }"
    err = failed(cpp(code))
    assert err["type"] == "app::Oops" and err["message"] == "custom"


def test_non_std_exception():
    err = failed(cpp(HEAD + "int f() { throw 42; }"))
    assert err["type"] == "UnknownException" and "'int'" in err["message"], err
    err = failed(cpp(HEAD + "int f() { throw \"text\"; }"))
    assert err["type"] == "UnknownException" and "char const*" in err["message"], err


def test_runtime_error_and_custom_std_exception():
    err = failed(cpp(HEAD + "int f() { throw std::runtime_error(\"boom\"); }"))
    assert err == {"type": "std::runtime_error", "message": "boom"} or (
        err["type"] == "std::runtime_error" and err["message"] == "boom"), err
    code = HEAD + "#include <exception>\nstruct Bad : std::exception {\n" \
        "  const char *what() const noexcept override { return \"bad thing\"; }\n};\nint f() { throw Bad(); }"
    err = failed(cpp(code))
    assert err["type"] == "Bad" and err["message"] == "bad thing", err


def test_exception_after_prints_keeps_the_output():
    res = cpp(HEAD + "int f() { std::cout << \"partial\"; throw std::logic_error(\"late\"); }")
    assert failed(res)["type"] == "std::logic_error"
    assert res.result["stdout"] == "partial"


def test_void_and_prints():
    res = cpp(HEAD + "void f(const std::string &who) { std::cout << \"hello \" << who << std::endl; }", args=["you"])
    assert ok(res) is None
    assert res.result["stdout"] == "hello you\n"


def test_cout_and_printf_without_newline_or_flush():
    code = HEAD + "#include <cstdio>\nint f() { std::cout << \"a\"; printf(\"b\"); std::cout << \"c\"; std::cerr << \"e\";" \
        " return 1; }"
    res = cpp(code)
    assert ok(res) == 1
    assert res.result["stdout"] == "abc" and res.result["stderr"] == "e"


def test_crashes_name_the_signal():
    for code, sig in [("int f() { volatile int *p = nullptr; return *p; }", "SIGSEGV"),
                      ("#include <cstdlib>\nint f() { std::abort(); }", "SIGABRT"),
                      ("int f(int n) { volatile char b[4096]; b[0] = (char)n; return f(n + 1) + b[0]; }", "SIGSEGV"),
                      ("int f() noexcept { throw std::runtime_error(\"in noexcept\"); }", "SIGABRT")]:
        res = cpp(HEAD + code, args=[0] if "int n" in code else [])
        err = failed(res, "crash")
        assert sig in err["message"], (code, err)


def test_timeout():
    failed(cpp("int f() { for (;;) {} }", timeout=1), "timeout")


def test_hostile_and_unicode_strings():
    code = HEAD + "std::string f(const std::string &s) { return s; }"
    for s in ["%n%s", "\"\\'", "#{x} $& `id`", "é😀中\u200b", "\x7f\x1b", "a\u0000b\u0000"]:
        assert ok(cpp(code, args=[s])) == s
    assert ok(cpp(HEAD + "std::map<std::string, int> f(std::map<std::string, int> m) { return m; }",
                  args=[{"ключ": 1, "😀": 2, "": 3}])) == {"ключ": 1, "😀": 2, "": 3}


def test_nul_in_a_char_pointer_is_argument_error():
    err = failed(cpp("int f(const char *s) { return 0; }", args=["a\u0000b"]))
    assert err["type"] == "ArgumentError" and "NUL" in err["message"]


def test_invalid_utf8_in_a_returned_string_becomes_valid_json():
    res = cpp(HEAD + "std::string f() { return std::string(\"ok\\xff\\xc3(\\xed\\xa0\\x80\" \"end\"); }")
    assert ok(res) == "ok\ufffd\ufffd(\ufffd\ufffd\ufffdend"
    json.loads(res.raw)  # the whole result is valid JSON (fnboxlib also checks the UTF-8)


def test_64bit_extremes_and_floats_in_containers():
    code = HEAD + "std::vector<std::int64_t> f(std::vector<std::int64_t> v) { return v; }"
    assert ok(cpp(code, args=[[-2**63, 2**63 - 1, 0]])) == [-2**63, 2**63 - 1, 0]
    code = HEAD + "std::map<std::string, float> f(std::map<std::string, float> m) { return m; }"
    assert ok(cpp(code, args=[{"a": 0.5, "b": -2.0}])) == {"a": 0.5, "b": -2.0}
    assert ok(cpp(HEAD + "std::vector<bool> f() { return {true, false}; }")) == [True, False]


def test_namespace_functions():
    code = HEAD + "namespace geo { namespace detail { int twice(int x) { return 2 * x; } }\n" \
        "int area(int w, int h) { return detail::twice(w * h) / 2; } }\n"
    assert ok(cpp(code, fn="area", args=[3, 4])) == 12
    assert ok(cpp(code, fn="twice", args=[5])) == 10
    res = cpp(code, fn="area", args=[], kwargs={"h": 2, "w": 5})
    assert ok(res) == 10 and res.result["meta"]["signatureSource"] == "inferred"
    err = failed(cpp("namespace a { int f() { return 1; } }\nnamespace b { int f() { return 2; } }", fn="f"))
    assert err["type"] == "AmbiguousFunction" and "namespace" in err["message"], err
    # overloads in one namespace: the last definition, as for top-level functions
    assert ok(cpp("namespace a { int f(int x) { return 1; } int f(int x, int y) { return 2; } }",
                  fn="f", args=[1, 2])) == 2
    # the only function, named by the code alone
    assert ok(cpp("namespace m { int f(int a) { return a + 1; } }", fn=None, args=[1])) == 2


def test_extern_c_functions():
    assert ok(cpp("extern \"C\" int f(int a) { return a * 3; }", args=[2])) == 6
    code = "#include <cstring>\nextern \"C\" {\n  static int helper(int x) { return x; }\n" \
        "  size_t f(const char *s) { return std::strlen(s) + helper(0); }\n}\n"
    assert ok(cpp(code, args=["four"])) == 4
    assert ok(cpp("namespace { int f(int a) { return -a; } }", args=[5])) == -5


def test_parallel_calls():
    code = HEAD + "std::string f(int x) { return std::to_string(x * x); }"
    with ThreadPoolExecutor(20) as pool:
        results = list(pool.map(lambda i: cpp(code, args=[i]), range(20)))
    assert [ok(r) for r in results] == [str(i * i) for i in range(20)]


def test_64mb_string_round_trip():
    big = "é" * (32 * 1000 * 1000)  # 64 MB of UTF-8 (the result channel caps at 64 MiB, see test_lang_c.py)
    res = cpp(HEAD + "std::size_t f(const std::string &s) { return s.size(); }", args=[big])
    assert ok(res) == 64 * 1000 * 1000
    res = cpp(HEAD + "std::string f(int n) { return std::string((std::size_t)n, 'y'); }", args=[64 * 1000 * 1000],
              limits={"resultBytes": 64 * 1024 * 1024})  # the default result limit is 16 MiB
    assert len(ok(res)) == 64 * 1000 * 1000
    assert res.result["usage"]["peakMemoryBytes"] < 8 * 64 * 1000 * 1000


@pytest.mark.parametrize("lang", ["c++", "cxx"])
def test_aliases(lang):
    assert ok(cpp("int f(int a) { return a + 1; }", args=[1], lang=lang)) == 2


def test_unsupported_types():
    for decl, what in [("struct P { int x; };\nint f(P p) { return p.x; }", "P"),
                       ("#include <set>\nint f(std::set<int> s) { return (int)s.size(); }", "std::set<int>"),
                       (HEAD + "int f(std::map<int, int> m) { return 0; }", "std::map<int,int>"),
                       ("template <class T> T f(T x) { return x; }", "T")]:
        res = cpp(decl, args=[1])
        err = failed(res)
        assert err["type"] == "UnsupportedType", describe(res.result)
        assert what in err["message"], err["message"]


def test_compile_error():
    err = failed(cpp("int f(int x) {\n  return undefined_name + x;\n}\n", args=[1]))
    assert err["type"] == "CompileError"
    assert "user_code.cpp:2:" in err["message"] and "undefined_name" in err["message"]


def test_wrong_element_type_is_argument_error():
    err = failed(cpp(HEAD + "int f(std::vector<int> v) { return (int)v.size(); }", args=[[1, "x"]]))
    assert err["type"] == "ArgumentError" and "'v'" in err["message"]


def test_crash():
    failed(cpp(HEAD + "int f() { std::vector<int> *v = nullptr; return v->at(3); }"), "crash")


def test_overloads_resolve_by_type():
    code = HEAD + "int g(int x) { return x; }\nint f(const std::string &s) { return (int)s.size(); }"
    assert ok(cpp(code, args=["abcd"])) == 4


def test_cache_hit_is_fast():
    code = HEAD + f"int f(int x) {{ return x; }} // {time.time_ns()}"
    first = cpp(code, args=[1])
    second = cpp(code, args=[1])
    assert first.result["meta"]["compile"] == "miss" and second.result["meta"]["compile"] == "hit"
    assert second.result["meta"]["duration"] < first.result["meta"]["duration"] / 10


def test_concurrent_first_use(own_cache):
    before = {n for n in os.listdir(own_cache) if n.endswith(".bin")}
    code = HEAD + f"std::string f(int x) {{ return std::to_string(x); }} // {time.time_ns()}"
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: cpp(code, args=[i]), range(8)))
    assert [ok(r) for r in results] == [str(i) for i in range(8)]
    after = {n for n in os.listdir(own_cache) if n.endswith(".bin")}
    assert len(after - before) == 1 and not [n for n in os.listdir(own_cache) if ".tmp." in n]
    assert cpp(code, args=[3]).result["meta"]["compile"] == "hit"


def test_corrupted_entry_is_rebuilt(own_cache):
    code = HEAD + f"int f(int x) {{ return x + 1; }} // corrupt {time.time_ns()}"
    before = {n for n in os.listdir(own_cache) if n.endswith(".bin")}
    assert ok(cpp(code, args=[1])) == 2
    (new,) = {n for n in os.listdir(own_cache) if n.endswith(".bin")} - before
    path = os.path.join(own_cache, new)
    data = bytearray(open(path, "rb").read())
    data[-1] ^= 0x01
    open(path, "wb").write(bytes(data))
    res = cpp(code, args=[2])
    assert ok(res) == 3 and res.result["meta"]["compile"] == "miss"
