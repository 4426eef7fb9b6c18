#!/usr/bin/python3
"""A warm pooled call in a named environment against the same in the host's, and each against its bare
interpreter, alternating in one run (issue 30's goal: warm ≤ 0.05× bare in an environment, as on the host).

    bench/bench_env_warm.py [-n 40] [--root DIR]     (as root: the bare run of the root's python3 is a chroot)

`fnbox serve --listen unix:SOCK --environments F --warm python=2,python@root=2`; each round, after waiting
for both pools to be full (/v1/health): a POST /v1/call of add(1, 2) in the environment `root`, the same in
the host's, `chroot ROOT python3 -c` of the same function printing the same JSON, and the host's
`python3 -c`. Prints the medians and the ratios. ROOT defaults to the tests' trixie root
(scripts/build-root.sh --path trixie).
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
CODE = "def add(a, b):\n    return a + b\n"
BARE = ["python3", "-c", CODE + "import json\nprint(json.dumps(add(1, 2)))\n"]
BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


class Unix(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.path)


def request(sock, method, path, body=None):
    c = Unix(sock)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data) if data else None


def wait_full(sock, names, deadline=30.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        warm = request(sock, "GET", "/v1/health")[1]["warm"]
        if all(isinstance(warm.get(n), dict) and warm[n]["idle"] >= 1 for n in names):
            return
        time.sleep(0.005)
    raise SystemExit(f"pools {names} did not fill: {warm}")


def timed_call(sock, env):
    body = {"language": "python", "code": CODE, "functionName": "add", "args": [1, 2]}
    if env:
        body["environment"] = env
    t = time.perf_counter()
    status, res = request(sock, "POST", "/v1/call", body)
    ms = (time.perf_counter() - t) * 1000
    if status != 200 or res.get("result") != 3 or not res.get("meta", {}).get("warm"):
        raise SystemExit(f"not a warm success: {status} {res}")
    return ms


def timed_bare(argv):
    t = time.perf_counter()
    out = subprocess.run(argv, env=BARE_ENV, capture_output=True, check=True).stdout
    ms = (time.perf_counter() - t) * 1000
    if out.strip() != b"3":
        raise SystemExit(f"bare run printed {out!r}")
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=40)
    ap.add_argument("--root")
    ap.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the bare run of the root's interpreter is a chroot")
    root = a.root or subprocess.run([str(REPO / "scripts" / "build-root.sh"), "--path", "trixie"],
                                    capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as d:
        envs = Path(d) / "envs.json"
        envs.write_text(json.dumps({"environments": {"root": {"root": root}}}))
        sock = str(Path(d) / "s.sock")
        srv = subprocess.Popen([a.fnbox, "serve", "--listen", f"unix:{sock}", "--environments", str(envs),
                                "--warm", "python=2,python@root=2"], stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                if os.path.exists(sock):
                    break
                time.sleep(0.05)
            series = {"warm root": [], "warm host": [], "bare root": [], "bare host": []}
            for i in range(a.n):
                wait_full(sock, ["python", "python@root"])
                series["warm root"].append(timed_call(sock, "root"))
                wait_full(sock, ["python", "python@root"])
                series["warm host"].append(timed_call(sock, None))
                series["bare root"].append(timed_bare(["/usr/sbin/chroot", root, *BARE]))
                series["bare host"].append(timed_bare(["/usr/bin/python3", *BARE[1:]]))
        finally:
            srv.terminate()
            srv.wait(30)
    med = {k: statistics.median(v) for k, v in series.items()}
    for k, v in med.items():
        print(f"{k:10s} median {v:8.2f} ms  (p25 {statistics.quantiles(series[k], n=4)[0]:.2f})")
    print(f"warm/bare in the environment ({Path(root).name}): {med['warm root'] / med['bare root']:.3f}x "
          f"(goal <= 0.05x)")
    print(f"warm/bare on the host: {med['warm host'] / med['bare host']:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
