#!/usr/bin/python3
"""A warm pooled call in a named environment against the same in the host's, and each against its bare
interpreter, alternating in one run (issue 30's goal: warm <= 0.05x bare in an environment, as on the host).

    bench/bench_env_warm.py [-n 40] [--root DIR]     (as root: the bare run of the root's python3 is a chroot)

Through the C API, as bench_warm.py's latency (build/bench/bench_warm, started with FNBOX_ENVIRONMENTS naming
a file whose environment `root` is ROOT; one engine with `python=1,python@root=1`): each round, a warm
add(1, 2) in the environment (the pools full before it), the same in the host's, `chroot ROOT python3 -c` of
the same function printing the same JSON, and the host's `python3 -c`. Prints the medians and the ratios.
ROOT defaults to the tests' trixie root (scripts/build-root.sh --path trixie).
"""
import argparse
import json
import os
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
    ap.add_argument("--driver", default=str(REPO / "build" / "bench" / "bench_warm"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the bare run of the root's interpreter is a chroot")
    root = a.root or subprocess.run([str(REPO / "scripts" / "build-root.sh"), "--path", "trixie"],
                                    capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as d:
        envs = Path(d) / "envs.json"
        envs.write_text(json.dumps({"environments": {"root": {"root": root}}}))
        drv = subprocess.Popen([a.driver], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "FNBOX_ENVIRONMENTS": str(envs)})

        def ask(line):
            drv.stdin.write(line + "\n")
            drv.stdin.flush()
            answer = drv.stdout.readline()
            if not answer:
                raise SystemExit(f"the driver ended at {line!r}")
            return json.loads(answer)

        def warm(name):
            r = ask(f"warm {name}")
            if not r["warm"]:
                raise SystemExit(f"{name}: not served warm")
            return r["ms"]

        try:
            ask("open python=1,python@root=1")
            series = {"warm root": [], "warm host": [], "bare root": [], "bare host": []}
            for _ in range(a.n):
                series["warm root"].append(warm("python@root"))
                series["warm host"].append(warm("python"))
                series["bare root"].append(timed_bare(["/usr/sbin/chroot", root, *BARE]))
                series["bare host"].append(timed_bare(["/usr/bin/python3", *BARE[1:]]))
        finally:
            drv.stdin.close()
            drv.wait(60)
    med = {k: statistics.median(v) for k, v in series.items()}
    for k, v in med.items():
        print(f"{k:10s} median {v:8.3f} ms  (p25 {statistics.quantiles(series[k], n=4)[0]:.3f})")
    print(f"warm/bare in the environment ({Path(root).name}): {med['warm root'] / med['bare root']:.3f}x "
          f"(goal <= 0.05x)")
    print(f"warm/bare on the host: {med['warm host'] / med['bare host']:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
