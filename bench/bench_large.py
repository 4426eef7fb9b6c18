#!/usr/bin/python3
"""Large-data benchmark: `fnbox call` echoing a large argument back as its result, 10 MB and 64 MB, a string and
structured data (small records {"id", "name", "ok"}: ~290,000 per 10 MB), against the floor, the same JSON piped
through the bare interpreter (read stdin, JSON-decode, JSON-encode, write stdout), alternating in one run so
both see the same machine state. With --baseline, another fnbox binary (e.g. the build before a change) runs in
the same rounds, so before and after print side by side.

    bench/bench_large.py [-n 3] [--fnbox build/fnbox] [--baseline OLD/fnbox] [--langs python,javascript,ruby,php]
                         [--sizes 10,64] [--kinds string,structured]

Printed per language and payload: median wall time of fnbox (and the baseline) and of the bare pipe, their
ratio; the fnbox process's own peak RSS ("fnbox MiB": VmHWM of that one process, read from /proc while it is
blocked writing its answer to our pipe, i.e. after every allocation of the call; the sandbox's processes are
not in it), its ratio to the payload; the sandbox's peak ("sbx MiB": the result's usage.peakMemoryBytes, the
call's cgroup peak or its largest process) against the bare interpreter's peak RSS (its VmHWM, read the same way).

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
import threading
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


LARGE_LIMITS = {"resultBytes": 256 * MB, "fileSizeBytes": 256 * MB, "memoryBytes": 4096 * (1 << 20)}


def payload(kind, size_mb):
    nbytes = size_mb * MB
    if kind == "string":
        return f"{size_mb} MB string", "0123456789abcdef" * (nbytes // 16)
    items, size, i = [], 2, 0
    while size < nbytes:
        v = {"id": i, "name": f"n{i}", "ok": i % 2 == 0}
        items.append(v)
        size += len(json.dumps(v, separators=(",", ":"))) + 1
        i += 1
    return f"{size_mb} MB records ({len(items) / 1e3:.0f}k)", items


def vm_hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_fnbox(binary, request):
    """(seconds, stdout, own peak RSS): the peak is read once the answer starts to arrive; fnbox is then blocked
    writing to our pipe (the answer is larger than a pipe holds), so every allocation of the call is behind it."""
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "call", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    writer = threading.Thread(target=lambda: (p.stdin.write(request), p.stdin.close()))
    writer.start()
    first = p.stdout.read(1)
    peak = vm_hwm(p.pid)
    rest = p.stdout.read()
    p.wait()
    dt = time.perf_counter() - t0
    writer.join()
    return dt, p.returncode, first + rest, peak


def run_bare(argv, request):
    """(seconds, returncode, stdout, peak RSS of the bare process): VmHWM read as its output starts, as for
    fnbox (wait4's ru_maxrss would count this benchmark's own pages: the kernel keeps the high-water mark of
    the memory a vfork child shares with us until its exec)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=BARE_ENV)
    writer = threading.Thread(target=lambda: (p.stdin.write(request), p.stdin.close()))
    writer.start()
    first = p.stdout.read(1)
    peak = vm_hwm(p.pid)
    rest = p.stdout.read()
    p.wait()
    dt = time.perf_counter() - t0
    writer.join()
    return dt, p.returncode, first + rest, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=3, help="timed calls per case (default 3)")
    ap.add_argument("--fnbox", default=os.environ.get("FNBOX") or str(REPO / "build" / "fnbox"))
    ap.add_argument("--baseline", help="another fnbox binary to time in the same rounds (before/after)")
    ap.add_argument("--langs", default="python,javascript,ruby,php")
    ap.add_argument("--sizes", default="10,64", help="payload sizes in MB (default 10,64)")
    ap.add_argument("--kinds", default="string,structured")
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--budget", type=float, default=1800.0, help="stop early after this many seconds")
    a = ap.parse_args()
    langs = [lang for lang in a.langs.split(",") if lang]
    for lang in langs:
        if not shutil.which(BARE[lang][0]):
            sys.exit(f"{BARE[lang][0]} not found")
    bins = [("fnbox", a.fnbox)] + ([("base", a.baseline)] if a.baseline else [])

    cases = []      # (lang, payload label, bytes, fnbox request, expected value)
    for size in [int(x) for x in a.sizes.split(",") if x]:
        for kind in [k for k in a.kinds.split(",") if k]:
            label, value = payload(kind, size)
            for lang in langs:
                # Over the default resultBytes (16 MiB) and fileSizeBytes (64 MiB); structured data takes
                # several times its size in an interpreter: the request raises the three limits it needs.
                r = json.dumps({"language": lang, "code": ECHO[lang], "functionName": "f", "args": [value],
                                "limits": LARGE_LIMITS}, ensure_ascii=False, separators=(",", ":")).encode()
                cases.append((lang, label, size * MB, r, value))

    def check_fnbox(name, rc, out, value):
        if rc != 0:
            sys.exit(f"{name} failed (exit {rc}): {out[:500]!r}")
        r = json.loads(out)
        if r.get("status") != "success" or r.get("result") != value:
            sys.exit(f"{name} call did not echo the payload: {out[:800]!r}")
        return r["usage"]["peakMemoryBytes"]

    def check_bare(rc, out, value):
        if rc != 0 or json.loads(out) != value:
            sys.exit(f"bare run failed (exit {rc}): {out[:300]!r}")

    stats = {(lang, label): {"bare": [], "bare_rss": 0, **{n: [] for n, _ in bins},
                             **{n + "_own": 0 for n, _ in bins}, **{n + "_sbx": 0 for n, _ in bins}}
             for lang, label, _, _, _ in cases}
    start = time.monotonic()
    for rnd in range(a.warmup + a.n):
        for lang, label, nbytes, r, value in cases:  # alternate: each fnbox, then bare, one of each per round
            t = stats[(lang, label)]
            timed = rnd >= a.warmup
            for name, binary in bins:
                dt, rc, out, own = run_fnbox(binary, r)
                sbx = check_fnbox(name, rc, out, value)
                del out
                if timed:
                    t[name].append(dt)
                    t[name + "_own"] = max(t[name + "_own"], own)
                    t[name + "_sbx"] = max(t[name + "_sbx"], sbx)
            bt, rc, out, rss = run_bare(BARE[lang], r)
            check_bare(rc, out, value)
            del out
            if timed:
                t["bare"].append(bt)
                t["bare_rss"] = max(t["bare_rss"], rss)
        if time.monotonic() - start > a.budget:
            print(f"(time budget reached after {rnd + 1} rounds)", file=sys.stderr)
            break

    n = len(next(iter(stats.values()))["bare"])
    print(f"fnbox large-data benchmark: echo, {n} rounds, {os.cpu_count()} CPUs")
    for name, binary in bins:
        print(f"  {name} = {binary}")
    head = f"{'case':<34}{'bare s':>8}{'bare MiB':>9}"
    for name, _ in bins:
        head += f"{name + ' s':>9}{'ratio':>7}{name + ' MiB':>10}{'xload':>6}{'sbx MiB':>8}{'xbare':>6}"
    print(head)
    mib = 1 << 20
    for lang, label, nbytes, _, _ in cases:
        t = stats[(lang, label)]
        if not t["bare"]:
            continue
        b = statistics.median(t["bare"])
        line = f"{lang + ' ' + label:<34}{b:>8.2f}{t['bare_rss'] / mib:>9.0f}"
        for name, _ in bins:
            f = statistics.median(t[name])
            own, sbx = t[name + "_own"], t[name + "_sbx"]
            line += (f"{f:>9.2f}{f / b:>6.2f}x{own / mib:>10.0f}{own / nbytes:>5.1f}x{sbx / mib:>8.0f}"
                     f"{sbx / t['bare_rss']:>5.2f}x")
        print(line)
    print("ratio: fnbox / bare wall time (median); MiB: fnbox's own peak RSS, xload: that / payload bytes; "
          "sbx: the sandbox's peak (usage.peakMemoryBytes), xbare: that / the bare interpreter's max RSS")


if __name__ == "__main__":
    main()
