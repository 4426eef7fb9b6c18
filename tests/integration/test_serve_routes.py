"""`fnbox serve`: every route and error answer of the HTTP server, against the real binary with real
interpreters: GET /v1/health, POST /v1/call (the same ExecutionResult as `fnbox call`; 400 with the
InvalidRequest result), GET /metrics, 400/401/404/405/431, bearer tokens, the request log, a unix
socket, and the command line's own errors."""
import json
import os
import socket
import stat
import subprocess
import time

import pytest

from fnboxlib import FNBOX, call, req, run_cli
from servelib import TOKEN, Server

OTHER_TOKEN = "second-token-abcdefghijklmnop"
ADD = req("python", "def add(a, b=1):\n    return a + b\n", "add", [2], {"b": 40})


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(f"\n  {TOKEN}  \n\n{OTHER_TOKEN}\n")
    path.chmod(0o600)
    return str(path)


@pytest.fixture(scope="module")
def server():
    """One server without tokens for the module (loopback)."""
    with Server("--max-concurrency", "2") as srv:
        yield srv


@pytest.fixture(scope="module")
def secured(token_file):
    with Server("--token-file", token_file) as srv:
        yield srv


def error_of(resp, status, etype):
    assert resp.status == status, resp
    assert resp.header("Content-Type") == "application/json", resp.headers
    doc = resp.json()
    assert doc["error"]["type"] == etype, doc
    assert isinstance(doc["error"]["message"], str) and doc["error"]["message"], doc
    return doc["error"]["message"]


def without_timings(result):
    r = json.loads(json.dumps(result))
    r.pop("usage", None)
    r.get("meta", {}).pop("duration", None)
    return r


def test_health(server):
    r = server.request("GET", "/v1/health")
    assert r.status == 200 and r.header("Content-Type") == "application/json", r
    doc = r.json()
    assert doc["status"] == "ok"
    version = run_cli(["--version"]).stdout.decode().split()[-1]
    assert doc["version"] == version
    # The languages whose runtime this host has: the ones the suite runs (install-deps.sh installs them all).
    assert {"python", "javascript", "ruby", "php", "c", "cpp"} <= set(doc["languages"]), doc
    assert server.request("HEAD", "/v1/health").status == 200


def test_call_is_what_fnbox_call_prints(server):
    r = server.call(ADD)
    assert r.status == 200 and r.header("Content-Type") == "application/json", r
    assert r.body.endswith(b"\n") and r.body.count(b"\n") == 1
    served = r.json()
    assert served["status"] == "success" and served["result"] == 42, served
    cli = call(ADD)
    assert cli.code == 0
    assert without_timings(served) == without_timings(cli.result)
    # every field in the CLI's order
    assert list(served) == list(cli.result)


@pytest.mark.parametrize("lang, code, status, etype", [
    ("python", "def f():\n    return 1 / 0\n", "error", "ZeroDivisionError"),
    ("javascript", "function f() { throw new TypeError('no'); }", "error", "TypeError"),
    ("python", "import time\ndef f():\n    time.sleep(5)\n", "timeout", "TimeoutError"),
])
def test_execution_outcomes_are_200(server, lang, code, status, etype):
    r = server.call(req(lang, code, "f", [], timeout=0.5))
    assert r.status == 200, r
    doc = r.json()
    assert doc["status"] == status and doc["error"]["type"] == etype, doc


def test_other_languages(server):
    r = server.call(req("ruby", "def f(x)\n  x * 3\nend\n", "f", [14]))
    assert r.status == 200 and r.json()["result"] == 42, r
    r = server.call(req("c", "int f(int x) { return x + 1; }", "f", [41]))
    assert r.status == 200 and r.json()["result"] == 42, r


def test_invalid_request_is_400_with_the_result(server):
    bad = {"language": "cobol", "code": "x"}
    r = server.call(bad)
    assert r.status == 400, r
    served = r.json()
    assert served["status"] == "error" and served["error"]["type"] == "InvalidRequest", served
    cli = call(bad)
    assert cli.code == 2
    assert without_timings(served) == without_timings(cli.result)
    r = server.call({"language": "python", "code": "def f(): pass", "bogus": 1})
    assert r.status == 400 and "bogus" in r.json()["error"]["message"], r


