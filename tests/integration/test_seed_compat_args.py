"""Seed compatibility (issue 11), against the real interpreters: argument mismatches raise the language's own
exception type; Python objects lose their private attributes; a v0.2 `schema.input` places keyword
arguments by position; functions named `_x` are not picked when no functionName is given."""
import json

import pytest

from fnboxlib import call, describe, failed, ok, parse_one_result, req, run_cli

# ---------------------------------------------------------------------------------------------------------
# 1. Argument mismatches: the error type the language itself raises; the message still names the parameter.

TWO = {
    "python": "def f(a, b):\n    return [a, b]\n",
    "ruby": "def f(a, b)\n  [a, b]\nend\n",
    "php": "function f($a, $b) { return [$a, $b]; }\n",
}

MISMATCHES = [
    # (lang, args, kwargs, error type, text the message must hold)
    ("python", [1], None, "TypeError", "missing required argument 'b'"),
    ("python", [1, 2, 3], None, "TypeError", "too many positional arguments"),
    ("python", [1, 2], {"zzz": 1}, "TypeError", "unexpected keyword argument 'zzz'"),
    ("python", [1, 2], {"a": 1}, "TypeError", "multiple values for parameter 'a'"),
    ("ruby", [1], None, "ArgumentError", "missing required argument 'b'"),
    ("ruby", [1, 2, 3], None, "ArgumentError", "too many positional arguments"),
    ("ruby", [1, 2], {"zzz": 1}, "ArgumentError", "unexpected keyword argument 'zzz'"),
    ("php", [1], None, "ArgumentCountError", "missing required argument 'b'"),
    ("php", [1, 2], {"a": 1}, "Error", "multiple values for parameter 'a'"),
]


@pytest.mark.parametrize("lang_,args,kwargs,etype,text", MISMATCHES)
def test_mismatch_raises_the_languages_type(lang_, args, kwargs, etype, text):
    err = failed(call(req(lang_, TWO[lang_], "f", args, kwargs)))
    assert err["type"] == etype and text in err["message"], err


def test_python_positional_only_by_keyword_is_type_error():
    err = failed(call(req("python", "def f(a, /):\n    return a\n", "f", [], {"a": 1})))
    assert err["type"] == "TypeError" and "positional-only argument 'a'" in err["message"], err


def test_php_unknown_named_argument_is_error():
    """PHP: `f(1, 2, x: 3)` throws Error "Unknown named parameter $x". fnbox's convention sends unknown
    keywords as a trailing array, so this is the case where no parameter is left to take that array."""
    err = failed(call(req("php", TWO["php"], "f", [1, 2], {"x": 3})))
    assert err["type"] == "Error" and "'x'" in err["message"], err


def test_php_extra_positional_arguments_are_passed():
    """PHP passes extra positional arguments to a user function without complaint (func_get_args sees them);
    fnbox does the same instead of refusing the call."""
    code = "function f($a) { return [$a, func_get_args()]; }\n"
    assert ok(call(req("php", code, "f", [1, 2, 3]))) == [1, [1, 2, 3]]


def test_javascript_accepts_extra_and_missing_arguments():
    """JavaScript raises nothing for either: extra arguments reach `arguments`, missing ones are undefined."""
    code = "function f(a, b) { return [a, b === undefined, arguments.length]; }\n"
    assert ok(call(req("javascript", code, "f", [1, 2, 3]))) == [1, False, 3]
    assert ok(call(req("javascript", code, "f", [1]))) == [1, True, 1]
    schema = {"params": [{"name": "a", "required": True}, {"name": "b", "required": True}]}
    assert ok(call(req("javascript", code, "f", [1], schema=schema))) == [1, True, 1]


@pytest.mark.parametrize("lang_,etype", [("python", "TypeError"), ("ruby", "ArgumentError"),
                                         ("php", "ArgumentCountError")])
def test_non_strict_schema_mismatch_is_the_languages_type(lang_, etype):
    """A given schema without `strict`: the call would fail in the language, so its type is reported."""
    schema = {"params": [{"name": "a", "type": "number"}, {"name": "b", "type": "number"}]}
    res = call(req(lang_, TWO[lang_], "f", [1], schema=schema))
    err = failed(res)
    assert err["type"] == etype and "'b'" in err["message"], err


