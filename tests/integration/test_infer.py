"""`fnbox infer`: signatures as JSON Schema and tool definitions, per language; schema precedence; errors; --help.
Nothing here runs user code (a function body that would fail is never executed)."""
import json

import pytest

from fnboxlib import parse_one_result, run_cli


def infer(request, *flags):
    raw = request if isinstance(request, (str, bytes)) else json.dumps(request)
    proc = run_cli(["infer", *flags, "-"], input=raw)
    out, _ = parse_one_result(proc.stdout)
    return out, proc.returncode


def params_of(lang, code, fn=None, **extra):
    r = {"language": lang, "code": code, **extra}
    if fn:
        r["functionName"] = fn
    out, code_ = infer(r)
    assert code_ == 0, out
    return out


PY = '''
def add(a: int, b: float = 1.5, name: str = "x", tags: List[str] = [], opt: Optional[int] = None,
        flag=True, *args, **kwargs):
    """Add numbers together.

    Args:
        a: the first number
    """
    raise RuntimeError("never runs")
'''


def test_python_types_defaults_required_description():
    out = params_of("python", PY)
    assert out["name"] == "add" and out["signatureSource"] == "inferred"
    assert out["description"].startswith("Add numbers together.")
    p = out["parameters"]
    assert p["type"] == "object"
    props = p["properties"]
    assert props["a"] == {"type": "integer", "description": "the first number"}
    assert props["b"] == {"type": "number", "default": 1.5}
    assert props["name"] == {"type": "string", "default": "x"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "default": []}
    assert props["opt"] == {"type": ["integer", "null"], "default": None}
    assert props["flag"] == {"type": "boolean", "default": True}
    assert "args" not in props and "kwargs" not in props
    assert p["required"] == ["a"]
    assert p["additionalProperties"] is True
    assert "variadic" in out["description"]


def test_python_keyword_only_and_no_doc():
    out = params_of("python", "def f(a, *, k, j=None):\n    return a\n")
    assert out["description"] == ""
    assert out["parameters"]["required"] == ["a", "k"]
    assert out["parameters"]["properties"]["j"] == {"default": None}


def test_javascript():
    code = ('/**\n * Greets someone.\n * @param {string} name - who to greet\n */\n'
            'function greet(name, times = 2, {loud, lang = "en"} = {}, ...rest) { throw new Error("no"); }\n')
    out = params_of("javascript", code)
    assert out["name"] == "greet" and out["description"].startswith("Greets someone.")
    props = out["parameters"]["properties"]
    assert props["name"] == {"description": "who to greet"}
    assert props["times"] == {"type": "integer", "default": 2}
    destructured = [v for k, v in props.items() if k.startswith("$")]
    assert len(destructured) == 1 and destructured[0]["type"] == "object"
    assert set(destructured[0]["properties"]) == {"loud", "lang"}
    assert "rest" not in props
    assert out["parameters"]["required"] == ["name"]


def test_ruby():
    code = "# Adds two things.\n# Really.\ndef add(a, b = 2, k:, j: 'x', **opts)\n  raise 'no'\nend\n"
    out = params_of("ruby", code)
    assert out["description"] == "Adds two things. Really."
    props = out["parameters"]["properties"]
    assert props["a"] == {} and props["k"] == {}
    assert props["b"] == {"type": "integer", "default": 2}
    assert props["j"] == {"type": "string", "default": "x"}
    assert out["parameters"]["required"] == ["a", "k"]
    assert out["parameters"]["additionalProperties"] is True


def test_php():
    code = ('<?php\n/**\n * Sums values.\n * @param int $a the first\n */\n'
            'function sum(int $a, ?string $b = null, array $c = [], float $d = 1.0, bool &$e = false, int ...$rest) '
            '{ throw new Exception("no"); }\n')
    out = params_of("php", code)
    assert out["description"].startswith("Sums values.")
    props = out["parameters"]["properties"]
    assert props["a"] == {"type": "integer", "description": "the first"}
    assert props["b"] == {"type": ["string", "null"], "default": None}
    assert props["c"] == {"type": "array", "default": []}
    assert props["d"] == {"type": "number", "default": 1.0}
    assert props["e"] == {"type": "boolean", "default": False}
    assert "rest" not in props
    assert out["parameters"]["required"] == ["a"]


