#!/usr/bin/python3
"""Large-data benchmark: `fnbox call` echoing a 64 MB string argument (and a 16 MB structured one: ~1.7M
small items, ints and short strings) back as its result, against the floor, the same JSON piped through the
bare interpreter (read stdin, JSON-decode, JSON-encode, write stdout), alternating in one run so both see the
same machine state. Prints median and min wall time, MB/s (payload megabytes per second, one way) and the
fnbox/bare ratio per language and payload.

    bench/bench_large.py [-n 5] [--fnbox build/fnbox] [--langs python,javascript,ruby,php]

The fnbox side includes everything a caller pays: the CLI reading and validating the request, the sandbox,
the harness decoding the argument and encoding the result, fnbox validating the result and writing the
ExecutionResult (the client's own JSON work is outside the timing: the request is prepared once, the answer is
only checked after the clock stops). The bare side decodes the very request document fnbox gets (so it parses
the same bytes) and encodes the argument back, like the harness: Python `json`, Node `JSON`, Ruby's `json`
extension (--disable-gems, like the harness), PHP's `json_decode`/`json_encode` (the system's php.ini, like
fnbox). Bare runs get a minimal environment (PATH, LANG), like the sandbox.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MB = 1000 * 1000
BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

ECHO = {
    "python": "def f(x):\n    return x\n",
    "javascript": "function f(x) {\n  return x;\n}\n",
    "ruby": "def f(x)\n  x\nend\n",
    "php": "function f($x) {\n  return $x;\n}\n",
}

# Read the request from stdin, decode it, encode args[0] back to stdout: the work the harness does.
BARE = {
    "python": ["/usr/bin/python3", "-c",
               "import json, sys\nsys.stdout.write(json.dumps(json.loads(sys.stdin.buffer.read())['args'][0], "
               "ensure_ascii=False, separators=(',', ':')))\n"],
    "javascript": ["node", "-e",
                   "const fs = require('fs');\nfs.writeFileSync(1, JSON.stringify(JSON.parse(fs.readFileSync(0, 'utf8')).args[0]));\n"],
    "ruby": ["ruby", "--disable-gems", "-e",
             "require 'json'\n$stdout.binmode\n$stdout.write(JSON.generate(JSON.parse($stdin.binmode.read, max_nesting: false)['args'][0]))\n"],
    "php": ["php", "-r",
            "echo json_encode(json_decode(stream_get_contents(STDIN), true, 512, JSON_BIGINT_AS_STRING)['args'][0], "
            "JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION);"],
}


LARGE_LIMITS = {"resultBytes": 256 * MB, "fileSizeBytes": 256 * MB, "memoryBytes": 1024 * MB}


def payloads():
    s = "0123456789abcdef" * (64 * MB // 16)
    items = []
    size, i = 2, 0
    while size < 16 * MB:
        v = i if i % 2 == 0 else f"s{i}"
        items.append(v)
        size += len(json.dumps(v)) + 1
        i += 1
    return [("64 MB string", s, 64 * MB), (f"16 MB structured ({len(items) / 1e6:.1f}M items)", items, 16 * MB)]


def timed(argv, stdin, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    return time.perf_counter() - t0, p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5, help="timed calls per case (default 5)")
    ap.add_argument("--fnbox", default=os.environ.get("FNBOX") or str(REPO / "build" / "fnbox"))
    ap.add_argument("--langs", default="python,javascript,ruby,php")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--budget", type=float, default=240.0, help="stop early after this many seconds")
    a = ap.parse_args()
    langs = [lang for lang in a.langs.split(",") if lang]
    for lang in langs:
        if not shutil.which(BARE[lang][0]):
            sys.exit(f"{BARE[lang][0]} not found")

    cases = []      # (lang, payload label, bytes, fnbox request, expected value)
    for label, value, nbytes in payloads():
        for lang in langs:
            # The 64 MB echo is over the default resultBytes (16 MiB) and fileSizeBytes (64 MiB), and needs
            # about 3.5x its size in memory: the request raises the three limits it needs.
            r = json.dumps({"language": lang, "code": ECHO[lang], "functionName": "f", "args": [value],
                            "limits": LARGE_LIMITS},
                           ensure_ascii=False, separators=(",", ":")).encode()
            cases.append((lang, label, nbytes, r, value))

    def check_fnbox(p, value):
        if p.returncode != 0:
            sys.exit(f"fnbox failed (exit {p.returncode}): {p.stdout[:500]!r} {p.stderr[:500]!r}")
        r = json.loads(p.stdout)
        if r.get("status") != "success" or r.get("result") != value:
            sys.exit(f"fnbox call did not echo the payload: {p.stdout[:800]!r}")
        return r["usage"]["peakMemoryBytes"]

    def check_bare(p, value):
        if p.returncode != 0 or json.loads(p.stdout) != value:
            sys.exit(f"bare run failed (exit {p.returncode}): {p.stdout[:300]!r} {p.stderr[:300]!r}")

    times = {(lang, label): {"fnbox": [], "bare": [], "peak": 0} for lang, label, _, _, _ in cases}
    start = time.monotonic()
    for rnd in range(a.warmup + a.n):
        for lang, label, nbytes, r, value in cases:  # alternate: fnbox, then bare, one of each per round
            dt, p = timed([a.fnbox, "call", "-"], r)
            peak = check_fnbox(p, value)
            bt, q = timed(BARE[lang], r, env=BARE_ENV)
            check_bare(q, value)
            if rnd >= a.warmup:
                t = times[(lang, label)]
                t["fnbox"].append(dt)
                t["bare"].append(bt)
                t["peak"] = max(t["peak"], peak)
        if time.monotonic() - start > a.budget:
            print(f"(time budget reached after {rnd + 1} rounds)", file=sys.stderr)
            break

    n = len(next(iter(times.values()))["fnbox"])
    print(f"fnbox large-data benchmark: echo, {n} rounds, {os.cpu_count()} CPUs, fnbox={a.fnbox}")
    print(f"{'case':<42}{'fnbox med s':>12}{'MB/s':>8}{'bare med s':>12}{'MB/s':>8}{'ratio':>8}{'min ratio':>10}"
          f"{'peak MiB':>10}")
    for lang, label, nbytes, _, _ in cases:
        t = times[(lang, label)]
        if not t["fnbox"]:
            continue
        f, b = statistics.median(t["fnbox"]), statistics.median(t["bare"])
        mb = nbytes / MB
        print(f"{lang + ' ' + label:<42}{f:>12.2f}{mb / f:>8.0f}{b:>12.2f}{mb / b:>8.0f}{f / b:>7.2f}x"
              f"{min(t['fnbox']) / min(t['bare']):>9.2f}x{t['peak'] / (1 << 20):>10.0f}")


if __name__ == "__main__":
    main()
