"""Resource limits (docs/guide/permissions-and-limits.md, Limits): configurable per call through `limits`, refused (never clamped) above
their maximum, and each one, when hit, ends in a clear status and error type with `limit` and `reason` — or,
for output, in truncation with the call still returning. A call at its limits never hangs fnbox nor
disturbs calls running beside it."""
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import FNBOX, assert_no_survivors, call, describe, failed, marker, ok, req, run_cli
from servelib import cgroups_of

MiB = 1 << 20

MEMORY_BOMB = {
    "python": "def f():\n    hog = []\n    while True:\n        hog.append(bytearray(8 << 20))\n",
    "javascript": "function f() {\n  const hog = [];\n  for (;;) hog.push(Buffer.alloc(8 << 20, 1));\n}\n",
    "ruby": "def f\n  hog = []\n  loop { hog << ('x' * (8 << 20)) }\nend\n",
    "php": "function f() {\n  $hog = [];\n  while (true) $hog[] = str_repeat('x', 8 << 20);\n}\n",
}


def limit_error(res, etype, limit, status):
    err = failed(res, status)
    assert err["type"] == etype, describe(res.result)
    assert err.get("limit") == limit, describe(res.result)
    assert isinstance(err.get("reason"), str) and len(err["reason"]) > 20, describe(res.result)
    return err


# ---- memory ----

def test_memory_bomb(lang):
    res = call(req(lang, MEMORY_BOMB[lang], "f", []), timeout=120)
    err = limit_error(res, "MemoryLimitExceeded", "memoryBytes", "crash")
    assert "256 MiB" in err["message"] and "limits.memoryBytes" in err["reason"], describe(res.result)
    assert res.result["exitCode"] == 137


def test_javascript_heap_bomb():
    """Plain JS objects (V8's heap, not Buffers) hit the cgroup limit, not V8's own heap limit."""
    code = "function f() {\n  const a = [];\n  for (;;) a.push(new Array(1 << 20).fill(1.5));\n}\n"
    limit_error(call(req("javascript", code, "f", []), timeout=120), "MemoryLimitExceeded", "memoryBytes", "crash")


def test_memory_limit_configurable():
    code = "def f(n):\n    b = bytearray(n)\n    b[::4096] = b'x' * len(b[::4096])\n    return len(b)\n"
    n = 300 * MiB
    limit_error(call(req("python", code, "f", [n]), timeout=120), "MemoryLimitExceeded", "memoryBytes", "crash")
    assert ok(call(req("python", code, "f", [n], limits={"memoryBytes": 512 * MiB}), timeout=120)) == n
    res = call(req("python", code, "f", [64 * MiB], limits={"memoryBytes": 48 * MiB}), timeout=120)
    err = limit_error(res, "MemoryLimitExceeded", "memoryBytes", "crash")
    assert "48 MiB" in err["message"], describe(res.result)


def test_tmpfs_counts_against_memory():
    """Files in /tmp are memory: filling /tmp past memoryBytes is a memory kill, not a full disk."""
    code = ("def f():\n"
            "    with open('/tmp/fill', 'wb') as fh:\n"
            "        for _ in range(200):\n"
            "            fh.write(b'x' * (1 << 20))\n"
            "    return 'wrote'\n")
    res = call(req("python", code, "f", [], limits={"memoryBytes": 64 * MiB, "tmpBytes": 512 * MiB}), timeout=120)
    limit_error(res, "MemoryLimitExceeded", "memoryBytes", "crash")


def test_walking_the_system_tree_fits_any_memory_limit():
    """The call's own overlay of /usr (src/sandbox/rootfs.c overlay_ro) gets an inode and a dentry for every
    entry the call looks up: about 1 KiB each, ~180 MiB for a stat of all of /usr, charged to the call's
    memory (docs/internals/sandbox.md, "What the overlay costs a walk"). It is reclaimable, so a walk of
    the whole tree under a small limit completes (the kernel drops the call's own dentries) and is not a
    memory kill; the peak stays within the limit."""
    code = ("import os\n"
            "def f():\n"
            "    n = 0\n"
            "    for root, dirs, files in os.walk('/usr'):\n"
            "        for name in files:\n"
            "            os.lstat(os.path.join(root, name))\n"
            "            n += 1\n"
            "    return n\n")
    res = call(req("python", code, "f", [], limits={"memoryBytes": 32 * MiB}, timeout=120), timeout=180)
    assert ok(res) > 10000, describe(res.result)
    assert res.result["usage"]["peakMemoryBytes"] <= 32 * MiB, describe(res.result)


