#!/usr/bin/python3
"""Cold-call benchmark: N sandboxed `fnbox call` runs of a trivial Python and JS function against the bare
interpreter running the same function and printing the same JSON result, alternating in one run so both
see the same machine state. Prints median, p90 and the fnbox/bare ratios per language.

    bench/bench_cold.py [-n 30] [--fnbox build/fnbox] [--baseline OLD_FNBOX]

The bare Python run is `/usr/bin/python3 -c` (with site, as a user would run it); a second bare row,
`python3 -I -S`, matches the flags the harness uses, to show what site import alone costs. PHP likewise: `php -r`
with the system's php.ini and conf.d (as fnbox runs it), and `php -n -r` to show what loading those costs.
C and C++ (when gcc/g++ are installed): "fnbox miss" calls new code every time (a nonce comment), so fnbox
compiles it (the runtime object and the cache directory, a private temporary one, stay warm, as on any
machine after its first C call); "fnbox hit" repeats one code (cached program). The bare side is gcc's own
`gcc -O2 -o prog prog.c && ./prog` of the same function with a main that prints the result (g++ and
<iostream> for C++), in a temporary directory: the ratio a user sees against compiling by hand.
Bare runs get a minimal environment (PATH, LANG), like the sandbox: variables such as NODE_EXTRA_CA_CERTS
or PYTHONSTARTUP in the caller's environment would otherwise slow the bare side down (NODE_EXTRA_CA_CERTS
alone adds ~20 ms to every node start). --host-env runs the bare side with the caller's environment.
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

PY_FN = "def add(a, b):\n    return a + b\n"
JS_FN = "function add(a, b) {\n  return a + b;\n}\n"
PY_BARE = PY_FN + "import json\nprint(json.dumps(add(1, 2)))\n"
JS_BARE = JS_FN + "console.log(JSON.stringify(add(1, 2)));\n"
RB_FN = "def add(a, b)\n  a + b\nend\n"
RB_BARE = RB_FN + "require 'json'\nputs JSON.generate(add(1, 2))\n"
PHP_FN = "function add($a, $b) { return $a + $b; }\n"
PHP_BARE = PHP_FN + "echo json_encode(add(1, 2)), \"\\n\";\n"
C_FN = "int add(int a, int b) { return a + b; }\n"
C_MAIN = "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", add(1, 2)); return 0; }\n"
CPP_MAIN = "#include <iostream>\nint main() { std::cout << add(1, 2) << std::endl; return 0; }\n"


BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def timed(argv, stdin=None, env=None):
    t0 = time.perf_counter()
    p = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    dt = (time.perf_counter() - t0) * 1000.0
    return dt, p


def check_fnbox(p):
    if p.returncode != 0:
        sys.exit(f"fnbox failed (exit {p.returncode}): {p.stdout[:500]!r} {p.stderr[:500]!r}")
    r = json.loads(p.stdout)
    if r.get("status") != "success" or r.get("result") != 3:
        sys.exit(f"fnbox call did not succeed: {p.stdout[:800]!r}")


def check_bare(p):
    if p.returncode != 0 or p.stdout.strip() != b"3":
        sys.exit(f"bare run failed (exit {p.returncode}): {p.stdout[:300]!r} {p.stderr[:300]!r}")


def compiled_cases(a, tmp):
    """(name, run, check) for C and C++: fnbox miss (new code each call), fnbox hit, bare compile + run."""
    env = dict(os.environ, FNBOX_CACHE_DIR=os.path.join(tmp, "cache"))
    cases = []
    for lang, cc, ext, main in [("c", "gcc", "c", C_MAIN), ("cpp", "g++", "cpp", CPP_MAIN)]:
        if not shutil.which(cc):
            continue
        counter = iter(range(10**9))

        def miss(lang=lang):
            code = C_FN + f"/* {os.getpid()}-{time.time_ns()}-{next(counter)} */\n"
            return timed([a.fnbox, "call", "-"], json.dumps({"language": lang, "code": code, "functionName": "add",
                                                              "args": [1, 2]}).encode(), env=env)

        hit_req = json.dumps({"language": lang, "code": C_FN, "functionName": "add", "args": [1, 2]}).encode()

        def bare(cc=cc, ext=ext, main=main):
            d = tempfile.mkdtemp(dir=tmp)
            src = os.path.join(d, f"prog.{ext}")
            with open(src, "w") as f:
                f.write(C_FN + main)
            t0 = time.perf_counter()
            c = subprocess.run([cc, "-O2", "-o", os.path.join(d, "prog"), src], capture_output=True, env=BARE_ENV)
            p = subprocess.run([os.path.join(d, "prog")], capture_output=True, env=BARE_ENV)
            dt = (time.perf_counter() - t0) * 1000.0
            if c.returncode != 0:
                sys.exit(f"{cc} failed: {c.stderr[:500]!r}")
            shutil.rmtree(d, ignore_errors=True)
            return dt, p

        cases += [
            (f"{lang} fnbox miss", miss, check_fnbox),
            (f"{lang} fnbox hit", lambda r=hit_req: timed([a.fnbox, "call", "-"], r, env=env), check_fnbox),
            (f"{lang} bare", bare, check_bare),
        ]
    return cases


def baseline_cases(a, reqs, names):
    """The same interpreted requests through the --baseline binary, for a before/after comparison."""
    out = []
    for lang, req in reqs.items():
        if f"{lang} fnbox" in names:
            out.append((f"{lang} baseline", lambda r=req: timed([a.baseline, "call", "-"], r), check_fnbox))
    return out


def pct(values, q):
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=30, help="timed calls per case (default 30)")
    ap.add_argument("--fnbox", default=os.environ.get("FNBOX") or str(REPO / "build" / "fnbox"))
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--budget", type=float, default=110.0, help="stop early after this many seconds")
    ap.add_argument("--host-env", action="store_true", help="bare runs inherit the caller's environment")
    ap.add_argument("--skip-extra", action="store_true", help="only python and node")
    ap.add_argument("--only-compiled", action="store_true", help="only the C and C++ cases")
    ap.add_argument("--baseline", help="another fnbox binary (e.g. the previous commit's) timed alternately with "
                    "--fnbox on the same requests: prints new/baseline ratios")
    a = ap.parse_args()
    env = None if a.host_env else BARE_ENV

    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        sys.exit("node not found")
    py_req = json.dumps({"language": "python", "code": PY_FN, "functionName": "add", "args": [1, 2]}).encode()
    js_req = json.dumps({"language": "javascript", "code": JS_FN, "functionName": "add", "args": [1, 2]}).encode()

    rb_req = json.dumps({"language": "ruby", "code": RB_FN, "functionName": "add", "args": [1, 2]}).encode()
    php_req = json.dumps({"language": "php", "code": PHP_FN, "functionName": "add", "args": [1, 2]}).encode()
    cases = [
        ("python fnbox", lambda: timed([a.fnbox, "call", "-"], py_req), check_fnbox),
        ("python bare", lambda: timed(["/usr/bin/python3", "-c", PY_BARE], env=env), check_bare),
        ("python bare -I -S", lambda: timed(["/usr/bin/python3", "-I", "-S", "-c", PY_BARE], env=env), check_bare),
        ("node fnbox", lambda: timed([a.fnbox, "call", "-"], js_req), check_fnbox),
        ("node bare", lambda: timed([node, "-e", JS_BARE], env=env), check_bare),
    ]
    if shutil.which("ruby") and not a.skip_extra:
        cases += [
            ("ruby fnbox", lambda: timed([a.fnbox, "call", "-"], rb_req), check_fnbox),
            ("ruby bare", lambda: timed(["ruby", "-e", RB_BARE], env=env), check_bare),
            ("ruby bare no-gems", lambda: timed(["ruby", "--disable-gems", "-e", RB_BARE], env=env), check_bare),
        ]
    if shutil.which("php") and not a.skip_extra:
        cases += [
            ("php fnbox", lambda: timed([a.fnbox, "call", "-"], php_req), check_fnbox),
            ("php bare", lambda: timed(["php", "-r", PHP_BARE], env=env), check_bare),
            # -n: no php.ini, no conf.d extensions (json is built in): what loading the system's extensions
            # costs, which the fnbox call (it reads the same ini files as `php bare`) pays too.
            ("php bare -n", lambda: timed(["php", "-n", "-r", PHP_BARE], env=env), check_bare),
        ]
    tmp = tempfile.mkdtemp(prefix="fnbox-bench-")
    if not a.skip_extra:
        cases += compiled_cases(a, tmp)
    if a.only_compiled:
        cases = [c for c in cases if c[0].startswith(("c ", "cpp "))]
    if a.baseline:
        cases += baseline_cases(a, {"python": py_req, "node": js_req, "ruby": rb_req, "php": php_req},
                                [c[0] for c in cases])
    times = {name: [] for name, _, _ in cases}
    for _ in range(a.warmup):
        for name, run, check in cases:
            check(run()[1])
    start = time.monotonic()
    for i in range(a.n):
        for name, run, check in cases:  # alternate: one of each per round
            dt, p = run()
            check(p)
            times[name].append(dt)
        if time.monotonic() - start > a.budget:
            print(f"(time budget reached after {i + 1} rounds)", file=sys.stderr)
            break

    shutil.rmtree(tmp, ignore_errors=True)
    n = len(times[cases[0][0]])
    print(f"fnbox cold-call benchmark: {n} rounds, {os.cpu_count()} CPUs, fnbox={a.fnbox}, "
          f"bare env: {'caller' if a.host_env else 'minimal'}")
    print(f"{'case':<20}{'median ms':>11}{'p90 ms':>10}{'min ms':>10}")
    for name, _, _ in cases:
        v = times[name]
        print(f"{name:<20}{statistics.median(v):>11.1f}{pct(v, 0.9):>10.1f}{min(v):>10.1f}")
    pairs = [("python", "python bare"), ("node", "node bare"), ("ruby", "ruby bare"), ("ruby", "ruby bare no-gems"),
             ("php", "php bare"), ("php", "php bare -n")]
    for lang, bare in pairs:
        if bare not in times:
            continue
        f, b = times[f"{lang} fnbox"], times[bare]
        print(f"ratio {lang} fnbox/{bare.split(' ', 1)[1]}: median {statistics.median(f) / statistics.median(b):.2f}x, "
              f"p90 {pct(f, 0.9) / pct(b, 0.9):.2f}x")
    for lang in ("c", "cpp"):
        if f"{lang} bare" not in times:
            continue
        f, h, b = times[f"{lang} fnbox miss"], times[f"{lang} fnbox hit"], times[f"{lang} bare"]
        print(f"ratio {lang} fnbox first call/gcc compile+run: median {statistics.median(f) / statistics.median(b):.2f}x "
              f"(goal <= 1.05x); cached/first: {statistics.median(h) / statistics.median(f):.3f}x (goal <= 0.1x)")
    for lang in ("python", "node", "ruby", "php"):
        if f"{lang} baseline" in times:
            f, b = times[f"{lang} fnbox"], times[f"{lang} baseline"]
            print(f"ratio {lang} fnbox/baseline: median {statistics.median(f) / statistics.median(b):.3f}x, "
                  f"p90 {pct(f, 0.9) / pct(b, 0.9):.3f}x")
    if "python bare -I -S" in times:
        f, b = times["python fnbox"], times["python bare -I -S"]
        print(f"ratio python fnbox/bare(-I -S): median {statistics.median(f) / statistics.median(b):.2f}x")


if __name__ == "__main__":
    main()
