"""`fnbox serve` streaming POST /v1/call as NDJSON (`Accept: application/x-ndjson`): status 200, chunked,
one JSON object per line, the function's output as it arrives ({"type": "stdout"|"stderr", "data"}) and then
exactly one {"type": "result", ...} line, the format of `fnbox call --stream`. Checked against the real server
and real interpreters: the order and the joined chunks, output arriving while the function still runs, UTF-8
never split, a client hanging up cancelling the run, a client that does not read never holding up the run,
the queue's cap, SIGTERM's drain, and everything that is not a streamed run answered exactly as before."""
import http.client
import json
import signal
import socket
import time

import pytest

from fnboxlib import host_pids_matching, joined, marker, req
from servelib import TOKEN, Server, assert_nothing_left, metric, sleeper_request, wait_for

NDJSON = "application/x-ndjson"
QUICK = req("python", "def f(x):\n    return x + 1\n", "f", [41])


def open_stream(srv, request, accept=NDJSON, conn=None, timeout=60):
    """Sends the call; returns (connection, response) with only the headers read."""
    c = conn or srv.connection(timeout=timeout)
    body = request if isinstance(request, bytes) else json.dumps(request).encode()
    c.request("POST", "/v1/call", body=body, headers={"Content-Type": "application/json", "Accept": accept})
    return c, c.getresponse()


def read_lines(resp):
    """Every line of the streamed body with its arrival time: [(monotonic time, object)]. Each line must be
    strict UTF-8 (a chunk split inside a character would not decode) and one JSON object."""
    out = []
    while True:
        line = resp.readline()
        if not line:
            return out
        assert line.endswith(b"\n"), line[-200:]
        out.append((time.monotonic(), json.loads(line.decode("utf-8"))))


def check_stream(lines):
    """The stream's shape: output lines, then (only when the queue dropped output) one `dropped` line, then
    exactly one result line, last. Returns (output events, result without its "type")."""
    events = [e for _, e in lines]
    assert events, "an empty stream"
    assert [e["type"] for e in events].count("result") == 1, events[-3:]
    assert events[-1]["type"] == "result", events[-3:]
    body = events[:-1]
    if body and body[-1]["type"] == "dropped":
        body = body[:-1]
    for e in body:
        assert set(e) == {"type", "data"} and e["type"] in ("stdout", "stderr"), e
        assert isinstance(e["data"], str) and e["data"], f"an empty chunk was told: {e}"
    return body, {k: v for k, v in events[-1].items() if k != "type"}


def stream_call(srv, request, accept=NDJSON):
    """One streamed call on its own connection: (response, lines)."""
    c, r = open_stream(srv, request, accept)
    try:
        assert r.status == 200, (r.status, r.read()[:400])
        assert r.getheader("Content-Type") == NDJSON, r.getheaders()
        assert r.getheader("Transfer-Encoding") == "chunked", r.getheaders()
        assert r.getheader("Content-Length") is None
        return r, read_lines(r)
    finally:
        c.close()


PY_MIXED = r'''
import sys, time
def f():
    out, err = sys.stdout.buffer, sys.stderr.buffer
    out.write("héllo ".encode()); out.flush()
    out.write(b"\xe2\x82"); out.flush(); time.sleep(0.1)      # a character split across two writes
    out.write(b"\xac \xff\xfe bad\n"); out.flush()            # then invalid bytes
    err.write("ünïcode err ".encode()); err.flush(); time.sleep(0.1)
    err.write("😀 ✓\n".encode()); err.flush()
    for i in range(3):
        out.write(("日本語 %d\n" % i).encode()); out.flush(); time.sleep(0.05)
    out.write(b"\xf0\x9f\x98"); out.flush()                   # cut by the end: U+FFFD per byte
    return 1
'''


