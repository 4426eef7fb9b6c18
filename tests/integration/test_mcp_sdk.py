"""fnbox's MCP server driven by the official MCP TypeScript SDK client (@modelcontextprotocol/sdk): over stdio
(`fnbox mcp`, StdioClientTransport) and over streamable HTTP (`/mcp` on one `fnbox serve` for the module,
with a bearer token, StreamableHTTPClientTransport). tests/integration/mcp/sdk_client.mjs runs one scenario
and prints what it observed as one JSON object; the assertions are here. The tests shared by both transports
are parametrized over `via` (stdio, http); a few are one transport's own (stdin EOF; DELETE, a session left
open, the server's stop).

Needs node on PATH and the SDK under tests/integration/mcp/node_modules (scripts/install-deps.sh runs
`npm ci` there); without them the tests skip, and fail in CI. The SDK itself checks the protocol's shapes:
every response is parsed with its schemas, and once the client has listed the tools it validates each
successful call's structuredContent against the tool's outputSchema (a mismatch makes the call throw, which
fails the test).
"""
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from fnboxlib import FNBOX, assert_no_survivors, check_sanitizers, host_pids_matching, marker, require_binary, \
    skip_unless_ci
from servelib import TOKEN, Server, assert_nothing_left, wait_for

MCP_DIR = Path(__file__).resolve().parent / "mcp"
SCRIPT = MCP_DIR / "sdk_client.mjs"
SDK = MCP_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"

TOOLS = {"run_code", "call_function", "exec_command", "read_file", "write_file", "list_files", "remove_file",
         "list_languages", "run_in_kernel"}
READ_ONLY = {"read_file", "list_files", "list_languages"}
RUN_CODE_LANGUAGES = {"python", "javascript", "ruby", "php", "c", "cpp", "sh", "bash"}

_observed = {}  # (scenario, environment) -> its observations (parametrized tests share one run)


class Via:
    """How the SDK client reaches fnbox: "stdio" (it spawns `$FNBOX mcp`) or "http" (`/mcp` on server)."""

    def __init__(self, name, server=None):
        self.name, self.server = name, server

    @property
    def http(self):
        return self.name == "http"

    def env(self):
        if not self.http:
            return {}
        return {"FNBOX_MCP_TRANSPORT": "http", "FNBOX_MCP_URL": f"http://{self.server.host}:{self.server.port}/mcp",
                "FNBOX_MCP_TOKEN": TOKEN}


STDIO = Via("stdio")


def write_tokens(directory):
    tokens = Path(directory) / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    return str(tokens)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """The module's `fnbox serve` for the HTTP runs (a bearer token required); leaving the module stops it and
    checks it (exit 0, no sanitizer report, no cgroup left)."""
    with Server("--token-file", write_tokens(tmp_path_factory.mktemp("mcp-sdk"))) as srv:
        yield srv


@pytest.fixture(params=["stdio", "http"])
def via(request):
    if request.param == "stdio":
        return STDIO
    return Via("http", request.getfixturevalue("http_server"))


def node_command(name, via, timeout, env_extra):
    """The argv and environment that run sdk_client.mjs SCENARIO (skips without node or the SDK)."""
    require_binary()
    node = shutil.which("node")
    if node is None:
        skip_unless_ci("node is not on PATH (the MCP SDK client runs on it)")
    if not SDK.is_file():
        skip_unless_ci(f"the MCP SDK is not installed under {MCP_DIR} (scripts/install-deps.sh, or "
                       f"`npm ci --prefix {MCP_DIR}`)")
    env = dict(os.environ, FNBOX=FNBOX, FNBOX_TEST_WATCHDOG_MS=str(int((timeout - 5) * 1000)), **via.env(),
               **env_extra)
    return [node, str(SCRIPT), name], env


