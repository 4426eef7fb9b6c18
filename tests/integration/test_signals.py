"""The CLI interrupted: SIGTERM/SIGINT end the call with status "terminated" (exit code 143 in the
result) and kill the sandbox; SIGKILL of the CLI itself must not leave the sandbox running either."""
import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from fnboxlib import FNBOX, assert_no_survivors, check_sanitizers, describe, host_pids_matching, marker, \
    parse_one_result, require_binary, run_cli, skip_unless_ci
from servelib import cgroups_of


def sleeper(mark, lang="python"):
    """A function that says 'started', starts a child marked with `mark`, then sleeps. 'started' is written
    first: once the test sees the child, the line is in fnbox's pipe, whenever the test then signals."""
    return {
        "python": ("import subprocess, sys, time\n"
                   "def f():\n"
                   "    print('started', flush=True)\n"
                   f"    subprocess.Popen([sys.executable, '-c', 'import time\\ntime.sleep(60)', {mark!r}])\n"
                   "    time.sleep(60)\n"),
        "javascript": ("const cp = require('child_process');\n"
                       "function f() {\n"
                       "  console.log('started');\n"
                       f"  cp.spawn(process.execPath, ['-e', 'setTimeout(() => {{}}, 60000)', {json.dumps(mark)}], {{ stdio: 'ignore' }});\n"
                       "  return new Promise(() => {});\n}\n"),
        "ruby": ("def f\n"
                 "  puts 'started'\n  $stdout.flush\n"
                 f"  spawn('/usr/bin/ruby', '--disable-gems', '-e', 'sleep 60', {json.dumps(mark)})\n"
                 "  sleep 60\nend\n"),
        "php": ("function f() {\n"
                "  echo \"started\\n\";\n"
                f"  $p = proc_open([PHP_BINARY, '-r', 'sleep(60);', {json.dumps(mark)}], [], $pipes);\n"
                "  sleep(60);\n}\n"),
    }[lang]


def start(mark, out, err, lang="python"):
    require_binary()
    p = subprocess.Popen([FNBOX, "call", "-"], stdin=subprocess.PIPE, stdout=out, stderr=err)
    p.stdin.write(json.dumps({"language": lang, "code": sleeper(mark, lang), "functionName": "f",
                              "timeout": 30}).encode())
    p.stdin.close()
    p.stdin = None  # so communicate() does not flush it
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not host_pids_matching(mark):
        time.sleep(0.05)
    assert host_pids_matching(mark), "the sandboxed child never started"
    return p


def kill_namespace_of(mark):
    """Cleanup after a failure: kill every process in the marked process's pid namespace (ours)."""
    for pid, _ in host_pids_matching(mark):
        try:
            ns = os.readlink(f"/proc/{pid}/ns/pid")
        except OSError:
            continue
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.readlink(f"/proc/{entry}/ns/pid") == ns:
                        os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_term_signal_gives_terminated_result(sig, lang):
    mark = marker()
    p = start(mark, subprocess.PIPE, subprocess.PIPE, lang)
    try:
        t0 = time.monotonic()
        p.send_signal(sig)
        out, err = p.communicate(timeout=10)
        elapsed = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
        kill_namespace_of(mark)
    check_sanitizers(err.decode("utf-8", "replace"))
    result, _ = parse_one_result(out)
    assert p.returncode == 0, f"exit {p.returncode}"
    assert result["status"] == "terminated", describe(result)
    assert result["exitCode"] == 143
    assert "started" in result["stdout"]
    assert elapsed < 3, f"took {elapsed:.2f}s to stop"
    assert_no_survivors(mark)


def test_cli_killed_sandbox_dies_too(lang):
    """SIGKILL cannot be handled: the sandbox must die with its supervisor (e.g. PR_SET_PDEATHSIG on the
    sandbox's init), not keep running for the rest of its 30 s timeout."""
    mark = marker()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = start(mark, out, err, lang)
        try:
            p.kill()
            p.wait(timeout=10)
            time.sleep(0.5)
            left = host_pids_matching(mark)
        finally:
            kill_namespace_of(mark)
    assert not left, f"sandboxed processes outlived the SIGKILLed CLI: {left}"


def test_a_killed_clis_cgroups_are_removed_by_the_next_fnbox():
    """A SIGKILLed CLI cannot remove its call's cgroups; once its sandbox died with it they are empty, and
    the next fnbox process that makes a cgroup under the same parent removes them
    (sandbox/cgroup_orphans.c)."""
    since = time.time()
    mark = marker()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = start(mark, out, err)
        try:
            p.kill()
            p.wait(timeout=10)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and host_pids_matching(mark):
                time.sleep(0.05)
            assert not host_pids_matching(mark), "the sandbox outlived the SIGKILLed CLI"
        finally:
            kill_namespace_of(mark)
    left = cgroups_of(p.pid, since)
    if not left:
        skip_unless_ci("no cgroup of the killed CLI found (no per-call cgroups here): nothing to check")
    deadline = time.monotonic() + 5  # the sandbox's last tasks may still be leaving their cgroup
    while time.monotonic() < deadline and any(procs_in(d) for d in left):
        time.sleep(0.05)
    proc = run_cli(["call", "-"], input=json.dumps({"language": "python", "code": "def f():\n    return 1\n",
                                                    "functionName": "f"}))
    result, _ = parse_one_result(proc.stdout)
    assert result["status"] == "success", describe(result)
    assert not [d for d in left if os.path.exists(d)], f"the killed CLI's cgroups are still there: {left}"


def procs_in(cgroup_dir):
    try:
        with open(os.path.join(cgroup_dir, "cgroup.procs")) as fh:
            return fh.read().split()
    except OSError:
        return []
