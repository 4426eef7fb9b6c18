"""Request decoding: both request shapes, language aliases, workdir, reading from a file; and invalid
requests -> exit 2 with one InvalidRequest result naming the field, and nothing run."""
import json
import os
import tempfile

import pytest

from fnboxlib import call, describe, ok, parse_one_result, req, run_cli

ADD_PY = "def add(a, b):\n    return a + b\n"
ADD_JS = "function add(a, b) {\n  return a + b;\n}\n"


@pytest.mark.parametrize("alias", ["python", "py", "python3", "javascript", "js", "node", "quickjs"])
def test_language_aliases(alias):
    code = ADD_PY if alias.startswith("py") else ADD_JS
    assert ok(call(req(alias, code, "add", [2, 3]))) == 5


def test_v01_flat_shape_with_workdir(lang):
    code = {"python": "import os\ndef f():\n    return os.getcwd()\n",
            "javascript": "function f() {\n  return process.cwd();\n}\n",
            "ruby": "def f\n  Dir.pwd\nend\n",
            "php": "<?php\nfunction f() { return getcwd(); }\n"}[lang]
    assert ok(call(req(lang, code, "f", []))) == "/workspace"
    assert ok(call(req(lang, code, "f", [], workdir="/app", timeout=10,
                       resultOptions={"includeChanges": True}))) == "/app"


def test_v02_nested_shape(lang):
    code = {"python": "import os\ndef f(name, greeting='Hello'):\n    return [os.getcwd(), f'{greeting}, {name}!']\n",
            "javascript": "function f(name, greeting = 'Hello') {\n  return [process.cwd(), `${greeting}, ${name}!`];\n}\n",
            "ruby": "def f(name, greeting = 'Hello')\n  [Dir.pwd, \"#{greeting}, #{name}!\"]\nend\n",
            "php": "function f($name, $greeting = 'Hello') { return [getcwd(), \"$greeting, $name!\"]; }\n"}[lang]
    r = {"language": lang, "code": code, "functionName": "f", "args": {"name": "V2"},
         "timeout": 10.5, "options": {"workdir": "/custom/path", "reporting": {"includeChanges": True}}}
    assert ok(call(r)) == ["/custom/path", "Hello, V2!"]


def test_request_from_file_and_dash():
    r = req("python", ADD_PY, "add", [20, 22])
    with tempfile.TemporaryDirectory(prefix="fnbox-test-") as d:
        path = os.path.join(d, "request.json")
        with open(path, "w") as f:
            json.dump(r, f)
        proc = run_cli(["call", path])
        result, _ = parse_one_result(proc.stdout)
        assert proc.returncode == 0 and result["result"] == 42, describe(result)
    proc = run_cli(["call", "-"], input=json.dumps(r))
    assert parse_one_result(proc.stdout)[0]["result"] == 42
    proc = run_cli(["call"], input=json.dumps(r))  # no FILE: stdin
    assert parse_one_result(proc.stdout)[0]["result"] == 42


def test_missing_request_file():
    proc = run_cli(["call", "/nonexistent/fnbox-request-does-not-exist.json"])
    assert proc.returncode != 0
    if proc.stdout.strip():
        result, _ = parse_one_result(proc.stdout)
        assert result["status"] == "error"
    assert proc.stderr.strip() or proc.stdout.strip(), "a missing file must be reported"


GOOD = {"language": "python", "code": ADD_PY, "functionName": "add", "args": [1, 2]}

INVALID = [
    # (label, raw request text, word the message must contain)
    ("empty input", "", None),
    ("truncated json", '{"language": "python", "code": "x"', None),
    ("not json", "language=python", None),
    ("trailing garbage", json.dumps(GOOD) + " }", None),
    ("array", "[1, 2]", None),
    ("null", "null", None),
    ("language wrong type", json.dumps({**GOOD, "language": 5}), "language"),
    ("language missing", json.dumps({k: v for k, v in GOOD.items() if k != "language"}), "language"),
    ("code wrong type", json.dumps({**GOOD, "code": ["def f(): pass"]}), "code"),
    ("code missing", json.dumps({k: v for k, v in GOOD.items() if k != "code"}), "code"),
    ("functionName wrong type", json.dumps({**GOOD, "functionName": 5}), "functionName"),
    ("args wrong type", json.dumps({**GOOD, "args": "1, 2"}), "args"),
    ("kwargs wrong type", json.dumps({**GOOD, "kwargs": [1]}), "kwargs"),
    ("timeout wrong type", json.dumps({**GOOD, "timeout": "30"}), "timeout"),
    ("workdir wrong type", json.dumps({**GOOD, "workdir": 5}), "workdir"),
    ("options wrong type", json.dumps({**GOOD, "options": "x"}), "options"),
    ("options.workdir wrong type", json.dumps({**GOOD, "options": {"workdir": []}}), "workdir"),
    ("files wrong type", json.dumps({**GOOD, "files": 5}), "files"),
    ("resultOptions wrong type", json.dumps({**GOOD, "resultOptions": "yes"}), "resultOptions"),
    ("schema wrong type", json.dumps({**GOOD, "schema": 5}), "schema"),
    ("argsMode wrong type", json.dumps({**GOOD, "argsMode": 1}), "argsMode"),
    ("autoModeThreshold wrong type", json.dumps({**GOOD, "autoModeThreshold": "8k"}), "autoModeThreshold"),
    ("autoModeThreshold negative", json.dumps({**GOOD, "autoModeThreshold": -1}), "autoModeThreshold"),
    ("invalid utf-8", b'{"language": "python", "code": "\xff\xfe"}', None),
]


def test_seed_transport_hints_are_accepted_and_ignored():
    """The seed's v0.2 argsMode and autoModeThreshold choose how its WASM runner passes arguments; seed code
    that sets them runs unchanged (fnbox has one channel, no size wall)."""
    for hints in ({"argsMode": "auto", "autoModeThreshold": 4096}, {"argsMode": "file", "autoModeThreshold": 0},
                  {"argsMode": None, "autoModeThreshold": None}):
        res = call({**GOOD, **hints})
        assert ok(res) == 3, describe(res.result)


@pytest.mark.parametrize("label,raw,word", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_request(label, raw, word):
    res = call(raw)
    result, rc, _ = res
    assert rc == 2, f"{label}: exit {rc}: {describe(result)}"
    assert result["status"] == "error" and result["success"] is False, describe(result)
    assert result["error"]["type"] == "InvalidRequest", describe(result)
    assert result["error"]["message"].strip(), describe(result)
    if word:
        assert word in result["error"]["message"], f"{label}: message does not name {word!r}: {describe(result)}"


def test_unknown_language_lists_supported():
    result, rc, _ = call({**GOOD, "language": "cobol"})
    assert rc == 2, describe(result)
    assert result["error"]["type"] == "InvalidRequest"
    msg = result["error"]["message"]
    assert "cobol" in msg or "language" in msg, msg
    assert "python" in msg and "javascript" in msg, f"supported languages not listed: {msg}"


def test_invalid_request_runs_nothing():
    """An invalid field elsewhere in the request means the code never runs (its print never shows)."""
    code = "print('SHOULD-NOT-RUN')\ndef add(a, b):\n    return a + b\n"
    res = call({**GOOD, "code": code, "kwargs": "bad"})
    assert res.code == 2
    assert "SHOULD-NOT-RUN" not in res.raw and "SHOULD-NOT-RUN" not in res.stderr