def observations(name, via, returncode, stdout, stderr):
    """What a finished sdk_client.mjs printed (fails the test if it threw or printed no single JSON object)."""
    stderr = stderr.decode("utf-8", "replace")  # the client's, and over stdio the server's (inherited)
    check_sanitizers(stderr)
    if via.server is not None:
        check_sanitizers(via.server.log_text())
    assert returncode == 0, f"sdk_client.mjs exited {returncode}; stderr: {stderr[-3000:]}"
    try:
        observed = json.loads(stdout)
    except json.JSONDecodeError as e:
        pytest.fail(f"sdk_client.mjs printed no single JSON object ({e}): {stdout[:2000]!r}; "
                    f"stderr: {stderr[-3000:]}")
    if not observed.get("ok"):
        pytest.fail(f"scenario {name} ({via.name}) threw: {observed.get('error')} (code {observed.get('code')!r}, "
                    f"{observed.get('name')})\n{observed.get('stack', '')[:1500]}\nstderr: {stderr[-3000:]}")
    assert observed["transport"] == via.name, observed["transport"]
    return observed


def scenario(name, via=STDIO, timeout=45, **env_extra):
    """Run sdk_client.mjs SCENARIO against $FNBOX (stdio) or via.server (http); return its observations."""
    key = (name, via.name, tuple(sorted(env_extra.items())))
    if key in _observed:
        return _observed[key]
    argv, env = node_command(name, via, timeout, env_extra)
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"scenario {name} ({via.name}) did not end within {timeout}s; stdout {e.stdout!r:.2000}; "
                    f"stderr {e.stderr!r:.3000}")
    _observed[key] = observations(name, via, proc.returncode, proc.stdout, proc.stderr)
    return _observed[key]


def is_session_id(sid):
    return isinstance(sid, str) and len(sid) == 32 and all(c in "0123456789abcdef" for c in sid.lower())


def mcp_ping(srv, sid, token=TOKEN):
    """A raw `ping` POSTed to srv's /mcp in MCP session sid (a servelib Response)."""
    return srv.request("POST", "/mcp", body={"jsonrpc": "2.0", "id": "raw-ping", "method": "ping"}, token=token,
                       headers={"Accept": "application/json, text/event-stream", "Mcp-Session-Id": sid}, timeout=10)


def mcp_delete(srv, sid, token=TOKEN):
    return srv.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid}, token=token, timeout=10)


def show(res):
    return json.dumps(res, ensure_ascii=False)[:2500]


def text_of(res):
    """A call's content must be exactly one text item; its text."""
    assert "rejected" not in res, f"the call was rejected: {show(res)}"
    content = res["content"]
    assert len(content) == 1 and content[0]["type"] == "text" and isinstance(content[0]["text"], str), \
        f"content is not one text item: {show(res)}"
    return content[0]["text"]


def succeeded(res):
    """A call that worked: not rejected, isError false or absent, one text item; its structuredContent."""
    text_of(res)
    assert not res["isError"], f"isError: {show(res)}"
    assert isinstance(res.get("structuredContent"), dict), f"no structuredContent: {show(res)}"
    return res["structuredContent"]


def errored(res):
    """A call answered with a result whose isError is true; its text."""
    text = text_of(res)
    assert res["isError"] is True, f"isError is not true: {show(res)}"
    return text


def test_initialize(via):
    o = scenario("initialize", via)
    assert o["serverVersion"]["name"] == "fnbox", show(o["serverVersion"])
    assert isinstance(o["serverVersion"].get("version"), str) and o["serverVersion"]["version"]
    caps = o["capabilities"]
    assert set(caps) == {"tools", "logging"}, show(caps)
    assert isinstance(caps["tools"], dict) and isinstance(caps["logging"], dict), show(caps)
    assert o["initResult"]["protocolVersion"] == "2025-11-25", show(o["initResult"])
    assert o["ping"] == {}, show(o["ping"])
    assert o["setLoggingLevel"] == {}, show(o["setLoggingLevel"])
    answered = {n["requested"]: n.get("answered") for n in o["negotiated"]}
    assert answered == {"2025-11-25": "2025-11-25", "2025-06-18": "2025-06-18", "2025-03-26": "2025-03-26",
                        "2024-11-05": "2025-11-25", "1999-01-01": "2025-11-25"}, show(o["negotiated"])
    # after each handshake the session works (over HTTP the SDK now sends MCP-Protocol-Version: the answer)
    assert all(n.get("ping") == {} for n in o["negotiated"]), show(o["negotiated"])
    if via.http:
        ids = [o["sessionId"]] + [n["sessionId"] for n in o["negotiated"]]
        assert all(is_session_id(i) for i in ids) and len(set(ids)) == len(ids), ids
        assert o["protocolVersionHeader"] == "2025-11-25", o["protocolVersionHeader"]
        # closing each negotiated client ended its MCP session (DELETE accepted: the SDK forgot the id)
        assert all(n["close"]["sessionIdAfter"] is None for n in o["negotiated"]), show(o["negotiated"])
        for sid in ids[1:]:
            assert mcp_ping(via.server, sid).status == 404, sid