# ---- processes ----

FORKS = ("import os, time\n"
         "def f():\n"
         "    n = 0\n"
         "    try:\n"
         "        for _ in range(200):\n"
         "            if os.fork() == 0:\n"
         "                time.sleep(5)\n"
         "                os._exit(0)\n"
         "            n += 1\n"
         "    except OSError as e:\n"
         "        return [n, e.errno]\n"
         "    return [n, 0]\n")


C_FORKS = ("#include <unistd.h>\n"
           "int f(void) {\n"
           "    int n = 0;\n"
           "    for (int i = 0; i < 200; i++) {\n"
           "        pid_t p = fork();\n"
           "        if (p == 0) { sleep(5); _exit(0); }\n"
           "        if (p < 0) break;\n"
           "        n++;\n"
           "    }\n"
           "    return n;\n"
           "}\n")


def test_pids_limit():
    # exact: the function's process and 5 children make 6 (the sandbox's init, inside the cgroup or not,
    # is not counted against the function)
    n, errno = ok(call(req("python", FORKS, "f", [], limits={"pids": 6})))
    assert errno == 11 and n == 5, (n, errno)  # EAGAIN from fork
    assert ok(call(req("c", C_FORKS, "f", [], limits={"pids": 6}))) == 5
    n, errno = ok(call(req("python", FORKS, "f", [])))
    assert errno == 11 and 8 < n < 64, (n, errno)  # the default: 64 processes and threads


def test_pids_limit_threads_javascript():
    """Node's own threads count against pids: too few can make the runtime fail or wait forever for a thread
    it could not start, but the call still ends by its timeout and fnbox answers."""
    for _ in range(3):
        res = call(req("javascript", "function f() { return 1; }\n", "f", [], limits={"pids": 2}, timeout=2),
                   timeout=60)
        assert res.result["status"] in ("success", "crash", "error", "timeout"), describe(res.result)
        assert res.elapsed < 12
        if res.result["status"] != "success":  # the limit that refused its threads is named
            assert res.result["error"]["limit"] == "pids", describe(res.result)
            assert res.result["error"]["reason"].startswith("limits.pids (2, "), describe(res.result)


@pytest.mark.parametrize("refused", [True, False])
def test_a_call_that_ends_without_a_result_after_the_pids_limit_refused_names_it(refused):
    """The function's own error for a refused fork stays its own; a call that then ends without a result
    (or crashes, or hangs) says the pids limit refused something, which is the likelier cause."""
    code = ("import os\ndef f():\n    try:\n        %s\n    except OSError:\n        pass\n    os._exit(3)\n"
            % ("os.fork()" if refused else "pass"))
    res = call(req("python", code, "f", [], limits={"pids": 1}))
    err = res.result["error"]
    assert res.result["status"] == "error" and "exited with code 3" in err["message"], describe(res.result)
    if refused:
        assert err["limit"] == "pids" and "refused 1 new ones" in err["reason"], err
    else:
        assert "limit" not in err, err


# ---- output and result ----

FLOOD = {
    "python": "import sys\ndef f(n):\n    sys.stdout.write('o' * n)\n    sys.stderr.write('e' * n)\n    return 'done'\n",
    "javascript": ("function f(n) {\n  process.stdout.write('o'.repeat(n));\n  process.stderr.write('e'.repeat(n));\n"
                   "  return 'done';\n}\n"),
    "ruby": "def f(n)\n  $stdout.write('o' * n)\n  $stderr.write('e' * n)\n  'done'\nend\n",
    "php": "function f($n) {\n  echo str_repeat('o', $n);\n  fwrite(STDERR, str_repeat('e', $n));\n  return 'done';\n}\n",
}


