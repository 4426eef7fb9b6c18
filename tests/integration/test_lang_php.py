"""PHP end to end: round trips, calling convention, errors with PHP class names, exit, body mode, output."""
import pytest

from fnboxlib import call, describe, failed, ok, req


def php(code, fn="f", args=None, kwargs=None, **extra):
    return call(req("php", code, fn, args if args is not None else [], kwargs, **extra))


@pytest.mark.parametrize("value", [None, True, False, 0, -1, 2**63 - 1, -(2**63 - 1), 1.5, 1.0, -0.25, "",
                                   "héllo ☃ 𝄞", "a\u0000b", "\"'$x {$y} \\n\t\x01", [], {}, [1, [2, [3]]],
                                   {"a": 1, "b": {"c": [True, None]}}, {"e": {}}, [{}, []]])
def test_roundtrip(value):
    assert ok(php("function f($v) { return $v; }", args=[value])) == value


@pytest.mark.parametrize("code, args, kwargs, expected", [
    # `{}` in the code or in a string is no empty object: [] stays a list
    ("function f($v) { if (false) {} return $v; }", [[]], None, []),
    ("function f($s, $v) { return [$s, $v]; }", ["{}", []], None, ["{}", []]),
    ("function f($s, $v) { return [$s, $v]; }", ["\\\"{ }", []], None, ["\\\"{ }", []]),
    # an empty object inside an argument or a keyword's value stays an object, whatever else is there
    ("function f($v, $b = 0) { return [$v, $b]; }", [{}], {"b": 1}, [{}, 1]),
    ("function f($v, $o = null) { return [$v, $o]; }", [[]], {"o": {}}, [[], {}]),
    ("function f($v) { return $v; }", [[{"a": {}}, "{}", {"b": []}]], None, [{"a": {}}, "{}", {"b": []}]),
])
def test_empty_objects_against_arrays(code, args, kwargs, expected):
    """The harness decodes to arrays at once unless an empty object is in an argument (then objects are kept
    where they are empty): each way must give PHP `[]` for [] and an stdClass for {}."""
    assert ok(php(code, args=args, kwargs=kwargs)) == expected


@pytest.mark.parametrize("code, stdout", [
    # the function's shutdown functions, and one they register, run (and print) before the process ends
    ("function f() { register_shutdown_function(function () { echo 'A'; "
     "register_shutdown_function(function () { echo 'B'; }); }); return 1; }", "AB"),
    # an object still referenced is destructed after the shutdown functions: PHP's own shutdown runs it
    ("class D { function __destruct() { echo 'D'; } }\n"
     "function f() { $GLOBALS['keep'] = new D(); return 1; }", "D"),
    # output buffered by the function is flushed
    ("function f() { ob_start(); echo 'O'; return 1; }", "O"),
])
def test_output_at_shutdown(code, stdout):
    """Once the result is published the harness ends the process itself (SIGKILL, skipping PHP's shutdown)
    only after the function's shutdown functions and only if nothing of the function's is left to end."""
    res = php(code)
    assert ok(res) == 1
    assert res.result["stdout"] == stdout, res.result


@pytest.mark.parametrize("value", [
    ["a,b", "[x]", "{y", "[]", "{}", "[}", ",,,", {"k,": "v[", "[]": ["{}"]}],   # counted raw, then strings skipped
    [[1, [2, []]], {"a": [], "b": {"c": [True, None, "x"]}}, []],                  # the raw count is exact
])
def test_array_results_with_separators_in_strings(value):
    """An array result is encoded, then its members in the text are counted against count(COUNT_RECURSIVE):
    first without skipping strings, then (when a string holds `,`, `[` or `{`) skipping them. Either way the
    value comes back as it went in."""
    res = php("function f($v) { return $v; }", args=[value])
    assert ok(res) == value


def test_objects_in_an_array_result_are_destructed_before_it_is_published():
    """An array holding objects takes the careful path, and what it holds is released before the result goes
    out: a destructor's output is the call's. (An array of no object is left to the process's end.)"""
    res = php("class D { public $x = 1; function __destruct() { echo 'D'; } }\n"
              "function f() { return [new D(), [1, 2], 'a,[b']; }")
    assert ok(res) == [{"x": 1}, [1, 2], "a,[b"]
    assert res.result["stdout"] == "D", res.result