def test_malformed_json_is_400(server):
    r = server.request("POST", "/v1/call", body=b'{"language": "python", "code": ', headers={
        "Content-Type": "application/json"})
    message = error_of(r, 400, "InvalidRequest")
    assert "malformed JSON" in message, message
    r = server.request("POST", "/v1/call", body=b"\xff\xfe not json", headers={"Content-Type": "application/json"})
    error_of(r, 400, "InvalidRequest")


def test_wrong_content_type_is_400(server):
    r = server.request("POST", "/v1/call", body=json.dumps(ADD).encode(), headers={"Content-Type": "text/plain"})
    message = error_of(r, 400, "InvalidRequest")
    assert "Content-Type" in message and "text/plain" in message, message
    for ok_type in ("application/json; charset=utf-8", "Application/JSON"):
        r = server.request("POST", "/v1/call", body=json.dumps(ADD).encode(), headers={"Content-Type": ok_type})
        assert r.status == 200, (ok_type, r)
    r = server.request("POST", "/v1/call", body=json.dumps(ADD).encode())  # no Content-Type at all: fine
    assert r.status == 200, r


def test_empty_body_is_400(server):
    r = server.request("POST", "/v1/call", body=b"", headers={"Content-Type": "application/json"})
    message = error_of(r, 400, "InvalidRequest")
    assert message.startswith("body: empty"), message


@pytest.mark.parametrize("method, path", [
    ("GET", "/"), ("GET", "/nope"), ("GET", "/v1/health/"), ("GET", "/v1/sessions/x/y"),
    ("POST", "/api/v2/packages"), ("POST", "/v1/execute/x"), ("GET", "/v1/call/x"),
])
def test_unknown_route_is_404(server, method, path):
    r = server.request(method, path)
    message = error_of(r, 404, "NotFound")
    assert path in message


@pytest.mark.parametrize("method, path, allow", [
    ("GET", "/v1/call", "POST"), ("PUT", "/v1/call", "POST"), ("POST", "/v1/health", "GET, HEAD"),
    ("DELETE", "/metrics", "GET, HEAD"),
])
def test_wrong_method_is_405_with_allow(server, method, path, allow):
    r = server.request(method, path)
    error_of(r, 405, "MethodNotAllowed")
    assert r.header("Allow") == allow, r.headers


def test_get_with_a_body_is_answered(server):
    r = server.request("GET", "/v1/health", body=b"ignored", headers={"Content-Type": "text/plain"})
    assert r.status == 200 and r.json()["status"] == "ok", r


def test_huge_header_is_refused_and_the_server_lives_on(server):
    s = server.raw_socket()
    try:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n")
        head = s.recv(4096)
    finally:
        s.close()
    assert head.startswith(b"HTTP/1.1 431 "), head[:200]
    assert server.request("GET", "/v1/health").status == 200


def test_deeply_nested_request(server):
    """fnbox_call runs on a connection's thread: JSON nested to the library's depth limit fits its stack."""
    deep = "[" * 2000 + "]" * 2000
    body = ('{"language": "python", "code": "def f(x):\\n    return x\\n", "functionName": "f", "args": [%s]}'
            % deep).encode()
    r = server.request("POST", "/v1/call", body=body, headers={"Content-Type": "application/json"})
    # (too deep for Python's own json module to read back)
    assert r.status == 200 and r.body.startswith(b'{"status":"success"') and deep.encode() in r.body, r
    r = server.request("POST", "/v1/call", body=body.replace(b"[[", b"[[[[[[", 1000),
                       headers={"Content-Type": "application/json"})
    assert r.status == 400 and "maximum parsing depth" in r.json()["error"]["message"], r


@pytest.mark.parametrize("junk", [
    b"\x00\xff\xfe garbage\r\n\r\n",
    b"GET /v1/health HTTP/9.9\r\n\r\n",
    b"POST /v1/call HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"POST /v1/call HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    b"GET " + b"/a" * 20000 + b" HTTP/1.1\r\n\r\n",
])
def test_junk_never_hurts_the_server(server, junk):
    s = server.raw_socket(timeout=10)
    try:
        s.sendall(junk)
        s.shutdown(socket.SHUT_WR)
        while s.recv(4096):
            pass
    except OSError:
        pass  # cut off: fine
    finally:
        s.close()
    assert server.request("GET", "/v1/health").status == 200


