"""The CLI surface: --help, call --help, doctor, unknown verbs."""
import json
import os

from fnboxlib import run_cli


def test_help():
    proc = run_cli(["--help"])
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert "call" in out and "doctor" in out, out


def test_help_describes_serve_fully():
    # `serve` was "serve calls over HTTP (health, call, metrics)": it serves much more.
    out = run_cli(["--help"]).stdout.decode()
    serve = out[out.index("  serve "):out.index("  doctor ")]
    for word in ("calls", "execute", "sessions", "files", "kernels", "sync", "Piston", "MCP", "health", "metrics"):
        assert word in serve, (word, serve)
    out = run_cli(["serve", "--help"]).stdout.decode()
    for route in ("POST /v1/call", "POST /v1/execute", "POST /v1/sessions", "kernels", "files", "POST /v1/sync",
                  "/api/v2/runtimes", "POST /api/v2/execute", "POST /mcp", "GET /v1/health", "GET /metrics",
                  "application/x-ndjson", "docs/openapi.yaml"):
        assert route in out, (route, out)
    assert "README.md lists the routes" not in out


def test_every_verb_has_its_help():
    for verb in ("call", "exec", "infer", "sync", "mcp", "serve", "doctor"):
        proc = run_cli([verb, "--help"])
        out = proc.stdout.decode()
        assert proc.returncode == 0 and out.startswith(f"usage: fnbox {verb}"), (verb, out, proc.stderr)
        wide = [line for line in out.splitlines() if len(line) > 104]
        assert not wide, (verb, wide)
    out = run_cli(["mcp", "--help"]).stdout.decode()
    for tool in ("run_code", "call_function", "exec_command", "read_file", "write_file", "list_files",
                 "remove_file", "run_in_kernel", "list_languages"):
        assert tool in out, (tool, out)


def test_call_help_documents_flags():
    proc = run_cli(["call", "--help"])
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert "FILE" in out or "file" in out, out


def test_doctor_lists_features_and_runtimes():
    proc = run_cli(["doctor"], timeout=60)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode in (0, 1), out
    low = out.lower()
    for word in ("python", "node", "seccomp", "namespace"):
        assert word in low, f"doctor output does not mention {word!r}:\n{out}"


def test_unknown_verb_fails():
    proc = run_cli(["definitely-not-a-verb"])
    assert proc.returncode != 0
    assert proc.stderr.strip(), "an unknown verb must be explained on stderr"


def test_unreadable_input_is_named_in_the_json(tmp_path):
    # The JSON answer names the file and the cause (it said `cannot read 'file'`), for every verb that reads one.
    missing = str(tmp_path / "nope.json")
    for verb, prefix in (("call", "request: "), ("exec", "request: "), ("infer", "request: "), ("sync", "input: ")):
        proc = run_cli([verb, missing])
        assert proc.returncode == 2, (verb, proc.stdout, proc.stderr)
        answer = json.loads(proc.stdout)
        assert answer["success"] is False and answer["error"]["type"] == "InvalidRequest", (verb, answer)
        assert answer["error"]["message"] == (
            f"{prefix}cannot read '{missing}': No such file or directory (ENOENT)"), (verb, answer)
    proc = run_cli(["call", str(tmp_path)])
    assert json.loads(proc.stdout)["error"]["message"] == (
        f"request: cannot read '{tmp_path}': Is a directory (EISDIR)"), proc.stdout


def test_unreadable_input_with_a_name_that_is_not_utf8(tmp_path):
    # The name still shows (its bytes beyond ASCII as \xNN) and the answer is still valid JSON.
    name = os.fsencode(str(tmp_path)) + b'/n\xffo"pe.json'
    proc = run_cli([b"call", name])
    assert proc.returncode == 2, proc.stderr
    message = json.loads(proc.stdout)["error"]["message"]
    assert message == f"request: cannot read '{tmp_path}/n\\xffo\"pe.json': No such file or directory (ENOENT)", message
