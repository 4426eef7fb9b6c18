"""Every JSON value round-trips exactly through args -> function -> result, and non-JSON results follow
the documented conversions (docs/internals/harness-protocol.md, "Value conversions")."""
import base64
import json
import math

import pytest

from fnboxlib import call, describe, failed, ok, req

ECHO = {
    "python": "def echo(x):\n    return x\n",
    "javascript": "function echo(x) {\n  return x;\n}\n",
    "ruby": "def echo(x)\n  x\nend\n",
    "php": "function echo_($x) {\n    return $x;\n}\n",      # `echo` is a PHP keyword
}
FN = {"python": "echo", "javascript": "echo", "ruby": "echo", "php": "echo_"}


def php_expected(value):
    """PHP has no integers beyond 64 bits: such a request integer reaches the function as its decimal string
    (docs/guide/languages.md), and an echo gives that string back. Everything else round-trips exactly."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return str(value)
    return value        # (MATRIX holds its big integers at the top level only)


def expected(lang, value):
    return php_expected(value) if lang == "php" else value


def nested_list(depth):
    v = []
    for _ in range(depth - 1):
        v = [v]
    return v


def nested_obj(depth):
    v = {"leaf": True}
    for i in range(depth - 1):
        v = {"k": v}
    return v


# (label, value). Integral floats are left out on purpose: JSON does not distinguish 1.0 from 1.
MATRIX = [
    ("null", None),
    ("true", True),
    ("false", False),
    ("zero", 0),
    ("minus one", -1),
    ("int", 123456789),
    ("2**53+1", 2**53 + 1),
    ("-(2**53+1)", -(2**53 + 1)),
    ("2**63-1", 2**63 - 1),
    ("-2**63", -(2**63)),
    ("2**64+7", 2**64 + 7),
    ("0.1", 0.1),
    ("-2.5e-10", -2.5e-10),
    ("1e300", 1e300),
    ("max double", 1.7976931348623157e308),
    ("min subnormal", 5e-324),
    ("pi", math.pi),
    ("empty string", ""),
    ("ascii", "hello world"),
    ("latin/cjk", "héllo wörld — 日本語 — Ελληνικά"),
    ("emoji (non-BMP)", "😀👍🏽🇫🇷"),
    ("NUL inside", "a\u0000b"),
    ("control chars", "\x01\x02\x1f\x7f\t\n\r\b\f"),
    ("quotes and backslashes", 'say "hi" \\ \'x\' \\"'),
    ("line separators", "\u2028\u2029"),
    ("json-looking string", '{"status":"success","result":1}'),
    ("empty array", []),
    ("empty object", {}),
    ("nested empties", [[], {}, [[]], {"a": {}}]),
    ("mixed array", [1, "two", 3.5, None, True, False, [4], {"five": 5}]),
    ("object", {"a": 1, "b": [1, 2, {"c": None}], "unicode ключ 😀": "v", "": "empty key", "q\"k": 1}),
    ("deep list 500", nested_list(500)),
    ("deep object 500", nested_obj(500)),
]


def strict_equal(a, b, path="$"):
    """Equality that also checks JSON types: bool vs int vs float, and float sign of zero."""
    if type(a) is not type(b):
        return f"{path}: type {type(a).__name__} != {type(b).__name__} ({a!r:.80} vs {b!r:.80})"
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = strict_equal(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)!r:.200} != {sorted(b)!r:.200}"
        for k in a:
            d = strict_equal(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if a != b:
        return f"{path}: {a!r:.200} != {b!r:.200}"
    return None


def test_matrix_each_value(lang):
    """One call per language with the whole matrix as separate arguments' items; each item compared
    strictly, and the failures listed by label."""
    values = [v for _, v in MATRIX]
    got = ok(call(req(lang, ECHO[lang], FN[lang], [values])))
    assert isinstance(got, list) and len(got) == len(values), describe(got)
    diffs = []
    for (label, sent), back in zip(MATRIX, got):
        d = strict_equal(expected(lang, sent), back)
        if d:
            diffs.append(f"{label}: {d}")
    assert not diffs, "values changed in the round trip:\n" + "\n".join(diffs)


@pytest.mark.parametrize("label,value", [m for m in MATRIX if m[0] in
                                         ("null", "2**63-1", "NUL inside", "emoji (non-BMP)", "empty object")])
def test_top_level_values(lang, label, value):
    """A value as the whole argument and the whole result (not nested in an array)."""
    got = ok(call(req(lang, ECHO[lang], FN[lang], [value])))
    assert strict_equal(value, got) is None, strict_equal(value, got)


def test_big_ints_reach_the_function_exactly(lang):
    """The function sees the exact value: Python int, JS BigInt (harness protocol `bigints`), and
    small integers stay plain numbers."""
    code = {
        "python": "def f(a, b, c):\n    return [type(a).__name__, str(a), str(b), a + 1, c[0]['x'] * 2]\n",
        "javascript": "function f(a, b, c) {\n  return [typeof a, String(a), String(b), a + 1n, c[0].x * 2n];\n}\n",
        "ruby": "def f(a, b, c)\n  [a.class.name, a.to_s, b.to_s, a + 1, c[0]['x'] * 2]\nend\n",
        # PHP: 2**63-1 is PHP_INT_MAX (an int); 2**70 arrives as its decimal string, which bcmath/gmp
        # would take; PHP_INT_MAX + 1 is a float in PHP (its own arithmetic)
        "php": ("function f($a, $b, $c) {\n  return [gettype($a), (string)$a, (string)$b, $a === PHP_INT_MAX, "
                "$c[0]['x'], gettype($c[0]['x'])];\n}\n"),
    }[lang]
    a, b, x = 2**63 - 1, 5, 2**70
    if lang == "php":
        got = ok(call(req(lang, code, "f", [a, b, [{"x": x}]])))
        assert got == ["integer", str(a), "5", True, str(x), "string"], describe(got)
        return
    if lang == "javascript":
        # b is a small int: must stay a `number` (String(5) === "5")
        got = ok(call(req(lang, code, "f", [a, b, [{"x": x}]])))
        assert got == ["bigint", str(a), "5", a + 1, 2 * x], describe(got)
    else:
        got = ok(call(req(lang, code, "f", [a, b, [{"x": x}]])))
        assert got == [{"python": "int", "ruby": "Integer"}[lang], str(a), "5", a + 1, 2 * x], describe(got)
    assert isinstance(got[3], int) and isinstance(got[4], int)


def test_computed_big_int_exact(lang):
    """A big integer computed in the function (never seen in the request) comes back exact. PHP's integers
    are 64-bit (beyond, its arithmetic gives floats): its limits come back exact, and a big number the
    function spells as a numeric string stays that string."""
    if lang == "php":
        res = call(req(lang, "function f() {\n  return [PHP_INT_MAX, PHP_INT_MIN, 2 ** 100, '1267650600228229401496703205376'];\n}\n",
                       "f", []))
        got = ok(res)
        assert got == [2**63 - 1, -(2**63), float(2**100), "1267650600228229401496703205376"], describe(got)
        assert isinstance(got[2], float)
        return
    code = {
        "python": "def f():\n    return [2**100, -(2**100) + 1, 10**30]\n",
        "javascript": "function f() {\n  return [2n ** 100n, -(2n ** 100n) + 1n, 10n ** 30n];\n}\n",
        "ruby": "def f\n  [2**100, -(2**100) + 1, 10**30]\nend\n",
    }[lang]
    res = call(req(lang, code, "f", []))
    got = ok(res)
    assert got == [2**100, -(2**100) + 1, 10**30], describe(got)
    assert all(isinstance(v, int) for v in got)
    assert "1267650600228229401496703205376" in res.raw  # the digits, not 1.2676506002282294e+30


@pytest.mark.parametrize("lang_", ["python", "ruby", "php"])
def test_negative_zero(lang_):
    """-0.0 keeps its sign in Python, Ruby and PHP (their JSON encoders write -0.0)."""
    got = ok(call(req(lang_, ECHO[lang_], FN[lang_], [-0.0])))
    assert isinstance(got, float) and got == 0.0 and math.copysign(1.0, got) == -1.0, repr(got)


def test_negative_zero_js():
    """JS JSON.stringify(-0) is "0": accept either zero, but it must be a zero number."""
    got = ok(call(req("javascript", ECHO["javascript"], "echo", [-0.0])))
    assert isinstance(got, (int, float)) and not isinstance(got, bool) and got == 0, repr(got)


PY_CONVERSIONS = r'''
import dataclasses, datetime, decimal

@dataclasses.dataclass
class Point:
    x: int
    y: int

class WithToDict:
    def to_dict(self):
        return {"kind": "to_dict"}

class Plain:
    def __init__(self):
        self.a = 1
        self.b = "two"

def conv():
    return {
        "tuple": (1, 2, 3),
        "set": {7},
        "frozenset": frozenset(["only"]),
        "generator": (i * i for i in range(4)),
        "bytes": b"\x00\x01hello\xff",
        "bytearray": bytearray(b"ab"),
        "nan": float("nan"),
        "inf": float("inf"),
        "ninf": float("-inf"),
        "int_keys": {1: "one", 2: "two"},
        "dataclass": Point(3, 4),
        "to_dict": WithToDict(),
        "plain": Plain(),
        "date": datetime.date(2024, 2, 29),
        "datetime": datetime.datetime(2024, 2, 29, 13, 45, 1),
        "decimal": decimal.Decimal("12345678901234567890.123456789"),
    }
'''


def test_python_conversions():
    res = call(req("python", PY_CONVERSIONS, "conv", []))
    got = ok(res)
    assert got["tuple"] == [1, 2, 3]
    assert got["set"] == [7]
    assert got["frozenset"] == ["only"]
    assert got["generator"] == [0, 1, 4, 9]
    assert got["bytes"] == {"base64": base64.b64encode(b"\x00\x01hello\xff").decode()}
    assert got["bytearray"] == {"base64": base64.b64encode(b"ab").decode()}
    assert got["nan"] is None and got["inf"] is None and got["ninf"] is None
    assert got["int_keys"] == {"1": "one", "2": "two"}
    assert got["dataclass"] == {"x": 3, "y": 4}
    assert got["to_dict"] == {"kind": "to_dict"}
    assert got["plain"] == {"a": 1, "b": "two"}
    assert got["date"] == "2024-02-29"
    assert got["datetime"].startswith("2024-02-29T13:45:01")
    assert "12345678901234567890.123456789" in res.raw  # "number text as is"


JS_CONVERSIONS = r'''
function conv() {
  return {
    undef: undefined,
    arr: [1, undefined, 3],
    map: new Map([["a", 1], ["b", [2]]]),
    set: new Set([1, 2, 2, 3]),
    buf: Buffer.from([0, 1, 104, 105, 255]),
    u8: new Uint8Array([97, 98]),
    nan: NaN,
    inf: Infinity,
    ninf: -Infinity,
    big: 2n ** 64n,
    date: new Date(Date.UTC(2024, 1, 29, 13, 45, 1)),
  };
}
'''


def test_js_conversions():
    got = ok(call(req("javascript", JS_CONVERSIONS, "conv", [])))
    assert "undef" not in got, describe(got)
    assert got["arr"] == [1, None, 3]
    assert got["map"] == {"a": 1, "b": [2]}
    assert got["set"] == [1, 2, 3]
    assert got["buf"] == {"base64": base64.b64encode(bytes([0, 1, 104, 105, 255])).decode()}
    assert got["u8"] == {"base64": base64.b64encode(b"ab").decode()}
    assert got["nan"] is None and got["inf"] is None and got["ninf"] is None
    assert got["big"] == 2**64 and isinstance(got["big"], int)
    assert got["date"].startswith("2024-02-29T13:45:01")


def test_js_top_level_undefined_is_null():
    res = call(req("javascript", "function f() {}\n", "f", []))
    assert ok(res) is None
    assert "result" in res.result, "result key missing for an undefined return"


@pytest.mark.parametrize("code", [
    "def f():\n    return lambda: 1\n",
    "import os\ndef f():\n    return os\n",
    "def f():\n    d = {}\n    d['self'] = d\n    return d\n",
    "def f():\n    return [object()]\n",
])
def test_python_unserializable_is_error(code):
    """Never a fake success: functions, modules, cycles -> SerializationError."""
    err = failed(call(req("python", code, "f", [])))
    assert err.get("type") == "SerializationError", err


@pytest.mark.parametrize("code", [
    "function f() {\n  return function g() {};\n}\n",
    "function f() {\n  const a = {};\n  a.self = a;\n  return a;\n}\n",
    "function f() {\n  return Symbol('s');\n}\n",
])
def test_js_unserializable_is_error(code):
    err = failed(call(req("javascript", code, "f", [])))
    assert err.get("type") == "SerializationError", err


# Strings that mean something to some language's source syntax or to a shell: arguments are data (JSON
# decoded by the harness), never pasted into code, so each arrives intact.
HOSTILE = [
    "#{`id`}", "#{raise 'x'}", "${process.exit(1)}", "`id`", "$(id)", "{$x} $y \\$z", "$& $~ $1 $0 $$",
    "'; exit 1; '", '"); process.exit(3); ("', "\"'\\", "\\\\'\"", "%{}%q()%s", "<<~EOF\nEOF\n", "?>\n<?php exit(9);",
    "*/ exit(1); /*", "__END__\ndef f; end", "\u0000", "a\u0000b\u0000", "\x01\x02\x1b[31m\x7f\x1f", "\r\n\t\b\f\v",
    "\\u0000 \\n \\x00", "\u2028\u2029\ufeff", "\U0010ffff\U0001f600",
]


def test_hostile_strings_arrive_intact(lang):
    code = {
        "python": "def f(items):\n    return [[s, len(s.encode('utf-8'))] for s in items]\n",
        "javascript": "function f(items) {\n  return items.map(s => [s, Buffer.byteLength(s, 'utf8')]);\n}\n",
        "ruby": "def f(items)\n  items.map { |s| [s, s.bytesize] }\nend\n",
        "php": "function f($items) {\n  return array_map(fn($s) => [$s, strlen($s)], $items);\n}\n",
    }[lang]
    got = ok(call(req(lang, code, "f", [HOSTILE])))
    assert got == [[s, len(s.encode("utf-8"))] for s in HOSTILE], describe(got)
    # and as object keys too; NUL excepted: fnbox's JSON library refuses a NUL inside an object key with a
    # clear InvalidRequest (a documented limit, checked here), NUL in values is fine
    keyed = {s: s for s in HOSTILE if "\u0000" not in s}
    got = ok(call(req(lang, ECHO[lang], FN[lang], [keyed])))
    assert got == keyed, describe(got)
    res = call(req(lang, ECHO[lang], FN[lang], [{"a\u0000b": 1}]))
    assert res.code == 2 and res.result["error"]["type"] == "InvalidRequest", describe(res.result)
    assert "NUL" in res.result["error"]["message"], describe(res.result)


@pytest.mark.parametrize("raw", [b'"\xff\xfe"', b'"a\xc3"', b'"\\ud800"', b'"\\udc00x"'])
def test_invalid_utf8_argument_is_a_clear_error(lang, raw):
    """Invalid UTF-8 (raw bytes, or a lone surrogate escape) in an argument: refused before anything runs,
    with an error naming the problem, never mangled into something else."""
    text = (b'{"language": "' + lang.encode() + b'", "functionName": "' + FN[lang].encode() + b'", "code": '
            + json.dumps(ECHO[lang]).encode() + b', "args": [' + raw + b']}')
    res = call(text)
    assert res.code == 2, describe(res.result)
    err = res.result["error"]
    assert err["type"] == "InvalidRequest", err
    msg = err["message"]
    assert "args" in msg or "malformed JSON" in msg, err
    assert "decode byte" in msg or "nicode" in msg or "UTF-8" in msg or "surrogate" in msg, err
