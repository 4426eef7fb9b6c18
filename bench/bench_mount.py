#!/usr/bin/python3
"""Mount benchmark: what a host mount (`mount.dirs`, served over FUSE by src/fs/mountfs.c) costs a call.

    bench/bench_mount.py [-n 15] [--fnbox build/fnbox] [--files 100000] [--mb 64] [--only a,b,c]

(a) Lazy mount of a big tree: a host tree of --files small files (100 directories); the function reads ONE
    of them. Against the same call with no mount at all (an empty workspace; the function does the same
    work minus the read). The issue asks for lazy mode within 1.1x of the empty workspace: cost
    proportional to what the function touches. Rows for the other loading modes too (eager; eager with
    maxFileSize, which makes fnbox walk the whole tree up front; explicit), and lazy read-one-write-one
    (batch sync of one created file).
(b) Reading a --mb MB host file from a mount vs from the sandbox's own tmpfs (/tmp, no virtual files: the
    function writes the file there itself, untimed, then reads it), Python `open().read()`, timed inside the
    function: MB/s. The bare host read of the same (page-cached) file is the floor.
(c) Writing --mb MB into a mount (1 MB writes) with batch sync (the file reaches the host before the call
    returns; includeContents false so the result does not carry the 64 MB), vs the same writes into /tmp.
    In-function write MB/s and whole-call wall time (which includes fnbox turning the upper layer into a
    change and syncing it atomically).

Cases alternate within each round so all see the same machine state; medians are printed with the
ratios. The trees live under a temporary directory, removed at the end.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MB = 1000 * 1000

# (a): read one file (path given), or nothing (None); optionally write one next to it.
READ_ONE = ("def f(path, out=None):\n"
            "    n = 0\n"
            "    if path:\n"
            "        with open(path, 'rb') as fh:\n"
            "            n = len(fh.read())\n"
            "    if out:\n"
            "        with open(out, 'w') as fh:\n"
            "            fh.write('written')\n"
            "    return n\n")

# (b): read a file, timed inside the function; for tmpfs the function first makes the file itself.
READ_BIG = ("import os, time\n"
            "def f(path, make_mb):\n"
            "    if make_mb:\n"
            "        block = b'x' * 1000000\n"
            "        with open(path, 'wb') as fh:\n"
            "            for _ in range(make_mb):\n"
            "                fh.write(block)\n"
            "    t0 = time.perf_counter()\n"
            "    with open(path, 'rb') as fh:\n"
            "        n = len(fh.read())\n"
            "    dt = time.perf_counter() - t0\n"
            "    if make_mb:\n"
            "        os.remove(path)\n"
            "    return [n, dt]\n")

# (c): write a file in 1 MB writes, timed inside the function; /tmp copies are removed again.
WRITE_BIG = ("import os, time\n"
             "def f(path, mb, remove):\n"
             "    block = b'y' * 1000000\n"
             "    t0 = time.perf_counter()\n"
             "    with open(path, 'wb') as fh:\n"
             "        for _ in range(mb):\n"
             "            fh.write(block)\n"
             "    dt = time.perf_counter() - t0\n"
             "    if remove:\n"
             "        os.remove(path)\n"
             "    return [mb * 1000000, dt]\n")

BIG_LIMITS = {"workspaceBytes": 512 << 20, "tmpBytes": 512 << 20, "memoryBytes": 1 << 30,
              "fileSizeBytes": 512 << 20}


def fnbox_call(a, request):
    raw = json.dumps(request).encode()
    t0 = time.perf_counter()
    p = subprocess.run([a.fnbox, "call", "-"], input=raw, capture_output=True)
    dt = (time.perf_counter() - t0) * 1000.0
    if p.returncode != 0:
        sys.exit(f"fnbox failed (exit {p.returncode}): {p.stdout[:600]!r} {p.stderr[:600]!r}")
    r = json.loads(p.stdout)
    if r.get("status") != "success":
        sys.exit(f"fnbox call did not succeed: {p.stdout[:1200]!r}")
    return dt, r


def make_tree(root, nfiles):
    ndirs = 100
    per = (nfiles + ndirs - 1) // ndirs
    made = 0
    body = b"small file content\n" * 5
    for d in range(ndirs):
        dp = root / f"d{d:03d}"
        dp.mkdir()
        for i in range(per):
            if made == nfiles:
                break
            with open(dp / f"f{i:05d}.txt", "wb") as fh:
                fh.write(body)
            made += 1
    (root / "out").mkdir()
    for dirpath, _, _ in os.walk(root):
        os.chmod(dirpath, 0o755)
    return made, per, len(body)


def mount_req(root, loading=None, sync=None):
    m = {"dirs": {"/data": str(root)},
         "permissions": {"default": {"read": True, "list": True},
                         "rules": [{"pattern": "out/**", "allow": ["create", "modify", "delete"]}]}}
    if loading:
        m["loading"] = loading
    if sync:
        m["sync"] = sync
    return m


def report(title, times, base=None, extra=None):
    print(f"\n{title}")
    print(f"{'case':<34}{'median ms':>11}{'min ms':>10}{'max ms':>10}" + (f"{'ratio':>9}" if base else "")
          + (f"{extra[0]:>14}" if extra else ""))
    for name, v in times.items():
        line = f"{name:<34}{statistics.median(v):>11.1f}{min(v):>10.1f}{max(v):>10.1f}"
        if base:
            line += f"{statistics.median(v) / statistics.median(times[base]):>8.2f}x"
        if extra and name in extra[1]:
            line += f"{statistics.median(extra[1][name]):>14.0f}"
        print(line)


def rounds(a, cases):
    """cases: [(name, run)]; run() -> ms. Alternates, warmup first, stops at the time budget."""
    times = {name: [] for name, _ in cases}
    for _ in range(a.warmup):
        for _, run in cases:
            run()
    start = time.monotonic()
    for i in range(a.n):
        for name, run in cases:
            times[name].append(run())
        if time.monotonic() - start > a.budget:
            print(f"(time budget reached after {i + 1} rounds)", file=sys.stderr)
            break
    return times


def bench_a(a, tmp):
    root = tmp / "tree"
    root.mkdir()
    t0 = time.perf_counter()
    n, per, size = make_tree(root, a.files)
    print(f"(a) tree: {n} files of {size} bytes in 100 dirs, made in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    target = f"/data/d{42 if n >= 43 * per else 0:03d}/f{min(123, per - 1):05d}.txt"
    out = root / "out" / "w.txt"

    def run(request, want, cleanup=False):
        def go():
            dt, r = fnbox_call(a, request)
            if r.get("result") != want:
                sys.exit(f"unexpected result {r.get('result')!r}: {json.dumps(r)[:800]}")
            if cleanup:
                if out.read_text() != "written":
                    sys.exit("the written file did not reach the host")
                out.unlink()
            return dt
        return go

    empty = {"language": "python", "code": READ_ONE, "functionName": "f", "args": [None]}
    base = {"language": "python", "code": READ_ONE, "functionName": "f", "args": [target]}
    rel = target[len("/data/"):]
    cases = [
        ("no mount (empty workspace)", run(empty, 0)),
        ("lazy, read 1", run(dict(base, mount=mount_req(root, {"mode": "lazy"})), size)),
        ("lazy, read 1 + write 1 (batch)", run(dict(base, args=[target, "/data/out/w.txt"],
                                                    mount=mount_req(root, {"mode": "lazy"}, {"mode": "batch"})),
                                               size, True)),
        ("eager, read 1", run(dict(base, mount=mount_req(root, {"mode": "eager"})), size)),
        ("eager+maxFileSize (walks), read 1", run(dict(base, mount=mount_req(root, {"mode": "eager",
                                                                                    "maxFileSize": 1 << 20})), size)),
        ("explicit (include 1), read 1", run(dict(base, mount=mount_req(root, {"mode": "explicit",
                                                                               "include": [rel]})), size)),
    ]
    times = rounds(a, cases)
    report(f"(a) a {n}-file host tree, the function reads one file ({len(times[cases[0][0]])} rounds)", times,
           base="no mount (empty workspace)")
    ratio = statistics.median(times["lazy, read 1"]) / statistics.median(times["no mount (empty workspace)"])
    print(f"ratio lazy/empty workspace: {ratio:.2f}x (goal <= 1.1x)")
    shutil.rmtree(root)


def bench_b(a, tmp):
    root = tmp / "big"
    root.mkdir()
    os.chmod(root, 0o755)
    big = root / "big.bin"
    with open(big, "wb") as fh:
        block = os.urandom(MB)
        for _ in range(a.mb):
            fh.write(block)
    os.chmod(big, 0o644)
    mbps = {}

    def run(name, request):
        def go():
            dt, r = fnbox_call(a, request)
            n, inside = r["result"]
            if n != a.mb * MB:
                sys.exit(f"{name}: read {n} bytes")
            mbps.setdefault(name, []).append(n / MB / inside)
            return dt
        return go

    def bare():
        t0 = time.perf_counter()
        with open(big, "rb") as fh:
            n = len(fh.read())
        dt = time.perf_counter() - t0
        mbps.setdefault("bare host read", []).append(n / MB / dt)
        return dt * 1000.0

    common = {"language": "python", "code": READ_BIG, "functionName": "f", "limits": BIG_LIMITS}
    cases = [
        ("mount (lazy)", run("mount (lazy)", dict(common, args=["/data/big.bin", 0], mount=mount_req(root)))),
        ("sandbox tmpfs /tmp", run("sandbox tmpfs /tmp", dict(common, args=["/tmp/big.bin", a.mb]))),
        ("bare host read", bare),
    ]
    times = rounds(a, cases)
    print(f"\n(b) reading a {a.mb} MB file, Python open().read() ({len(times['bare host read'])} rounds)")
    print(f"{'case':<34}{'read MB/s':>11}{'min':>9}{'max':>9}{'call ms':>10}")
    for name in times:
        v = mbps[name]
        print(f"{name:<34}{statistics.median(v):>11.0f}{min(v):>9.0f}{max(v):>9.0f}"
              f"{statistics.median(times[name]):>10.1f}")
    m, t = statistics.median(mbps["mount (lazy)"]), statistics.median(mbps["sandbox tmpfs /tmp"])
    print(f"ratio mount/tmpfs read throughput: {m / t:.2f}x (mount read takes {t / m:.2f}x as long)")
    shutil.rmtree(root)


def bench_c(a, tmp):
    root = tmp / "sink"
    (root / "out").mkdir(parents=True)
    os.chmod(root, 0o755)
    os.chmod(root / "out", 0o755)
    host_file = root / "out" / "big.bin"
    mbps = {}

    def run(name, request, synced):
        def go():
            dt, r = fnbox_call(a, request)
            n, inside = r["result"]
            mbps.setdefault(name, []).append(n / MB / inside)
            if synced:
                if host_file.stat().st_size != a.mb * MB:
                    sys.exit(f"{name}: the host file has {host_file.stat().st_size} bytes")
                host_file.unlink()
            return dt
        return go

    def bare():
        t0 = time.perf_counter()
        block = b"y" * MB
        with open(tmp / "bare.bin", "wb") as fh:
            for _ in range(a.mb):
                fh.write(block)
        dt = time.perf_counter() - t0
        os.remove(tmp / "bare.bin")
        mbps.setdefault("bare host write (page cache)", []).append(a.mb / dt)
        return dt * 1000.0

    common = {"language": "python", "code": WRITE_BIG, "functionName": "f", "limits": BIG_LIMITS,
              "resultOptions": {"includeContents": False}}
    cases = [
        ("mount, batch sync", run("mount, batch sync",
                                  dict(common, args=["/data/out/big.bin", a.mb, False],
                                       mount=mount_req(root, sync={"mode": "batch"})), True)),
        ("sandbox tmpfs /tmp", run("sandbox tmpfs /tmp", dict(common, args=["/tmp/big.bin", a.mb, True]), False)),
        ("bare host write (page cache)", bare),
    ]
    times = rounds(a, cases)
    print(f"\n(c) writing {a.mb} MB in 1 MB writes ({len(times['sandbox tmpfs /tmp'])} rounds)")
    print(f"{'case':<34}{'write MB/s':>11}{'min':>9}{'max':>9}{'call ms':>10}")
    for name in times:
        v = mbps[name]
        print(f"{name:<34}{statistics.median(v):>11.0f}{min(v):>9.0f}{max(v):>9.0f}"
              f"{statistics.median(times[name]):>10.1f}")
    m, t = statistics.median(times["mount, batch sync"]), statistics.median(times["sandbox tmpfs /tmp"])
    print(f"ratio whole call mount+sync/tmpfs: {m / t:.2f}x; in-function write throughput mount/tmpfs: "
          f"{statistics.median(mbps['mount, batch sync']) / statistics.median(mbps['sandbox tmpfs /tmp']):.2f}x")
    shutil.rmtree(root)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=15, help="timed rounds per part (default 15)")
    ap.add_argument("--fnbox", default=os.environ.get("FNBOX") or str(REPO / "build" / "fnbox"))
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--budget", type=float, default=120.0, help="stop a part early after this many seconds")
    ap.add_argument("--files", type=int, default=100000, help="files in the (a) tree (default 100000)")
    ap.add_argument("--mb", type=int, default=64, help="size of the (b)/(c) file in MB (default 64)")
    ap.add_argument("--only", default="a,b,c", help="parts to run, e.g. a or b,c")
    a = ap.parse_args()
    a.fnbox = os.path.abspath(a.fnbox)
    tmp = Path(tempfile.mkdtemp(prefix="fnbox-bench-mount-"))
    os.chmod(tmp, 0o755)  # the sandbox user (nobody, when fnbox runs as root) reads the host trees
    print(f"fnbox mount benchmark: {os.cpu_count()} CPUs, fnbox={a.fnbox}")
    try:
        parts = set(a.only.split(","))
        if "a" in parts:
            bench_a(a, tmp)
        if "b" in parts:
            bench_b(a, tmp)
        if "c" in parts:
            bench_c(a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
