"""Streamed output arrives as the program writes it, a line at a time at the latest, in every language and
every streamed path, with no explicit flush in the program: a runtime that buffers a pipe (Python, Ruby, C
stdio) would otherwise hold it until the end and the stream would be one chunk after the last line.

Each program prints three lines 0.8 s apart; the test reads the stream itself and records when each line
arrived. The first must arrive at least 0.5 s before the last (1.6 s when streamed; 0 when buffered): a
comparison of arrival times with a wide margin, no absolute figure, so a loaded machine does not flake.
Paths: `fnbox call --stream`, `fnbox exec --stream`, and `fnbox serve`'s NDJSON routes (POST /v1/call,
/v1/execute, a session's /call, /code, /commands and kernel executes). The clients' callbacks are tested in
their own suites (clients/python/tests, clients/node/test)."""
import json
import subprocess
import time

import pytest

from fnboxlib import FNBOX, check_sanitizers, require_binary
from servelib import TOKEN, Server, Session

GAP = 0.8     # the programs' sleep between lines
SPREAD = 0.5  # what the first line must lead the last by, at least

# A function (call paths) per language: prints L0, L1, L2 with GAP seconds between, never flushing.
FUNCTIONS = {
    "python": f"import time\ndef f():\n    for i in range(3):\n        print('L%d' % i)\n        time.sleep({GAP})\n"
              "    return 3\n",
    "ruby": f"def f\n  3.times {{ |i| puts \"L#{{i}}\"; sleep {GAP} }}\n  3\nend\n",
    "php": f"<?php\nfunction f() {{ for ($i = 0; $i < 3; $i++) {{ echo \"L$i\\n\"; usleep({int(GAP * 1e6)}); }} "
           "return 3; }\n",
    "javascript": f"async function f() {{ for (let i = 0; i < 3; i++) {{ console.log('L' + i); "
                  f"await new Promise(r => setTimeout(r, {int(GAP * 1000)})); }} return 3; }}\n",
    "c": f"#include <stdio.h>\n#include <unistd.h>\nint f(void) {{ for (int i = 0; i < 3; i++) {{ "
         f"printf(\"L%d\\n\", i); usleep({int(GAP * 1e6)}); }} return 3; }}\n",
    "cpp": f"#include <iostream>\n#include <unistd.h>\nint f() {{ for (int i = 0; i < 3; i++) {{ "
           f"std::cout << \"L\" << i << '\\n'; usleep({int(GAP * 1e6)}); }} return 3; }}\n",
}

# A program (execute paths) per execute language: the same lines from the user's own runtime.
PROGRAMS = {
    "python3": f"import time\nfor i in range(3):\n    print('L%d' % i)\n    time.sleep({GAP})\n",
    "php": f"<?php\nfor ($i = 0; $i < 3; $i++) {{ echo \"L$i\\n\"; usleep({int(GAP * 1e6)}); }}\n",
    "ruby": f"3.times {{ |i| puts \"L#{{i}}\"; sleep {GAP} }}\n",
    "node": f"(async () => {{ for (let i = 0; i < 3; i++) {{ console.log('L' + i); "
            f"await new Promise(r => setTimeout(r, {int(GAP * 1000)})); }} }})();\n",
    "c": f"#include <stdio.h>\n#include <unistd.h>\nint main(void) {{ for (int i = 0; i < 3; i++) {{ "
         f"printf(\"L%d\\n\", i); usleep({int(GAP * 1e6)}); }} return 0; }}\n",
    "cpp": f"#include <iostream>\n#include <unistd.h>\nint main() {{ for (int i = 0; i < 3; i++) {{ "
           f"std::cout << \"L\" << i << '\\n'; usleep({int(GAP * 1e6)}); }} return 0; }}\n",
    "bash": f"for i in 0 1 2; do echo L$i; sleep {GAP}; done\n",
}

# Shell commands that start a buffering runtime themselves (exec and session commands). Ruby has no variable
# that unbuffers it: fnbox's RUBYOPT preload (/.fnbox/stream.rb) flushes it.
COMMANDS = {
    "ruby": "printf '3.times { |i| puts \"L#{i}\"; sleep " + str(GAP) + " }\\n' > /tmp/p.rb && ruby /tmp/p.rb",
    "python3": "python3 -c \"import time\nfor i in range(3): print('L%d' % i); time.sleep(" + str(GAP) + ")\"",
    "c": "printf '#include <stdio.h>\\n#include <unistd.h>\\nint main(void){for(int i=0;i<3;i++){printf(\"L%%d\\\\n\",i);"
         f"usleep({int(GAP * 1e6)});}}return 0;}}\\n' > /tmp/p.c && cc -o /tmp/p /tmp/p.c && /tmp/p",
}


