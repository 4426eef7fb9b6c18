#!/usr/bin/python3
"""Output benchmark: a function printing 50 MB in a loop, through `fnbox call` (not streamed) and `fnbox call
--stream`, with this build and a baseline (e.g. the build before streamed output was line-buffered),
alternating in one run so both see the same machine state. A streamed run keeps the runtime's block buffer
and has a thread of the harness flush it every 5 ms (docs/internals/harness-protocol.md, "stream"); line
buffering, a write(2) per line, made a streamed loop of short lines 3-4x slower. Both ratios should stay
~1.00 against the build before streamed output was flushed at all.

    bench/bench_output.py [-n 3] [--fnbox build/fnbox] [--baseline OLD/fnbox] [--langs python,ruby,c]
                          [--mb 50] [--lines short,long] [--memory-mb N]

short lines are 20 bytes (`print` of a 19-character string: 2.5 M lines for 50 MB), long ones 1000 bytes.
Printed per language, line length and mode: the median wall time of each build and new/old. The --stream
output is read (and dropped) by this process as it comes, as a client would.
"""
import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LOOPS = {
    "python": "def f():\n    s = 'x' * {w}\n    for _ in range({n}):\n        print(s)\n    return 0\n",
    "ruby": "def f\n  s = 'x' * {w}\n  {n}.times {{ puts s }}\n  0\nend\n",
    "php": "<?php\nfunction f() {{ $s = str_repeat('x', {w}) . \"\\n\"; for ($i = 0; $i < {n}; $i++) echo $s; return 0; }}\n",
    "javascript": "function f() {{ const s = 'x'.repeat({w}); for (let i = 0; i < {n}; i++) console.log(s); return 0; }}\n",
    "c": "#include <stdio.h>\n#include <string.h>\nint f(void) {{ static char s[{w} + 1]; memset(s, 'x', {w}); "
         "for (int i = 0; i < {n}; i++) puts(s); return 0; }}\n",
}
WIDTH = {"short": 20, "long": 1000}


def request(lang, lines, mb, memory_mb=None):
    width = WIDTH[lines]
    n = mb * 1000 * 1000 // width
    code = LOOPS[lang].format(w=width - 1, n=n)
    limits = {"stdoutBytes": mb * 1000 * 1000 + (1 << 20)}
    if memory_mb:
        limits["memoryBytes"] = memory_mb << 20
    return json.dumps({"language": lang, "code": code, "functionName": "f", "timeout": 300,
                       "limits": limits}).encode()


def run(exe, body, stream):
    argv = [exe, "call"] + (["--stream"] if stream else []) + ["-"]
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(body)
    p.stdin.close()
    out = bytearray()
    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        out += chunk
    p.wait()
    dt = time.monotonic() - t0
    head = bytes(out[out.rfind(b"\n{", 0, len(out) - 1) + 1:][:80])  # the result line's start
    if b'"status":"success"' not in head:
        raise SystemExit(f"{exe}: not a success: {head!r}")
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=3, help="rounds (median taken)")
    ap.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    ap.add_argument("--baseline", default="/work/main/build/fnbox")
    ap.add_argument("--langs", default="python,ruby,c")
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--lines", default="short,long")
    ap.add_argument("--memory-mb", type=int, help="limits.memoryBytes (Node queues what a full pipe does not "
                    "take yet: a streamed 50 MB loop can pass the 256 MiB default)")
    a = ap.parse_args()
    builds = {"old": a.baseline, "new": a.fnbox}
    print(f"{'lang':<11}{'lines':<7}{'mode':<9}{'old s':>8}{'new s':>8}{'new/old':>9}")
    for lang in a.langs.split(","):
        for lines in a.lines.split(","):
            body = request(lang, lines, a.mb, a.memory_mb)
            for stream in (False, True):
                times = {k: [] for k in builds}
                for _ in range(a.n):
                    for k, exe in builds.items():  # alternating: both see the same machine state
                        times[k].append(run(exe, body, stream))
                old, new = (statistics.median(times[k]) for k in ("old", "new"))
                mode = "stream" if stream else "plain"
                print(f"{lang:<11}{lines:<7}{mode:<9}{old:>8.2f}{new:>8.2f}{new / old:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
