"""Ruby end to end in the real sandbox: the JSON round trip, keyword handling, errors with their class names,
exits, crashes, timeouts, output, hostile strings, large and deep data, conversions, parallel calls."""
import glob
import json
import math
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import assert_no_survivors, call, describe, failed, marker, ok, req

ECHO = "def f(x)\n  x\nend\n"


def rb(code, fn="f", args=None, kwargs=None, **extra):
    return call(req("ruby", code, fn, args, kwargs, **extra))


# ---- the JSON round trip ----

ROUNDTRIP = [
    None, True, False, 0, 1, -1, 2**53 + 1, 2**63 - 1, -2**63, 2**64 + 7, -(2**100), 10**40,
    1.5, -0.25, 1e-7, 1e300, "", "plain", "unicode é ü 😀 中文", "nul\u0000inside", "\u2028\u2029",
    "tab\tnew\nline\r", [], {}, [1, [2, [3, []]]], {"a": {"b": {"c": {}}}}, {"k": [None, True, 1.5, "s"]},
    [{}, [], "", 0],
]


@pytest.mark.parametrize("value", ROUNDTRIP, ids=lambda v: json.dumps(v)[:40])
def test_roundtrip(value):
    assert ok(rb(ECHO, args=[value])) == value


def test_roundtrip_big_integers_exact():
    res = rb(ECHO, args=[[2**64 + 7, -2**63, 10**60 + 1]])
    assert ok(res) == [2**64 + 7, -2**63, 10**60 + 1]
    assert "18446744073709551623" in res.raw


def test_language_alias_rb():
    assert ok(call(req("rb", "def f(a, b) = a + b", "f", [2, 3]))) == 5


# ---- defaults and keywords ----

SIG = "def f(a, b = 2, *rest, k:, j: 10, **opts)\n  [a, b, rest, k, j, opts]\nend\n"


def test_defaults():
    assert ok(rb("def f(a, b = 2)\n  [a, b]\nend\n", args=[1])) == [1, 2]


def test_required_keyword():
    assert ok(rb(SIG, args=[1], kwargs={"k": 3})) == [1, 2, [], 3, 10, {}]


def test_keywords_and_opts():
    got = ok(rb(SIG, args=[1, 5, 6, 7], kwargs={"k": 3, "j": 4, "extra": "x"}))
    assert got == [1, 5, [6, 7], 3, 4, {"extra": "x"}]


def test_positional_by_name():
    assert ok(rb("def f(a, b = 2)\n  [a, b]\nend\n", args=[], kwargs={"b": 9, "a": 1})) == [1, 9]


def test_hole_filling():
    assert ok(rb("def f(a, b)\n  [a, b]\nend\n", args=[None, 2], kwargs={"a": 1})) == [1, 2]


def test_kwargs_to_method_without_keywords_but_opts():
    assert ok(rb("def f(**o) = o.keys.map { |k| k.class.name }.uniq", kwargs={"a": 1, "b": 2})) == ["Symbol"]


@pytest.mark.parametrize("args,kwargs,msg", [
    ([1], {}, "missing required keyword argument 'k'"),
    ([], {"k": 1}, "missing required argument 'a'"),
    ([1], {"k": 1, "a": 2}, "multiple values for parameter 'a'"),
])
def test_argument_errors(args, kwargs, msg):
    err = failed(rb(SIG, args=args, kwargs=kwargs))
    assert err["type"] == "ArgumentError" and msg in err["message"], err


def test_argument_error_unknown_keyword_and_skip():
    err = failed(rb("def f(a, b = 1, c = 2) = [a, b, c]", args=[1], kwargs={"c": 5}))
    assert err["type"] == "ArgumentError" and "cannot skip optional parameter 'b'" in err["message"], err
    err = failed(rb("def f(a) = a", args=[1], kwargs={"zzz": 5}))
    assert err["type"] == "ArgumentError" and "'zzz'" in err["message"], err
    err = failed(rb("def f(a) = a", args=[1, 2]))
    assert err["type"] == "ArgumentError" and "too many" in err["message"], err


def test_ruby_own_argument_error_without_signature():
    """A method defined with define_method has no inferred signature: Ruby's own ArgumentError."""
    err = failed(rb("define_method(:f) { |a| a }", args=[1, 2]))
    assert err["type"] == "ArgumentError", err