def test_order_chunks_then_one_result():
    with Server() as srv:
        _, lines = stream_call(srv, req("python", PY_MIXED, "f"))
        events, result = check_stream(lines)
        assert result["status"] == "success" and result["result"] == 1, result
        assert any(e["type"] == "stderr" for e in events), events
        assert joined(events, "stdout") == result["stdout"]
        assert joined(events, "stderr") == result["stderr"]
        assert result["stdout"].startswith("héllo € \ufffd\ufffd bad\n日本語 0\n"), result["stdout"]
        assert result["stdout"].endswith("\ufffd" * 3), result["stdout"]
        assert result["stderr"] == "ünïcode err 😀 ✓\n", result["stderr"]
        # no chunk ends inside a character: the split € arrives whole, never as U+FFFD
        assert all(not e["data"].startswith("\xac") for e in events)
        assert "\ufffd" not in joined(events, "stderr")
        # the result line holds the same keys as the plain answer, "type" first
        assert list(lines[-1][1])[0] == "type"
        assert set(result) == set(srv.call(req("python", PY_MIXED, "f")).json())


def test_output_arrives_while_the_function_runs():
    """The first chunk reaches the client well before the result (the function sleeps 1.5 s in between):
    compared arrival times, no absolute figure."""
    code = ("import time\ndef f():\n    print('first', flush=True)\n    time.sleep(1.5)\n"
            "    print('second', flush=True)\n    return 2\n")
    with Server() as srv:
        _, lines = stream_call(srv, req("python", code, "f"))
        events, result = check_stream(lines)
        assert events[0] == {"type": "stdout", "data": "first\n"}, events
        assert result["result"] == 2 and result["stdout"] == "first\nsecond\n", result
        t_first, t_result = lines[0][0], lines[-1][0]
        assert t_result - t_first >= 0.8, f"the first chunk came {t_result - t_first:.3f}s before the result"


def test_the_plain_answer_is_unchanged():
    with Server() as srv:
        for accept in (None, "application/json", "*/*", "application/x-ndjson;q=0", "text/html, */*;q=0.1"):
            headers = {"Accept": accept} if accept else {}
            r = srv.request("POST", "/v1/call", body=QUICK, headers=headers)
            assert r.status == 200, (accept, r)
            assert r.header("Content-Type") == "application/json", (accept, r.headers)
            assert r.header("Content-Length") == str(len(r.body)), (accept, r.headers)
            assert r.body.endswith(b"}\n") and r.body.count(b"\n") == 1, r.body
            doc = r.json()
            assert "type" not in doc and doc["result"] == 42, doc


@pytest.mark.parametrize("accept", [
    "application/x-ndjson",
    "Application/X-NDJSON; charset=utf-8",
    "application/json, application/x-ndjson",
    "application/json;q=0.9, application/x-ndjson;q=0.1",
    "text/plain;q=0.5, application/x-ndjson ;q=0.2, */*;q=0.1",
])
def test_accept_with_several_types_selects_the_stream(accept):
    """application/x-ndjson anywhere in the list, with a quality above 0, selects the stream."""
    with Server() as srv:
        _, lines = stream_call(srv, QUICK, accept=accept)
        events, result = check_stream(lines)
        assert events == [] and result["result"] == 42, lines


