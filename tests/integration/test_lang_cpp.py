"""C++ end to end in the real sandbox: scalars, std::string, std::vector, std::map (nested), default
arguments, exceptions with their demangled type and what(), compile errors, crashes, the aliases, and the
compile cache."""
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
    assert err["type"] == "UnknownException"


def test_void_and_prints():
    res = cpp(HEAD + "void f(const std::string &who) { std::cout << \"hello \" << who << std::endl; }", args=["you"])
    assert ok(res) is None
    assert res.result["stdout"] == "hello you\n"


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


def test_concurrent_first_use():
    code = HEAD + f"std::string f(int x) {{ return std::to_string(x); }} // {time.time_ns()}"
    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(lambda i: cpp(code, args=[i]), range(10)))
    assert [ok(r) for r in results] == [str(i) for i in range(10)]