def test_keep_alive_serves_many_requests_on_one_connection(server):
    conn = server.connection()
    try:
        for i in range(5):
            r = server.call(req("python", "def f(x):\n    return x\n", "f", [i]), conn=conn)
            assert r.status == 200 and r.json()["result"] == i, r
            assert server.request("GET", "/v1/health", conn=conn).status == 200
    finally:
        conn.close()


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


def test_metrics(server):
    before = server.request("GET", "/metrics").body.decode()
    assert server.call(ADD).status == 200
    assert server.call(req("python", "def f():\n    raise ValueError('x')\n", "f", [])).status == 200
    assert server.request("GET", "/nope").status == 404
    r = server.request("GET", "/metrics")
    assert r.status == 200 and r.header("Content-Type").startswith("text/plain; version=0.0.4"), r
    text = r.body.decode()
    assert "# TYPE fnbox_http_requests_total counter" in text
    assert "# TYPE fnbox_http_request_duration_seconds histogram" in text

    def grew(name, by):
        old = metric(before, name) or 0
        assert metric(text, name) == old + by, (name, old, metric(text, name))

    grew('fnbox_http_requests_total{route="/v1/call",status="200"}', 2)
    grew('fnbox_http_requests_total{route="unmatched",status="404"}', 1)
    grew('fnbox_executions_total{status="success"}', 1)
    grew('fnbox_executions_total{status="error"}', 1)
    grew('fnbox_http_request_duration_seconds_count{route="/v1/call"}', 2)
    assert metric(text, "fnbox_executions_in_flight") == 0
    assert metric(text, "fnbox_executions_queued") == 0
    inf = metric(text, 'fnbox_http_request_duration_seconds_bucket{route="/v1/call",le="+Inf"}')
    assert inf == metric(text, 'fnbox_http_request_duration_seconds_count{route="/v1/call"}')


def test_log_has_one_line_per_request(server):
    path = f"/nope-{time.monotonic_ns()}"
    server.request("GET", path)
    server.call(ADD)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = server.lines()
        mine = [ln for ln in lines if ln.get("path") == path]
        if mine:
            break
        time.sleep(0.05)
    assert len(mine) == 1, mine
    line = mine[0]
    assert set(line) >= {"time", "method", "path", "status", "durationMs", "bytes"}, line
    assert line["method"] == "GET" and line["status"] == 404 and line["bytes"] > 0
    assert line["time"].endswith("Z") and "T" in line["time"]
    calls = [ln for ln in lines if ln.get("path") == "/v1/call" and ln.get("status") == 200]
    assert calls and all(ln["durationMs"] > 0 for ln in calls)


def test_tokens(secured):
    # health needs none
    assert secured.request("GET", "/v1/health").status == 200
    for path, method in (("/v1/call", "POST"), ("/metrics", "GET"), ("/nope", "GET")):
        r = secured.request(method, path, body=ADD if method == "POST" else None)
        message = error_of(r, 401, "Unauthorized")
        assert "Bearer" in message
        assert r.header("WWW-Authenticate", ).startswith("Bearer"), r.headers
        r = secured.request(method, path, body=ADD if method == "POST" else None, token=TOKEN + "x")
        error_of(r, 401, "Unauthorized")
        r = secured.request(method, path, body=ADD if method == "POST" else None,
                            headers={"Authorization": f"Basic {TOKEN}"})
        error_of(r, 401, "Unauthorized")
    r = secured.call(ADD, token=TOKEN)
    assert r.status == 200 and r.json()["result"] == 42, r
    r = secured.call(ADD, token=OTHER_TOKEN)  # every token of the file
    assert r.status == 200, r
    assert secured.request("GET", "/metrics", token=OTHER_TOKEN).status == 200
    # with a token, an unknown route is a 404 again
    error_of(secured.request("GET", "/nope", token=TOKEN), 404, "NotFound")
    # the token never appears in the log
    assert TOKEN not in secured.log_text() and OTHER_TOKEN not in secured.log_text()