@pytest.mark.parametrize("fmt,check", [
    ("openai", lambda o: o["type"] == "function" and set(o["function"]) == {"name", "description", "parameters"}),
    ("anthropic", lambda o: set(o) == {"name", "description", "input_schema"}),
    ("mcp", lambda o: set(o) == {"name", "description", "inputSchema"}),
    ("jsonschema", lambda o: set(o) == {"name", "description", "parameters", "signatureSource"}),
])
def test_formats(fmt, check):
    out, code = infer({"language": "python", "code": PY}, "--format", fmt)
    assert code == 0 and check(out), out
    inner = out.get("function", out)
    schema = inner.get("parameters") or inner.get("input_schema") or inner.get("inputSchema")
    assert inner["name"] == "add" and schema["required"] == ["a"]


def test_format_equals_and_bad_format():
    out, code = infer({"language": "python", "code": PY}, "--format=mcp")
    assert code == 0 and "inputSchema" in out
    out, code = infer({"language": "python", "code": PY}, "--format", "yaml")
    assert code == 2 and out["error"]["type"] == "InvalidRequest" and "format" in out["error"]["message"]


def test_schema_takes_precedence():
    schema = {"params": [{"name": "a", "type": "string", "description": "an a"},
                         {"name": "b", "type": "int", "default": 4}], "description": "From the schema."}
    out = params_of("python", "def f(a: int, b: float = 1.0):\n    '''Doc.'''\n", schema=schema)
    assert out["signatureSource"] == "schema" and out["description"] == "From the schema."
    assert out["parameters"]["properties"] == {"a": {"type": "string", "description": "an a"},
                                               "b": {"type": "integer", "default": 4}}
    assert out["parameters"]["required"] == ["a"]


def test_schema_v02_input_and_doc_fallback():
    out = params_of("javascript", "/** Doc line. */\nfunction f(x) {}",
                    schema={"input": {"x": {"type": "number", "required": False}}})
    assert out["signatureSource"] == "schema" and out["description"] == "Doc line."
    assert out["parameters"]["properties"] == {"x": {"type": "number"}} and out["parameters"]["required"] == []


def test_function_name_picks_one_and_other_fields_ignored():
    out = params_of("python", "def a(x): pass\ndef b(y=1): pass\n", fn="b", args=[1], timeout=3, files=[{"x": 1}])
    assert out["name"] == "b" and out["parameters"]["properties"] == {"y": {"type": "integer", "default": 1}}


def test_ambiguous():
    out, code = infer({"language": "python", "code": "def a(): pass\ndef b(): pass\n"})
    assert code == 2 and out["status"] == "error" and out["success"] is False
    assert out["error"]["type"] == "AmbiguousFunction" and "a, b" in out["error"]["message"]


@pytest.mark.parametrize("request_", [
    {"language": "python", "code": "x = 1\n"},
    {"language": "python", "code": "def a(): pass\n", "functionName": "nope"},
])
def test_function_not_found(request_):
    out, code = infer(request_)
    assert code == 2 and out["error"]["type"] == "FunctionNotFound"


@pytest.mark.parametrize("raw,field", [
    ("{", "request"), ("[]", "request"), ('{"code": "def f(): pass"}', "language"),
    ('{"language": "cobol", "code": ""}', "language"), ('{"language": "python"}', "code"),
    ('{"language": "python", "code": "def f(): pass", "schema": 3}', "schema"),
])
def test_invalid_input(raw, field):
    out, code = infer(raw)
    assert code == 2 and out["error"]["type"] == "InvalidRequest" and out["error"]["message"].startswith(field)


def test_help_documents_every_flag():
    proc = run_cli(["infer", "--help"])
    assert proc.returncode == 0
    text = proc.stdout.decode()
    for flag in ("--format", "--pretty", "--help", "jsonschema", "openai", "anthropic", "mcp"):
        assert flag in text


def test_pretty_and_file(tmp_path):
    f = tmp_path / "req.json"
    f.write_text(json.dumps({"language": "python", "code": "def f(a): pass"}))
    proc = run_cli(["infer", "--pretty", str(f)])
    assert proc.returncode == 0 and b"\n  " in proc.stdout
    assert json.loads(proc.stdout)["name"] == "f"


def test_unknown_option_and_missing_file():
    assert run_cli(["infer", "--bogus"]).returncode == 2
    proc = run_cli(["infer", "/nonexistent/req.json"])
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["type"] == "InvalidRequest"
