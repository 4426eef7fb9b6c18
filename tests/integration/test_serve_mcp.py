"""`/mcp` on `fnbox serve` (MCP's streamable HTTP) with a plain HTTP client: the session life (initialize issues
Mcp-Session-Id, required afterwards, 404 once ended, DELETE ends it), the answers (JSON, or an event stream of
progress then the answer), the refusals (Origin, protocol version, content type, token scoping, batches, GET),
cancellation when the client hangs up, and a drain that leaves nothing. The official SDK's client is in
test_mcp_sdk.py."""
import json
import time

import pytest

from fnboxlib import host_pids_matching
from servelib import TOKEN, Server, assert_nothing_left, wait_for

ACCEPT = "application/json, text/event-stream"
OTHER = "other-token-0123456789abcdef"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens"
    tokens.write_text(f"{TOKEN}\n{OTHER}\n")
    tokens.chmod(0o600)
    with Server("--token-file", str(tokens), "--mcp-origin", "https://app.example") as srv:
        yield srv


def post(srv, msg, sid=None, token=TOKEN, accept="application/json", headers=None, raw=None):
    h = {"Accept": accept, "Content-Type": "application/json", **(headers or {})}
    if sid:
        h["Mcp-Session-Id"] = sid
    body = raw if raw is not None else json.dumps(msg).encode()
    return srv.request("POST", "/mcp", body=body, headers=h, token=token)


def initialize(srv, token=TOKEN, version="2025-06-18"):
    r = post(srv, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": version, "capabilities": {},
                              "clientInfo": {"name": "test", "version": "1"}}}, token=token)
    assert r.status == 200, r
    sid = r.header("Mcp-Session-Id")
    assert sid and len(sid) == 32, r.headers
    assert r.json()["result"]["protocolVersion"] == version
    assert post(srv, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid, token=token).status == 202
    return sid


def call(srv, sid, name, arguments, id=2, token=TOKEN, **kw):
    r = post(srv, {"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}}, sid, token=token, **kw)
    assert r.status == 200, r
    return r


def events(body):
    """The data of each `event: message` of an event stream, parsed."""
    out = []
    for block in body.decode().split("\n\n"):
        lines = block.strip().splitlines()
        if not lines:
            continue
        assert lines[0] == "event: message", block
        out.append(json.loads("".join(line[len("data: "):] for line in lines[1:])))
    return out


def end(srv, sid, token=TOKEN):
    return srv.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid}, token=token)