def check_arrivals(arrivals, result_stdout):
    """arrivals: [(monotonic time, stdout chunk)] in order. Each line L0..L2 arrived in a chunk of its own
    time; the first well before the last."""
    assert "".join(d for _, d in arrivals) == result_stdout
    assert result_stdout.split() == ["L0", "L1", "L2"], result_stdout
    when, text = {}, ""
    for t, d in arrivals:
        text += d
        for line in ("L0", "L1", "L2"):
            if line not in when and line + "\n" in text:
                when[line] = t
    lead = when["L2"] - when["L0"]
    assert lead >= SPREAD, (f"L0 arrived only {lead:.2f}s before L2 (written {2 * GAP}s apart): the output was "
                            f"held until the end; chunks {[d for _, d in arrivals]}")


def read_ndjson(stream_readline):
    """[(monotonic time, event)] of an NDJSON stream read line by line as it arrives."""
    out = []
    while True:
        line = stream_readline()
        if not line:
            return out
        out.append((time.monotonic(), json.loads(line)))


def check_stream_events(lines):
    events = [e for _, e in lines]
    assert events and events[-1]["type"] == "result", events[-3:]
    result = events[-1]
    assert result["status"] == "success", result
    check_arrivals([(t, e["data"]) for t, e in lines if e["type"] == "stdout"], result["stdout"])
    return result