@pytest.mark.parametrize("lang_", ["python", "ruby", "php"])
def test_strict_schema_mismatch_stays_argument_error(lang_):
    schema = {"params": [{"name": "a", "type": "number"}, {"name": "b", "type": "number"}], "strict": True}
    err = failed(call(req(lang_, TWO[lang_], "f", [1], schema=schema)))
    assert err["type"] == "ArgumentError" and "'b'" in err["message"], err


# ---------------------------------------------------------------------------------------------------------
# 2. Python objects serialized from __dict__ drop private attributes.

def test_python_object_dict_without_private_attributes():
    code = ("class Point:\n"
            "    def __init__(self):\n"
            "        self.x = 1\n        self.y = 2\n        self._cache = 'secret'\n        self.__mangled = 3\n"
            "def f():\n    return Point()\n")
    assert ok(call(req("python", code, "f"))) == {"x": 1, "y": 2}


def test_python_slots_object_without_private_attributes():
    code = ("class P:\n    __slots__ = ('x', '_y')\n"
            "    def __init__(self):\n        self.x = 1\n        self._y = 2\n"
            "def f():\n    return P()\n")
    assert ok(call(req("python", code, "f"))) == {"x": 1}


def test_python_to_dict_and_dataclass_keep_what_they_give():
    """The private-attribute rule is for the __dict__ fallback only: to_dict() and dataclasses are taken as
    they are."""
    code = ("import dataclasses\n"
            "class A:\n    def __init__(self):\n        self._p = 1\n"
            "    def to_dict(self):\n        return {'_p': self._p}\n"
            "@dataclasses.dataclass\nclass D:\n    _q: int = 2\n"
            "def f():\n    return [A(), D()]\n")
    assert ok(call(req("python", code, "f"))) == [{"_p": 1}, {"_q": 2}]


def test_python_json_hook_with_no_arguments_is_a_conversion():
    """__json__() is asked like to_dict(); a framework's __json__(request) is not called (its object falls
    back to __dict__)."""
    code = ("class J:\n    def __init__(self):\n        self._v = 7\n"
            "    def __json__(self):\n        return {'v': self._v}\n"
            "class R:\n    def __init__(self):\n        self.a = 1\n"
            "    def __json__(self, request):\n        return {'r': 1}\n"
            "def f():\n    return [J(), R()]\n")
    assert ok(call(req("python", code, "f"))) == [{"v": 7}, {"a": 1}]


# ---------------------------------------------------------------------------------------------------------
# 3. v0.2 InputSchema places keyword arguments by position.

VARIADIC = {
    "python": "def f(*args):\n    return list(args)\n",
    "javascript": "function f(...rest) { return rest; }\n",
    "ruby": "def f(*args)\n  args\nend\n",
    "php": "function f(...$args) { return $args; }\n",
}
ARRAY_INPUT = {"input": [{"name": "a"}, {"name": "b"}]}
RECORD_INPUT = {"input": {"b": {"index": 1}, "a": {"index": 0}}}


@pytest.mark.parametrize("schema", [ARRAY_INPUT, RECORD_INPUT], ids=["array", "record"])
def test_input_schema_places_kwargs_by_position(lang, schema):
    res = call(req(lang, VARIADIC[lang], "f", [], {"b": 2, "a": 1}, schema=schema))
    assert ok(res) == [1, 2]
    assert res.result["meta"]["signatureSource"] == "schema", describe(res.result)


