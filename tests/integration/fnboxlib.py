"""Helpers shared by the integration and security suites: run the real `fnbox` CLI and check its answer.

The binary under test is $FNBOX (absolute, or relative to the current directory), default
<repo>/build/fnbox, so the same suites run against the sanitizer build (FNBOX=build-asan/fnbox).
"""
import json
import os
import secrets
import signal
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FNBOX = os.path.abspath(os.environ.get("FNBOX") or str(REPO / "build" / "fnbox"))

# Every interpreted language, by canonical name: the shared per-behaviour integration suites run against each
# (the `lang` fixture of tests/integration). C and C++ have suites of their own (test_lang_c/cpp.py).
LANGS = ["python", "javascript", "ruby", "php"]
# The languages tests/security's attack programs are written in so far (its `lang` fixture).
SECURITY_LANGS = ["python", "javascript"]
STATUSES = {"success", "error", "crash", "timeout", "terminated"}

# Text a sanitizer prints when it finds a bug; any of these on fnbox's stderr fails the test, whatever
# else the test checks (an ASan report is a bug even when the JSON looks right).
SANITIZER_MARKERS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "LeakSanitizer has encountered a fatal error",
    "runtime error:",
    "SUMMARY: UndefinedBehaviorSanitizer",
)


class CallResult(tuple):
    """(result, exit_code, stderr), plus .raw (stdout text) and .elapsed (seconds)."""

    def __new__(cls, result, code, stderr, raw, elapsed):
        self = tuple.__new__(cls, (result, code, stderr))
        self.result, self.code, self.stderr, self.raw, self.elapsed = result, code, stderr, raw, elapsed
        return self


def require_binary():
    if not os.access(FNBOX, os.X_OK):
        pytest.fail(f"fnbox binary not found or not executable: {FNBOX} (run `make`, or set FNBOX)")