def test_output_flood_truncated(lang):
    res = call(req(lang, FLOOD[lang], "f", [3 * MiB]), timeout=120)
    assert ok(res) == "done"
    r = res.result
    assert len(r["stdout"]) == MiB and len(r["stderr"]) == MiB, (len(r["stdout"]), len(r["stderr"]))
    assert r["truncated"] == {"stdout": True, "stderr": True}, describe(r)


def test_output_limits_per_stream():
    res = call(req("python", FLOOD["python"], "f", [100_000], limits={"stdoutBytes": 1000, "stderrBytes": 200_000}))
    assert ok(res) == "done"
    r = res.result
    assert r["stdout"] == "o" * 1000 and r["stderr"] == "e" * 100_000, (len(r["stdout"]), len(r["stderr"]))
    assert r["truncated"] == {"stdout": True, "stderr": False}
    res = call(req("python", FLOOD["python"], "f", [10], limits={"stdoutBytes": 0}))
    assert ok(res) == "done" and res.result["stdout"] == "" and res.result["truncated"]["stdout"] is True


BIG_RESULT = {
    "python": "def f(n):\n    return 'x' * n\n",
    "javascript": "function f(n) {\n  return 'x'.repeat(n);\n}\n",
    "ruby": "def f(n)\n  'x' * n\nend\n",
    "php": "function f($n) {\n  return str_repeat('x', $n);\n}\n",
}


def test_result_too_large(lang):
    res = call(req(lang, BIG_RESULT[lang], "f", [17 * MiB]), timeout=120)
    err = limit_error(res, "ResultTooLarge", "resultBytes", "error")
    assert "16 MiB" in err["message"], describe(res.result)
    got = ok(call(req(lang, BIG_RESULT[lang], "f", [17 * MiB], limits={"resultBytes": 32 * MiB}), timeout=120))
    assert len(got) == 17 * MiB


def test_result_beyond_file_size_limit(lang):
    """The result channel is a file: past fileSizeBytes it is cut (EFBIG) or the runtime dies of SIGXFSZ;
    either way the answer is ResultTooLarge naming fileSizeBytes, never a mangled value."""
    limits = {"resultBytes": 8 * MiB, "fileSizeBytes": 8 * MiB, "memoryBytes": 512 * MiB}
    res = call(req(lang, BIG_RESULT[lang], "f", [9 * MiB], limits=limits), timeout=120)
    err = failed(res)
    assert err["type"] == "ResultTooLarge" and err["limit"] in ("fileSizeBytes", "resultBytes"), describe(res.result)


# ---- files ----

WRITE_BIG = {
    "python": ("import errno\ndef f(path, n):\n    try:\n        open(path, 'wb').write(b'x' * n)\n        return 'wrote'\n"
               "    except OSError as e:\n        return errno.errorcode[e.errno]\n"),
    "javascript": ("const fs = require('fs');\nfunction f(path, n) {\n  try { fs.writeFileSync(path, Buffer.alloc(n, 120)); "
                   "return 'wrote'; }\n  catch (e) { return e.code; }\n}\n"),
}


@pytest.mark.parametrize("lang_", ["python", "javascript"])
def test_file_size_limit(lang_):
    got = ok(call(req(lang_, WRITE_BIG[lang_], "f", ["/tmp/big", 3 * MiB], limits={"fileSizeBytes": 2 * MiB})))
    assert got == "EFBIG"
    assert ok(call(req(lang_, WRITE_BIG[lang_], "f", ["/tmp/big", 3 * MiB]))) == "wrote"


def test_file_size_limit_kills_runtimes_without_a_handler():
    code = "def f\n  File.binwrite('/tmp/big', 'x' * (3 << 20))\n  'wrote'\nend\n"
    res = call(req("ruby", code, "f", [], limits={"fileSizeBytes": 2 * MiB}))
    limit_error(res, "FileSizeLimitExceeded", "fileSizeBytes", "crash")