def test_list_tools(via):
    tools = {t["name"]: t for t in scenario("list_tools", via)["tools"]}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert isinstance(tool.get("description"), str) and tool["description"].strip(), name
        for key in ("inputSchema", "outputSchema"):
            assert tool.get(key, {}).get("type") == "object", f"{name}.{key}: {show(tool.get(key))}"
        assert tool["inputSchema"].get("additionalProperties") is False, f"{name}: {show(tool['inputSchema'])}"
        ann = tool.get("annotations") or {}
        assert ann.get("openWorldHint") is False, f"{name}: {show(ann)}"
        if name in READ_ONLY:
            assert ann.get("readOnlyHint") is True, f"{name}: {show(ann)}"
    for name in ("exec_command", "write_file", "remove_file"):
        assert tools[name]["annotations"].get("readOnlyHint") is not True, name
    expected = {
        "run_code": ({"language", "code"}, {"language", "code", "stdin", "timeout"}),
        "call_function": ({"language", "code"}, {"language", "code", "functionName", "args", "kwargs", "timeout"}),
        "exec_command": ({"command"}, {"command", "cwd", "timeout"}),
        "read_file": ({"path"}, {"path"}),
        "write_file": ({"path", "content"}, {"path", "content", "encoding"}),
        "list_files": (set(), {"path"}),
        "remove_file": ({"path"}, {"path"}),
        "list_languages": (set(), set()),
        "run_in_kernel": ({"code"}, {"code", "language", "timeout", "restart"}),
    }
    for name, (required, properties) in expected.items():
        schema = tools[name]["inputSchema"]
        assert set(schema.get("required", [])) == required, f"{name}: {show(schema)}"
        assert properties <= set(schema.get("properties", {})), f"{name}: {show(schema)}"
    assert RUN_CODE_LANGUAGES <= set(tools["run_code"]["inputSchema"]["properties"]["language"]["enum"])
    assert set(tools["write_file"]["inputSchema"]["properties"]["encoding"]["enum"]) == {"utf8", "base64"}


def test_list_languages(via):
    sc = succeeded(scenario("list_languages", via)["languages"])
    for lang in sc["languages"]:
        assert isinstance(lang["name"], str) and isinstance(lang["aliases"], list) and "version" in lang, show(lang)
    known = {name for lang in sc["languages"] for name in [lang["name"], *lang["aliases"]]}
    assert {"python", "javascript", "ruby", "php", "c", "cpp", "sh", "bash"} <= known, show(sc)


def test_run_code(via):
    o = scenario("run_code", via)
    sc = succeeded(o["python"])
    assert (sc["status"], sc["exitCode"], sc["stdout"], sc["stderr"]) == ("success", 0, "42\n", ""), show(sc)
    assert sc["truncated"] == {"stdout": False, "stderr": False}, show(sc)
    assert "42" in text_of(o["python"])
    errored(o["exit3"])
    sc = o["exit3"]["structuredContent"]
    assert sc["exitCode"] == 3 and sc["status"] != "success" and sc["stdout"] == "before\n", show(sc)
    assert succeeded(o["stdin"])["stdout"] == "SHOUT\n"
    assert succeeded(o["javascript"])["stdout"] == "2,4,6\n"
    sc = succeeded(o["sh"])
    assert (sc["stdout"], sc["stderr"]) == ("sh-ok\n", "to-err\n"), show(sc)
    assert "left-behind.txt" in succeeded(o["leave"])["stdout"]
    assert "No such file" in succeeded(o["look"])["stdout"], "run_code runs share files: " + show(o["look"])


