"""`fnbox serve` under its limits and in its lifecycle: 413 from Content-Length (before the body is read)
and from a chunked body, 503 with Retry-After when every slot and queue place is taken, a client that
hangs up cancelling its call (its sandbox's processes gone within a second) or leaving the queue, and
SIGTERM: stop accepting, finish running calls within the grace, cancel the rest, exit 0 with nothing left."""
import json
import signal
import socket
import threading
import time

import pytest

from fnboxlib import host_pids_matching, marker, req
from servelib import Server, assert_nothing_left, metric, sleeper_request, wait_for

QUICK = req("python", "def f(x):\n    return x + 1\n", "f", [41])


def in_background(fn, *args, **kw):
    """Runs fn in a thread; returns a function that joins it and gives fn's result (or raises its error)."""
    out = {}

    def run():
        try:
            out["value"] = fn(*args, **kw)
        except BaseException as e:  # noqa: B902 - handed to the joining thread
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()

    def join(timeout=120):
        t.join(timeout)
        assert not t.is_alive(), "the background request did not finish"
        if "error" in out:
            raise out["error"]
        return out["value"]

    return join


def recv_until_closed(s, limit=65536):
    """Everything the server sends until it closes the connection (an early answer closes it)."""
    data = b""
    while len(data) < limit:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_413_from_content_length_before_the_body():
    with Server("--max-body", "1024") as srv:
        s = srv.raw_socket()
        try:
            # Headers only: the answer must come without the server waiting for (or reading) the body.
            s.sendall(b"POST /v1/call HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100000000\r\n\r\n")
            head = recv_until_closed(s)
        finally:
            s.close()
        assert head.startswith(b"HTTP/1.1 413 "), head[:300]
        body = head.split(b"\r\n\r\n", 1)[1]
        assert b"PayloadTooLarge" in body and b"--max-body" in body, head
        # a body of exactly the maximum is read and run
        doc = json.dumps(QUICK)
        padded = doc + " " * (1024 - len(doc))
        r = srv.request("POST", "/v1/call", body=padded.encode(), headers={"Content-Type": "application/json"})
        assert r.status == 200 and r.json()["result"] == 42, r
        r = srv.request("POST", "/v1/call", body=(padded + " ").encode(), headers={"Content-Type": "application/json"})
        assert r.status == 413 and r.json()["error"]["type"] == "PayloadTooLarge", r


def chunked(parts):
    yield from parts


