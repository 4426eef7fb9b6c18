#!/usr/bin/python3
"""A command in a session against the same command in a fresh sandbox, through `fnbox serve` on loopback:
POST /v1/sessions/{id}/commands against POST /v1/execute, and against the bare shell on the host, one by one,
alternating in one run so all three see the same machine state.

    bench/bench_session.py [-n 100] [--fnbox build/fnbox] [--command 'echo hi']

Prints the median and p90 of each and the ratios session/execute and session/bare. Also a Python one-liner
(`/code`, language python) against /v1/execute's and the bare `python3 -c`.
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serve import Served  # noqa: E402  (the same server start-up)

REPO = Path(__file__).resolve().parents[1]


def post(conn, path, body):
    conn.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read()
    if r.status not in (200, 201):
        sys.exit(f"{path}: HTTP {r.status}: {text[:500]!r}")
    return json.loads(text)


def run_ok(conn, path, body):
    doc = post(conn, path, body)
    if doc.get("exitCode") != 0:
        sys.exit(f"{path}: {json.dumps(doc)[:500]}")


def timed(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1e3


def bare(argv):
    p = subprocess.run(argv, capture_output=True, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    if p.returncode != 0:
        sys.exit(f"{argv}: exit {p.returncode}")


def row(name, ms):
    ms = sorted(ms)
    return statistics.median(ms), ms[int(len(ms) * 0.9) - 1], name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--fnbox", default=os.environ.get("FNBOX", str(REPO / "build" / "fnbox")))
    ap.add_argument("--command", default="echo hi")
    a = ap.parse_args()
    srv = Served(a.fnbox)
    try:
        conn = srv.connection()
        sid = post(conn, "/v1/sessions", {})["id"]
        cmd = {"command": a.command}
        code = {"code": "print(6*7)", "language": "python"}
        cases = {
            "command session": lambda: run_ok(conn, f"/v1/sessions/{sid}/commands", cmd),
            "command execute": lambda: run_ok(conn, "/v1/execute", cmd),
            "command bare sh": lambda: bare(["/bin/sh", "-c", a.command]),
            "python session": lambda: run_ok(conn, f"/v1/sessions/{sid}/code", code),
            "python execute": lambda: run_ok(conn, "/v1/execute", code),
            "python bare": lambda: bare(["/usr/bin/python3", "-c", "print(6*7)"]),
        }
        for fn in cases.values():  # warm-up
            fn()
        times = {k: [] for k in cases}
        for _ in range(a.n):
            for k, fn in cases.items():
                times[k].append(timed(fn))
        conn.close()
    finally:
        srv.close()
    print(f"fnbox session benchmark: {a.n} rounds, {os.cpu_count()} CPUs, fnbox={a.fnbox}")
    print(f"{'case':<20}{'median ms':>11}{'p90 ms':>9}")
    med = {}
    for k, v in times.items():
        m, p90, _ = row(k, v)
        med[k] = m
        print(f"{k:<20}{m:>11.2f}{p90:>9.2f}")
    for what in ("command", "python"):
        bare_key = "command bare sh" if what == "command" else "python bare"
        print(f"ratio {what} session/execute: {med[what + ' session'] / med[what + ' execute']:.2f}x, "
              f"session/bare: {med[what + ' session'] / med[bare_key]:.2f}x")


if __name__ == "__main__":
    main()