def test_session_life(server):
    sid = initialize(server)
    r = post(server, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, sid)
    names = [t["name"] for t in r.json()["result"]["tools"]]
    assert names == ["run_code", "call_function", "exec_command", "read_file", "write_file", "list_files",
                     "remove_file", "list_languages", "run_in_kernel"]
    r = call(server, sid, "write_file", {"path": "notes/a.txt", "content": "kept"})
    assert r.json()["result"]["structuredContent"] == {"path": "notes/a.txt", "size": 4}
    r = call(server, sid, "exec_command", {"command": "cat notes/a.txt"})
    assert r.json()["result"]["structuredContent"]["stdout"] == "kept"
    assert r.header("Mcp-Session-Id") == sid
    assert post(server, {"jsonrpc": "2.0", "id": 6, "method": "ping"}, sid).json() == \
        {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert end(server, sid).status == 204
    r = post(server, {"jsonrpc": "2.0", "id": 7, "method": "ping"}, sid)
    assert r.status == 404 and "initialize again" in r.json()["error"]["message"], r
    assert end(server, sid).status == 404


def test_reals_are_written_as_they_read(server):
    # jansson's 17 digits made 6.866578 into 6.8665779999999996 in structuredContent and the durations;
    # the answer now carries each real's shortest text that reads back (the same double).
    sid = initialize(server)
    try:
        code = "def f():\n    return [0.1, 6.866578, 1e300, 3.0, 1/3, 0.1 + 0.2]"
        r = call(server, sid, "call_function", {"language": "python", "code": code})
        raw = r.body.decode()
        assert "[0.1,6.866578,1e300,3.0,0.3333333333333333,0.30000000000000004]" in raw, raw
        usage = raw[raw.index('"usage":'):]  # the durations too: 10 digits at most, as fnbox wrote them
        assert "0000000000" not in usage and "9999999999" not in usage, usage
        res = r.json()["result"]
        assert res["structuredContent"]["result"] == [0.1, 6.866578, 1e300, 3.0, 1 / 3, 0.1 + 0.2], res
        text = res["content"][0]["text"]
        assert "result: [0.1,6.866578,1e300,3.0,0.3333333333333333,0.30000000000000004]" in text, text
    finally:
        end(server, sid)


def test_sessions_are_separate_and_owned(server):
    a, b = initialize(server), initialize(server)
    call(server, a, "write_file", {"path": "secret.txt", "content": "a's"})
    r = call(server, b, "read_file", {"path": "secret.txt"})
    assert r.json()["result"]["isError"] is True and "no such file" in r.json()["result"]["content"][0]["text"]
    # another token does not see a's session at all
    r = post(server, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, a, token=OTHER)
    assert r.status == 404, r
    assert end(server, a, token=OTHER).status == 404
    assert post(server, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, a, token=None).status == 401
    for sid in (a, b):
        assert end(server, sid).status == 204


def test_stream_carries_progress_then_the_answer(server):
    sid = initialize(server)
    t0 = time.monotonic()
    r = post(server, {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "exec_command", "_meta": {"progressToken": "tok"},
                                 "arguments": {"command": "echo one; sleep 1; echo two >&2; sleep 0.3; echo three"}}},
             sid, accept=ACCEPT)
    assert r.status == 200 and r.header("Content-Type") == "text/event-stream", r
    evs = events(r.body)
    progress = [e for e in evs if e.get("method") == "notifications/progress"]
    assert [e["params"]["message"] for e in progress] == ["one\n", "[stderr] two\n", "three\n"], evs
    assert [e["params"]["progress"] for e in progress] == sorted(e["params"]["progress"] for e in progress)
    assert all(e["params"]["progressToken"] == "tok" for e in progress)
    assert evs[-1]["id"] == 9 and evs[-1]["result"]["structuredContent"]["stdout"] == "one\nthree\n", evs
    assert time.monotonic() - t0 >= 1
    # a request that is not a tools/call is plain JSON even when the stream is accepted
    r = post(server, {"jsonrpc": "2.0", "id": 10, "method": "ping"}, sid, accept=ACCEPT)
    assert r.header("Content-Type") == "application/json" and r.json()["id"] == 10
    end(server, sid)


def test_hang_up_cancels_the_run(server):
    sid = initialize(server)
    mark = "mcp-hangup-7f3a"
    c = server.connection(timeout=30)
    body = json.dumps({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                       "params": {"name": "exec_command",
                                  "arguments": {"command": f": {mark}; while :; do :; done", "timeout": 60}}})
    c.request("POST", "/mcp", body=body, headers={"Accept": ACCEPT, "Content-Type": "application/json",
                                                  "Mcp-Session-Id": sid, "Authorization": f"Bearer {TOKEN}"})
    wait_for(lambda: host_pids_matching(mark), what="the busy loop started")
    c.close()
    wait_for(lambda: not host_pids_matching(mark), timeout=10, what="the busy loop killed")
    # the session goes on
    r = call(server, sid, "exec_command", {"command": "echo alive"}, id=12)
    assert r.json()["result"]["structuredContent"]["stdout"] == "alive\n"
    end(server, sid)


