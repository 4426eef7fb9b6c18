"""The MCP tool run_in_kernel (the client's session kernel, docs/internals/kernels.md) over both transports:
`fnbox mcp` (stdio, one process per client) and `/mcp` on `fnbox serve` (one MCP session per client). State
persists between one client's calls and is never another client's; an exception is an isError result naming
its type; a timeout or a notifications/cancelled interrupts the cell and the state survives; restart loses
it; bad arguments are isError results naming the argument; the tools config can switch the tool off."""
import json
import time

import pytest

from mcplib import Http, Stdio
from servelib import Server


@pytest.fixture(scope="module")
def http_server():
    with Server() as srv:
        yield srv


@pytest.fixture(params=["stdio", "http"])
def connect(request):
    """Opens clients of the parametrized transport; closes them (checking a clean exit) at the end."""
    clients = []

    def open_client():
        c = Stdio() if request.param == "stdio" else Http(request.getfixturevalue("http_server"))
        clients.append(c)
        return c
    yield open_client
    for c in clients:
        c.close()


_ids = iter(range(1, 1 << 30))


def kernel(client, **arguments):
    """run_in_kernel's result (the CallToolResult)."""
    doc = client.request("tools/call", {"name": "run_in_kernel", "arguments": arguments}, next(_ids))
    assert doc is not None and "result" in doc, doc
    return doc["result"]


def ok(result):
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_state_persists_and_the_text_is_compact(connect):
    c = connect()
    sc = ok(kernel(c, code="import math\nx = 40\nprint('set')\nx + 2"))
    assert (sc["status"], sc["result"], sc["stdout"], sc["kernelRestarted"]) == ("success", 42, "set\n", False), sc
    r = kernel(c, code="{'x': x, 'pi': round(math.pi, 2)}")
    assert ok(r)["result"] == {"x": 40, "pi": 3.14}
    assert '{"x":40,"pi":3.14}' in r["content"][0]["text"], r
    sc = ok(kernel(c, code="let n = 5; n * 2", language="javascript"))
    assert sc["result"] == 10, sc
    assert ok(kernel(c, code="n + 1", language="javascript"))["result"] == 6
    ok(kernel(c, code="r = 20", language="ruby"))
    assert ok(kernel(c, code="r * 2 + 2", language="ruby"))["result"] == 42
    ok(kernel(c, code="$p = 20;", language="php"))
    assert ok(kernel(c, code="$p * 2 + 2", language="php"))["result"] == 42


def test_two_clients_do_not_share_state(connect):
    a, b = connect(), connect()
    ok(kernel(a, code="secret = 'only for a'"))
    r = kernel(b, code="secret")
    assert r["isError"] is True and r["structuredContent"]["error"]["type"] == "NameError", r
    assert ok(kernel(a, code="secret"))["result"] == "only for a"


def test_exception_is_an_error_with_its_type(connect):
    c = connect()
    r = kernel(c, code="y = 1\nprint('before')\n1/0")
    assert r["isError"] is True, r
    sc = r["structuredContent"]
    assert (sc["status"], sc["error"]["type"], sc["stdout"]) == ("error", "ZeroDivisionError", "before\n"), sc
    assert "ZeroDivisionError" in r["content"][0]["text"]
    r = kernel(c, code="null.x", language="javascript")
    assert r["isError"] is True and r["structuredContent"]["error"]["type"] == "TypeError", r
    assert ok(kernel(c, code="y"))["result"] == 1


def test_timeout_interrupts_and_the_state_survives(connect):
    c = connect()
    ok(kernel(c, code="kept = [1, 2, 3]"))
    t0 = time.monotonic()
    r = kernel(c, code="while True: pass", timeout=1)
    assert time.monotonic() - t0 < 15
    assert r["isError"] is True, r
    sc = r["structuredContent"]
    assert (sc["status"], sc["kernelRestarted"]) == ("timeout", False), sc
    assert ok(kernel(c, code="kept"))["result"] == [1, 2, 3]


def test_restart_loses_the_state(connect):
    c = connect()
    ok(kernel(c, code="gone = 1"))
    r = kernel(c, code="gone", restart=True)
    assert r["isError"] is True and r["structuredContent"]["error"]["type"] == "NameError", r
    assert r["structuredContent"]["kernelRestarted"] is True
    assert ok(kernel(c, code="1 + 1", restart=False))["kernelRestarted"] is False


def test_restart_before_any_kernel_discards_nothing(connect):
    # kernelRestarted says a running kernel's state was lost: with no kernel yet, there was none to lose
    c = connect()
    assert ok(kernel(c, code="fresh = 1", restart=True))["kernelRestarted"] is False
    r = kernel(c, code="fresh", restart=True)
    assert r["structuredContent"]["error"]["type"] == "NameError" and r["structuredContent"]["kernelRestarted"], r


@pytest.mark.parametrize("arguments, field", [
    ({}, "code"),
    ({"code": "1", "language": "cobol"}, "language"),
    ({"code": 1}, "code"),
    ({"code": "1", "timeout": "soon"}, "timeout"),
    ({"code": "1", "timeout": 0}, "timeout"),
    ({"code": "1", "restart": "yes"}, "restart"),
    ({"code": "1", "bogus": True}, "bogus"),
])
def test_bad_arguments_name_the_field(connect, arguments, field):
    c = connect()
    r = kernel(c, **arguments)
    assert r["isError"] is True and "structuredContent" not in r, r
    assert field in r["content"][0]["text"], r


def test_cancel_interrupts_the_cell_and_the_state_survives(connect):
    c = connect()
    ok(kernel(c, code="kept = 'still here'"))
    answer = c.start("tools/call", {"name": "run_in_kernel",
                                    "arguments": {"code": "while True: pass", "timeout": 120}}, "busy-1")
    time.sleep(1.5)
    t0 = time.monotonic()
    c.notify("notifications/cancelled", {"requestId": "busy-1", "reason": "enough"})
    # one execute at a time per kernel: this one runs only once the loop was interrupted
    assert ok(kernel(c, code="kept"))["result"] == "still here"
    assert time.monotonic() - t0 < 15
    doc = answer(timeout=30)
    if isinstance(c, Stdio):
        assert doc is None, f"a cancelled request was answered: {doc}"  # the spec's SHOULD NOT respond
    else:
        assert "cancelled" in doc["error"]["message"], doc


def test_the_tools_config_switches_it_off(tmp_path):
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"tools": ["exec_command"]}))
    c = Stdio("--config", str(cfg))
    try:
        names = [t["name"] for t in c.request("tools/list", {}, "list")["result"]["tools"]]
        assert names == ["exec_command"], names
        doc = c.request("tools/call", {"name": "run_in_kernel", "arguments": {"code": "1"}}, "off")
        assert doc["error"]["code"] == -32602, doc
    finally:
        c.close()
    cfg.write_text(json.dumps({"tools": ["run_in_kernel"]}))
    c = Stdio("--config", str(cfg))
    try:
        names = [t["name"] for t in c.request("tools/list", {}, "list")["result"]["tools"]]
        assert names == ["run_in_kernel"], names
        assert ok(kernel(c, code="6 * 7"))["result"] == 42
    finally:
        c.close()