# ---- errors ----

def test_exception_types():
    err = failed(rb("def f\n  1 / 0\nend\n"))
    assert err["type"] == "ZeroDivisionError" and err["message"] == "divided by 0", err
    assert "user_code.rb:2" in err["stack"] and "harness" not in err["stack"], err


def test_custom_exception_class():
    code = "module App\n  class Boom < StandardError; end\nend\ndef f\n  raise App::Boom, 'custom'\nend\n"
    err = failed(rb(code))
    assert err["type"] == "App::Boom" and err["message"] == "custom", err
    assert "user_code.rb:5" in err["stack"], err


def test_not_implemented_error_is_an_error():
    err = failed(rb("def f\n  raise NotImplementedError, 'later'\nend\n"))
    assert err["type"] == "NotImplementedError" and err["message"] == "later", err


def test_syntax_error():
    err = failed(rb("def f(\n  1 +\nend\n"))
    assert err["type"] == "SyntaxError" and "user_code.rb" in err["message"], err


def test_exit_code():
    res = rb("def f\n  puts 'bye'\n  exit(3)\nend\n")
    err = failed(res)
    assert err["type"] == "SystemExit" and err["message"] == "exit code 3", err
    assert res.result["exitCode"] == 3 and res.result["stdout"] == "bye\n", describe(res.result)


def test_exit_bang_is_no_result():
    res = rb("def f\n  exit!(4)\nend\n")
    err = failed(res)
    assert err["type"] == "NoResult", err


def test_missing_function():
    err = failed(rb("def g(a) = a\ndef h = 1\n", fn="nope"))
    assert err["type"] == "FunctionNotFound", err
    assert "'nope'" in err["message"] and "g" in err["message"] and "h" in err["message"], err


def test_kernel_methods_are_not_functions():
    err = failed(rb("x = 1\n", fn="puts"))
    assert err["type"] == "FunctionNotFound", err


def test_body_mode_last_expression():
    assert ok(rb("a = 20\nb = 22\na + b\n", fn=None)) == 42


def test_body_mode_top_level_return():
    res = rb("x = 5\nreturn x * 2 if x > 1\nputs 'not reached'\n7\n", fn=None)
    assert ok(res) == 10
    assert res.result["stdout"] == "" and res.result["stderr"] == "", describe(res.result)


def test_self_method_and_helpers():
    code = "def helper(x) = x * 2\ndef self.f(x) = helper(x) + 1\n"
    assert ok(rb(code, args=[20])) == 41


def test_crash_segv():
    res = rb("def f\n  Process.kill(:SEGV, Process.pid)\n  sleep 5\nend\n", timeout=20)
    assert res.result["status"] == "crash", describe(res.result)


RB_SPAWN = r'''
MARK = "{mark}"

def f(stay)
  spawn("/usr/bin/ruby", "--disable-gems", "-e", "loop { sleep 1 }", MARK + "-child",
        out: File::NULL, err: File::NULL)
  pid = fork do
    Process.setsid
    exec("/usr/bin/ruby", "--disable-gems", "-e", "loop { sleep 1 }", MARK + "-daemon")
  end
  Process.detach(pid)
  puts "spawned"
  $stdout.flush
  loop { sleep 1 } if stay
  "returned"
end
'''


def test_timeout_kills_children():
    mark = marker()
    res = rb(RB_SPAWN.replace("{mark}", mark), args=[True], timeout=1.5)
    assert res.result["status"] == "timeout", describe(res.result)
    assert "spawned" in res.result["stdout"], describe(res.result)
    assert_no_survivors(mark, grace=0.2)


def test_return_kills_leftover_processes():
    mark = marker()
    res = rb(RB_SPAWN.replace("{mark}", mark), args=[False], timeout=20)
    assert ok(res) == "returned"
    assert_no_survivors(mark, grace=0.2)


def test_prints_and_return():
    res = rb("def f(n)\n  print 'a'\n  puts n\n  $stderr.puts 'warn'\n  STDOUT.write('b')\n  n + 1\nend\n",
             args=[41])
    assert ok(res) == 42
    assert res.result["stdout"] == "a41\nb" and res.result["stderr"] == "warn\n", describe(res.result)


def test_stdout_cannot_forge_the_result():
    res = rb("def f\n  puts '{\"ok\":true}'\n  puts '1'\n  2\nend\n")
    assert ok(res) == 2


