#!/usr/bin/python3
"""A matplotlib line plot saved to PNG: fnbox against the bare interpreter, alternating in one run (issue 30).

    bench/bench_matplotlib.py [-n 10] [--skip-warm]

Per round, in this order:
  call   `fnbox call` (a new process, a cold sandbox) of a function that draws the plot and saves it in the
         workspace; its result must list only plot.png among the files (the environment's font list is
         placed, not rebuilt: core/env_caches.c)
  warm   the same function as POST /v1/call to `fnbox serve --warm python=2` (unix socket), the pool full before
         each call
  bare   /usr/bin/python3 running the same code as a script, with a warm matplotlib cache of its own (HOME
         and MPLCONFIGDIR in a private directory, filled by round 0) and a minimal environment
Round 0 warms every cache up (fnbox's environment caches included) and is not counted. Goal: call/bare and
warm/bare <= 1.3x (medians). The machine is shared: run it when it is quiet and say so with the figures.
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL = 1.3
PLOT = ("import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\n"
        "ax.plot([1, 2, 3, 4], [1, 4, 9, 16])\n"
        "fig.savefig('plot.png')\n")
FUNCTION = "def plot():\n" + "".join("    " + line + "\n" for line in PLOT.splitlines()) + "    return 'ok'\n"
REQUEST = {"language": "python", "code": FUNCTION, "functionName": "plot", "args": []}


def pct(values, q):
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def check(doc, how):
    files = doc.get("files", {})
    created = [f["path"] for f in files.get("created", [])]
    changed = [f["path"] for k in ("modified", "deleted") for f in files.get(k, [])]
    if doc.get("result") != "ok" or created != ["/workspace/plot.png"] or changed:
        sys.exit(f"{how}: unexpected result: {json.dumps(doc)[:600]}")
    if "Matplotlib" in doc.get("stderr", "") or "Fontconfig" in doc.get("stderr", ""):
        sys.exit(f"{how}: a warning on stderr: {doc['stderr'][:400]}")


def call_ms(fnbox, body):
    t0 = time.perf_counter()
    p = subprocess.run([fnbox, "call"], input=body, capture_output=True)
    ms = (time.perf_counter() - t0) * 1e3
    if p.returncode != 0:
        sys.exit(f"fnbox call: exit {p.returncode}: {p.stdout[:300]!r} {p.stderr[:300]!r}")
    check(json.loads(p.stdout), "fnbox call")
    return ms


def bare_ms(script, workdir, env):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/python3", script], cwd=workdir, capture_output=True, env=env)
    ms = (time.perf_counter() - t0) * 1e3
    if p.returncode != 0 or p.stderr:
        sys.exit(f"bare python3: exit {p.returncode}: {p.stderr[:400]!r}")
    return ms


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=120)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


class WarmServer:
    def __init__(self, fnbox, tmp):
        self.sock = os.path.join(tmp, "s")
        self.log = open(os.path.join(tmp, "serve.log"), "wb")
        self.p = subprocess.Popen([fnbox, "serve", "--listen", f"unix:{self.sock}", "--warm", "python=2"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        for _ in range(1000):
            if os.path.exists(self.sock):
                break
            time.sleep(0.01)
        self.conn = UnixHTTPConnection(self.sock)

    def wait_full(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.conn.request("GET", "/v1/health")
            r = self.conn.getresponse()
            body = r.read()
            pool = json.loads(body).get("warm", {}).get("python", {}) if r.status == 200 else {}
            if pool and pool.get("idle") == pool.get("size"):
                return
            time.sleep(0.005)
        sys.exit("the server's pool did not fill")

    def call_ms(self, body):
        self.wait_full()
        t0 = time.perf_counter()
        self.conn.request("POST", "/v1/call", body, {"Content-Type": "application/json"})
        r = self.conn.getresponse()
        data = r.read()
        ms = (time.perf_counter() - t0) * 1e3
        doc = json.loads(data)
        if r.status != 200:
            sys.exit(f"POST /v1/call: {r.status} {data[:300]!r}")
        check(doc, "POST /v1/call")
        return ms, bool(doc.get("meta", {}).get("warm"))

    def close(self):
        self.conn.close()
        self.p.terminate()
        self.p.wait(timeout=30)
        self.log.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10, help="counted rounds (default 10)")
    ap.add_argument("--skip-warm", action="store_true", help="no `fnbox serve --warm` column")
    args = ap.parse_args()
    if subprocess.run(["/usr/bin/python3", "-c", "import matplotlib"], capture_output=True).returncode != 0:
        print("bench_matplotlib: skipped (no matplotlib for /usr/bin/python3: scripts/install-deps.sh)")
        return
    fnbox = os.environ.get("FNBOX", str(REPO / "build" / "fnbox"))
    tmp = tempfile.mkdtemp(prefix="fnbox-bench-mpl.")
    script = os.path.join(tmp, "plot.py")
    Path(script).write_text(PLOT)
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    bare_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home,
                "MPLCONFIGDIR": os.path.join(home, ".cache", "matplotlib")}
    body = json.dumps(REQUEST).encode()
    server = None if args.skip_warm else WarmServer(fnbox, tmp)
    times = {"call": [], "warm": [], "bare": []}
    cold_warm = 0
    try:
        print(f"{'round':>5}{'call':>9}{'warm':>9}{'bare':>9}   ms")
        for rnd in range(args.n + 1):  # round 0 builds the caches (fnbox's and the bare run's) and is not counted
            c = call_ms(fnbox, body)
            w, was_warm = server.call_ms(body) if server else (float("nan"), True)
            b = bare_ms(script, tmp, bare_env)
            print(f"{rnd:>5}{c:9.1f}{w:9.1f}{b:9.1f}" + ("   (warm-up, not counted)" if rnd == 0 else ""))
            if rnd == 0:
                continue
            cold_warm += not was_warm
            times["call"].append(c)
            times["warm"].append(w)
            times["bare"].append(b)
    finally:
        if server:
            server.close()
    med = {k: statistics.median(v) for k, v in times.items() if v}
    print(f"\nmatplotlib line plot to PNG, {args.n} rounds (medians, ms): call {med['call']:.1f}, "
          + (f"warm {med['warm']:.1f}, " if server else "") + f"bare python3 {med['bare']:.1f}")
    for k in ("call", "warm") if server else ("call",):
        r = med[k] / med["bare"]
        print(f"  {k}/bare {r:.2f}x (goal <= {GOAL}x: {'yes' if r <= GOAL else 'NO'}); "
              f"p90 {pct(times[k], 0.9):.1f} ms")
    if cold_warm:
        print(f"  ({cold_warm} 'warm' calls found no ready sandbox and ran cold)")


if __name__ == "__main__":
    main()