def cli_stream(verb, request):
    require_binary()
    proc = subprocess.Popen([FNBOX, verb, "--stream", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        proc.stdin.write(json.dumps(request).encode())
        proc.stdin.close()
        lines = read_ndjson(proc.stdout.readline)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    check_sanitizers(proc.stderr.read().decode("utf-8", "replace"))
    return check_stream_events(lines)


@pytest.mark.parametrize("lang", sorted(FUNCTIONS))
def test_call_stream_cli(lang):
    res = cli_stream("call", {"language": lang, "code": FUNCTIONS[lang], "functionName": "f", "timeout": 60})
    assert res["result"] == 3, res


@pytest.mark.parametrize("lang", sorted(PROGRAMS))
def test_exec_stream_cli_code(lang):
    cli_stream("exec", {"language": lang, "code": PROGRAMS[lang], "timeout": 60})


@pytest.mark.parametrize("what", sorted(COMMANDS))
def test_exec_stream_cli_command(what):
    cli_stream("exec", {"command": COMMANDS[what], "timeout": 60})


# What a streamed function sees of its stdout's buffering: the runtime's block buffer (a thread of the harness
# flushes it every few ms), not line buffering, which writes each line on its own (10-20x a loop of short
# lines' time: bench/bench_output.py).
BUFFERING = {
    "python": "import sys\ndef f():\n    print('x')\n    return sys.stdout.line_buffering\n",
    "ruby": "def f\n  puts 'x'\n  $stdout.sync\nend\n",
    "c": "#include <stdio.h>\n#include <stdio_ext.h>\nint f(void) { puts(\"x\"); return __flbf(stdout) != 0; }\n",
}


@pytest.mark.parametrize("lang", sorted(BUFFERING))
def test_call_stream_keeps_the_block_buffer(lang):
    require_binary()
    body = {"language": lang, "code": BUFFERING[lang], "functionName": "f", "timeout": 60}
    proc = subprocess.run([FNBOX, "call", "--stream", "-"], input=json.dumps(body).encode(), capture_output=True,
                          timeout=120)
    res = json.loads(proc.stdout.splitlines()[-1])
    assert res["status"] == "success" and res["stdout"] == "x\n", res
    assert res["result"] in (False, 0), f"{lang}: a streamed call's stdout is line-buffered: {res['result']}"


def test_exec_stream_keeps_pythons_block_buffer():
    """A streamed execute's own python3 keeps its block buffer (PYTHONUNBUFFERED would write each print in
    two write(2)s, 3.7x a loop of short lines' time): fnbox's sitecustomize flushes it; sys.path and the
    system's own sitecustomize are as they would be without it."""
    show = ("python3 -c \"import sys, sitecustomize; print(sys.stdout.write_through, sys.stdout.line_buffering, "
            "[p for p in sys.path if 'fnbox' in p], sitecustomize.__file__)\"")
    proc = subprocess.run([FNBOX, "exec", "--stream", "-"], input=json.dumps({"command": show}).encode(),
                          capture_output=True, timeout=60)
    res = json.loads(proc.stdout.splitlines()[-1])
    plain = subprocess.run([FNBOX, "exec", "-"], input=json.dumps({"command": show}).encode(), capture_output=True,
                           timeout=60)
    assert res["stdout"] == json.loads(plain.stdout)["stdout"], (res, plain.stdout)
    assert res["stdout"].startswith("False False [] "), res


def test_exec_stream_with_the_requests_pythonpath():
    """A request's own PYTHONPATH stands (it would hide fnbox's sitecustomize): PYTHONUNBUFFERED then, and
    the lines still arrive as written."""
    cli_stream("exec", {"command": COMMANDS["python3"], "timeout": 60, "env": {"PYTHONPATH": "/tmp"},
                        "permissions": {"preset": "allowAllEnv"}})


def test_exec_stream_keeps_the_requests_own_setting():
    """PYTHONUNBUFFERED, RUBYOPT, the preload are a streamed run's defaults, not forced: what the request sets
    stands, and an unstreamed run has none of them."""
    show = "python3 -c \"import os; print(os.environ.get('PYTHONUNBUFFERED'), 'LD_PRELOAD' in os.environ)\""
    plain = subprocess.run([FNBOX, "exec", "-"], input=json.dumps({"command": show}).encode(), capture_output=True,
                           timeout=60)
    assert json.loads(plain.stdout)["stdout"] == "None False\n", plain.stdout
    proc = subprocess.run([FNBOX, "exec", "--stream", "-"], capture_output=True, timeout=60,
                          input=json.dumps({"command": show, "permissions": {"preset": "allowAllEnv"},
                                            "env": {"PYTHONUNBUFFERED": "x"}}).encode())
    assert json.loads(proc.stdout.splitlines()[-1])["stdout"].startswith("x "), proc.stdout
    # RUBYOPT the same: the preload is only a streamed run's, and the request's own value stands
    show = "ruby -e 'p ENV[\"RUBYOPT\"]'"
    plain = subprocess.run([FNBOX, "exec", "-"], input=json.dumps({"command": show}).encode(), capture_output=True,
                           timeout=60)
    assert json.loads(plain.stdout)["stdout"] == "nil\n", plain.stdout
    proc = subprocess.run([FNBOX, "exec", "--stream", "-"], capture_output=True, timeout=60,
                          input=json.dumps({"command": show, "permissions": {"preset": "allowAllEnv"},
                                            "env": {"RUBYOPT": "-W0"}}).encode())
    assert json.loads(proc.stdout.splitlines()[-1])["stdout"] == '"-W0"\n', proc.stdout


# ---- fnbox serve: NDJSON routes ----

@pytest.fixture(scope="module")
def server():
    with Server("--max-concurrency", "4") as srv:
        yield srv


def serve_stream(srv, path, body):
    c = srv.connection(timeout=120)
    try:
        c.request("POST", path, body=json.dumps(body).encode(),
                  headers={"Content-Type": "application/json", "Accept": "application/x-ndjson",
                           "Authorization": f"Bearer {TOKEN}"})
        r = c.getresponse()
        assert r.status == 200, (r.status, r.read()[:400])
        return check_stream_events(read_ndjson(r.readline))
    finally:
        c.close()


@pytest.mark.parametrize("lang", ["python", "ruby", "c"])
def test_serve_call(server, lang):
    serve_stream(server, "/v1/call", {"language": lang, "code": FUNCTIONS[lang], "functionName": "f",
                                      "timeout": 60})


@pytest.mark.parametrize("lang", ["python3", "ruby", "c"])
def test_serve_execute(server, lang):
    serve_stream(server, "/v1/execute", {"language": lang, "code": PROGRAMS[lang], "timeout": 60})


@pytest.fixture(scope="module")
def sess(server):
    s = Session(server)
    yield s
    s.close()


@pytest.mark.parametrize("lang", ["python", "ruby", "cpp"])
def test_session_call(sess, lang):
    serve_stream(sess.srv, sess.base + "/call", {"language": lang, "code": FUNCTIONS[lang], "functionName": "f",
                                                 "timeout": 60})


@pytest.mark.parametrize("lang", ["python3", "ruby", "c"])
def test_session_code(sess, lang):
    serve_stream(sess.srv, sess.base + "/code", {"language": lang, "code": PROGRAMS[lang], "timeout": 60})


@pytest.mark.parametrize("what", ["python3", "ruby"])
def test_session_command(sess, what):
    serve_stream(sess.srv, sess.base + "/commands", {"command": COMMANDS[what], "timeout": 60})


KERNEL_CELLS = {
    "python": f"import time\nfor i in range(3):\n    print('L%d' % i)\n    time.sleep({GAP})\n",
    "ruby": f"3.times {{ |i| puts \"L#{{i}}\"; sleep {GAP} }}\nnil\n",
    "php": f"for ($i = 0; $i < 3; $i++) {{ echo \"L$i\\n\"; usleep({int(GAP * 1e6)}); }}",
    "javascript": f"for (let i = 0; i < 3; i++) {{ console.log('L' + i); "
                  f"await new Promise(r => setTimeout(r, {int(GAP * 1000)})); }}",
}


@pytest.mark.parametrize("lang", sorted(KERNEL_CELLS))
def test_kernel_execute(sess, lang):
    serve_stream(sess.srv, f"{sess.base}/kernels/{lang}/execute", {"code": KERNEL_CELLS[lang], "timeout": 60})
    # the next cell, not streamed, keeps the kernel's usual buffering and still gets all its output
    r = sess.req("POST", f"/kernels/{lang}/execute", {"code": KERNEL_CELLS[lang].replace(str(GAP), "0")})
    assert r.status == 200 and r.json()["stdout"] == "L0\nL1\nL2\n", r
