#!/usr/bin/python3
"""Warm pools against cold calls and the bare interpreter, in one run so that all see the same machine state.

    bench/bench_warm.py [-n 40] [--langs python,javascript,ruby,php] [--skip-http] [--skip-load] [--duration 10]

Through the C API (build/bench/bench_warm, `make` builds it; it answers one command per line):
  latency     per round and language, alternating: a warm call (an engine with one sandbox per language;
              wait_warm before each, so the pool is full: the figure is a ready pool's), a cold fnbox_call,
              and the bare interpreter running the same function as a user would (`python3 -c`, `node -e`,
              `ruby -e`, `php -r`, the machine's default flags, a minimal environment as bench_cold.py's)
  C           a C call with new code (a unique comment: a compile-cache miss) and the same code again
              (cached), in a private cache directory; then new code and the same again through an engine
              with `c=1` (a pooled compiler; a sandbox waiting for the cached program)
  HTTP        `fnbox serve --listen unix:SOCK --warm python=2`: a warm POST /v1/call (the pool full before
              each, from /v1/health) alternating with the C API's warm call: the server's own cost
  load        calls/s with 2 and 8 clients for --duration seconds each: the engine (pool size = clients),
              cold fnbox_call, and bare `python3 -c` spawns at the same concurrency, alternating
  memory      each language's idle pooled sandbox after 1.5 s of settling: its cgroup's count (the pool's
              memoryPerSandboxBytes) and its processes' resident set
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
BARE = {  # the same add(1, 2) as the driver's FUNCTIONS, printed as JSON
    "python": ["python3", "-c", "def add(a, b):\n    return a + b\nimport json\nprint(json.dumps(add(1, 2)))\n"],
    "javascript": ["node", "-e", "function add(a, b) {\n  return a + b;\n}\nconsole.log(JSON.stringify(add(1, 2)));\n"],
    "ruby": ["ruby", "-e", "def add(a, b)\n  a + b\nend\nrequire 'json'\nputs JSON.generate(add(1, 2))\n"],
    "php": ["php", "-r", "function add($a, $b) { return $a + $b; }\necho json_encode(add(1, 2)), \"\\n\";\n"],
}
GOAL_WARM_OVER_BARE = {"python": 0.05, "javascript": 0.05, "ruby": 0.1, "php": 0.1}
PY_REQ = {"language": "python", "code": "def add(a, b):\n    return a + b\n", "functionName": "add", "args": [1, 2]}


def pct(values, q):
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary(v):
    return f"p50 {pct(v, 0.5):7.2f}  p90 {pct(v, 0.9):7.2f}  p99 {pct(v, 0.99):7.2f}"


class Driver:
    """build/bench/bench_warm, one command per line."""

    def __init__(self, exe, env):
        self.p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        out = self.p.stdout.readline()
        if not out:
            sys.exit(f"the driver ended on '{line}' (its error is above)")
        return json.loads(out)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def bare_ms(lang):
    t0 = time.perf_counter()
    p = subprocess.run(BARE[lang], capture_output=True, env=BARE_ENV)
    ms = (time.perf_counter() - t0) * 1e3
    if p.returncode != 0 or p.stdout.strip() != b"3":
        sys.exit(f"bare {lang} failed: {p.stdout[:200]!r} {p.stderr[:300]!r}")
    return ms


def latency(drv, langs, n):
    times = {(lang, kind): [] for lang in langs for kind in ("warm", "cold", "bare")}
    cold_warm = 0
    drv.ask("open " + ",".join(f"{lang}=1" for lang in langs))
    for rnd in range(n + 1):  # round 0 warms the caches up and is not counted
        for lang in langs:
            w = drv.ask(f"warm {lang}")
            c = drv.ask(f"cold {lang}")
            b = bare_ms(lang)
            if rnd == 0:
                continue
            cold_warm += not w["warm"]
            times[(lang, "warm")].append(w["ms"])
            times[(lang, "cold")].append(c["ms"])
            times[(lang, "bare")].append(b)
    print(f"\nlatency, {n} rounds (warm: a ready pool's call; ms)")
    print(f"{'language':<11}{'warm':>8}{'cold':>8}{'bare':>8}{'warm/bare':>11}{'cold/bare':>11}   goal warm/bare")
    for lang in langs:
        w, c, b = (statistics.median(times[(lang, k)]) for k in ("warm", "cold", "bare"))
        goal = GOAL_WARM_OVER_BARE[lang]
        print(f"{lang:<11}{w:8.2f}{c:8.2f}{b:8.2f}{w / b:10.3f}x{c / b:10.2f}x   <= {goal}x: "
              f"{'yes' if w / b <= goal else 'NO'}")
    for lang in langs:
        for k in ("warm", "cold", "bare"):
            print(f"  {lang:<11}{k:<5} {summary(times[(lang, k)])}")
    if cold_warm:
        print(f"  ({cold_warm} 'warm' calls found no ready sandbox and ran cold)")
    return {lang: statistics.median(times[(lang, "warm")]) for lang in langs}


def compiled(drv, n):
    first, cached, warm_first, warm_cached = [], [], [], []
    for i in range(n):
        nonce = f"bench-warm-{os.getpid()}-{time.time_ns()}-{i}"
        f, c = drv.ask(f"c {nonce}"), drv.ask(f"c {nonce}")
        # through an engine with `c=1`: a new program compiled by a compiler started ahead, then the same
        # program again (a cache hit) in a sandbox that waited for it
        w, wc = drv.ask(f"cw {nonce}-w"), drv.ask(f"cw {nonce}-w")
        if f["cached"] or not c["cached"] or w["cached"] or not wc["cached"]:
            sys.exit("the C nonce bookkeeping is wrong")
        first.append(f["ms"])
        cached.append(c["ms"])
        warm_first.append(w["ms"])
        warm_cached.append(wc["ms"])
    m = {k: statistics.median(v) for k, v in
         (("first", first), ("cached", cached), ("warm_first", warm_first), ("warm_cached", warm_cached))}
    r, rw = m["cached"] / m["first"], m["warm_cached"] / m["first"]
    print(f"\nC, {n} rounds: first call (compile) {m['first']:.1f} ms; cached, cold sandbox {m['cached']:.2f} ms"
          f" ({r:.3f}x); cached, pooled sandbox (--warm c=1) {m['warm_cached']:.2f} ms ({rw:.3f}x; goal <= 0.1x:"
          f" {'yes' if rw <= 0.1 else 'NO'}); first call with a pooled compiler {m['warm_first']:.1f} ms"
          f" ({m['warm_first'] / m['first']:.2f}x)")
    for k, v in (("first", first), ("cached", cached), ("warm_cached", warm_cached), ("warm_first", warm_first)):
        print(f"  {k:<12} {summary(v)}")


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=60)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def http_get(conn, path):
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read()


def wait_pool_full(conn, lang, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = http_get(conn, "/v1/health")
        pool = json.loads(body).get("warm", {}).get(lang, {}) if status == 200 else {}
        if pool and pool.get("idle") == pool.get("size"):
            return
        time.sleep(0.005)
    sys.exit("the server's pool did not fill")


def through_http(drv, fnbox, n, c_api_warm_ms):
    tmp = tempfile.mkdtemp(prefix="fnbox-bench-warm.")
    sock = os.path.join(tmp, "s")
    log = open(os.path.join(tmp, "log"), "wb")
    srv = subprocess.Popen([fnbox, "serve", "--listen", f"unix:{sock}", "--warm", "python=2"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=log)
    try:
        for _ in range(500):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
        conn = UnixHTTPConnection(sock)
        body = json.dumps(PY_REQ).encode()
        drv.ask("open python=2")
        over_http, api = [], []
        for rnd in range(n + 1):
            wait_pool_full(conn, "python")
            t0 = time.perf_counter()
            conn.request("POST", "/v1/call", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            ms = (time.perf_counter() - t0) * 1e3
            doc = json.loads(data)
            if r.status != 200 or doc.get("result") != 3:
                sys.exit(f"POST /v1/call: {r.status} {data[:300]!r}")
            a = drv.ask("warm python")
            if rnd and doc.get("meta", {}).get("warm") and a["warm"]:
                over_http.append(ms)
                api.append(a["ms"])
        conn.close()
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    d = statistics.median(over_http) - statistics.median(api)
    print(f"\nHTTP (fnbox serve, unix socket, keep-alive), {len(over_http)} warm rounds: POST /v1/call "
          f"{statistics.median(over_http):.2f} ms, C API warm {statistics.median(api):.2f} ms, "
          f"difference {d:.2f} ms (goal <= 2 ms: {'yes' if d <= 2 else 'NO'})")


def bare_load(clients, seconds):
    ms, lock = [], threading.Lock()
    until = time.monotonic() + seconds

    def loop():
        while time.monotonic() < until:
            m = bare_ms("python")
            with lock:
                ms.append(m)

    t0 = time.monotonic()
    threads = [threading.Thread(target=loop) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    return {"calls": len(ms), "per_second": len(ms) / elapsed, "p50": pct(ms, 0.5), "p90": pct(ms, 0.9),
            "p99": pct(ms, 0.99)}


def load(drv, seconds):
    print(f"\nsustained load, python add(1, 2), {seconds:g} s per row (calls/s; latency ms)")
    for clients in (2, 8):
        rows = {"engine": drv.ask(f"load engine python {clients} {seconds}"),
                "cold": drv.ask(f"load cold python {clients} {seconds}"),
                "bare": bare_load(clients, seconds)}
        for name, r in rows.items():
            extra = f"  warm {r['warm']}/{r['calls']}" if name == "engine" else ""
            print(f"  {clients} clients {name:<7}{r['per_second']:8.1f}/s  p50 {r['p50']:7.2f}  p90 {r['p90']:7.2f}"
                  f"  p99 {r['p99']:7.2f}{extra}")
        for name in ("engine", "cold"):
            ratio = rows[name]["per_second"] / rows["bare"]["per_second"]
            print(f"  {clients} clients {name}/bare calls/s: {ratio:.2f}x (goal >= 1.0: {'yes' if ratio >= 1 else 'NO'})")


def memory(drv, langs):
    r = drv.ask(f"memory {','.join(langs)} 1.5")
    print("\nidle pooled sandbox, after 1.5 s (MiB): cgroup-charged (memoryPerSandboxBytes) / resident set of its "
          "processes")
    for lang in langs:
        print(f"  {lang:<11}{r[lang]['cgroup'] / 2**20:7.1f} / {r[lang]['rss'] / 2**20:7.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=40, help="rounds (default 40)")
    ap.add_argument("--langs", default="python,javascript,ruby,php")
    ap.add_argument("--skip-http", action="store_true")
    ap.add_argument("--skip-load", action="store_true")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per load row (default 10)")
    ap.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    ap.add_argument("--driver", default=str(REPO / "build" / "bench" / "bench_warm"))
    a = ap.parse_args()
    langs = [lang for lang in a.langs.split(",") if lang]
    for lang in langs:
        if lang not in BARE or not shutil.which(BARE[lang][0]):
            sys.exit(f"{lang}: unknown, or its interpreter is not installed")
    if not os.access(a.driver, os.X_OK):
        sys.exit(f"{a.driver} missing: run make")
    cache = tempfile.mkdtemp(prefix="fnbox-bench-warm-cache.")
    drv = Driver(a.driver, dict(os.environ, FNBOX_CACHE_DIR=cache))
    start = time.monotonic()
    print(f"fnbox warm-pool benchmark: {os.cpu_count()} CPUs, {a.n} rounds, langs {','.join(langs)}")
    try:
        warm = latency(drv, langs, a.n)
        compiled(drv, max(3, a.n // 2))
        if not a.skip_http and "python" in langs:
            through_http(drv, a.fnbox, a.n, warm.get("python"))
        if not a.skip_load:
            load(drv, a.duration)
        memory(drv, langs)
    finally:
        drv.close()
        shutil.rmtree(cache, ignore_errors=True)
    print(f"\n({time.monotonic() - start:.0f} s)")


if __name__ == "__main__":
    main()