def test_call_function(via):
    o = scenario("call_function", via)
    sc = succeeded(o["add"])
    assert (sc["status"], sc["success"], sc["result"]) == ("success", True, 5), show(sc)
    sc = succeeded(o["kwargs"])
    assert sc["result"] == {"hi": "Ada!"} and sc["stdout"] == "side\n", show(sc)
    assert succeeded(o["javascript"])["result"] == 42
    text = errored(o["raises"])
    sc = o["raises"]["structuredContent"]
    assert sc["success"] is False and sc["status"] == "error", show(sc)
    assert sc["error"]["type"] == "ValueError" and "bad value" in sc["error"]["message"], show(sc)
    assert "ValueError" in text


def test_run_in_kernel(via):
    o = scenario("run_in_kernel", via)
    sc = succeeded(o["set"])
    assert (sc["status"], sc["result"], sc["kernelRestarted"]) == ("success", 42, False), show(sc)
    sc = succeeded(o["get"])
    assert (sc["result"], sc["stdout"]) == ({"x": 6}, "x is 6\n"), show(sc)
    assert '{"x":6}' in text_of(o["get"])
    text = errored(o["raises"])
    assert o["raises"]["structuredContent"]["error"]["type"] == "ValueError" and "ValueError" in text
    assert succeeded(o["javascript"])["result"] == 5


def test_files_roundtrip(via):
    o = scenario("files_roundtrip", via)
    text = "hello from write_file\nline two é\n"
    sc = succeeded(o["writeText"])
    assert sc["path"].endswith("notes/deep/a.txt") and sc["size"] == len(text.encode()), show(sc)
    assert succeeded(o["catText"])["stdout"] == text
    for key in ("readText", "readAbsolute"):
        sc = succeeded(o[key])
        assert (sc["content"], sc["encoding"], sc["size"]) == (text, "utf8", len(text.encode())), show(sc)
        assert sc["path"].endswith("notes/deep/a.txt") and isinstance(sc["mimeType"], str) and sc["mimeType"], show(sc)
    assert succeeded(o["readShellFile"])["content"] == "made by sh"
    assert succeeded(o["writeBinary"])["size"] == 256
    wc, sha = succeeded(o["checkBinary"])["stdout"].splitlines()
    assert wc.strip() == "256" and sha.split()[0] == o["binaryExpectedSha256"], show(o["checkBinary"])
    sc = succeeded(o["readBinary"])
    assert sc["encoding"] == "base64" and sc["size"] == 256, show(sc)
    assert o["binaryRoundTrip"] is True, f"read back {o.get('binaryBackLength')} bytes, not the 256 written"
    assert succeeded(o["cwd"])["stdout"] == "/workspace\n"
    out = succeeded(o["cwdOption"])["stdout"].splitlines()
    assert out[0] == "/workspace/notes/deep" and "a.txt" in out[1:], show(o["cwdOption"])


def test_list_and_remove(via):
    o = scenario("list_remove", via)
    for key in ("write1", "write2", "write3"):
        succeeded(o[key])
    sc = succeeded(o["listDir"])
    entries = {e["name"]: e for e in sc["entries"]}
    assert set(entries) == {"one.txt", "two.txt", "sub"}, show(sc)
    assert (entries["one.txt"]["isDir"], entries["one.txt"]["size"]) == (False, 1), show(sc)
    assert (entries["two.txt"]["isDir"], entries["two.txt"]["size"]) == (False, 2), show(sc)
    assert entries["sub"]["isDir"] is True, show(sc)
    root = {e["name"]: e for e in succeeded(o["listRoot"])["entries"]}
    assert root.get("lr", {}).get("isDir") is True, show(o["listRoot"])
    sc = succeeded(o["remove"])
    assert sc["removed"] is True and sc["path"].endswith("lr/one.txt"), show(sc)
    assert {e["name"] for e in succeeded(o["listAfter"])["entries"]} == {"two.txt", "sub"}
    for key in ("readRemoved", "readNever"):
        assert "not found" in errored(o[key]).lower(), show(o[key])
    assert succeeded(o["lsAfter"])["stdout"] == "sub\ntwo.txt\n"


