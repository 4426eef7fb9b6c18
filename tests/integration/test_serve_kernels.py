"""`fnbox serve` session kernels (docs/internals/kernels.md): POST /v1/sessions/{id}/kernels/{language}/execute
and DELETE /v1/sessions/{id}/kernels/{language} against the real binary: state kept between executes, kept
apart between sessions, NDJSON streaming in order, interrupt and restart, bad input named, token ownership,
and nothing left running once the session and server are gone."""
import json

import pytest

from fnboxlib import cgroup_refused, marker
from servelib import TOKEN, Server, Session, assert_nothing_left, error_of, host_pids_matching, wait_for

OTHER = "second-token-abcdefghijklmnop"


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(f"{TOKEN}\n{OTHER}\n")
    path.chmod(0o600)
    return str(path)


@pytest.fixture(scope="module")
def server(token_file):
    with Server("--token-file", token_file, "--max-concurrency", "4") as srv:
        yield srv


@pytest.fixture
def sess(server):
    s = Session(server)
    yield s
    s.close()


def kexec(s, code, language="python", **extra):
    return s.kernel(code, language, **extra)


def test_state_persists_and_values_convert(sess):
    assert kexec(sess, "import math\nx = 41")["result"] is None
    res = kexec(sess, "print('hi')\nx + 1")
    assert res["status"] == "success" and res["result"] == 42 and res["stdout"] == "hi\n", res
    assert res["kernelRestarted"] is False, res
    assert kexec(sess, "({1, 2}, b'hi')")["result"] == [[1, 2], {"base64": "aGk="}]
    err = kexec(sess, "raise ValueError('bad')")
    assert err["status"] == "error" and err["error"]["type"] == "ValueError" and err["error"]["message"] == "bad"
    assert kexec(sess, "let y = 2", "javascript")["status"] == "success"
    assert kexec(sess, "y * 21", "js")["result"] == 42
    assert kexec(sess, "x")["result"] == 41


def test_sessions_do_not_share_kernels(server):
    a, b = Session(server), Session(server)
    try:
        kexec(a, "secret = 'a-only'")
        assert kexec(b, "'secret' in globals()")["result"] is False
        assert kexec(a, "open('/workspace/a.txt', 'w').write('a') and 1")["status"] == "success"
        assert kexec(b, "import os\nos.path.exists('/workspace/a.txt')")["result"] is False
    finally:
        a.close()
        b.close()