def test_cancelled_notification_kills_the_run(server):
    sid = initialize(server)
    mark = "mcp-cancel-41b9"
    c = server.connection(timeout=30)
    body = json.dumps({"jsonrpc": "2.0", "id": "run-1", "method": "tools/call",
                       "params": {"name": "exec_command",
                                  "arguments": {"command": f": {mark}; while :; do :; done", "timeout": 60}}})
    c.request("POST", "/mcp", body=body, headers={"Accept": "application/json", "Content-Type": "application/json",
                                                  "Mcp-Session-Id": sid, "Authorization": f"Bearer {TOKEN}"})
    wait_for(lambda: host_pids_matching(mark), what="the busy loop started")
    r = post(server, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": "run-1", "reason": "enough"}}, sid)
    assert r.status == 202
    wait_for(lambda: not host_pids_matching(mark), timeout=10, what="the busy loop killed")
    resp = c.getresponse()
    doc = json.loads(resp.read())
    assert doc["id"] == "run-1" and "cancelled" in doc["error"]["message"], doc
    c.close()
    end(server, sid)


def test_refusals(server):
    sid = initialize(server)
    # a browser page elsewhere (DNS rebinding and the like): 403; a listed or loopback origin: fine
    r = post(server, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid, headers={"Origin": "http://evil.example"})
    assert r.status == 403 and "Origin" in r.json()["error"]["message"], r
    for origin in ("https://app.example", "http://localhost:3000", "http://127.0.0.1"):
        assert post(server, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid,
                    headers={"Origin": origin}).status == 200, origin
    r = post(server, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, sid, headers={"MCP-Protocol-Version": "1999-01-01"})
    assert r.status == 400 and "MCP-Protocol-Version" in r.json()["error"]["message"], r
    r = post(server, None, sid, headers={"Content-Type": "text/plain"}, raw=b"{}")
    assert r.status == 400 and "Content-Type" in r.json()["error"]["message"], r
    r = post(server, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert r.status == 400 and "Mcp-Session-Id" in r.json()["error"]["message"], r
    r = post(server, [{"jsonrpc": "2.0", "id": 3, "method": "ping"}], sid)
    assert r.status == 400 and r.json()["error"]["code"] == -32600 and "batch" in r.json()["error"]["message"], r
    r = post(server, None, sid, raw=b"{not json")
    assert r.status == 400 and r.json()["error"]["code"] == -32700, r
    r = post(server, {"jsonrpc": "2.0", "id": 4, "method": "server/discover"}, sid)
    assert r.status == 200 and r.json()["error"]["code"] == -32601, r
    r = call(server, sid, "no_such_tool", {}, id=5)
    assert r.json()["error"]["code"] == -32602, r
    r = server.request("GET", "/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": sid}, token=TOKEN)
    assert r.status == 405 and "POST" in r.header("Allow"), r
    r = server.request("DELETE", "/mcp", token=TOKEN)
    assert r.status == 400, r
    end(server, sid)


@pytest.mark.parametrize("accept", [ACCEPT, "application/json"])
def test_drain_ends_sessions_and_leaves_nothing(accept):
    """SIGTERM while a tool call runs: the grace passes, the call is cancelled, every MCP session ends."""
    mark = "mcp-drain-93c1"
    with Server("--grace", "1") as srv:
        sid = initialize(srv, token=None)
        c = srv.connection(timeout=30)
        body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "exec_command",
                                      "arguments": {"command": f"sleep 300 & : {mark}; sleep 300", "timeout": 600}}})
        c.request("POST", "/mcp", body=body, headers={"Accept": accept, "Content-Type": "application/json",
                                                      "Mcp-Session-Id": sid})
        wait_for(lambda: host_pids_matching(mark), what="the command started")
        t0 = time.monotonic()
        srv.signal()
        assert srv.wait(timeout=60) == 0
        assert time.monotonic() - t0 < 15, "the drain waited for the 300 s command"
        assert any(line.get("event") == "cancelling" for line in srv.lines()), srv.log_text()
        c.close()
        assert not host_pids_matching(mark)
        assert_nothing_left(srv, mark)
        assert any(line.get("event") == "MCP sessions closed" for line in srv.lines()), srv.log_text()