def test_two_clients_do_not_share_files(via):
    mark = marker()
    o = scenario("isolation", via, FNBOX_TEST_MARKER=mark)
    if via.http:  # two MCP sessions of one server
        assert None not in o["sessionIds"] and len(set(o["sessionIds"])) == 2, o["sessionIds"]
    else:  # two server processes
        assert len(set(o["serverPids"])) == 2, o["serverPids"]
    succeeded(o["aWrite"])
    succeeded(o["aExec"])
    assert "only for A" not in errored(o["bRead"]), show(o["bRead"])
    names = [e["name"] for e in succeeded(o["bList"])["entries"]]
    assert not [n for n in names if mark in n], names
    b_exec = o["bExec"]["structuredContent"]
    assert mark not in b_exec["stdout"] and "only for A" not in b_exec["stdout"], show(b_exec)
    assert b_exec["exitCode"] != 0, show(b_exec)
    assert succeeded(o["aReadBack"])["content"] == "only for A"


def test_unknown_tool_is_invalid_params(via):
    o = scenario("unknown_tool", via)
    assert o["unknown"].get("rejected", {}).get("code") == -32602, show(o["unknown"])
    assert succeeded(o["after"])["stdout"] == "still-here\n"


@pytest.mark.parametrize("case, field", [
    ("cobol", "language"),
    ("missingCode", "code"),
    ("wrongType", "timeout"),
    ("unknownProperty", "bogus"),
    ("missingCommand", "command"),
    ("badEncoding", "encoding"),
])
def test_bad_arguments_are_tool_errors(via, case, field):
    o = scenario("bad_arguments", via)
    assert field in errored(o[case]), show(o[case])
    assert succeeded(o["after"])["stdout"] == "still-here\n"


def test_progress_carries_output_as_it_comes(via):
    o = scenario("progress", via)
    sc = succeeded(o["result"])
    assert sc["stdout"] == "tick1\ntick2\ntick3\n", show(sc)
    assert o["progressToken"] is not None
    notes = o["progress"]
    assert len(notes) >= 2, f"{len(notes)} progress notifications before the result: {show(o)}"
    values = [n["progress"] for n in notes]
    assert all(b > a for a, b in zip(values, values[1:])), f"progress must increase: {values}"
    messages = "".join(n.get("message") or "" for n in notes)
    assert "tick1" in messages, show(notes)
    first = next(n for n in notes if "tick1" in (n.get("message") or ""))
    assert first["atMs"] < o["resultAtMs"] - 1000, \
        f"tick1 arrived at {first['atMs']} ms, the result at {o['resultAtMs']} ms"


def test_progress_heartbeat_during_a_silent_run(via):
    o = scenario("heartbeat", via)
    assert succeeded(o["result"])["stdout"] == "done\n"
    times = [n["atMs"] for n in o["progress"]]
    assert times and times[0] <= 5600, f"no progress within the first 5 s of a 7 s silent run: {show(o)}"
    values = [n["progress"] for n in o["progress"]]
    assert all(b > a for a, b in zip(values, values[1:])), f"progress must increase: {values}"