def in_ci():
    """CI=true (CI services set it, and .ci/run): everything `make test` and scripts/install-deps.sh provide
    must be there, so a test that would skip for want of it fails instead."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def fuse_refused():
    """Why host mounts (served over FUSE) cannot work for this user, or None: a user other than root who
    cannot open /dev/fuse read-write gets every `mount` refused (KernelFeatureMissing; `fnbox doctor` says
    so). No install step gives an ordinary user that right, so the suites that mount skip, naming it;
    tests/integration/test_unprivileged.py checks the refusal itself."""
    if os.geteuid() == 0 or os.access("/dev/fuse", os.R_OK | os.W_OK):
        return None
    return "host mounts need read-write access to /dev/fuse, which this user lacks (fnbox doctor: fuse)"


_CGROUP_CHECK = []


def cgroup_refused():
    """Why this user's calls and sessions get no cgroup of their own, or None: without a writable cgroup a
    memory limit is RLIMIT_DATA per process (an allocation fails instead of a kill with exit 137) and peaks
    are per process (`fnbox doctor`'s "cgroup limits" check, asked once per test process)."""
    if not _CGROUP_CHECK:
        r = subprocess.run([FNBOX, "doctor", "--json"], capture_output=True, text=True, timeout=120)
        checks = {c["name"]: c for c in json.loads(r.stdout).get("checks", [])} if r.stdout.strip() else {}
        check = checks.get("cgroup limits")
        _CGROUP_CHECK.append(None if check and check.get("ok") else
                             "no writable cgroup for this user: memory limits are per-process rlimits and "
                             "peaks per process (fnbox doctor: cgroup limits: "
                             f"{(check or {}).get('detail', 'not reported')})")
    return _CGROUP_CHECK[0]


def skip_unless_ci(reason):
    """Skip for want of something `make test` or scripts/install-deps.sh provides; fail in CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: required there)")
    pytest.skip(reason)


def weak_fnbox():
    """The defence-switch build ($FNBOX_WEAK, default <repo>/build-weak/fnbox, which `make test` builds
    first); skips without it (fails in CI)."""
    path = os.path.abspath(os.environ.get("FNBOX_WEAK") or str(REPO / "build-weak" / "fnbox"))
    if not os.access(path, os.X_OK):
        skip_unless_ci(f"no defence-switch build at {path} (make BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES all)")
    return path


def test_root(suite="trixie"):
    """The tests' second Linux root (scripts/build-root.sh: a minimal Debian SUITE with python3 and nodejs,
    which scripts/install-deps.sh builds once per machine); skips when it is absent (fails in CI)."""
    out = subprocess.run([str(REPO / "scripts" / "build-root.sh"), "--path", suite], capture_output=True,
                         text=True, check=True).stdout.strip()
    if not os.path.isfile(os.path.join(out, "usr", "bin", "python3")):
        skip_unless_ci(f"no {suite} test root at {out} (scripts/build-root.sh {suite})")
    return out


test_root.__test__ = False  # a helper, not a test, in the modules that import it


def environment(name="test", root=None, **paths):
    """A named environment for one test: root (a directory) and LANG=[dirs] (python, javascript, ruby, php).
    Returns what env_call/env_exec take."""
    return {"name": name, "root": root, **paths}


def _environment_env(envdef):
    """The process environment of an fnbox that knows envdef: FNBOX_ENVIRONMENTS naming a file written for
    it (the request still names the environment: env_call, env_exec, or "environment" by hand)."""
    entry = {}
    if envdef.get("root"):
        entry["root"] = str(envdef["root"])
    for lang in ("python", "javascript", "ruby", "php"):
        if envdef.get(lang):
            entry[lang] = {"paths": [str(d) for d in envdef[lang]]}
    fd, path = tempfile.mkstemp(prefix="fnbox-environments.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump({"environments": {envdef["name"]: entry}}, f)
    return {**os.environ, "FNBOX_ENVIRONMENTS": path}


def env_call(request, envdef, argv=("call", "-"), exe=None, timeout=60):
    """`fnbox call` (or argv, e.g. ("exec", "-")) of request in the environment envdef (environment())."""
    env = _environment_env(envdef)
    try:
        req = json.loads(request) if isinstance(request, str) else dict(request)
        req["environment"] = envdef["name"]
        return call(req, timeout=timeout, env=env, argv=argv, exe=exe)
    finally:
        os.unlink(env["FNBOX_ENVIRONMENTS"])


def env_exec(request, envdef, exe=None, timeout=60):
    return env_call(request, envdef, argv=("exec", "-"), exe=exe, timeout=timeout)


def check_sanitizers(stderr):
    for marker in SANITIZER_MARKERS:
        if marker in stderr:
            pytest.fail(f"sanitizer report on fnbox's stderr ({marker!r}):\n{stderr[-6000:]}")


def run_cli(argv, input=None, timeout=60, env=None, pass_fds=(), exe=None):
    """Run `fnbox <argv...>`; returns CompletedProcess with bytes stdout/stderr. Fails on sanitizer output.
    pass_fds: descriptors of ours fnbox inherits (as a careless host would leak them); exe: another fnbox
    binary than $FNBOX (the defence-switch build, weak_fnbox())."""
    if exe is None:
        require_binary()
    if isinstance(input, str):
        input = input.encode("utf-8")
    try:
        proc = subprocess.run([exe or FNBOX, *argv], input=input, capture_output=True, timeout=timeout, env=env,
                              pass_fds=pass_fds)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"`fnbox {' '.join(argv)}` did not return within {timeout}s; stderr: {e.stderr!r:.2000}")
    check_sanitizers(proc.stderr.decode("utf-8", "replace"))
    return proc


def parse_one_result(stdout_bytes):
    """stdout must hold exactly one JSON object (the ExecutionResult) and nothing else."""
    try:
        text = stdout_bytes.decode("utf-8")
    except UnicodeDecodeError as e:
        pytest.fail(f"fnbox stdout is not valid UTF-8 ({e}): {stdout_bytes[:300]!r}")
    try:
        result = json.loads(text)  # rejects trailing data; keeps big integers exact
    except json.JSONDecodeError as e:
        pytest.fail(f"fnbox stdout is not exactly one JSON document ({e}): {text[:600]!r}")
    if not isinstance(result, dict):
        pytest.fail(f"fnbox stdout is JSON but not an object: {text[:300]!r}")
    return result, text


def check_shape(result, code):
    """The ExecutionResult invariants every answer must satisfy."""
    assert result.get("status") in STATUSES, f"bad status in {result!r:.600}"
    assert result.get("success") is (result["status"] == "success"), f"success/status disagree: {result!r:.600}"
    if result["status"] != "success":
        err = result.get("error")
        assert isinstance(err, dict) and isinstance(err.get("message"), str), f"error object missing: {result!r:.600}"
    if code == 0:
        for field in ("stdout", "stderr"):
            assert isinstance(result.get(field), str), f"{field} missing or not a string: {result!r:.600}"
        assert isinstance(result.get("exitCode"), int), f"exitCode missing: {result!r:.600}"
        if result["status"] == "success":
            assert result["exitCode"] == 0, f"success with exitCode {result['exitCode']}"
        if result["status"] == "timeout":
            assert result["exitCode"] == 124, f"timeout with exitCode {result['exitCode']}"


# The warm pass (scripts/test.sh): a `fnbox serve --warm ...` on this unix socket runs every call() that
# `fnbox call -` would, through POST /v1/call and its pools of pre-started sandboxes, so the same suites check
# the warm path. Calls with their own environment, inherited descriptors or binary still use the CLI, and so do
# those made from another directory than the server's (relative mount paths are the caller's) and an empty
# request (HTTP refuses an empty body before the call path sees it).
WARM_SOCKET = os.environ.get("FNBOX_WARM_SOCKET")
# The environment pass (scripts/test.sh run_environment): every call and execute request that names no
# environment runs in this one (FNBOX_ENVIRONMENTS names the file that declares it).
TEST_ENVIRONMENT = os.environ.get("FNBOX_TEST_ENVIRONMENT")
# ... and every Python one that names no dependencies installs these (a layer from the pass's own index).
TEST_DEPENDENCIES = json.loads(os.environ.get("FNBOX_TEST_DEPENDENCIES") or "null")
WARM_CWD = os.environ.get("FNBOX_WARM_CWD") or str(REPO)


def _post_call(body, timeout):
    """POST /v1/call on WARM_SOCKET: (status, response bytes)."""
    import http.client
    import socket

    class UnixConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(WARM_SOCKET)

    conn = UnixConnection("localhost", timeout=timeout)
    try:
        conn.request("POST", "/v1/call", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    except (OSError, http.client.HTTPException) as e:
        pytest.fail(f"POST /v1/call on the warm server ({WARM_SOCKET}) failed: {e!r}")
    finally:
        conn.close()


def _call_warm(raw, timeout):
    body = raw.encode("utf-8") if isinstance(raw, str) else raw
    t0 = time.monotonic()
    status, data = _post_call(body, timeout)
    elapsed = time.monotonic() - t0
    # the CLI's exit codes for the same answers: 0 (the function ran), 2 (an invalid request)
    code = {200: 0, 400: 2}.get(status)
    assert code is not None, f"the warm server answered {status}: {data[:2000]!r}"
    result, text = parse_one_result(data)
    check_shape(result, code)
    return CallResult(result, code, "", text, elapsed)


def call(request, timeout=60, env=None, argv=("call", "-"), pass_fds=(), exe=None):
    """Run `fnbox call -` on one request (a dict, or raw text/bytes sent verbatim).

    Returns CallResult (result, exit_code, stderr). Fails the test if stdout is not exactly one JSON
    object, if the exit code is neither 0 nor 2, or if a sanitizer reported anything."""
    if TEST_ENVIRONMENT and argv and argv[0] in ("call", "exec") and isinstance(request, dict) and \
            "environment" not in request:
        request = {**request, "environment": TEST_ENVIRONMENT}
        if TEST_DEPENDENCIES and str(request.get("language", "")).startswith("py") and "dependencies" not in request \
                and "dependencies" not in (request.get("options") or {}):
            request["dependencies"] = TEST_DEPENDENCIES
    raw = request if isinstance(request, (str, bytes)) else json.dumps(request)
    if (WARM_SOCKET and tuple(argv) == ("call", "-") and env is None and not pass_fds and exe is None and raw and
            os.getcwd() == WARM_CWD):
        return _call_warm(raw, timeout)
    t0 = time.monotonic()
    proc = run_cli(list(argv), input=raw, timeout=timeout, env=env, pass_fds=pass_fds, exe=exe)
    elapsed = time.monotonic() - t0
    stderr = proc.stderr.decode("utf-8", "replace")
    result, text = parse_one_result(proc.stdout)
    assert proc.returncode in (0, 2), f"fnbox exited {proc.returncode}; stderr: {stderr[-2000:]}"
    check_shape(result, proc.returncode)
    return CallResult(result, proc.returncode, stderr, text, elapsed)


def req(lang, code, fn=None, args=None, kwargs=None, **extra):
    """Build a flat v0.1 request."""
    r = {"language": lang, "code": code}
    if fn is not None:
        r["functionName"] = fn
    if args is not None:
        r["args"] = args
    if kwargs is not None:
        r["kwargs"] = kwargs
    r.update(extra)
    return r


def per_path_probe(python_action, js_action):
    """Source, per language, of `f(paths)`: runs an action on each path and returns {path: outcome}, the
    outcome being what the action stores in out[p], or 'DENIED:<error>' when it raises or throws.

    python_action is the body of a `try:` (lines, unindented); js_action is one line of JavaScript. Both
    see the path as `p`; the JavaScript one has `fs`."""
    python = ("def f(paths):\n"
              "    out = {}\n"
              "    for p in paths:\n"
              "        try:\n"
              + textwrap.indent(python_action, " " * 12) +
              "        except Exception as e:\n"
              "            out[p] = 'DENIED:' + type(e).__name__\n"
              "    return out\n")
    javascript = ("const fs = require('fs');\n"
                  "function f(paths) {\n"
                  "  const out = {};\n"
                  "  for (const p of paths) {\n"
                  "    try { " + js_action + " }\n"
                  "    catch (e) { out[p] = 'DENIED:' + (e.code || e.name); }\n"
                  "  }\n"
                  "  return out;\n}\n")
    return {"python": python, "javascript": javascript}


def describe(result):
    return json.dumps(result, ensure_ascii=False)[:1500]


def ok(res):
    """Assert a call succeeded and return its `result` value."""
    result, code, stderr = res
    assert code == 0, f"exit {code}: {describe(result)}"
    assert result["status"] == "success", f"expected success: {describe(result)}\nstderr: {stderr[-1500:]}"
    return result.get("result")


def failed(res, status="error"):
    """Assert a call produced a result with the given non-success status; return its error object."""
    result, code, stderr = res
    assert code == 0, f"exit {code} (a result was produced, expected 0): {describe(result)}"
    assert result["status"] == status, f"expected status {status}: {describe(result)}"
    assert result["success"] is False
    return result["error"]


def readable_by_all(root, *parents):
    """chmod a host tree (and the given parent directories) so that the sandbox's outer uid, nobody when
    the tests run as root, can walk and read it: directories 0755, files 0644."""
    for d in parents:
        os.chmod(d, 0o755)
    for dirpath, _, names in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in names:
            os.chmod(os.path.join(dirpath, name), 0o644)
    return root


def marker():
    """A unique string to tag processes/files a test creates."""
    return "fnboxmark" + secrets.token_hex(8)


def unique_seconds(whole):
    """A sleep duration no other process on the host has ("60.482913"), so a test that looks for its
    `sleep` among the host's processes finds only its own (and kills only its own)."""
    return f"{whole}.{secrets.randbelow(10**6):06d}"


