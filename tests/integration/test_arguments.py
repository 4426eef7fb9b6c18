"""Arguments: positional, kwargs, defaults, keyword-only, hole-filling, object-form args, {index, value}
items, schema, async functions, and the ArgumentError cases."""
import pytest

from fnboxlib import call, describe, ok, req

GREET = {
    "python": 'def greet(name, greeting="Hello"):\n    return f"{greeting}, {name}!"\n',
    "javascript": 'function greet(name, greeting = "Hello") {\n  return `${greeting}, ${name}!`;\n}\n',
    "ruby": 'def greet(name, greeting = "Hello")\n  "#{greeting}, #{name}!"\nend\n',
    "php": '<?php\nfunction greet($name, $greeting = "Hello") {\n    return "$greeting, $name!";\n}\n',
}

ECHO = {
    "python": "def echo(x):\n    return x\n",
    "javascript": "function echo(x) {\n  return x;\n}\n",
    "ruby": "def echo(x)\n  x\nend\n",
    "php": "function echo_($x) {\n    return $x;\n}\n",   # `echo` is a PHP keyword
}
ECHO_NAME = {"python": "echo", "javascript": "echo", "ruby": "echo", "php": "echo_"}


def test_seed_greet(lang):
    """The seed README's first example (python) and its twins: a kwarg naming a positional parameter."""
    res = call(req(lang, GREET[lang], "greet", ["World"], {"greeting": "Hi"}))
    assert ok(res) == "Hi, World!"
    assert res.result["meta"]["signatureSource"] == "inferred", describe(res.result)
    assert isinstance(res.result["meta"]["duration"], (int, float))


def test_default_kept(lang):
    assert ok(call(req(lang, GREET[lang], "greet", ["World"]))) == "Hello, World!"


def test_seed_calculate_js():
    """Seed README: a kwarg that names no parameter goes into the trailing options object."""
    code = ("function calculate(a, b, options = {}) {\n"
            "  const { multiplier = 1 } = options;\n"
            "  return (a + b) * multiplier;\n}\n")
    for alias in ("js", "quickjs"):
        assert ok(call(req(alias, code, "calculate", [5, 3], {"multiplier": 10}))) == 80
    assert ok(call(req("javascript", code, "calculate", [5, 3]))) == 8


def test_python_defaults_and_kwargs():
    code = "def f(a, b=2, c=3):\n    return [a, b, c]\n"
    assert ok(call(req("python", code, "f", [1]))) == [1, 2, 3]
    # skipping b keeps its default
    assert ok(call(req("python", code, "f", [1], {"c": 30}))) == [1, 2, 30]


def test_python_keyword_only():
    code = "def f(a, *, k=5, m):\n    return [a, k, m]\n"
    assert ok(call(req("python", code, "f", [1], {"m": 7}))) == [1, 5, 7]


def test_python_hole_filling():
    """A null in args whose parameter is named in kwargs is filled from kwargs; other nulls stay None."""
    code = "def f(a, b, c=3, d=4):\n    return [a, b, c, d]\n"
    assert ok(call(req("python", code, "f", [1, None, None], {"b": 2, "d": 40}))) == [1, 2, None, 40]


def test_python_varargs_varkw():
    code = "def f(*args, **kw):\n    return {'args': list(args), 'kw': kw}\n"
    got = ok(call(req("python", code, "f", [1, "two"], {"x": 1, "y": [2]})))
    assert got == {"args": [1, "two"], "kw": {"x": 1, "y": [2]}}


def test_python_annotations_and_positional_only():
    code = ("def f(a: int, /, b: 'str' = 'x', *rest: int, flag: bool = False, **extra) -> list:\n"
            "    return [a, b, list(rest), flag, extra]\n")
    got = ok(call(req("python", code, "f", [1, "b", 3, 4], {"flag": True, "z": 0})))
    assert got == [1, "b", [3, 4], True, {"z": 0}]