def test_refusals_are_not_streamed(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    with Server("--token-file", str(tokens), "--max-body", "2048") as srv:
        h = {"Accept": NDJSON, "Content-Type": "application/json"}
        r = srv.request("POST", "/v1/call", body=json.dumps(QUICK).encode(), headers=h)
        assert r.status == 401 and r.header("Content-Type") == "application/json", r
        assert r.json()["error"]["type"] == "Unauthorized"
        r = srv.request("POST", "/v1/nope", body=json.dumps(QUICK).encode(), headers=h, token=TOKEN)
        assert r.status == 404 and r.json()["error"]["type"] == "NotFound", r
        r = srv.request("GET", "/v1/call", headers={"Accept": NDJSON}, token=TOKEN)
        assert r.status == 405 and r.header("Content-Type") == "application/json", r
        r = srv.request("POST", "/v1/call", body=b" " * 4096, headers=h, token=TOKEN)
        assert r.status == 413 and r.json()["error"]["type"] == "PayloadTooLarge", r
        r = srv.request("POST", "/v1/call", body=b"", headers=h, token=TOKEN)
        assert r.status == 400 and r.json()["error"]["type"] == "InvalidRequest", r
        # with its token the same call streams
        c = srv.connection()
        c.request("POST", "/v1/call", body=json.dumps(QUICK).encode(),
                  headers={**h, "Authorization": f"Bearer {TOKEN}"})
        resp = c.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Type") == NDJSON
        _, result = check_stream(read_lines(resp))
        c.close()
        assert result["result"] == 42


def test_an_invalid_request_is_told_by_the_result_line():
    """The headers go before the outcome is known: a streamed call is always 200, and an invalid request's
    error is the result line's, as `fnbox call --stream` prints it."""
    with Server() as srv:
        _, lines = stream_call(srv, {"language": "cobol", "code": "x"})
        events, result = check_stream(lines)
        assert events == []
        assert result["status"] == "error" and result["error"]["type"] == "InvalidRequest", result
        _, lines = stream_call(srv, b"{not json")
        assert check_stream(lines)[1]["error"]["type"] == "InvalidRequest"
        assert srv.request("POST", "/v1/call", body={"language": "cobol", "code": "x"}).status == 400


def test_metrics_and_log_count_streamed_calls():
    with Server() as srv:
        for _ in range(2):
            _, lines = stream_call(srv, QUICK)
            assert check_stream(lines)[1]["status"] == "success"
        assert metric(srv, 'fnbox_executions_total{status="success"}') == 2
        # counted and logged once the response is done, which can come a moment after the client read its
        # last line (seen under ASan)
        wait_for(lambda: metric(srv, 'fnbox_http_requests_total{route="/v1/call",status="200"}') == 2,
                 what="both requests counted")
        assert metric(srv, "fnbox_executions_in_flight") == 0
        wait_for(lambda: len([ln for ln in srv.lines() if ln.get("path") == "/v1/call"]) == 2,
                 what="both requests logged")
        logged = [ln for ln in srv.lines() if ln.get("path") == "/v1/call"]
        assert len(logged) == 2 and all(ln["status"] == 200 and ln["bytes"] > 100 for ln in logged), logged
        assert all("error" not in ln for ln in logged), logged


def threads_of(srv):
    return srv.pid_status("Threads")


def test_client_hanging_up_cancels_the_streamed_run():
    mark = marker()
    with Server() as srv:
        assert srv.call(QUICK).status == 200  # the first call's one-time allocations out of the baseline
        fds, threads = srv.fd_count(), threads_of(srv)
        s = srv.raw_socket()
        body = json.dumps(sleeper_request(mark, seconds=60)).encode()
        s.sendall(b"POST /v1/call HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Accept: application/x-ndjson\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        got = b""
        while b"started" not in got:
            chunk = s.recv(4096)
            assert chunk, got
            got += chunk
        assert got.startswith(b"HTTP/1.1 200 ") and b"application/x-ndjson" in got, got
        wait_for(lambda: host_pids_matching(mark), what="the marked child seen in /proc")
        s.close()
        t0 = time.monotonic()
        wait_for(lambda: not host_pids_matching(mark), timeout=2, what="the sandbox's processes gone")
        assert time.monotonic() - t0 < 2
        wait_for(lambda: metric(srv, 'fnbox_executions_total{status="terminated"}') == 1, timeout=5,
                 what="the run counted as terminated")
        assert metric(srv, "fnbox_executions_in_flight") == 0
        # the stream's thread joined, its fds closed: back to the baseline (the connection's thread ends
        # shortly after its answer)
        wait_for(lambda: threads_of(srv) <= threads and srv.fd_count() <= fds, timeout=5,
                 what=f"threads {threads} and fds {fds} again")
        assert srv.call(QUICK).status == 200
    assert_nothing_left(srv, mark)


class SmallWindowConnection(http.client.HTTPConnection):
    """A client with a 4 KiB receive buffer: a server writing to it blocks as soon as it stops reading."""

    def connect(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(self.timeout)
        s.connect((self.host, self.port))
        self.sock = s


def flood_request(mib, cap_mib):
    code = ("import sys\ndef f(n):\n    line = 'x' * 1023 + '\\n'\n    for _ in range(n):\n"
            "        sys.stdout.write(line)\n    sys.stdout.flush()\n    return n\n")
    return req("python", code, "f", [mib * 1024], limits={"stdoutBytes": cap_mib << 20}, timeout=60)


def test_a_client_that_does_not_read_never_holds_up_the_run():
    """8 MiB of output, far more than the sockets hold, to a client that reads nothing until the run is
    over: the run still ends at once (the output waits in the server's queue), and then every byte arrives."""
    with Server() as srv:
        c = SmallWindowConnection(srv.host, srv.port, timeout=60)
        c.request("POST", "/v1/call", body=json.dumps(flood_request(8, 16)).encode(),
                  headers={"Content-Type": "application/json", "Accept": NDJSON})
        wait_for(lambda: metric(srv, 'fnbox_executions_total{status="success"}') == 1, timeout=30,
                 what="the run over while its client reads nothing")
        assert metric(srv, "fnbox_executions_in_flight") == 0
        r = c.getresponse()
        assert r.status == 200
        events, result = check_stream(read_lines(r))
        c.close()
        assert result["result"] == 8192 and len(result["stdout"]) == 8 << 20
        assert joined(events, "stdout") == result["stdout"]


def test_the_queue_cap_drops_output_and_says_so():
    """Past the queue's 16 MiB cap the output is dropped from there on (the client gets a prefix of it), a
    `dropped` line counts what was dropped, and the result line still holds all of it."""
    with Server() as srv:
        c = SmallWindowConnection(srv.host, srv.port, timeout=120)
        c.request("POST", "/v1/call", body=json.dumps(flood_request(24, 32)).encode(),
                  headers={"Content-Type": "application/json", "Accept": NDJSON})
        wait_for(lambda: metric(srv, 'fnbox_executions_total{status="success"}') == 1, timeout=60,
                 what="the run over while its client reads nothing")
        r = c.getresponse()
        lines = read_lines(r)
        c.close()
        events, result = check_stream(lines)
        dropped = lines[-2][1]
        assert dropped["type"] == "dropped" and set(dropped) == {"type", "stdout", "stderr"}, dropped
        out = joined(events, "stdout")
        assert len(result["stdout"]) == 24 << 20
        assert dropped["stdout"] > 0 and dropped["stderr"] == 0
        assert len(out) + dropped["stdout"] == len(result["stdout"])
        assert result["stdout"].startswith(out)


def test_sigterm_cancels_a_streamed_run_after_the_grace():
    mark = marker()
    srv = Server("--grace", "1")
    try:
        c, r = open_stream(srv, sleeper_request(mark, seconds=60))
        assert r.status == 200
        first = json.loads(r.readline())
        assert first == {"type": "stdout", "data": "started\n"}, first
        t0 = time.monotonic()
        srv.signal(signal.SIGTERM)
        lines = read_lines(r)
        elapsed = time.monotonic() - t0
        c.close()
        _, result = check_stream(lines)
        assert result["status"] == "terminated" and result["error"]["type"] == "Terminated", result
        assert 0.9 < elapsed < 5, elapsed
        assert srv.wait(timeout=30) == 0, srv.log_text()[-2000:]
        events = [ln.get("event") for ln in srv.lines() if "event" in ln]
        assert events[-3:] == ["draining", "cancelling", "stopped"], events
    finally:
        srv.stop()
    assert_nothing_left(srv, mark)


def test_keep_alive_after_a_streamed_answer():
    """A complete stream ends the chunked body properly: the same connection carries the next request."""
    with Server() as srv:
        c = srv.connection()
        for _ in range(2):
            _, r = open_stream(srv, QUICK, conn=c)
            assert check_stream(read_lines(r))[1]["result"] == 42
        r = srv.request("POST", "/v1/call", body=QUICK, conn=c)
        assert r.status == 200 and r.json()["result"] == 42
        c.close()
