"""Defence: a process limit (cgroup pids.max and/or RLIMIT_NPROC) plus killing the whole PID namespace
at the deadline. A fork bomb ends with a non-success status in bounded time, leaves no process behind,
and the host can still start processes."""
import secrets
import subprocess
import time

from fnboxlib import assert_no_survivors, call, describe, ok, req

# A bounded probe: fork up to 300 sleeping children and count how many the sandbox allowed. Safe to run
# without a limit (300 idle processes), and it sees limits that are invisible from inside (cgroup v1).
LIMITS = ("import os, time\n"
          "def f(n):\n"
          "    kids = []\n"
          "    for _ in range(n):\n"
          "        try:\n"
          "            pid = os.fork()\n"
          "        except OSError:\n"
          "            break\n"
          "        if pid == 0:\n"
          "            time.sleep(30)\n"
          "            os._exit(0)\n"
          "        kids.append(pid)\n"
          "    for pid in kids:\n"
          "        os.kill(pid, 9)\n"
          "        os.waitpid(pid, 0)\n"
          "    return len(kids)\n")
PROBE = 300

BOMB = ("import ctypes, os\n"
        "def f(mark):\n"
        "    try:\n"
        "        ctypes.CDLL(None).prctl(15, mark.encode(), 0, 0, 0)  # PR_SET_NAME: tag for the host check\n"
        "    except Exception:\n"
        "        pass\n"
        "    while True:\n"
        "        try:\n"
        "            os.fork()\n"
        "        except OSError:\n"
        "            pass\n")


def forks_allowed():
    res = call(req("python", LIMITS, "f", [PROBE], timeout=30))
    return ok(res)


def test_process_limit_present():
    """Refuse to run a real fork bomb on a shared host unless some process limit is in place."""
    n = forks_allowed()
    assert 0 < n < PROBE, f"the sandbox let the function start {n} processes: no process limit"


def test_fork_bomb_contained():
    n = forks_allowed()
    if n >= PROBE:
        raise AssertionError(f"no process limit in the sandbox ({n} forks allowed), not running the bomb")
    mark = "fb" + secrets.token_hex(6)  # comm holds 15 characters
    t0 = time.monotonic()
    res = call(req("python", BOMB, "f", [mark], timeout=3), timeout=90)
    elapsed = time.monotonic() - t0
    assert res.result["status"] in ("timeout", "error", "crash", "terminated"), describe(res.result)
    assert elapsed < 30, f"the fork bomb call took {elapsed:.1f}s"
    assert_no_survivors(mark, grace=0.5)
    # the host still works
    t0 = time.monotonic()
    assert subprocess.run(["/bin/true"], timeout=10).returncode == 0
    assert time.monotonic() - t0 < 5
    assert ok(call(req("python", "def f():\n    return 1\n", "f", []))) == 1