# ---- hostile strings ----

HOSTILE = ["#{`id`}", "#{raise 'x'}", "'; exit 1; '", '"\\"', "\u0000\u0001\u001f\u007f", "%{}%q()", "<<~EOS\nEOS",
           "\\u0000 \\n", "$& $~ $1", "__END__\ndef f; end"]


@pytest.mark.parametrize("s", HOSTILE)
def test_hostile_strings_arrive_intact(s):
    res = rb("def f(s)\n  [s, s.bytesize, s.encoding.to_s]\nend\n", args=[s])
    assert ok(res) == [s, len(s.encode()), "UTF-8"]


def test_ten_megabyte_argument():
    big = "x" * (10 * 1024 * 1024)
    res = call(req("ruby", "def f(s) = [s.size, s[0, 3], s]", "f", [big]), timeout=120)
    got = ok(res)
    assert got[0] == len(big) and got[1] == "xxx" and got[2] == big


def test_twenty_parallel_calls():
    code = "def f(token)\n  puts token\n  sleep 0.2\n  {token: token, pid: Process.pid > 0}\nend\n"

    def one(i):
        token = f"rb{i}x{marker()}"
        return token, call(req("ruby", code, "f", [token], timeout=60), timeout=180)

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(one, range(20)))
    for token, res in outcomes:
        assert ok(res) == {"token": token, "pid": True}
        assert res.result["stdout"] == token + "\n"


# ---- conversions ----

def test_conversions():
    code = (
        "require 'set'\n"
        "Point = Struct.new(:x, :y)\n"
        "class Obj\n  def initialize; @a = 1; @b = [2]; end\nend\n"
        "class Custom\n  def to_h = {'custom' => true}\nend\n"
        "def f\n"
        "  {sym: :hello, set: Set[1, 2], big: 2**64 + 7, bin: \"\\xff\\x00\".b, ascii_bin: 'ab'.b,\n"
        "   nan: Float::NAN, inf: -Float::INFINITY, range: (1..3), point: Point.new(1, 2), obj: Obj.new,\n"
        "   custom: Custom.new, int_keys: {1 => 'a', nil => 'b'}, time: Time.at(0).utc,\n"
        "   invalid: \"\\xC3(\".force_encoding('UTF-8'), rational: Rational(1, 4)}\n"
        "end\n")
    got = ok(rb(code))
    assert got == {
        "sym": "hello", "set": [1, 2], "big": 2**64 + 7, "bin": {"base64": "/wA="}, "ascii_bin": "ab",
        "nan": None, "inf": None, "range": [1, 2, 3], "point": {"x": 1, "y": 2}, "obj": {"a": 1, "b": [2]},
        "custom": {"custom": True}, "int_keys": {"1": "a", "": "b"}, "time": "1970-01-01T00:00:00Z",
        "invalid": {"base64": "wyg="}, "rational": 0.25,
    }, got


CONVERTED = ["require 'set'; Set[1, 2]", ":sym", "{sym_key: 1}", "{1 => 'a', nil => 'b'}", "Float::NAN",
             "-Float::INFINITY", "1.5", "2**64 + 7", "\"\\xff\\x00\".b", "'ab'.b", "\"\\xC3(\".force_encoding('UTF-8')",
             "Time.at(0).utc", "(1..3)", "Struct.new(:x).new(1)", "Class.new(Hash)[{'a' => 1}]",
             "Class.new(String).new('sub')", "h = {'a' => 1}; def h.extra = 1; h",
             "o = Object.new; o.instance_variable_set(:@v, 1); o",
             "c = Class.new { def to_json(*) = (print('J'); '{\"j\":1}') }; c.new",
             "c = Class.new { def to_json(*) = (print('J'); '{\"j\":1}') }; [c.new, Float::NAN]",
             "a = [1]; 300.times { a = [a] }; a"]


