"""The MCP tool call_function through the warm pools (docs/internals/pools.md) over both transports: `fnbox mcp
--warm` opens an engine of its own at start and closes it on exit; `/mcp` on `fnbox serve --warm` uses the
server's, the one POST /v1/call uses. A call served by a pooled sandbox says meta.warm: true and finds nothing
of an earlier call; `--warm none` and what no pool fits run cold; stopping `fnbox mcp` leaves no sandbox
process or cgroup. Bad --warm values are refused by `fnbox mcp` as by `fnbox serve`: test_serve_warm.py."""
import json
import signal
import time

import pytest

from mcplib import Http, Stdio
from servelib import Server, cgroups_of, cmdline, descendants, wait_for

# A fresh interpreter has no sys.fnbox_test_mark: a sandbox that served a call before would.
PROBE = ("import sys\n"
         "def f(a):\n"
         "    seen = getattr(sys, 'fnbox_test_mark', None)\n"
         "    sys.fnbox_test_mark = a\n"
         "    return {'double': a * 2, 'seen': seen}\n")

_ids = iter(range(100, 1 << 30))


def call_function(client, language="python", code=PROBE, args=(21,)):
    """call_function's structuredContent (the ExecutionResult), checked to be a success."""
    doc = client.request("tools/call", {"name": "call_function",
                                        "arguments": {"language": language, "code": code, "args": list(args)}},
                         next(_ids))
    assert doc is not None, "no answer"
    res = doc["result"]
    assert not res.get("isError"), res
    sc = res["structuredContent"]
    assert sc["status"] == "success", sc
    return sc


def warm_call(client, timeout=30):
    """The first call_function that comes back warm, calling until one does: over stdio nothing tells when the
    pool is full, so the calls are the poll (one that finds the pool empty runs cold while it fills). Fails
    when none is warm within timeout."""
    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        sc = call_function(client)
        tries += 1
        assert sc["result"] == {"double": 42, "seen": None}, sc["result"]
        if sc["meta"].get("warm") is True:
            return sc
        if time.monotonic() > deadline:
            pytest.fail(f"no call_function was warm in {tries} calls over {timeout}s; last meta {sc['meta']}")
        time.sleep(0.05)


def harnesses(pid):
    """The harness processes below process pid: the pools' idle sandboxes (and a call's, while it runs)."""
    return {p: c for p in descendants(pid) if "/.fnbox/harness." in (c := cmdline(p))}


# ---- stdio: `fnbox mcp` ----

def test_stdio_call_function_runs_warm_with_warm_pools():
    c = Stdio("--warm", "python=1")
    try:
        first = warm_call(c)
        assert first["result"] == {"double": 42, "seen": None}
        # the pool refills in the background; its next sandbox is a new one (the module state is fresh)
        second = warm_call(c)
        assert second["result"] == {"double": 42, "seen": None}
        # a language with no pool runs cold, as the engine decides
        js = call_function(c, "javascript", "function f(a) { return a * 3; }", (14,))
        assert js["result"] == 42 and "warm" not in js["meta"], js
    finally:
        c.close()


def test_stdio_warm_none_runs_cold_and_keeps_no_sandbox():
    c = Stdio("--warm", "none")
    try:
        for _ in range(3):
            sc = call_function(c)
            assert "warm" not in sc["meta"], sc["meta"]
        assert not harnesses(c.proc.pid), harnesses(c.proc.pid)
    finally:
        c.close()


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_stopping_fnbox_mcp_leaves_no_sandbox_behind(how):
    """The engine is closed on the way out: every pooled sandbox's processes are gone and its cgroup removed
    by the time `fnbox mcp` has exited (cleanly: exit 0)."""
    since = time.time()
    c = Stdio("--warm", "python=2,javascript=1")
    pid = c.proc.pid
    try:
        warm_call(c)
        wait_for(lambda: len(harnesses(pid)) >= 3, timeout=30, what="the pools full again")
        inside = {p: cmdline(p) for p in descendants(pid)}  # the sandboxes' inits and harnesses
        assert cgroups_of(pid, since), "no cgroup found for the pooled sandboxes: the check below would see nothing"
        if how == "sigterm":
            c.proc.send_signal(signal.SIGTERM)
    finally:
        c.close()  # closes stdin, expects exit 0 and no sanitizer report
    left = {p: cmd for p, cmd in inside.items() if cmdline(p) == cmd}
    assert not left, f"processes of the pools outlived fnbox mcp: {left}"
    assert not cgroups_of(pid, since), cgroups_of(pid, since)


# ---- /mcp on `fnbox serve` ----

def pools(srv):
    return srv.request("GET", "/v1/health").json()["warm"]


def test_http_call_function_runs_warm_through_the_servers_engine():
    with Server("--warm", "python=1") as srv:
        c = Http(srv)
        wait_for(lambda: pools(srv)["python"]["idle"] >= 1, timeout=30, what="the python pool full")
        served = pools(srv)["python"]["served"]
        sc = call_function(c)
        assert sc["meta"].get("warm") is True, sc["meta"]
        assert sc["result"] == {"double": 42, "seen": None}
        # the server's one engine: its counters are POST /v1/call's
        assert pools(srv)["python"]["served"] == served + 1
        wait_for(lambda: pools(srv)["python"]["idle"] >= 1, timeout=30, what="the python pool refilled")
        r = srv.request("POST", "/v1/call", body=json.dumps({"language": "python", "code": PROBE, "args": [1]}).encode(),
                        headers={"Content-Type": "application/json"})
        assert r.json()["meta"].get("warm") is True and r.json()["result"]["seen"] is None, r.json()
        assert pools(srv)["python"]["served"] == served + 2
        c.close()


def test_http_warm_none_runs_cold():
    with Server("--warm", "none") as srv:
        c = Http(srv)
        sc = call_function(c)
        assert "warm" not in sc["meta"], sc["meta"]
        c.close()