def test_tmpfile_left_open_is_removed():
    """A tmpfile() the function leaves open is deleted by PHP's shutdown, so the call reports no new file."""
    res = php("function f() { $GLOBALS['t'] = tmpfile(); fwrite($GLOBALS['t'], 'x'); return 1; }")
    assert ok(res) == 1
    assert res.result["files"]["created"] == [], res.result["files"]


def test_one_point_zero_stays_float():
    res = php("function f() { return 1.0; }")
    assert '"result":1.0' in res.raw, res.raw


@pytest.mark.parametrize("code", ["<?php\nfunction f($a, $b = 2) { return $a + $b; }",
                                  "function f($a, $b = 2) { return $a + $b; }",
                                  "\n  <?php function f($a, $b = 2) { return $a + $b; } ?>\n"])
def test_with_and_without_tag(code):
    assert ok(php(code, args=[1])) == 3


def test_named_and_trailing_array():
    code = "function f($a, $opts = [], $c = 0) { return [$a, $opts, $c]; }"
    assert ok(php(code, args=[1], kwargs={"c": 3, "x": 9})) == [1, {"x": 9}, 3]


def test_argument_errors():
    """PHP's own classes: ArgumentCountError for too few, Error for a parameter given twice. Extra positional
    arguments are no error in PHP (user functions accept them), so fnbox passes them on."""
    for args, kwargs, etype, msg in [([], None, "ArgumentCountError", "missing required argument 'a'"),
                                     ([1], {"a": 2}, "Error", "multiple values")]:
        err = failed(php("function f($a) { return $a; }", args=args, kwargs=kwargs))
        assert err["type"] == etype and msg in err["message"], err
    assert ok(php("function f($a) { return $a; }", args=[1, 2])) == 1


@pytest.mark.parametrize("code,etype", [
    ("function f() {\n  return intdiv(1, 0);\n}", "DivisionByZeroError"),
    ("function f(int $x) { return $x; }\nfunction g() { return f('no'); }", "TypeError"),
    ("class MyErr extends Exception {}\nfunction f() { throw new MyErr('mine'); }", "MyErr"),
    ("function f( {", "ParseError"),
])
def test_exceptions(code, etype):
    fn = "g" if "function g" in code else "f"
    err = failed(php(code, fn))
    assert err["type"] == etype, err
    if etype == "DivisionByZeroError":
        assert "user_code.php(2)" in err["stack"] and "harness" not in err["stack"], err


def test_argument_count_error():
    err = failed(call(req("php", "function f($a) { return $a; }", "f", [], schema={"params": []})))
    assert err["type"] in ("ArgumentCountError", "ArgumentError"), err


def test_exit_and_missing_function():
    res = php("function f() { echo 'bye'; exit(3); }")
    err = failed(res)
    assert err["type"] == "SystemExit" and res.result["exitCode"] == 3, describe(res.result)
    err = failed(php("function f() {}\nfunction h() {}", "g"))
    assert err["type"] == "FunctionNotFound" and "f, h" in err["message"], err


def test_body_mode():
    assert ok(call(req("php", "$x = 20;\nreturn $x + 1;"))) == 21
    assert ok(call(req("php", "echo 'x';"))) is None


def test_prints_and_warnings():
    res = php("function f() { echo \"out\"; fwrite(STDERR, 'err'); $u = $nope; return 1; }")
    assert ok(res) == 1
    assert res.result["stdout"] == "out"
    assert "err" in res.result["stderr"] and "Undefined variable" in res.result["stderr"]
    assert "Content-type" not in res.result["stdout"]


def test_conversions():
    code = ("function f() { return [new DateTime('2020-01-02T03:04:05Z'), NAN, INF, \"\\xff\\x00\", "
            "(object)['p' => 1], new ArrayObject([1, 2])]; }")
    assert ok(php(code)) == ["2020-01-02T03:04:05+00:00", None, None, {"base64": "/wA="}, {"p": 1}, [1, 2]]
    err = failed(php("function f() { return function () {}; }"))
    assert err["type"] == "SerializationError"
    err = failed(php("function f() { $o = new stdClass; $o->self = $o; return $o; }"))
    assert err["type"] == "SerializationError"