@pytest.mark.parametrize("top", ["[x] + [0] * N", "{'k' => x}.merge((1..N).to_h { |i| [i.to_s, i] })"])
@pytest.mark.parametrize("expr", CONVERTED)
def test_conversions_in_large_values(deep_parsing, expr, top):
    """From 1024 items at the top, the C generator's own walk is the check (a TracePoint stops it at its first
    call back into Ruby): each value must come out as it does in a small result, and a to_json of the
    function's own runs once."""
    def run(n):
        res = rb(f"def x\n  {expr}\nend\ndef f\n  {top.replace('N', str(n))}\nend\n")
        value = ok(res)
        return (value[0] if isinstance(value, list) else value["k"]), len(value), res.result["stdout"]
    small, small_len, small_out = run(3)
    large, large_len, large_out = run(1500)
    assert large == small and (small_len, large_len) == (4, 1501)
    assert large_out == small_out  # "J" for the to_json of the function's own: once per value


@pytest.mark.parametrize("expr", ["proc { 1 }", "$stdout", "a = []; a << a; a"])
def test_unserializable_in_large_values(expr):
    err = failed(rb(f"def x\n  {expr}\nend\ndef f\n  [x] + [0] * 2000\nend\n"))
    assert err["type"] == "SerializationError", err


@pytest.mark.parametrize("expr", ["proc { 1 }", "method(:puts)", "$stdout", "Object", "a = []; a << a; a"])
def test_unserializable(expr):
    err = failed(rb(f"def f\n  {expr}\nend\n"))
    assert err["type"] == "SerializationError", err


@pytest.fixture
def deep_parsing():
    """Python's json module recurses per level (limit ~1000): raise the limit to read deep results."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    yield
    sys.setrecursionlimit(old)


def test_deep_nesting_in_and_out(deep_parsing):
    """2000 levels in the request (JSON documents may nest at most 2048 levels: docs/guide/permissions-and-limits.md, Limits) come back
    whole: the harness parses with max_nesting off and serializes without recursing."""
    depth = 2000
    code = "def f(x)\n  d = 0\n  y = x\n  (d += 1; y = y[0]) while y.is_a?(Array) && !y.empty?\n  [d, x]\nend\n"
    text = ('{"language": "ruby", "functionName": "f", "code": %s, "args": [%s%s]}'
            % (json.dumps(code), "[" * depth, "]" * depth))
    res = call(text)
    assert ok(res)[0] == depth - 1
    assert res.raw.count("[") >= depth


def test_deep_nesting_built_in_ruby(deep_parsing):
    """3000 and 5000 levels built by the function: no crash in the harness (Ruby's JSON generator would stop
    at 100); fnbox refuses the result past its 2048-level limit with a SerializationError, never a fake success."""
    res = rb("def f\n  x = []\n  2040.times { x = [x] }\n  x\nend\n")
    assert res.result["status"] == "success", describe(res.result)
    assert res.raw.count("[") >= 2041
    for depth, empty in ((3000, "{}"), (5000, "[]")):
        res = rb("def f\n  x = %s\n  %d.times { x = {'k' => [x]} }\n  x\nend\n" % (empty, depth))
        err = failed(res)
        assert err["type"] == "SerializationError" and "2048" in err["message"], err


def test_float_values():
    got = ok(rb("def f = [0.1 + 0.2, 1e20, -0.0, 2.5e-8]"))
    assert got[0] == 0.1 + 0.2 and got[1] == 1e20 and math.copysign(1, got[2]) == -1 and got[3] == 2.5e-8


def test_stdlib_and_lazy_gems():
    """Standard-library requires work; a missing gem is a LoadError, never a crash of the harness."""
    assert ok(rb("require 'digest'\ndef f = Digest::SHA256.hexdigest('a')[0, 8]")) == "ca978112"
    err = failed(rb("def f\n  require 'no_such_gem_fnbox'\nend\n"))
    assert err["type"] == "LoadError", err
    assert ok(rb("def f = defined?(Gem) ? 'loaded' : 'not loaded'")) == "not loaded"


def test_installed_gem_loads_rubygems_on_demand():
    """webrick is a gem outside the default load path; Debian's libruby3.1 depends on ruby-webrick, so
    wherever `ruby` is installed, so is it."""
    assert glob.glob("/usr/share/rubygems-integration/*/specifications/webrick-*.gemspec") + \
        glob.glob("/var/lib/gems/*/specifications/webrick-*.gemspec") + \
        glob.glob("/usr/lib/ruby/gems/*/specifications/webrick-*.gemspec"), "the webrick gem is not installed"
    got = ok(rb("def f\n  require 'webrick'\n  [defined?(Gem) ? 1 : 0, WEBrick::VERSION.class.name]\nend\n"))
    assert got == [1, "String"]