def test_cancel_kills_the_command_and_the_client_goes_on(via):
    mark = marker()
    o = scenario("cancel", via, FNBOX_TEST_MARKER=mark)
    assert o["before"], "the busy loop was not running when the call was aborted"
    # SDK 1.32 rejects an aborted request at once with McpError(-32001, "AbortError: ..."), not the bare reason.
    rejected = o["outcome"].get("rejected") or {}
    assert "AbortError" in rejected.get("message", "") and o["outcome"]["ms"] < 3000, show(o["outcome"])
    assert o["cancelSent"] and o["cancelSent"][0].get("requestId") is not None, show(o["cancelSent"])
    assert o["cleanup"]["goneAfterMs"] is not None and o["cleanup"]["goneAfterMs"] <= 3000, \
        f"the busy loop outlived the cancellation: {show(o['cleanup'])}"
    assert not host_pids_matching(mark)
    assert succeeded(o["after"])["stdout"] == "alive\n"
    # no answer to a cancelled request (over HTTP its event stream ends without one)
    assert o["responsesToCancelled"] == [], show(o["responsesToCancelled"])


def test_timeout(via):
    o = scenario("timeout", via)
    text = errored(o["result"])
    sc = o["result"]["structuredContent"]
    assert (sc["status"], sc["exitCode"]) == ("timeout", 124), show(sc)
    assert "early" in sc["stdout"], show(sc)
    assert o["result"]["ms"] < 15000, f"a 1 s timeout took {o['result']['ms']} ms"
    assert "timeout" in text.lower(), text


def test_stdin_eof_ends_the_server_and_its_session():
    mark = marker()
    o = scenario("stdin_eof", FNBOX_TEST_MARKER=mark)
    assert succeeded(o["background"])["stdout"] == "started\n"
    assert o["before"], "the command was not running when the client closed"
    close = o["close"]
    assert close["signalCode"] is None and close["closeMs"] < 2000, \
        f"the server did not end on stdin EOF by itself (the SDK signals it after 2 s): {show(close)}"
    assert close["exitCode"] == 0, show(close)
    # the running call was cut: answered terminated (the server ends its runs so), or the connection closed first
    pending = o["pending"]
    assert "rejected" in pending or (pending.get("isError") and
                                     pending["structuredContent"]["status"] == "terminated"), show(pending)
    assert o["cleanup"]["goneAfterMs"] is not None, f"left after the server ended: {show(o['cleanup'])}"
    assert_no_survivors(mark)
    assert_no_survivors(o["sleeper"], grace=0)


def test_output_cap_and_output_file(via):
    o = scenario("output_cap", via)
    sc = succeeded(o["big"])
    assert sc["truncated"]["stdout"] is True and sc["truncated"]["stderr"] is False, show(sc)
    assert o["stdoutLength"] < 100000, o["stdoutLength"]
    assert o["big"]["content"][0]["textLength"] < 100000, show(o["big"])
    assert isinstance(sc.get("outputFile"), str) and sc["outputFile"], show(sc)
    rf = succeeded(o["readOutputFile"])
    assert rf["size"] == 100000, show(rf)
    assert succeeded(o["wcOutputFile"])["stdout"].strip() == "100000"
    small = succeeded(o["small"])
    assert small["stdout"] == "small\n" and small["truncated"]["stdout"] is False, show(small)
    assert not small.get("outputFile"), show(small)


# ---- streamable HTTP only ----

def test_http_terminate_session_ends_it_and_close_alone_does_not(http_server):
    via = Via("http", http_server)
    o = scenario("session_end", via)
    succeeded(o["aWrite"])
    assert is_session_id(o["terminatedId"]) and o["terminate"] == "ok", show(o)
    assert o["sessionIdAfterTerminate"] is None
    # the same client goes on without a session id: 400 (the SDK rejects with StreamableHTTPError)
    rejected = o["callAfterTerminate"].get("rejected") or {}
    assert rejected.get("code") == 400 and "Mcp-Session-Id" in rejected.get("message", ""), \
        show(o["callAfterTerminate"])
    # a transport resuming the ended session: 404
    rejected = o["resumeTerminated"].get("rejected") or {}
    assert rejected.get("code") == 404 and "initialize again" in rejected.get("message", ""), \
        show(o["resumeTerminated"])
    r = mcp_ping(http_server, o["terminatedId"])
    assert r.status == 404 and "initialize again" in r.json()["error"]["message"], r
    assert mcp_delete(http_server, o["terminatedId"]).status == 404
    # Client.close() alone sends nothing (SDK 1.32.2): the session lives on, files and all, until a DELETE
    succeeded(o["bWrite"])
    assert is_session_id(o["closedId"]) and o["closedId"] != o["terminatedId"], show(o)
    assert o["bClose"]["sessionIdAfter"] == o["closedId"], show(o["bClose"])
    assert succeeded(o["resumeClosed"])["content"] == "from b", show(o["resumeClosed"])
    r = mcp_ping(http_server, o["closedId"])
    assert r.status == 200 and r.json() == {"jsonrpc": "2.0", "id": "raw-ping", "result": {}}, r
    assert mcp_ping(http_server, o["closedId"], token="not-the-token-0123456789abcdef").status == 401
    assert mcp_delete(http_server, o["closedId"]).status == 204
    assert mcp_ping(http_server, o["closedId"]).status == 404