def test_413_from_a_chunked_body():
    with Server("--max-body", "1024") as srv:
        conn = srv.connection()
        conn.request("POST", "/v1/call", body=chunked([b" " * 600, b" " * 600]),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        r = conn.getresponse()
        body = r.read()
        conn.close()
        assert r.status == 413, (r.status, body)
        assert json.loads(body)["error"]["type"] == "PayloadTooLarge"
        # a chunked body within the limit runs
        doc = json.dumps(QUICK).encode()
        conn = srv.connection()
        conn.request("POST", "/v1/call", body=chunked([doc[:10], doc[10:]]),
                     headers={"Content-Type": "application/json"}, encode_chunked=True)
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["result"] == 42
        conn.close()
        # far over the limit: the server stops reading (the connection is cut), never buffers it
        rss = srv.pid_status("VmRSS")
        s = srv.raw_socket()
        s.sendall(b"POST /v1/call HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
        sent = 0
        try:
            for _ in range(512):  # 32 MiB
                s.sendall(chunk)
                sent += 1
        except OSError:
            pass
        finally:
            s.close()
        assert sent < 512, "the server read 32 MiB of a body over a 1 KiB maximum"
        assert srv.pid_status("VmRSS") - rss < 8 * 1024, "the dropped body was buffered"
        assert srv.request("GET", "/v1/health").status == 200


def test_503_when_slots_and_queue_are_full():
    mark = marker()
    with Server("--max-concurrency", "1", "--max-queue", "1") as srv:
        slow = in_background(srv.call, sleeper_request(mark, seconds=2))
        wait_for(lambda: host_pids_matching(mark), what="the slow call's start")
        queued = in_background(srv.call, QUICK)
        wait_for(lambda: metric(srv, "fnbox_executions_queued") == 1, what="one request queued")
        assert metric(srv, "fnbox_executions_in_flight") == 1
        r = srv.call(QUICK)
        assert r.status == 503, r
        assert r.header("Retry-After") == "1", r.headers
        doc = r.json()
        assert doc["error"]["type"] == "Overloaded" and "--max-concurrency" in doc["error"]["message"], doc
        assert srv.request("GET", "/v1/health").status == 200  # probes are not admitted executions
        assert slow().json()["result"] == "slept"
        r = queued()
        assert r.status == 200 and r.json()["result"] == 42, r
        assert srv.call(QUICK).status == 200
        assert 'fnbox_http_requests_total{route="/v1/call",status="503"} 1' in \
            srv.request("GET", "/metrics").body.decode()


def test_503_without_a_queue():
    mark = marker()
    with Server("--max-concurrency", "1", "--max-queue", "0") as srv:
        slow = in_background(srv.call, sleeper_request(mark, seconds=2))
        wait_for(lambda: host_pids_matching(mark), what="the slow call's start")
        r = srv.call(QUICK)
        assert r.status == 503 and r.header("Retry-After"), r
        assert slow().status == 200


def send_call(srv, request):
    """The request on a raw socket, left open: the caller hangs up by closing it."""
    s = srv.raw_socket()
    body = json.dumps(request).encode()
    s.sendall(b"POST /v1/call HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return s


def test_client_hanging_up_cancels_its_call():
    mark = marker()
    with Server() as srv:
        s = send_call(srv, sleeper_request(mark, seconds=60))
        wait_for(lambda: host_pids_matching(mark), what="the call's start")
        s.close()
        t0 = time.monotonic()
        wait_for(lambda: not host_pids_matching(mark), timeout=1, what="the sandbox's processes gone")
        assert time.monotonic() - t0 < 1
        wait_for(lambda: metric(srv, 'fnbox_executions_total{status="terminated"}') == 1, timeout=5,
                 what="the call counted as terminated")
        assert metric(srv, "fnbox_executions_in_flight") == 0
        line = next(ln for ln in srv.lines() if ln.get("path") == "/v1/call")
        assert "error" in line, line  # the answer could not go out
        assert srv.call(QUICK).status == 200
    assert_nothing_left(srv, mark)


def test_client_hanging_up_leaves_the_queue():
    first, second = marker(), marker()
    with Server("--max-concurrency", "1", "--max-queue", "4") as srv:
        slow = in_background(srv.call, sleeper_request(first, seconds=3))
        wait_for(lambda: host_pids_matching(first), what="the slow call's start")
        s = send_call(srv, sleeper_request(second, seconds=60))
        wait_for(lambda: metric(srv, "fnbox_executions_queued") == 1, what="the second request queued")
        s.close()
        wait_for(lambda: metric(srv, "fnbox_executions_queued") == 0, timeout=2, what="the queue place given back")
        assert slow().status == 200
        time.sleep(0.3)
        assert not host_pids_matching(second), "a call whose client had left was run"
    assert_nothing_left(srv, second)


def test_sigterm_lets_a_running_call_finish():
    mark = marker()
    srv = Server("--grace", "20")
    try:
        running = in_background(srv.call, sleeper_request(mark, seconds=2))
        wait_for(lambda: host_pids_matching(mark), what="the call's start")
        probe = srv.connection()  # a keep-alive connection opened before the signal
        assert srv.request("GET", "/v1/health", conn=probe).status == 200
        t0 = time.monotonic()
        srv.signal(signal.SIGTERM)
        wait_for(lambda: any(ln.get("event") == "draining" for ln in srv.lines()), what="draining")
        # on it, health now says the server is going away, and new calls are refused
        r = srv.request("GET", "/v1/health", conn=probe)
        assert r.status == 503 and r.json()["status"] == "draining", r
        assert r.header("Connection") == "close"
        probe.close()
        # stop accepting: a new connection is refused soon after the signal
        def refused():
            try:
                socket.create_connection((srv.host, srv.port), timeout=1).close()
                return False
            except OSError:
                return True
        wait_for(refused, timeout=2, what="new connections refused")
        r = running()
        assert r.status == 200 and r.json()["result"] == "slept", r
        assert r.header("Connection") == "close"
        code = srv.wait(timeout=30)
        assert code == 0, srv.log_text()[-2000:]
        assert time.monotonic() - t0 < 10
        events = [ln.get("event") for ln in srv.lines() if "event" in ln]
        assert events[-2:] == ["draining", "stopped"], events
        assert "cancelling" not in events
    finally:
        srv.stop()
    assert_nothing_left(srv, mark)


def test_sigterm_cancels_calls_beyond_the_grace(tmp_path):
    mark, queued_mark = marker(), marker()
    sock = str(tmp_path / "s.sock")
    srv = Server("--grace", "1", "--max-concurrency", "1", "--max-queue", "2", listen=f"unix:{sock}")
    try:
        running = in_background(srv.call, sleeper_request(mark, seconds=60))
        wait_for(lambda: host_pids_matching(mark), what="the call's start")
        waiting = in_background(srv.call, sleeper_request(queued_mark, seconds=60))
        wait_for(lambda: metric(srv, "fnbox_executions_queued") == 1, what="a request queued")
        t0 = time.monotonic()
        srv.signal(signal.SIGTERM)
        r = waiting()  # refused at once: it had not started
        assert r.status == 503 and r.json()["error"]["type"] == "Overloaded", r
        assert time.monotonic() - t0 < 1
        r = running()
        elapsed = time.monotonic() - t0
        assert r.status == 200, r
        doc = r.json()
        assert doc["status"] == "terminated" and doc["error"]["type"] == "Terminated", doc
        assert 0.9 < elapsed < 5, elapsed
        assert srv.wait(timeout=30) == 0, srv.log_text()[-2000:]
        events = [ln.get("event") for ln in srv.lines() if "event" in ln]
        assert events[-3:] == ["draining", "cancelling", "stopped"], events
    finally:
        srv.stop()
    assert not host_pids_matching(queued_mark)
    assert_nothing_left(srv, mark)


def test_second_signal_cancels_at_once():
    mark = marker()
    srv = Server("--grace", "60")
    try:
        running = in_background(srv.call, sleeper_request(mark, seconds=60))
        wait_for(lambda: host_pids_matching(mark), what="the call's start")
        srv.signal(signal.SIGTERM)
        time.sleep(0.3)
        t0 = time.monotonic()
        srv.signal(signal.SIGINT)
        r = running()
        assert r.json()["status"] == "terminated", r
        assert time.monotonic() - t0 < 3
        assert srv.wait(timeout=30) == 0
    finally:
        srv.stop()
    assert_nothing_left(srv, mark)