@pytest.mark.parametrize("where", ["/workspace", "/tmp"])
def test_workspace_and_tmp_size(where):
    field = "workspaceBytes" if where == "/workspace" else "tmpBytes"
    got = ok(call(req("python", WRITE_BIG["python"], "f", [where + "/big", 3 * MiB], limits={field: 2 * MiB})))
    assert got == "ENOSPC"


def test_inodes():
    code = ("import errno\ndef f():\n    n = 0\n    try:\n        while n < 10000:\n"
            "            open('/tmp/f%d' % n, 'w').close()\n            n += 1\n"
            "    except OSError as e:\n        return [n, errno.errorcode[e.errno]]\n    return [n, None]\n")
    n, code_ = ok(call(req("python", code, "f", [], limits={"inodes": 50})))
    assert code_ == "ENOSPC" and n < 50, (n, code_)


def test_open_files():
    code = ("import errno\ndef f():\n    keep = []\n    try:\n        while len(keep) < 5000:\n"
            "            keep.append(open('/dev/null'))\n    except OSError as e:\n"
            "        return [len(keep), errno.errorcode[e.errno]]\n    return [len(keep), None]\n")
    n, code_ = ok(call(req("python", code, "f", [], limits={"openFiles": 32})))
    assert code_ == "EMFILE" and n < 32, (n, code_)


# ---- time ----

def test_timeout_error_has_limit_and_reason():
    mark = marker()
    code = ("import os, subprocess, time\n"
            "def f(mark):\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        os.execv('/usr/bin/python3', ['python3', '-c', 'import time; time.sleep(60)', mark])\n"
            "    time.sleep(60)\n")
    res = call(req("python", code, "f", [mark], timeout=1, permissions={"childProcess": ["python3"]}), timeout=30)
    err = limit_error(res, "TimeoutError", "timeout", "timeout")
    assert "1 s" in err["reason"], err
    assert res.elapsed < 10
    assert_no_survivors(mark)


CPU_LOOP = {
    "python": "def f():\n    n = 0\n    while True:\n        n += 1\n",
    "javascript": "function f() {\n  let n = 0;\n  for (;;) n++;\n}\n",
    "ruby": "def f\n  n = 0\n  loop { n += 1 }\nend\n",
    "php": "function f() {\n  $n = 0;\n  while (true) $n++;\n}\n",
    "c": "int f(void) { volatile unsigned long n = 0; for (;;) n++; return 0; }\n",
}


@pytest.mark.parametrize("language", sorted(CPU_LOOP))
def test_cpu_seconds_limit(language):
    """limits.cpuSeconds ends a CPU-bound function well before its wall-clock timeout."""
    res = call(req(language, CPU_LOOP[language], "f", [], timeout=20, limits={"cpuSeconds": 1}), timeout=60)
    err = limit_error(res, "CpuLimitExceeded", "cpuSeconds", "crash")
    assert "1 s" in err["message"] and "limits.cpuSeconds" in err["reason"], describe(res.result)
    assert res.elapsed < 15, res.elapsed


def test_cpu_seconds_default_follows_timeout():
    """Sleeping uses no CPU: a 1 s CPU limit does not end a call that sleeps for 2 s."""
    code = "import time\ndef f():\n    time.sleep(2)\n    return 'slept'\n"
    assert ok(call(req("python", code, "f", [], limits={"cpuSeconds": 1}), timeout=60)) == "slept"


# ---- refusals ----

@pytest.mark.parametrize("field,value,maximum", [
    ("memoryBytes", 8 << 30, "4294967296"), ("pids", 5000, "1024"), ("workspaceBytes", 2 << 30, "1073741824"),
    ("tmpBytes", 2 << 30, "1073741824"), ("inodes", 2_000_000, "1048576"), ("fileSizeBytes", 2 << 30, "1073741824"),
    ("openFiles", 100_000, "4096"), ("stdoutBytes", 1 << 30, "67108864"), ("stderrBytes", 1 << 30, "67108864"),
    ("resultBytes", 1 << 30, "268435456"), ("cpuSeconds", 10_000, "7200")])