def test_streaming_order(sess):
    r = sess.req("POST", "/kernels/python/execute",
                 {"code": "import sys\nprint('one', flush=True)\nsys.stderr.write('two\\n')\nprint('three')\n7"},
                 headers={"Accept": "application/x-ndjson"})
    assert r.status == 200, r
    lines = [json.loads(l) for l in r.body.decode().splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == 7, lines
    out = "".join(l["data"] for l in lines if l["type"] == "stdout")
    assert out == "one\nthree\n" and [l["type"] for l in lines].count("result") == 1, lines
    assert "".join(l["data"] for l in lines if l["type"] == "stderr") == "two\n"


def test_interrupt_and_restart(sess):
    kexec(sess, "kept = 1")
    res = kexec(sess, "while True: pass", timeout=0.3)
    assert res["status"] == "timeout" and res["kernelRestarted"] is False, res
    assert res["error"]["message"] == "the code did not finish within the 0.3 s timeout", res["error"]
    assert kexec(sess, "kept")["result"] == 1
    res = kexec(sess, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", timeout=0.3)
    assert res["status"] == "timeout" and res["kernelRestarted"] is True, res
    assert kexec(sess, "'kept' in globals()")["result"] is False
    kexec(sess, "again = 1")
    r = sess.req("DELETE", "/kernels/python")
    assert r.status == 204, r
    assert kexec(sess, "'again' in globals()")["result"] is False
    # restart in the request: kernelRestarted only when a started kernel's state was discarded
    assert kexec(sess, "1", "ruby", restart=True)["kernelRestarted"] is False
    res = kexec(sess, "again = 2", restart=True)
    assert res["kernelRestarted"] is True and res["status"] == "success", res


def test_bad_input_names_the_field(server, sess):
    def bad(body, field, language="python", status=400, etype="InvalidRequest"):
        r = sess.req("POST", f"/kernels/{language}/execute", body)
        msg = error_of(r, status, etype)
        assert field in msg, msg
    bad({}, "code")
    bad({"code": 1}, "code")
    bad({"code": "1", "timeout": "soon"}, "timeout")
    bad({"code": "1", "language": "python"}, "language")
    bad({"code": "1", "restart": "yes"}, "restart")
    bad({"code": "1"}, "cobol", language="cobol")
    assert "ruby (rb), php" in error_of(sess.req("POST", "/kernels/cobol/execute", {"code": "1"}), 400, "InvalidRequest")
    r = sess.req("DELETE", "/kernels/cobol")
    assert "cobol" in error_of(r, 400, "InvalidRequest")
    error_of(server.request("POST", "/v1/sessions/0123abcd/kernels/python/execute", {"code": "1"}, token=TOKEN), 404,
             "NotFound")
    error_of(server.request("DELETE", "/v1/sessions/0123abcd/kernels/python", token=TOKEN), 404, "NotFound")
    error_of(sess.req("POST", "/kernels/python/execute", {"code": "1"}, token=OTHER), 404, "NotFound")
    error_of(sess.req("DELETE", "/kernels/python", token=OTHER), 404, "NotFound")
    error_of(server.request("POST", sess.base + "/kernels/python/execute", {"code": "1"}), 401, "Unauthorized")


def test_closing_the_session_leaves_nothing(token_file):
    mark = marker()
    with Server("--token-file", token_file) as srv:
        s = Session(srv)
        code = (f"import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', 'import time\\ntime.sleep(120)', "
                f"{mark!r}])\np.pid")
        assert kexec(s, code)["status"] == "success"
        # Popen returns once the child is forked; its command line is the mark's once it has exec'd
        wait_for(lambda: host_pids_matching(mark), timeout=10,
                 what="the kernel's child running (else the test would prove nothing)")
        assert s.close().status == 204
        srv.stop()
    assert_nothing_left(srv, mark)


def test_ruby_kernel(sess):
    assert kexec(sess, "require 'set'\nx = 41\ndef twice(n) = n * 2", "ruby")["status"] == "success"
    res = kexec(sess, "puts 'hi'\n$stderr.puts 'warn'\nx + 1", "rb")
    assert res["status"] == "success" and res["result"] == 42 and res["stdout"] == "hi\n", res
    assert res["stderr"] == "warn\n" and res["kernelRestarted"] is False, res
    assert kexec(sess, "[Set[1, 2], :sym, twice(x), 'hi'.b, {a: 1.5}]", "ruby")["result"] == \
        [[1, 2], "sym", 82, "hi", {"a": 1.5}]
    err = kexec(sess, "1 / 0", "ruby")
    assert err["status"] == "error" and err["error"]["type"] == "ZeroDivisionError", err
    assert "<cell " in err["error"]["stack"] and "kernel" not in err["error"]["stack"], err
    res = kexec(sess, "loop { }", "ruby", timeout=0.3)
    assert res["status"] == "timeout" and res["kernelRestarted"] is False, res
    assert kexec(sess, "x", "ruby")["result"] == 41
    res = kexec(sess, "trap('INT', 'IGNORE')\nloop { }", "ruby", timeout=0.3)
    assert res["status"] == "timeout" and res["kernelRestarted"] is True, res
    assert kexec(sess, "defined?(x).inspect", "ruby")["result"] == "nil"
    kexec(sess, "again = 1", "ruby")
    assert sess.req("DELETE", "/kernels/rb").status == 204
    assert kexec(sess, "defined?(again).inspect", "ruby")["result"] == "nil"


def test_php_kernel(sess):
    assert kexec(sess, "$x = 41;\nfunction twice($n) { return $n * 2; }", "php")["result"] is None
    res = kexec(sess, "echo \"hi\\n\";\nfwrite(STDERR, \"warn\\n\");\n$x + 1", "php")
    assert res["status"] == "success" and res["result"] == 42 and res["stdout"] == "hi\n", res
    assert res["stderr"] == "warn\n" and res["kernelRestarted"] is False, res
    assert kexec(sess, "return [twice($x), ['a' => 1.5], new DateTime('2020-01-02T03:04:05Z')];", "php")["result"] \
        == [82, {"a": 1.5}, "2020-01-02T03:04:05+00:00"]
    err = kexec(sess, "intdiv(1, 0)", "php")
    assert err["status"] == "error" and err["error"]["type"] == "DivisionByZeroError", err
    assert "kernel" not in err["error"]["stack"], err
    err = kexec(sess, "function twice($n) { return 0; }", "php")
    assert err["error"]["type"] == "FatalError" and "Cannot redeclare twice()" in err["error"]["message"], err
    assert err["kernelRestarted"] is False and kexec(sess, "twice($x)", "php")["result"] == 82
    res = kexec(sess, "while (true) {}", "php", timeout=0.3)
    assert res["status"] == "timeout" and res["kernelRestarted"] is False, res
    assert kexec(sess, "$x", "php")["result"] == 41
    res = kexec(sess, "pcntl_signal(SIGINT, SIG_IGN);\nwhile (true) {}", "php", timeout=0.3)
    assert res["status"] == "timeout" and res["kernelRestarted"] is True, res
    assert kexec(sess, "isset($x)", "php")["result"] is False
    kexec(sess, "$again = 1;", "php")
    assert sess.req("DELETE", "/kernels/php").status == 204
    assert kexec(sess, "isset($again)", "php")["result"] is False


def _kernel_pids(srv):
    from servelib import cmdline, descendants
    return [p for p in descendants(srv.proc.pid) if "python_kernel" in cmdline(p) or "kernel.py" in cmdline(p)]


def test_kernel_killed_between_executes_says_so(token_file):
    import os
    import signal
    with Server("--token-file", token_file) as srv:
        s = Session(srv)
        assert s.kernel("x = 41")["status"] == "success"
        pids = _kernel_pids(srv)
        assert len(pids) == 1, pids
        # The kernel's own PID namespace's init (its parent) holds the request pipe too until it has reaped
        # the kernel and exited: an execute sent before then goes into a kernel dying (crash, then a fresh
        # kernel next time), which is a death during the execute, not between two.
        supervisor = open(f"/proc/{pids[0]}/stat").read().rsplit(")", 1)[1].split()[1]
        os.kill(pids[0], signal.SIGKILL)
        wait_for(lambda: not _kernel_pids(srv) and not os.path.exists(f"/proc/{supervisor}"), timeout=5,
                 what="the kernel and its init gone")
        r = s.kernel("'x' in globals()")
        assert r["status"] == "success" and r["result"] is False, r  # a fresh kernel ran it
        assert r["kernelRestarted"] is True, r
        assert "killed by signal 9" in r["kernelRestartReason"] and "fresh kernel" in r["kernelRestartReason"], r
        again = s.kernel("1")
        assert again["kernelRestarted"] is False and "kernelRestartReason" not in again, again
        assert s.req("GET").json()["state"] == "running"  # the session lives on
        s.close()


def test_kernel_usage_is_measured(sess):
    burn = sess.kernel("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass")
    assert burn["usage"]["cpuMs"] > 100, burn
    if cgroup_refused():  # the CPU time above is measured all the same
        pytest.skip(cgroup_refused())
    r = sess.kernel("x = bytearray(60 << 20)\nlen(x)")
    assert r["status"] == "success", r
    assert r["usage"]["peakMemoryBytes"] > 50 << 20, r