def test_js_kwargs_by_name():
    """JS: kwargs named like parameters land in those positions; a skipped one is undefined."""
    code = "function f(a, b, c) {\n  return [a, b === undefined ? 'undef' : b, c];\n}\n"
    assert ok(call(req("javascript", code, "f", [1], {"c": 3}))) == [1, "undef", 3]
    assert ok(call(req("javascript", code, "f", [1], {"b": 2, "c": 3}))) == [1, 2, 3]


def test_js_default_applies_for_skipped_parameter():
    code = "function f(a, b = 'dflt', c = 0) {\n  return [a, b, c];\n}\n"
    assert ok(call(req("javascript", code, "f", [1], {"c": 9}))) == [1, "dflt", 9]


def test_object_form_args(lang):
    """v0.2: args as an object keyed by parameter name, in any key order."""
    r = {"language": lang, "code": GREET[lang], "functionName": "greet",
         "args": {"greeting": "Hey", "name": "Bob"}}
    assert ok(call(r)) == "Hey, Bob!"


def test_index_value_items(lang):
    """v0.2: in the object form, a value {"index": n, "value": v} is positional slot n (keys are then
    just labels); other keys are parameter names. A plain array of such objects stays data."""
    r = {"language": lang, "code": GREET[lang], "functionName": "greet",
         "args": {"second": {"index": 1, "value": "Yo"}, "first": {"index": 0, "value": "Ann"}}}
    assert ok(call(r)) == "Yo, Ann!"
    r["args"] = {"x": {"index": 0, "value": "Bea"}, "greeting": "Hallo"}
    assert ok(call(r)) == "Hallo, Bea!"
    data = [{"index": 1, "value": "not an item"}]
    assert ok(call(req(lang, ECHO[lang], ECHO_NAME[lang], data))) == data[0]


def test_schema_source():
    """An explicit schema wins over inference: meta.signatureSource == "schema"."""
    code = "def process(a, b, c=0):\n    return a + b + c\n"
    schema = {"params": [{"name": "a", "type": "number", "required": True},
                         {"name": "b", "type": "number", "required": True},
                         {"name": "c", "type": "number", "required": False, "default": 0}],
              "variadic": False, "acceptsKwargs": False}
    res = call(req("python", code, "process", [1, 2], {"c": 3}, schema=schema))
    assert ok(res) == 6
    assert res.result["meta"]["signatureSource"] == "schema"


def test_async_awaited(lang):
    """Python coroutines and JS async functions are awaited. Ruby and PHP have no async functions: their
    concurrency primitives (a Thread's value, a Fiber resumed to completion) run inside the call instead."""
    code = {
        "python": "import asyncio\nasync def f(x):\n    await asyncio.sleep(0.01)\n    return x * 2\n",
        "javascript": "async function f(x) {\n  await new Promise(r => setTimeout(r, 10));\n  return x * 2;\n}\n",
        "ruby": "def f(x)\n  Thread.new { sleep 0.01; x * 2 }.value\nend\n",
        "php": ("function f($x) {\n    $fb = new Fiber(function ($v) { $w = Fiber::suspend($v); return $w * 2; });\n"
                "    $v = $fb->start($x);\n    usleep(10000);\n    $fb->resume($v);\n    return $fb->getReturn();\n}\n"),
    }[lang]
    assert ok(call(req(lang, code, "f", [21]))) == 42


def test_js_promise_returning_function():
    code = "function f(x) {\n  return Promise.resolve(x + 1);\n}\n"
    assert ok(call(req("javascript", code, "f", [1]))) == 2


def test_js_arrow_and_const_function():
    code = "const double = (x) => x * 2;\nconst triple = function (x) { return x * 3; };\n"
    assert ok(call(req("javascript", code, "double", [4]))) == 8
    assert ok(call(req("javascript", code, "triple", [4]))) == 12


