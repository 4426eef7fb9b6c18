"""`schema.strict: true`: arguments are validated against the schema before anything runs; without strict,
nothing is validated (the seed's behaviour)."""
import pytest

from fnboxlib import call, failed, ok, req

PY = "def f(a, b='x'):\n    return [a, b]\n"
JS = "function f(a, b = 'x') { return [a, b]; }\n"
SCHEMA = {"params": [{"name": "a", "type": "integer"}, {"name": "b", "type": "string", "default": "x"}]}


def strict(schema=SCHEMA, **k):
    return {**schema, "strict": True, **k}


@pytest.mark.parametrize("lang,code", [("python", PY), ("javascript", JS)])
def test_valid_arguments_run(lang, code):
    res = call(req(lang, code, "f", [1, "y"], schema=strict()))
    assert ok(res) == [1, "y"]
    assert res.result["meta"]["signatureSource"] == "schema"


@pytest.mark.parametrize("args,kwargs,message", [
    ([1, 2], None, "argument 'b': expected string, got integer"),
    (["1"], None, "argument 'a': expected integer, got string"),
    ([1.5], None, "argument 'a': expected integer, got number"),
    (None, {"b": "y"}, "missing required argument 'a'"),
    ([1], {"zz": 1}, "unknown parameter 'zz'"),
    ([1, "y", 3], None, "too many positional arguments"),
    ([None], None, "argument 'a': expected integer, got null"),
])
@pytest.mark.parametrize("lang,code", [("python", PY), ("javascript", JS)])
def test_rejected_before_running(lang, code, args, kwargs, message):
    marker_code = code.replace("return", "print('RAN'); return") if lang == "python" else code
    res = call(req(lang, marker_code, "f", args, kwargs, schema=strict()))
    err = failed(res)
    assert err["type"] == "ArgumentError" and message in err["message"], err
    assert res.result["stdout"] == ""


def test_integer_is_a_number_but_not_the_reverse():
    schema = {"params": [{"name": "n", "type": "number"}, {"name": "i", "type": "integer"}], "strict": True}
    assert ok(call(req("python", "def f(n, i):\n    return [n, i]\n", "f", [3, 4.0], schema=schema))) == [3, 4.0]
    err = failed(call(req("python", "def f(n, i):\n    return n\n", "f", [3, 4.5], schema=schema)))
    assert "argument 'i': expected integer, got number" in err["message"]


@pytest.mark.parametrize("spec,value,accepted", [
    ({"type": "string"}, None, False),
    ({"type": "string", "nullable": True}, None, True),
    ({"type": ["string", "null"]}, None, True),
    ({"type": "null"}, None, True),
    ({"type": "any"}, None, True),
    ({}, None, True),
])
def test_null_handling(spec, value, accepted):
    schema = {"params": [{"name": "a", **spec}], "strict": True}
    res = call(req("python", "def f(a):\n    return a\n", "f", [value], schema=schema))
    if accepted:
        assert ok(res) is None
    else:
        assert failed(res)["type"] == "ArgumentError"


def test_null_hole_filled_by_keyword():
    assert ok(call(req("python", PY, "f", [None, "y"], {"a": 5}, schema=strict()))) == [5, "y"]


def test_v02_input_and_type_aliases():
    schema = {"input": {"q": {"type": "str"}, "n": {"type": "int", "required": False}}, "strict": True}
    code = "def f(q, n=1):\n    return q * n\n"
    assert ok(call(req("python", code, "f", None, {"q": "ab", "n": 2}, schema=schema))) == "abab"
    assert "argument 'n': expected integer" in failed(call(req("python", code, "f", None, {"q": "ab", "n": "2"},
                                                               schema=schema)))["message"]


def test_variadic_and_accepts_kwargs():
    schema = {"params": [{"name": "a", "type": "integer"}], "variadic": True, "acceptsKwargs": True, "strict": True}
    code = "def f(a, *rest, **kw):\n    return [a, list(rest), kw]\n"
    assert ok(call(req("python", code, "f", [1, "x", None], {"z": 1}, schema=schema))) == [1, ["x", None], {"z": 1}]


def test_without_strict_nothing_is_validated():
    # the same wrongly typed arguments run when strict is absent or false
    for schema in (SCHEMA, {**SCHEMA, "strict": False}):
        assert ok(call(req("python", PY, "f", ["not an int", 2], schema=schema))) == ["not an int", 2]


def test_bad_strict_and_unknown_type_are_invalid_requests():
    res = call(req("python", PY, "f", [1], schema={**SCHEMA, "strict": "yes"}))
    assert res.code == 2 and res.result["error"]["type"] == "InvalidRequest"
    res = call(req("python", PY, "f", [1], schema={"params": [{"name": "a", "type": "widget"}], "strict": True}))
    assert res.code == 2 and "unknown type 'widget'" in res.result["error"]["message"]
