"""`fnbox mcp` driven by the official MCP TypeScript SDK client (@modelcontextprotocol/sdk, Client +
StdioClientTransport): tests/integration/mcp/sdk_client.mjs runs one scenario and prints what it observed as
one JSON object; the assertions are here.

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
from pathlib import Path

import pytest

from fnboxlib import FNBOX, assert_no_survivors, check_sanitizers, host_pids_matching, marker, require_binary, \
    skip_unless_ci

MCP_DIR = Path(__file__).resolve().parent / "mcp"
SCRIPT = MCP_DIR / "sdk_client.mjs"
SDK = MCP_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"

TOOLS = {"run_code", "call_function", "exec_command", "read_file", "write_file", "list_files", "remove_file",
         "list_languages"}
READ_ONLY = {"read_file", "list_files", "list_languages"}
RUN_CODE_LANGUAGES = {"python", "javascript", "ruby", "php", "c", "cpp", "sh", "bash"}

_observed = {}  # scenario name -> its observations (parametrized tests share one run)


def scenario(name, timeout=45, **env_extra):
    """Run sdk_client.mjs SCENARIO against $FNBOX; return its observations (fails the test if it threw)."""
    key = (name, tuple(sorted(env_extra.items())))
    if key in _observed:
        return _observed[key]
    require_binary()
    node = shutil.which("node")
    if node is None:
        skip_unless_ci("node is not on PATH (the MCP SDK client runs on it)")
    if not SDK.is_file():
        skip_unless_ci(f"the MCP SDK is not installed under {MCP_DIR} (scripts/install-deps.sh, or "
                       f"`npm ci --prefix {MCP_DIR}`)")
    env = dict(os.environ, FNBOX=FNBOX, FNBOX_TEST_WATCHDOG_MS=str(int((timeout - 5) * 1000)), **env_extra)
    try:
        proc = subprocess.run([node, str(SCRIPT), name], capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"scenario {name} did not end within {timeout}s; stdout {e.stdout!r:.2000}; "
                    f"stderr {e.stderr!r:.3000}")
    stderr = proc.stderr.decode("utf-8", "replace")  # the client's and the server's (inherited)
    check_sanitizers(stderr)
    assert proc.returncode == 0, f"sdk_client.mjs exited {proc.returncode}; stderr: {stderr[-3000:]}"
    try:
        observed = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        pytest.fail(f"sdk_client.mjs printed no single JSON object ({e}): {proc.stdout[:2000]!r}; "
                    f"stderr: {stderr[-3000:]}")
    if not observed.get("ok"):
        pytest.fail(f"scenario {name} threw: {observed.get('error')} (code {observed.get('code')!r}, "
                    f"{observed.get('name')})\n{observed.get('stack', '')[:1500]}\nstderr: {stderr[-3000:]}")
    _observed[key] = observed
    return observed


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


def test_initialize():
    o = scenario("initialize")
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


def test_list_tools():
    tools = {t["name"]: t for t in scenario("list_tools")["tools"]}
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
    }
    for name, (required, properties) in expected.items():
        schema = tools[name]["inputSchema"]
        assert set(schema.get("required", [])) == required, f"{name}: {show(schema)}"
        assert properties <= set(schema.get("properties", {})), f"{name}: {show(schema)}"
    assert RUN_CODE_LANGUAGES <= set(tools["run_code"]["inputSchema"]["properties"]["language"]["enum"])
    assert set(tools["write_file"]["inputSchema"]["properties"]["encoding"]["enum"]) == {"utf8", "base64"}


def test_list_languages():
    sc = succeeded(scenario("list_languages")["languages"])
    for lang in sc["languages"]:
        assert isinstance(lang["name"], str) and isinstance(lang["aliases"], list) and "version" in lang, show(lang)
    known = {name for lang in sc["languages"] for name in [lang["name"], *lang["aliases"]]}
    assert {"python", "javascript", "ruby", "php", "c", "cpp", "sh", "bash"} <= known, show(sc)


def test_run_code():
    o = scenario("run_code")
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


def test_call_function():
    o = scenario("call_function")
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


def test_files_roundtrip():
    o = scenario("files_roundtrip")
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


def test_list_and_remove():
    o = scenario("list_remove")
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


def test_two_clients_do_not_share_files():
    mark = marker()
    o = scenario("isolation", FNBOX_TEST_MARKER=mark)
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


def test_unknown_tool_is_invalid_params():
    o = scenario("unknown_tool")
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
def test_bad_arguments_are_tool_errors(case, field):
    o = scenario("bad_arguments")
    assert field in errored(o[case]), show(o[case])
    assert succeeded(o["after"])["stdout"] == "still-here\n"


def test_progress_carries_output_as_it_comes():
    o = scenario("progress")
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


def test_progress_heartbeat_during_a_silent_run():
    o = scenario("heartbeat")
    assert succeeded(o["result"])["stdout"] == "done\n"
    times = [n["atMs"] for n in o["progress"]]
    assert times and times[0] <= 5600, f"no progress within the first 5 s of a 7 s silent run: {show(o)}"
    values = [n["progress"] for n in o["progress"]]
    assert all(b > a for a, b in zip(values, values[1:])), f"progress must increase: {values}"


def test_cancel_kills_the_command_and_the_client_goes_on():
    mark = marker()
    o = scenario("cancel", FNBOX_TEST_MARKER=mark)
    assert o["before"], "the busy loop was not running when the call was aborted"
    # SDK 1.32 rejects an aborted request at once with McpError(-32001, "AbortError: ..."), not the bare reason.
    rejected = o["outcome"].get("rejected") or {}
    assert "AbortError" in rejected.get("message", "") and o["outcome"]["ms"] < 3000, show(o["outcome"])
    assert o["cancelSent"] and o["cancelSent"][0].get("requestId") is not None, show(o["cancelSent"])
    assert o["cleanup"]["goneAfterMs"] is not None and o["cleanup"]["goneAfterMs"] <= 3000, \
        f"the busy loop outlived the cancellation: {show(o['cleanup'])}"
    assert not host_pids_matching(mark)
    assert succeeded(o["after"])["stdout"] == "alive\n"


def test_timeout():
    o = scenario("timeout")
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
    assert "rejected" in o["pending"], f"the running call was answered, not cut: {show(o['pending'])}"
    assert o["cleanup"]["goneAfterMs"] is not None, f"left after the server ended: {show(o['cleanup'])}"
    assert_no_survivors(mark)
    assert_no_survivors(o["sleeper"], grace=0)


def test_output_cap_and_output_file():
    o = scenario("output_cap")
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