ARG_ERRORS = [
    # (lang, code, args, kwargs, word that the message must name)
    ("python", "def f(a, b):\n    return a\n", [1], None, "b"),                      # missing required
    ("python", "def f(a):\n    return a\n", [1], {"zzz_unknown": 1}, "zzz_unknown"),   # unknown keyword
    ("python", "def f(a):\n    return a\n", [1, 2, 3], None, "f"),                   # too many positionals
    ("python", "def f(a, b=1):\n    return a\n", [1, 2], {"b": 3}, "b"),             # given twice
    ("python", "def f(a, *, k):\n    return a\n", [1], None, "k"),                   # keyword-only missing
]


@pytest.mark.parametrize("lang_,code,args,kwargs,word", ARG_ERRORS)
def test_argument_errors(lang_, code, args, kwargs, word):
    """A call that cannot match the signature is an error naming the parameter, not a crash: Python's own
    TypeError, as the call itself would raise."""
    result, rc, _ = call(req(lang_, code, "f", args, kwargs))
    assert result["status"] == "error", describe(result)
    assert result["error"].get("type") == "TypeError", describe(result)
    assert word in result["error"]["message"], describe(result)
    assert rc == 0, f"exit {rc}: an argument mismatch still produces a result"


def test_unicode_and_decorated_functions(lang):
    """Inference copes with non-ASCII identifiers, decorators/wrappers, comments and strings that look
    like definitions."""
    code = {
        "ruby": ("# def fake_in_comment(x) end\n"
                 "DOC = <<~TEXT\n  def fake_in_string(y)\n  end\nTEXT\n"
                 "=begin\ndef fake_in_block_comment(z)\nend\n=end\n"
                 "def grüße(name, suffix = '!')\n"
                 "  'Grüße, ' + name + suffix\n"
                 "end\n"),
        "php": ("<?php\n// function fake_in_comment($x) {}\n"
                "/* function fake_in_block($z) {} */\n"
                "const DOC = 'function fake_in_string($y) {}';\n"
                "#[Attribute]\nclass Marker {}\n"
                "#[Marker]\n"
                "function grüße($name, $suffix = '!') {\n"
                "    return 'Grüße, ' . $name . $suffix;\n}\n"),
        "python": ("import functools\n"
                   "# def fake_in_comment(x): pass\n"
                   "DOC = '''\ndef fake_in_string(y):\n    pass\n'''\n"
                   "@functools.lru_cache(maxsize=None)\n"
                   "def grüße(name, suffix='!'):\n"
                   "    return 'Grüße, ' + name + suffix\n"),
        "javascript": ("// function fake_in_comment(x) {}\n"
                       "const DOC = `function fake_in_string(y) {}`;\n"
                       "function grüße(name, suffix = '!') {\n"
                       "  return 'Grüße, ' + name + suffix;\n}\n"),
    }[lang]
    assert ok(call(req(lang, code, "grüße", ["Welt"], {"suffix": "?"}))) == "Grüße, Welt?"
    # and it is the only top-level function, so it is auto-selected
    assert ok(call({"language": lang, "code": code, "args": ["Welt"]})) == "Grüße, Welt!"


KEYWORDS = {
    # Each language's own keyword mechanism; `m` has no usable default and `k` keeps its default.
    "python": "def f(a, *, k=5, m):\n    return [a, k, m]\n",                       # keyword-only parameters
    "javascript": "function f(a, opts = {}) {\n  const { k = 5, m } = opts;\n  return [a, k, m];\n}\n",  # options object
    "ruby": "def f(a, k: 5, m:)\n  [a, k, m]\nend\n",                                # keyword arguments
    "php": "function f($a, $k = 5, $m = null) {\n    return [$a, $k, $m];\n}\n",     # PHP 8 named arguments
}


def test_keyword_arguments(lang):
    res = call(req(lang, KEYWORDS[lang], "f", [1], {"m": 7}))
    assert ok(res) == [1, 5, 7], describe(res.result)
    assert ok(call(req(lang, KEYWORDS[lang], "f", [1], {"m": "x", "k": 6}))) == [1, 6, "x"]