def host_pids_matching(text):
    """Host processes whose command line or comm contains `text` (scans /proc; pid namespaces nest, so
    sandboxed processes are visible here under their host pids)."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{entry}/comm", "rb") as f:
                comm = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmd or text in comm:
            found.append((int(entry), cmd or comm))
    return found


def assert_no_survivors(text, grace=0.2):
    """After `grace` seconds, no host process may carry `text`. Kills stragglers (ours) before failing."""
    time.sleep(grace)
    left = host_pids_matching(text)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes outlived the call: {left}"


# The fixtures both suites use; each conftest.py imports them, which is what makes pytest see them.
@pytest.fixture(name="call")
def call_fixture():
    """call(request_dict_or_raw_text, timeout=60, env=None) -> (result, exit_code, stderr)."""
    return call


@pytest.fixture(name="lang", params=SECURITY_LANGS)
def lang_fixture(request):
    """Runs the test once per language of SECURITY_LANGS (tests/security imports this one)."""
    return request.param


@pytest.fixture(name="lang", params=LANGS)
def all_langs_fixture(request):
    """Runs the test once per interpreted language (tests/integration imports this one as `lang`)."""
    return request.param


def joined(events, name):
    """The data of the NDJSON stream events of one type ("stdout" or "stderr"), joined in order."""
    return "".join(e["data"] for e in events if e["type"] == name)