def test_token_file_readable_by_others_is_warned_about(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\n")
    path.chmod(0o644)
    with Server("--token-file", str(path)) as srv:
        warnings = [ln for ln in srv.lines() if ln.get("event") == "warning"]
        assert warnings and "chmod 600" in warnings[0]["message"], srv.log_text()
        assert srv.call(ADD, token=TOKEN).status == 200


def test_unix_socket(tmp_path):
    path = str(tmp_path / "fnbox.sock")
    with Server(listen=f"unix:{path}") as srv:
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
        assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600  # without tokens, the file mode is the lock
        assert srv.request("GET", "/v1/health").json()["status"] == "ok"
        r = srv.call(ADD)
        assert r.status == 200 and r.json()["result"] == 42, r
    assert not os.path.exists(path)  # removed at exit (Server.__exit__ checks it too)


def test_stale_unix_socket_is_replaced(tmp_path):
    path = str(tmp_path / "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()  # the file stays, nobody listens: a server that died
    with Server(listen=f"unix:{path}") as srv:
        assert srv.request("GET", "/v1/health").status == 200


def serve_fails(*args, code=2):
    proc = run_cli(["serve", *args], timeout=20)
    err = proc.stderr.decode()
    assert proc.returncode == code, (args, proc.returncode, err)
    assert err.startswith("fnbox serve: "), err
    return err


@pytest.mark.parametrize("args, text", [
    (["--max-concurrency", "0"], "--max-concurrency '0': expected a whole number from 1 to 1024"),
    (["--max-concurrency", "1025"], "from 1 to 1024"),
    (["--max-concurrency", "-1"], "expected a whole number"),
    (["--max-queue", "x"], "--max-queue 'x': expected a whole number from 0 to 4096"),
    (["--max-body", "0"], "--max-body '0'"),
    (["--max-body", "268435457"], "from 1 to 268435456"),
    (["--grace", "-1"], "--grace '-1': expected seconds from 0 to 3600"),
    (["--grace", "nan"], "--grace 'nan'"),
    (["--grace=3601"], "--grace '3601'"),
    (["--listen"], "--listen needs a value"),
    (["--bogus"], "unknown option '--bogus'"),
    (["--max-sessions", "4097"], "--max-sessions"),
    (["--listen", "nohostport"], "expected HOST:PORT or unix:PATH"),
    (["--listen", "127.0.0.1:99999"], "the port must be 0 to 65535"),
    (["--listen", "0.0.0.0:0"], "is not a loopback address"),
    (["--listen", ":0"], "--token-file is required"),
    (["--token-file", "/nonexistent/tokens"], "--token-file /nonexistent/tokens: No such file"),
])
def test_bad_command_line_exits_2(args, text):
    err = serve_fails(*args)
    assert text in err, err


def test_bad_token_files_exit_2(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("\n  \n")
    empty.chmod(0o600)
    assert "no token in it" in serve_fails("--token-file", str(empty))
    short = tmp_path / "short"
    short.write_text("abc\n")
    short.chmod(0o600)
    err = serve_fails("--token-file", str(short))
    assert "line 1: a token is 16 to 256 characters" in err and "abc" not in err.split("characters")[1], err


def test_port_in_use_exits_1():
    with Server() as srv:
        err = serve_fails("--listen", f"127.0.0.1:{srv.port}", code=1)
        assert "Address already in use" in err, err


def test_any_address_with_tokens(token_file):
    with Server("--token-file", token_file, listen="0.0.0.0:0") as srv:
        assert srv.address.startswith("0.0.0.0:")
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10):
            pass
        assert srv.request("GET", "/v1/health").status == 200


def test_help():
    out = run_cli(["serve", "--help"]).stdout.decode()
    for flag in ("--listen", "--token-file", "--max-concurrency", "--max-queue", "--max-body", "--grace"):
        assert flag in out
    assert "serve" in run_cli(["--help"]).stdout.decode()


def test_defaults_in_the_log():
    with Server() as srv:
        line = next(ln for ln in srv.lines() if ln.get("event") == "listening")
        assert line["maxConcurrency"] == len(os.sched_getaffinity(0))
        assert line["maxQueue"] == 64 and line["maxBody"] == 256 * 1024 * 1024 and line["grace"] == 10
        assert line["tokens"] is False and line["address"].startswith("127.0.0.1:")
    # the default address is 127.0.0.1:8080 (only checked when that port is free here)
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", 8080))
    except OSError:
        return
    probe.close()
    proc = subprocess.Popen([FNBOX, "serve"], stderr=subprocess.PIPE)
    try:
        first = json.loads(proc.stderr.readline())
        assert first["event"] == "listening" and first["address"] == "127.0.0.1:8080", first
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert proc.returncode == 0