@pytest.mark.parametrize("expr, expected", [
    ("new DateTime('2020-01-02T03:04:05Z')", "2020-01-02T03:04:05+00:00"),
    ("new ArrayObject([1, 2])", [1, 2]),
    ("new ArrayObject([])", []),
    ("(function () { yield 1; yield 2; })()", [1, 2]),
    ("(object)[]", {}),
    ("(object)['p' => [1]]", {"p": [1]}),
    ("SplFixedArray::fromArray([3, 4])", [3, 4]),
    ("E::A", "a"),
    ("['in' => [new DateTime('2020-01-02T03:04:05Z')]]", {"in": ["2020-01-02T03:04:05+00:00"]}),
])
def test_objects_in_plain_arrays(expr, expected):
    """An array that json_encode spells without error is checked for objects after encoding (the count of
    members against count(COUNT_RECURSIVE)): one object among plain values must still be converted."""
    code = ("enum E: string { case A = 'a'; }\n"
            f"function f() {{ return [1, 'x,{{}}[', [true, null], {expr}, ['k' => 2.5]]; }}")
    assert ok(php(code)) == [1, "x,{}[", [True, None], expected, {"k": 2.5}]


def test_closure_in_array_and_json_serialize_once():
    err = failed(php("function f() { return [1, [function () {}]]; }"))
    assert err["type"] == "SerializationError"
    # jsonSerialize is the function's own code: it runs once, whichever path encodes the result.
    code = ("class J implements JsonSerializable { public function jsonSerialize(): mixed { echo 'J'; "
            "return ['d' => new DateTime('2020-01-02T03:04:05Z')]; } }\n"
            "function f() { return [new J(), [1, 2]]; }")
    res = php(code)
    assert ok(res) == [{"d": "2020-01-02T03:04:05+00:00"}, [1, 2]]
    assert res.result["stdout"] == "J"


def test_deep_nesting_and_large():
    # 900 levels (the test parses the result with Python, whose json recursion stops near 1000).
    raw = ('{"language": "php", "code": "function f($v) { return $v; }", "functionName": "f", "args": ['
           + "[" * 900 + "]" * 900 + ']}')
    res = call(raw)
    assert res.result["status"] == "success" and ("[" * 900 + "]" * 900) in res.raw, describe(res.result)
    big = "x" * (10 * 1024 * 1024)
    assert ok(php("function f($s) { return strlen($s); }", args=[big])) == len(big)


def test_crash():
    code = "function f() { posix_kill(posix_getpid(), 11); sleep(5); }"
    assert ok(php("function f() { return function_exists('posix_kill'); }")) is True, \
        "the posix extension (part of Debian's php-cli) is missing"
    res = php(code)
    err = failed(res, status="crash")
    assert res.result["exitCode"] == 139 and "SIGSEGV" in err["message"], describe(res.result)


def test_timeout():
    res = php("function f() { echo 'before'; while (true) {} }", timeout=1)
    assert res.result["status"] == "timeout" and "before" in res.result["stdout"], describe(res.result)


def _host_php(code):
    """What the host's own php (its php.ini and conf.d, as a user runs it) says."""
    import subprocess
    return subprocess.run(["php", "-r", code], capture_output=True, text=True, check=True).stdout


def test_host_extensions_without_readline_and_opcache():
    """fnbox hands PHP the host's conf.d without the files that load readline and opcache (src/lang/php_ini.c):
    every other extension the host configured is loaded, and the function never sees the PHP_INI_SCAN_DIR
    that does it, nor does a php it starts (which reads the real conf.d)."""
    host = set(_host_php("echo implode(',', get_loaded_extensions());").split(","))
    code = r'''<?php
function f() {
    $child = shell_exec("php -r 'echo extension_loaded(\"readline\") ? \"yes\" : \"no\";'");
    return ["ext" => get_loaded_extensions(), "env" => getenv("PHP_INI_SCAN_DIR"),
            "server" => array_key_exists("PHP_INI_SCAN_DIR", $_SERVER), "child_readline" => $child];
}
'''
    got = ok(call(req("php", code, "f", [], permissions={"childProcess": ["php", "sh"]})))
    inside = set(got["ext"])
    assert "readline" not in inside and "Zend OPcache" not in inside, describe(got)
    assert host - inside <= {"readline", "Zend OPcache"}, f"missing inside: {host - inside - {'readline', 'Zend OPcache'}}"
    assert got["env"] is False and got["server"] is False, got
    if "readline" in host:
        assert got["child_readline"] == "yes", got
