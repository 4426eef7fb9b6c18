#!/usr/bin/python3
"""`fnbox serve` against `fnbox call`: the same trivial Python function through POST /v1/call (one keep-alive
connection per client) and through one `fnbox call` process per call, alternating in one run so both see the
same machine state.

    bench/bench_serve.py [-n 50] [--requests 200] [--rounds 3] [--fnbox build/fnbox]

Latency: n sequential calls each way, interleaved one by one (median, p90, ratio serve/call).
Throughput: with 2 and with 8 concurrent clients, --requests calls each way per round, the two ways
alternating round by round (calls per second, median over the rounds, ratio serve/call). The server runs
with --max-concurrency 8, so that it runs as many calls at once as the `fnbox call` side does.
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REQUEST = {"language": "python", "code": "def add(a, b):\n    return a + b\n", "functionName": "add",
           "args": [1, 2]}
BODY = json.dumps(REQUEST).encode()


def check(text):
    r = json.loads(text)
    if r.get("status") != "success" or r.get("result") != 3:
        sys.exit(f"the call did not succeed: {text[:800]!r}")


class Served:
    def __init__(self, fnbox):
        self.log = tempfile.NamedTemporaryFile(prefix="fnbox-bench-serve.", suffix=".log")
        self.proc = subprocess.Popen([fnbox, "serve", "--listen", "127.0.0.1:0", "--max-concurrency", "8"],
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.log.name) as f:
                for line in f:
                    doc = json.loads(line)
                    if doc.get("event") == "listening":
                        self.port = int(doc["address"].rsplit(":", 1)[1])
                        return
            if self.proc.poll() is not None:
                sys.exit(f"fnbox serve exited {self.proc.returncode}")
            time.sleep(0.02)
        sys.exit("fnbox serve did not start")

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def close(self):
        self.proc.terminate()
        if self.proc.wait(timeout=60) != 0:
            sys.exit(f"fnbox serve exited {self.proc.returncode}")


def served_call(conn):
    conn.request("POST", "/v1/call", body=BODY, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read()
    if r.status != 200:
        sys.exit(f"HTTP {r.status}: {text[:500]!r}")
    check(text)


def cli_call(fnbox):
    p = subprocess.run([fnbox, "call", "-"], input=BODY, capture_output=True)
    if p.returncode != 0:
        sys.exit(f"fnbox call exited {p.returncode}: {p.stderr[:500]!r}")
    check(p.stdout)


def timed(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1e3


def latency(a, srv):
    conn = srv.connection()
    served_call(conn)  # warm: the connection, the page cache
    cli_call(a.fnbox)
    served, cli = [], []
    for _ in range(a.n):
        served.append(timed(served_call, conn))
        cli.append(timed(cli_call, a.fnbox))
    conn.close()
    return served, cli


def throughput(clients, total, one_call):
    """Calls per second with `clients` threads making `total` calls between them; one_call(state) makes one
    call, state being the thread's own (its connection)."""
    lock = threading.Lock()
    left = [total]

    def worker():
        state = {}
        while True:
            with lock:
                if left[0] == 0:
                    break
                left[0] -= 1
            one_call(state)
        if "conn" in state:
            state["conn"].close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return total / (time.perf_counter() - t0)


def p90(xs):
    return statistics.quantiles(xs, n=10)[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=50, help="sequential calls each way for the latency")
    ap.add_argument("--requests", type=int, default=200, help="calls each way per throughput round")
    ap.add_argument("--rounds", type=int, default=3, help="throughput rounds each way")
    ap.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    a = ap.parse_args()
    a.fnbox = os.path.abspath(a.fnbox)
    srv = Served(a.fnbox)
    try:
        served, cli = latency(a, srv)
        print(f"latency, one client, {a.n} sequential calls each (ms):")
        print(f"  {'':22} {'median':>8} {'p90':>8}")
        print(f"  {'POST /v1/call':22} {statistics.median(served):8.2f} {p90(served):8.2f}")
        print(f"  {'fnbox call (process)':22} {statistics.median(cli):8.2f} {p90(cli):8.2f}")
        print(f"  ratio serve/call: {statistics.median(served) / statistics.median(cli):.2f}x median, "
              f"{p90(served) / p90(cli):.2f}x p90")

        def via_http(state):
            if "conn" not in state:
                state["conn"] = srv.connection()
            served_call(state["conn"])

        def via_cli(state):
            cli_call(a.fnbox)

        print(f"throughput, calls/s (median of {a.rounds} rounds of {a.requests} calls each way):")
        for clients in (2, 8):
            http_rates, cli_rates = [], []
            for _ in range(a.rounds):
                http_rates.append(throughput(clients, a.requests, via_http))
                cli_rates.append(throughput(clients, a.requests, via_cli))
            h, c = statistics.median(http_rates), statistics.median(cli_rates)
            print(f"  {clients} clients: serve {h:7.1f}/s, fnbox call {c:7.1f}/s, ratio serve/call {h / c:.2f}x")
    finally:
        srv.close()
    print(f"({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
