#!/usr/bin/python3
"""Dependencies benchmark (issue 30's goals), alternating in one run so both sides see the same machine:

  1. a `fnbox call` whose dependency layer is cached (meta.dependencies.*.cache "hit") against the same call
     without dependencies: the cost of placing a layer (goal <= 1.1x);
  2. a first install (a fresh cache each time: "miss", the installer in its build sandbox, the copy out, the
     publish) plus its call, against the bare installer into a directory from the same index: the cost of
     the sandbox and the layer (goal <= 1.3x).

The index is the tests' own (tests/integration/registrylib.py): a PEP 503 index of fixture wheels built with
Debian's pip, served on loopback; with --npm (default when verdaccio is installed) also verdaccio with the
tests' fixture packages, for npm.

    bench/bench_deps.py [-n 15] [--fnbox build/fnbox] [--no-npm]
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
sys.path.insert(0, str(REPO / "tests" / "integration"))
import registrylib  # noqa: E402

PY_CALL = "def f():\n    return 1\n"
JS_CALL = "function f() { return 1; }"
BARE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}


def timed(argv, stdin=None, env=None, check=None, out=None):
    t0 = time.perf_counter()
    p = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    dt = (time.perf_counter() - t0) * 1000.0
    if check:
        check(p)
    if out is not None:
        out.append(p)
    return dt


def fnbox_ok(want_cache=None, eco="python"):
    def check(p):
        r = json.loads(p.stdout or b"{}")
        if r.get("status") != "success":
            sys.exit(f"fnbox call failed: {p.stdout[:800]!r} {p.stderr[:300]!r}")
        got = r.get("meta", {}).get("dependencies", {}).get(eco, {}).get("cache")
        if want_cache and got != want_cache:
            sys.exit(f"expected cache {want_cache}, got {got}: {p.stdout[:600]!r}")
    return check


def bare_ok(p):
    if p.returncode != 0:
        sys.exit(f"bare installer failed: {p.stdout[-800:]!r} {p.stderr[-800:]!r}")


def traversable_dir(parent, name):
    """A directory a sandbox's init (nobody, under root) can reach: the layers live under it."""
    d = Path(tempfile.mkdtemp(prefix=name, dir=parent))
    d.chmod(0o755)
    return d


def stats(xs):
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.9))]


def row(name, xs):
    med, p90 = stats(xs)
    print(f"  {name:<46} median {med:8.1f} ms   p90 {p90:8.1f} ms")
    return med


def bench_eco(a, eco, lang, deps, code, bare_argv, env_file, work):
    print(f"{eco}: dependencies {deps}")
    base_env = dict(os.environ, FNBOX_ENVIRONMENTS=env_file)
    cached = dict(base_env, FNBOX_CACHE_DIR=str(traversable_dir(work, "cache-")))
    with_deps = json.dumps({"language": lang, "code": code, "dependencies": {eco: deps}}).encode()
    without = json.dumps({"language": lang, "code": code}).encode()
    timed([a.fnbox, "call", "-"], with_deps, cached, fnbox_ok("miss", eco))  # fill the cache
    hit, plain = [], []
    for _ in range(a.n):
        hit.append(timed([a.fnbox, "call", "-"], with_deps, cached, fnbox_ok("hit", eco)))
        plain.append(timed([a.fnbox, "call", "-"], without, cached, fnbox_ok()))
    m_hit = row("call, layer cached (hit)", hit)
    m_plain = row("same call without dependencies", plain)
    first, install, bare = [], [], []
    for i in range(max(3, a.n // 3)):
        fresh = dict(base_env, FNBOX_CACHE_DIR=str(traversable_dir(work, "fresh-")))
        procs = []
        first.append(timed([a.fnbox, "call", "-"], with_deps, fresh, fnbox_ok("miss", eco), procs))
        install.append(json.loads(procs[0].stdout)["meta"]["dependencies"][eco]["installMs"])
        target = Path(tempfile.mkdtemp(prefix="bare-", dir=work))
        bare.append(timed([arg.replace("{target}", str(target)) for arg in bare_argv], None, BARE_ENV, bare_ok))
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(target, ignore_errors=True)
    m_first = row("first install + call (miss), whole call", first)
    m_install = row("  of which the install (meta installMs)", install)
    m_bare = row("bare installer into a directory", bare)
    print(f"  ratio cached/without: {m_hit / m_plain:.3f}x (goal <= 1.1x)")
    print(f"  ratio first install/bare installer: {m_install / m_bare:.3f}x (goal <= 1.3x); "
          f"with the call: {m_first / m_bare:.3f}x")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, default=15)
    p.add_argument("--fnbox", default=str(REPO / "build" / "fnbox"))
    p.add_argument("--no-npm", action="store_true")
    a = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fnbox-bench-deps-"))
    work.chmod(0o755)
    index = registrylib.IndexServer(registrylib.simple_index(registrylib.build_wheels(work / "wheels"), work / "site"))
    npm = None
    try:
        indexes = {"python": index.url}
        if not a.no_npm and registrylib.VERDACCIO.exists():
            npm = registrylib.Verdaccio(work / "verdaccio")
            pkg = work / "npm-fixleft"
            pkg.mkdir()
            (pkg / "package.json").write_text(json.dumps({"name": "fixleft", "version": "1.3.0", "main": "index.js"}))
            (pkg / "index.js").write_text("module.exports = (s, n) => String(s).padStart(n);\n")
            npm.publish(pkg)
            indexes["npm"] = npm.url
        env_file = work / "envs.json"
        env_file.write_text(json.dumps({"environments": {"host": {"indexes": indexes}}}))
        print(f"fnbox {a.fnbox}, n={a.n}")
        bench_eco(a, "python", "python", ["fixdep==2.1.0"], PY_CALL,
                  ["/usr/bin/python3", "-I", "-m", "pip", "install", "--target", "{target}", "--only-binary", ":all:",
                   "--no-cache-dir", "--disable-pip-version-check", "--no-input", "--progress-bar", "off", "-q",
                   "--index-url", index.url, "fixdep==2.1.0"], str(env_file), work)
        if npm:
            bench_eco(a, "javascript", "javascript", ["fixleft@1.3.0"], JS_CALL,
                      ["npm", "install", "--prefix", "{target}", "--no-save", "--no-package-lock", "--no-audit",
                       "--no-fund", "--loglevel", "error", "--registry", npm.url, "--cache", "{target}/.npm-cache",
                       "fixleft@1.3.0"], str(env_file), work)
    finally:
        index.stop()
        if npm:
            npm.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
