"""Streamed output (`fnbox call --stream`, the C API's fnbox_call_options.output): the function's stdout and
stderr as they arrive, one NDJSON line per chunk, then one `result` line holding the ExecutionResult's
fields. A stream's chunks, joined, are exactly the result's `stdout` / `stderr` (same UTF-8 repair, same
cap), and a chunk never ends inside a UTF-8 character.
"""
import json
import subprocess
import time

import pytest

from fnboxlib import FNBOX, check_sanitizers, check_shape, joined, req, require_binary, run_cli


def stream(request, timeout=60):
    """Runs `fnbox call --stream -`: (events, result, exit code). Every line must be one JSON object."""
    proc = run_cli(["call", "--stream", "-"], input=json.dumps(request), timeout=timeout)
    lines = proc.stdout.decode("utf-8").splitlines()
    assert lines, proc.stderr
    events = [json.loads(line) for line in lines]
    for e in events[:-1]:
        assert set(e) == {"type", "data"} and e["type"] in ("stdout", "stderr"), e
        assert e["data"], f"an empty chunk was told: {e}"
    last = events[-1]
    assert last.get("type") == "result", last
    result = {k: v for k, v in last.items() if k != "type"}
    check_shape(result, proc.returncode)
    return events[:-1], result, proc.returncode


PY_MIXED = r'''
import sys, time
def f():
    out, err = sys.stdout.buffer, sys.stderr.buffer
    out.write("héllo ".encode()); out.flush()
    out.write(b"\xe2\x82"); out.flush(); time.sleep(0.05)     # a character split across two writes
    out.write(b"\xac \xff\xfe bad\n"); out.flush()            # then invalid bytes
    err.write("ünïcode err\n".encode()); err.flush()
    out.write(b"\xf0\x9f\x98"); out.flush()                   # cut by the end: U+FFFD per byte
    return 1
'''


def test_chunks_join_to_the_result():
    events, result, code = stream(req("python", PY_MIXED, "f"))
    assert code == 0 and result["status"] == "success", result
    assert joined(events, "stdout") == result["stdout"]
    assert joined(events, "stderr") == result["stderr"]
    assert result["stdout"].startswith("héllo € \ufffd\ufffd bad\n"), result["stdout"]
    assert result["stdout"].endswith("\ufffd" * 3), result["stdout"]
    assert result["stderr"] == "ünïcode err\n"


def test_output_arrives_while_the_function_runs():
    """The first chunk is on the pipe while the function is still sleeping: read it, then check that fnbox
    has not finished (ordering, not a timing figure)."""
    require_binary()
    code = "import time\ndef f():\n    print('first', flush=True)\n    time.sleep(3)\n    print('second')\n    return 2\n"
    proc = subprocess.Popen([FNBOX, "call", "--stream", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        proc.stdin.write(json.dumps(req("python", code, "f")).encode())
        proc.stdin.close()
        first = json.loads(proc.stdout.readline())
        still_running = proc.poll() is None
        rest = [json.loads(line) for line in proc.stdout.read().splitlines()]
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    check_sanitizers(proc.stderr.read().decode("utf-8", "replace"))
    assert first == {"type": "stdout", "data": "first\n"}
    assert still_running, "the first chunk came only after the call ended"
    assert rest[-1]["type"] == "result" and rest[-1]["result"] == 2 and rest[-1]["stdout"] == "first\nsecond\n"


LANG_CODE = {
    "javascript": "function f() { process.stdout.write('é'.repeat(3) + '\\n'); console.error('e€'); return 3; }",
    "ruby": "def f\n  $stdout.write(\"é\" * 3 + \"\\n\"); $stdout.flush\n  $stderr.puts(\"e€\")\n  3\nend\n",
    "php": "function f() { echo str_repeat('é', 3), \"\\n\"; fwrite(STDERR, \"e€\\n\"); return 3; }",
    "c": "#include <stdio.h>\nint f(void) { printf(\"\\xc3\\xa9\\xc3\\xa9\\xc3\\xa9\\n\"); fflush(stdout);"
         " fprintf(stderr, \"e\\xe2\\x82\\xac\\n\"); return 3; }",
}


@pytest.mark.parametrize("lang", sorted(LANG_CODE))
def test_every_language_streams(lang):
    events, result, code = stream(req(lang, LANG_CODE[lang], "f"), timeout=120)
    assert code == 0 and result["status"] == "success" and result["result"] == 3, result
    assert joined(events, "stdout") == result["stdout"] == "ééé\n"
    assert joined(events, "stderr") == result["stderr"] == "e€\n"


def test_the_caps_apply_to_the_stream():
    """Nothing beyond limits.stdoutBytes is told; a character cut by the cap is U+FFFD, as in the result."""
    code = "import sys\ndef f():\n    sys.stdout.write('é' * 50)\n    sys.stderr.write('x' * 100)\n    return 0\n"
    events, result, _ = stream(req("python", code, "f", limits={"stdoutBytes": 11, "stderrBytes": 7}))
    assert result["truncated"] == {"stdout": True, "stderr": True}
    assert joined(events, "stdout") == result["stdout"] == "ééééé\ufffd"
    assert joined(events, "stderr") == result["stderr"] == "x" * 7


def test_timeout_streams_what_came_before():
    code = "import time\ndef f():\n    print('before', flush=True)\n    time.sleep(30)\n"
    events, result, code_ = stream(req("python", code, "f", timeout=1))
    assert code_ == 0 and result["status"] == "timeout" and result["exitCode"] == 124, result
    assert joined(events, "stdout") == result["stdout"] == "before\n"


def test_invalid_request_is_one_result_line():
    events, result, code = stream({"language": "python", "code": "def f(): pass", "timeout": "soon"})
    assert code == 2 and events == [], events
    assert result["error"]["type"] == "InvalidRequest" and result["error"]["message"].startswith("timeout")


def test_big_integers_stay_exact_in_the_result_line():
    proc = run_cli(["call", "--stream", "-"], input=json.dumps(req("python", "def f():\n    return 2**70\n", "f")))
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines()[-1].startswith('{"type":"result","status":"success"')
    assert json.loads(proc.stdout.decode().splitlines()[-1])["result"] == 2 ** 70


def test_without_stream_the_output_is_only_in_the_result():
    proc = run_cli(["call", "-"], input=json.dumps(req("python", PY_MIXED, "f")))
    assert proc.returncode == 0 and len(proc.stdout.decode().splitlines()) == 1
