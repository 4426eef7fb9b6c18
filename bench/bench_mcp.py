#!/usr/bin/python3
"""The MCP server's cost: a tool call through `fnbox mcp` (stdio, one long-lived process) against the same run
through `fnbox exec` (a process per run) and the bare interpreter on the host, one by one, alternating in one
run so all see the same machine state.

    bench/bench_mcp.py [-n 40] [--fnbox build/fnbox]

Rows: run_code (a fresh sandbox each call) with Python `print(6*7)` vs `fnbox exec` of the same code vs bare
`python3 -c`; exec_command `echo hi` (the client's session) vs `fnbox exec` of the command vs bare `sh -c`.
Prints the median and p90 of each and the ratios.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class Mcp:
    """One `fnbox mcp` process; call() sends one tools/call and waits for its answer."""

    def __init__(self, fnbox):
        self.p = subprocess.Popen([fnbox, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})

    def rpc(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        answer = json.loads(self.p.stdout.readline())
        if "error" in answer or answer.get("result", {}).get("isError"):
            sys.exit(f"{method}: {json.dumps(answer)[:500]}")
        return answer

    def call(self, name, arguments):
        self.rpc("tools/call", {"name": name, "arguments": arguments})

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def run(argv, stdin=None):
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    if p.returncode != 0:
        sys.exit(f"{argv}: exit {p.returncode}: {p.stdout[:300]} {p.stderr[:300]}")


def timed(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1e3


def stats(ms):
    ms = sorted(ms)
    return statistics.median(ms), ms[max(0, int(len(ms) * 0.9) - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    a = ap.parse_args()
    mcp = Mcp(a.fnbox)
    py = {"language": "python", "code": "print(6*7)"}
    cases = [
        ("python print(6*7)", [
            ("mcp run_code", lambda: mcp.call("run_code", py)),
            ("fnbox exec", lambda: run([a.fnbox, "exec", "-"], json.dumps(py))),
            ("bare python3 -c", lambda: run(["/usr/bin/python3", "-c", "print(6*7)"])),
        ]),
        ("echo hi", [
            ("mcp exec_command", lambda: mcp.call("exec_command", {"command": "echo hi"})),
            ("fnbox exec", lambda: run([a.fnbox, "exec", "-"], json.dumps({"command": "echo hi"}))),
            ("bare sh -c", lambda: run(["/bin/sh", "-c", "echo hi"])),
        ]),
    ]
    for title, ways in cases:
        for _, fn in ways:  # warm-up: the session opens on the first exec_command
            fn()
        times = {name: [] for name, _ in ways}
        for _ in range(a.n):
            for name, fn in ways:
                times[name].append(timed(fn))
        first = stats(times[ways[0][0]])[0]
        print(f"{title} (n={a.n})")
        for name, _ in ways:
            med, p90 = stats(times[name])
            print(f"  {name:18s} median {med:7.2f} ms  p90 {p90:7.2f} ms  {ways[0][0]}/this {first / med:5.2f}x")
    mcp.close()


if __name__ == "__main__":
    main()