def test_above_maximum_refused(field, value, maximum):
    res = call(req("python", "def f(): return 1\n", "f", [], limits={field: value}))
    assert res.code == 2, describe(res.result)
    msg = res.result["error"]["message"]
    assert res.result["error"]["type"] == "InvalidRequest"
    assert msg.startswith(f"limits.{field}:") and maximum in msg, msg


def test_bad_limits_named():
    for limits, prefix in [({"pids": 0}, "limits.pids:"), ({"pids": "8"}, "limits.pids:"),
                           ({"memory": 1}, "limits.memory:"), ({"memoryBytes": 1.5e8}, "limits.memoryBytes:"),
                           ({"resultBytes": 100 * MiB}, "limits.resultBytes:")]:
        res = call(req("python", "def f(): return 1\n", "f", [], limits=limits))
        assert res.code == 2 and res.result["error"]["message"].startswith(prefix), describe(res.result)
    r = {"language": "python", "code": "def f(): return 1\n", "options": {"limits": {"pids": 9999}}}
    res = call(r)
    assert res.code == 2 and res.result["error"]["message"].startswith("options.limits.pids:"), describe(res.result)


# ---- isolation ----

QUICK = {
    "python": "def f(i):\n    return sum(range(1000)) + i\n",
    "javascript": "function f(i) {\n  let s = 0;\n  for (let k = 0; k < 1000; k++) s += k;\n  return s + i;\n}\n",
    "ruby": "def f(i)\n  (0...1000).sum + i\nend\n",
    "php": "function f($i) {\n  return array_sum(range(0, 999)) + $i;\n}\n",
}


def test_twenty_parallel_calls_one_memory_bomb():
    langs = list(QUICK)

    def one(i):
        if i == 7:
            return i, call(req("python", MEMORY_BOMB["python"], "f", [], timeout=60), timeout=180)
        lang = langs[i % len(langs)]
        return i, call(req(lang, QUICK[lang], "f", [i], timeout=60), timeout=180)

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(one, range(20)))
    for i, res in outcomes:
        if i == 7:
            limit_error(res, "MemoryLimitExceeded", "memoryBytes", "crash")
        else:
            assert ok(res) == 499500 + i, describe(res.result)


def test_parallel_fork_bombs_do_not_starve_a_neighbour():
    bomb = "import os\ndef f():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n"
    with ThreadPoolExecutor(max_workers=4) as pool:
        bombs = [pool.submit(call, req("python", bomb, "f", [], timeout=3), 60) for _ in range(3)]
        time.sleep(0.5)
        quiet = call(req("python", QUICK["python"], "f", [1]))
        assert ok(quiet) == 499501
        for b in bombs:
            assert b.result().result["status"] == "timeout", describe(b.result().result)


def test_no_cgroup_left_behind():
    """Every per-call cgroup is removed once the call ends, a memory-killed one included."""
    started = time.time()
    proc = subprocess.Popen([FNBOX, "call", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out, _ = proc.communicate(json.dumps(req("python", MEMORY_BOMB["python"], "f", [])).encode(), timeout=120)
    assert json.loads(out)["error"]["type"] == "MemoryLimitExceeded"
    left = cgroups_of(proc.pid, started)
    assert not left, left


def test_doctor_names_cgroup_version_and_controllers():
    out = run_cli(["doctor"]).stdout.decode()
    line = next((ln for ln in out.splitlines() if "cgroup version" in ln), "")
    assert "cgroup v1" in line or "cgroup v2" in line, out
    assert "memory" in line and "pids" in line, out


def test_runtime_dying_while_reading_its_input():
    """A runtime killed while fnbox is still writing its call input (here: Node at a 16 MiB memory limit,
    with 50 MB of arguments) gives fnbox EPIPE, never a SIGPIPE that kills fnbox itself (exit 141)."""
    res = call(req("javascript", "function f(s) { return s.length; }", "f", ["x" * 50_000_000],
                   limits={"memoryBytes": 16 * MiB}), timeout=120)
    assert res.code == 0, (res.code, res.stderr)
    limit_error(res, "MemoryLimitExceeded", "memoryBytes", "crash")