def test_input_schema_mixed_args_and_kwargs(lang):
    schema = {"input": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    assert ok(call(req(lang, VARIADIC[lang], "f", [1], {"c": 3, "b": 2}, schema=schema))) == [1, 2, 3]


def test_input_schema_optional_gap(lang):
    """A slot no argument fills before a placed keyword: its schema default, else null."""
    schema = {"input": [{"name": "a"}, {"name": "b", "required": False, "default": 7}, {"name": "c"}]}
    assert ok(call(req(lang, VARIADIC[lang], "f", [1], {"c": 3}, schema=schema))) == [1, 7, 3]
    schema = {"input": [{"name": "a"}, {"name": "b", "required": False}, {"name": "c"}]}
    assert ok(call(req(lang, VARIADIC[lang], "f", [1], {"c": 3}, schema=schema))) == [1, None, 3]


def test_input_schema_gap_takes_a_big_default_exactly():
    schema = {"input": [{"name": "a"}, {"name": "b", "default": 123456789012345678901234567890}, {"name": "c"}]}
    res = call(req("python", VARIADIC["python"], "f", [1], {"c": 3}, schema=schema))
    assert ok(res) == [1, 123456789012345678901234567890, 3]


MISSING_TYPE = {"python": "TypeError", "ruby": "ArgumentError", "php": "ArgumentCountError"}
TWICE_TYPE = {"python": "TypeError", "ruby": "ArgumentError", "php": "Error"}


@pytest.mark.parametrize("lang_", ["python", "ruby", "php"])
def test_input_schema_required_gap_and_given_twice(lang_):
    schema = {"input": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}
    err = failed(call(req(lang_, VARIADIC[lang_], "f", [], {"c": 3}, schema=schema)))
    assert err["type"] == MISSING_TYPE[lang_] and "'a'" in err["message"], err
    err = failed(call(req(lang_, VARIADIC[lang_], "f", [1], {"a": 2}, schema=schema)))
    assert err["type"] == TWICE_TYPE[lang_] and "multiple values" in err["message"], err


def test_input_schema_required_gap_in_javascript_is_undefined():
    """JavaScript raises nothing for a missing argument, with a schema or without one."""
    code = "function f(...rest) { return [rest.length, rest[0] === undefined, rest[1]]; }\n"
    schema = {"input": [{"name": "a"}, {"name": "b"}]}
    assert ok(call(req("javascript", code, "f", [], {"b": 2}, schema=schema))) == [2, True, 2]


def test_input_record_without_index_keeps_keywords():
    """A record without `index` names parameters only (a JSON-Schema-like properties object): Python still
    gets keyword arguments."""
    code = "def f(**kw):\n    return kw\n"
    schema = {"input": {"a": {"type": "number"}, "b": {"type": "number"}}, "acceptsKwargs": True}
    assert ok(call(req("python", code, "f", [], {"b": 2, "a": 1}, schema=schema))) == {"a": 1, "b": 2}


# ---------------------------------------------------------------------------------------------------------
# 4. Without functionName, functions named `_x` are helpers, not candidates.

PRIVATE = {
    "python": "def _helper(x):\n    return x * 2\n\ndef main(x):\n    return _helper(x) + 1\n",
    "javascript": "function _helper(x) { return x * 2; }\nfunction main(x) { return _helper(x) + 1; }\n",
    "ruby": "def _helper(x)\n  x * 2\nend\n\ndef main(x)\n  _helper(x) + 1\nend\n",
    "php": "function _helper($x) { return $x * 2; }\nfunction main($x) { return _helper($x) + 1; }\n",
}
ONLY_PRIVATE = {
    "python": ("def _one(x):\n    return x\n", "def _one(x):\n    return x\n\ndef _two(x):\n    return x\n"),
    "javascript": ("function _one(x) { return x; }\n",
                   "function _one(x) { return x; }\nfunction _two(x) { return x; }\n"),
    "ruby": ("def _one(x)\n  x\nend\n", "def _one(x)\n  x\nend\n\ndef _two(x)\n  x\nend\n"),
    "php": ("function _one($x) { return $x; }\n",
            "function _one($x) { return $x; }\nfunction _two($x) { return $x; }\n"),
}


def test_private_helpers_are_not_candidates(lang):
    assert ok(call(req(lang, PRIVATE[lang], None, [5]))) == 11


def test_only_private_functions_old_rule(lang):
    one, two = ONLY_PRIVATE[lang]
    assert ok(call(req(lang, one, None, [5]))) == 5
    err = failed(call(req(lang, two, None, [5])))
    assert err["type"] == "AmbiguousFunction" and "_one" in err["message"] and "_two" in err["message"], err


def test_two_public_functions_still_ambiguous():
    code = "def _h():\n    pass\n\ndef a():\n    pass\n\ndef b():\n    pass\n"
    err = failed(call(req("python", code, None)))
    assert err["type"] == "AmbiguousFunction" and "a, b" in err["message"] and "_h" not in err["message"], err


def infer(request):
    proc = run_cli(["infer", "-"], input=json.dumps(request))
    out, _ = parse_one_result(proc.stdout)
    return out, proc.returncode


def test_infer_uses_the_same_rule(lang):
    out, rc = infer({"language": lang, "code": PRIVATE[lang]})
    assert rc == 0 and out["name"] == "main", out
    out, rc = infer({"language": lang, "code": ONLY_PRIVATE[lang][1]})
    assert rc == 2 and out["error"]["type"] == "AmbiguousFunction", out