def server_stop_run(tmp_path):
    """The server_stop scenario against a server of its own (--grace 1), which the Python side stops with SIGTERM
    once the scenario's command runs; run once for the tests below: (observations, server, stop seconds,
    marker)."""
    if "server_stop" in _observed:
        return _observed["server_stop"]
    mark = marker()
    srv = Server("--token-file", write_tokens(tmp_path), "--grace", "1")
    via = Via("http", srv)
    timeout = 45
    argv, env = node_command("server_stop", via, timeout, {"FNBOX_TEST_MARKER": mark})
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        try:
            wait_for(lambda: host_pids_matching(mark) or proc.poll() is not None, timeout=20,
                     what="the scenario's command running")
            assert proc.poll() is None and host_pids_matching(mark), \
                f"the command is not running; scenario: {proc.communicate(timeout=10)}"
            t0 = time.monotonic()
            assert srv.stop(timeout=30) == 0, srv.log_text()[-3000:]
            stop_s = time.monotonic() - t0
        finally:
            if srv.exit_code is None:
                srv.stop(timeout=30)
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _observed["server_stop"] = (observations("server_stop", via, proc.returncode, stdout, stderr), srv, stop_s, mark)
    return _observed["server_stop"]


def test_http_server_stop_with_open_sessions_leaves_nothing(tmp_path):
    """SIGTERM while the SDK client has two MCP sessions open (one idle with a file, one with a call in flight):
    the server exits 0 soon after its grace, kills the run, ends both MCP sessions, leaves no process or
    cgroup."""
    o, srv, stop_s, mark = server_stop_run(tmp_path)
    assert_nothing_left(srv, mark)
    assert stop_s < 6, f"the server took {stop_s:.1f}s to stop (--grace 1)"
    closed = [line for line in srv.lines() if line.get("event") == "MCP sessions closed"]
    assert closed and closed[0].get("count") == 2, srv.log_text()[-3000:]
    succeeded(o["idleWrite"])
    assert all(is_session_id(i) for i in o["sessionIds"]), o["sessionIds"]
    assert o["before"], "the command was not running"
    assert o["cleanup"]["goneAfterMs"] is not None, f"the command outlived the server: {show(o['cleanup'])}"
    assert "rejected" in o["afterStop"], show(o["afterStop"])


def test_http_server_stop_answers_the_call_in_flight(tmp_path):
    """The call running when the server stops is answered (docs/guide/server-api.md, Stopping: after the grace the rest are
    cancelled, "their results say terminated", and the server "waits for their answers to go out"): a result
    whose status is terminated, or a JSON-RPC error, on its event stream. Without an answer the SDK client
    waits for its request timeout (60 s by default) to learn that the call is over."""
    o = server_stop_run(tmp_path)[0]
    call = o["call"]
    assert call != "pending", ("the call in flight got no answer: its event stream ended without one (a JSON "
                               "POST gets a -32603 error instead); the SDK call stays pending until its timeout")
    if "rejected" in call:
        assert isinstance(call["rejected"].get("code"), int) and call["rejected"]["code"] < 0, show(call)
    else:
        assert call["structuredContent"]["status"] == "terminated", show(call)
