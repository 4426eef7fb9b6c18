#!/usr/bin/python3
"""System-tree walk benchmark: what walking the sandbox's /usr costs against the warm host (issue 30).

    bench/bench_walk.py [-n 5] [--fnbox build/fnbox] [--weak build-weak/fnbox] [--tree /usr] [--live 2]
                        [--environments FILE --environment NAME]

The sandbox's system tree is a per-call read-only overlay of the host's (src/sandbox/rootfs.c overlay_ro:
every call has its own inodes, so its own flock/fcntl locks). A fresh overlay superblock has no dentries or
inodes: every walk in a call is a cold one. Two walks, each timed the same way on the host and inside
`fnbox exec` (the same script, timed by itself, so sandbox start-up is not counted):

  find       `find TREE > /dev/null` from sh, timed with date +%s%N around it
  stat-walk  Python os.walk + os.stat of every file (what a scan of installed packages does)

Round by round (alternating, so every case sees the same machine): host, sandbox, the second of two walks in
one sandbox (its overlay warm: what reusing or pre-walking overlays could at best give), and, when a build with
defence switches exists (--weak, default build-weak/fnbox), the same sandbox with the "system-overlay"
defence switched off (the tree bound, the host's inodes): the share of the cost that is the overlay. The
host is walked once first, untimed, so its caches are warm. Prints medians and the ratios
sandbox/host (issue 30's goal: <= 1.5x).

Memory per call: the stat-walk call's peak memory (its cgroup's, which is charged with the overlay's
dentries and inodes), and the slab delta of --live sandboxes alive at once, idle and then each having walked
the tree (/proc/meminfo Slab; the machine's other activity is noise here, the per-sandbox figure is what
matters, tens of MB apart). The sandboxes are held alive by sleeping until a wall-clock deadline (the
sandbox shares the host's clock), so the benchmark ends nothing itself.

With --environment, the sandbox walks the environment's root (its TREE) and the host ROOT/TREE: the same
files, the same per-call overlay.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FIND_SH = ('s=$(date +%s%N); find {tree} > /dev/null 2>&1; e=$(date +%s%N); '
           'echo "$(( (e - s) / 1000 ))"')  # microseconds
STAT_PY = r'''
import os, sys, time
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
    t0 = time.perf_counter()
    n = 0
    for root, dirs, files in os.walk(sys.argv[1]):
        for name in files:
            try:
                os.stat(os.path.join(root, name))
                n += 1
            except OSError:
                pass
    print(int((time.perf_counter() - t0) * 1e6), n)
'''
# --live: ready, sleep until t1; walk, report, sleep until t2 (absolute wall-clock deadlines from the host)
LIVE_PY = r'''
import os, sys, time
def until(t):
    while time.time() < t:
        time.sleep(0.05)
tree, t1, t2 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print("ready", flush=True)
until(t1)
for root, dirs, files in os.walk(tree):
    for name in files:
        try:
            os.stat(os.path.join(root, name))
        except OSError:
            pass
print("walked", flush=True)
until(t2)
'''


def host_find(tree):
    out = subprocess.run(["sh", "-c", FIND_SH.format(tree=tree)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1e3


def host_stat(tree):
    out = subprocess.run([sys.executable, "-c", STAT_PY, tree], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1e3


ENVIRONMENT = {}  # --environment: {"name": NAME, "file": FILE}, added to every sandbox's request


def exec_argv(exe, *extra):
    return [exe, "exec", *extra] + (["--environments", ENVIRONMENT["file"]] if ENVIRONMENT else [])


def fnbox_exec(exe, request, env=None):
    if ENVIRONMENT:
        request = {**request, "environment": ENVIRONMENT["name"]}
    run = subprocess.run(exec_argv(exe), input=json.dumps(request), capture_output=True, text=True, env=env,
                         timeout=300)
    try:
        res = json.loads(run.stdout)
    except json.JSONDecodeError:
        sys.exit(f"fnbox exec gave no result (exit {run.returncode}): {run.stderr[-500:]}")
    if res.get("status") != "success" or res.get("exitCode") != 0:
        sys.exit(f"fnbox exec failed: {json.dumps(res)[:800]}")
    return res


def box_find(exe, tree, env, walks=1):
    """The last of `walks` walks in one call (the 2nd: the same overlay, warm)."""
    cmd = "; ".join([FIND_SH.format(tree=tree)] * walks)
    res = fnbox_exec(exe, {"command": cmd, "timeout": 120}, env)
    return int(res["stdout"].split()[-1]) / 1e3, res["usage"]


def box_stat(exe, tree, env, walks=1):
    # memoryBytes: 1 GiB, so the overlay's dentries and inodes (charged to the call) are not reclaimed
    # under the default limit mid-walk: the figure is the walk's, and peakMemoryBytes shows the whole charge
    res = fnbox_exec(exe, {"code": STAT_PY, "language": "python3", "args": [tree, str(walks)], "timeout": 120,
                           "limits": {"memoryBytes": 1 << 30}}, env)
    return int(res["stdout"].split("\n")[-2].split()[0]) / 1e3, res["usage"]


def tree_fstype(exe, tree, env):
    """The file system type the sandbox sees at `tree` (its mount in /proc/self/mountinfo)."""
    res = fnbox_exec(exe, {"command": f"grep ' {tree} ' /proc/self/mountinfo", "timeout": 30}, env)
    fields = res["stdout"].split()
    return fields[fields.index("-") + 1] if "-" in fields else "?"


def slab_kb():
    with open("/proc/meminfo") as fh:
        return {k.rstrip(":"): int(v) for k, v, *_ in (line.split() for line in fh)
                if k.rstrip(":") in ("Slab", "SReclaimable", "SUnreclaim")}


def wait_lines(procs, word, deadline):
    """Reads each streamed exec until its program printed `word` on stdout; False if the deadline passed."""
    for p in procs:
        while time.time() < deadline:
            line = p.stdout.readline()
            if not line:
                return False
            msg = json.loads(line)
            if msg.get("type") == "stdout" and word in msg.get("data", ""):
                break
            if msg.get("type") == "result":
                sys.exit(f"live sandbox ended early: {line[:500]}")
        else:
            return False
    return True


def live_memory(exe, tree, k, walk_budget):
    """Slab with k sandboxes alive: none, idle, each having walked the tree (then all end by themselves)."""
    base = slab_kb()
    t1 = time.time() + 8
    t2 = t1 + walk_budget
    req = {"code": LIVE_PY, "language": "python3", "args": [tree, str(t1), str(t2)],
           "timeout": int(t2 - time.time()) + 30, "limits": {"memoryBytes": 1 << 30}}
    if ENVIRONMENT:
        req["environment"] = ENVIRONMENT["name"]
    procs = [subprocess.Popen(exec_argv(exe, "--stream"), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for _ in range(k)]
    for p in procs:
        p.stdin.write(json.dumps(req))
        p.stdin.close()
    idle = slab_kb() if wait_lines(procs, "ready", t1) else None
    walked = slab_kb() if wait_lines(procs, "walked", t2) else None
    for p in procs:
        p.stdout.read()
        p.wait()
    time.sleep(1)
    after = slab_kb()
    return base, idle, walked, after


def med(v):
    return statistics.median(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--rounds", type=int, default=5)
    ap.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    ap.add_argument("--weak", default=os.environ.get("FNBOX_WEAK") or str(REPO / "build-weak" / "fnbox"),
                    help="a build with defence switches (make BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES): "
                         "adds the case with the system tree bound instead of overlaid; '' to skip")
    ap.add_argument("--tree", default="/usr")
    ap.add_argument("--live", type=int, default=2, help="sandboxes alive at once for the memory figure (0: skip)")
    ap.add_argument("--environments", help="an environments file (fnbox exec --environments)")
    ap.add_argument("--environment", help="walk this environment's root: its TREE in the sandbox against "
                                          "ROOT/TREE on the host")
    ap.add_argument("--walk-budget", type=float, default=20.0, help="seconds the live sandboxes have to walk")
    a = ap.parse_args()
    host_tree = a.tree
    if a.environment:
        with open(a.environments or os.environ["FNBOX_ENVIRONMENTS"]) as fh:
            root = json.load(fh)["environments"][a.environment]["root"]
        ENVIRONMENT.update(name=a.environment, file=a.environments or os.environ["FNBOX_ENVIRONMENTS"])
        host_tree = os.path.join(root, a.tree.lstrip("/"))

    # (name, fnbox or None for the host, environment, walks in the call: the last is timed)
    cases = [("host", None, None, 1), ("fnbox exec", a.fnbox, None, 1),
             ("fnbox exec, 2nd walk in the call (warm)", a.fnbox, None, 2)]
    if a.weak and os.access(a.weak, os.X_OK):
        env = {**os.environ, "FNBOX_DISABLE_DEFENCES": "system-overlay"}
        if tree_fstype(a.weak, a.tree, env) != "overlay":
            cases.append(("fnbox exec, tree bound (no defence)", a.weak, env, 1))
        else:  # a build without -DFB_DEFENCE_SWITCHES keeps every defence
            print(f"(--weak {a.weak} still overlays {a.tree}: no defence switches; case left out)", file=sys.stderr)
    where = f"environment {a.environment} ({host_tree} on the host)" if a.environment else a.tree
    print(f"fnbox system-tree walk benchmark: {os.cpu_count()} CPUs, tree {where}, fnbox={a.fnbox}")
    host_find(host_tree), host_stat(host_tree)  # warm the host's caches
    times = {w: {c[0]: [] for c in cases} for w in ("find", "stat-walk")}
    peak = []
    for r in range(a.rounds):
        for name, exe, env, walks in cases:
            times["find"][name].append(host_find(host_tree) if exe is None else box_find(exe, a.tree, env, walks)[0])
        for name, exe, env, walks in cases:
            if exe is None:
                times["stat-walk"][name].append(host_stat(host_tree))
                continue
            ms, usage = box_stat(exe, a.tree, env, walks)
            times["stat-walk"][name].append(ms)
            if name == "fnbox exec":
                peak.append(usage["peakMemoryBytes"])
        print(f"  round {r + 1}: " + "; ".join(
            f"{w} " + " / ".join(f"{times[w][c[0]][-1]:.0f}" for c in cases) for w in times), file=sys.stderr)

    for w, by in times.items():
        print(f"\n{w} of {where} ({a.rounds} rounds, ms timed inside the walk)")
        print(f"{'case':<40}{'median':>9}{'min':>9}{'max':>9}{'x host':>9}")
        for name, v in by.items():
            print(f"{name:<40}{med(v):>9.0f}{min(v):>9.0f}{max(v):>9.0f}{med(v) / med(by['host']):>8.2f}x")
    ratios = {w: med(by["fnbox exec"]) / med(by["host"]) for w, by in times.items()}
    print("\nratios fnbox exec / warm host: " + ", ".join(f"{w} {x:.2f}x" for w, x in ratios.items())
          + " (goal <= 1.5x)")
    print(f"stat-walk call's peak memory (cgroup, overlay dentries+inodes included): {med(peak) / 2**20:.0f} MiB")

    if a.live > 0:
        base, idle, walked, after = live_memory(a.fnbox, a.tree, a.live, a.walk_budget)
        print(f"\nslab with {a.live} live sandboxes (KiB, /proc/meminfo): none {base['Slab']}, "
              f"idle {idle['Slab'] if idle else '?'}, each walked {walked['Slab'] if walked else '?'}, "
              f"all ended {after['Slab']}")
        if idle and walked:
            print(f"per sandbox: idle {(idle['Slab'] - base['Slab']) / a.live / 1024:.1f} MiB, "
                  f"after a full walk {(walked['Slab'] - base['Slab']) / a.live / 1024:.1f} MiB "
                  f"(reclaimable {(walked['SReclaimable'] - base['SReclaimable']) / a.live / 1024:.1f} MiB); "
                  f"freed when the call ends: {(walked['Slab'] - after['Slab']) / a.live / 1024:.1f} MiB")
        else:
            print("(the live sandboxes did not all report in time: raise --walk-budget)")


if __name__ == "__main__":
    main()
