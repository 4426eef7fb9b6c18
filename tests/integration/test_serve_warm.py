"""`fnbox serve --warm`: POST /v1/call through pools of sandboxes built ahead of their calls
(docs/internals/pools.md). Each pooled sandbox serves one call and is destroyed: a call finds nothing of
another, whatever the earlier one did; the pool refills after crashes, timeouts and memory kills; requests a
pooled sandbox was not built for run cold; the options are checked; a stop leaves nothing behind."""
import concurrent.futures
import json
import os
import subprocess
import time

import pytest

from fnboxlib import FNBOX, marker, require_binary
from fnboxlib import host_pids_matching
from servelib import Server, assert_nothing_left, cmdline, descendants, sleeper_request, wait_for

# What a call finds of earlier calls: files in /workspace and /tmp, the process environment and the
# interpreter's module state.
PROBE = """
import os, sys
SEEN = []
def f(tag):
    found = {
        "workspace": sorted(os.listdir("/workspace")),
        "tmp": sorted(n for n in os.listdir("/tmp") if n.startswith("mark-")),
        "env": os.environ.get("FNBOX_TEST_MARK"),
        "module": getattr(sys, "fnbox_test_mark", None),
    }
    for d in ("/workspace", "/tmp"):
        with open(f"{d}/mark-{tag}", "w") as fh:
            fh.write(tag)
    os.environ["FNBOX_TEST_MARK"] = tag
    sys.fnbox_test_mark = tag
    return {"found": found}
"""


def post(srv, request, timeout=60):
    resp = srv.request("POST", "/v1/call", body=json.dumps(request).encode(),
                       headers={"Content-Type": "application/json"}, timeout=timeout)
    return resp.status, resp.json()


def health(srv):
    return srv.request("GET", "/v1/health").json()


def pools(srv):
    return health(srv)["warm"]


def full(srv, lang="python"):
    p = pools(srv)[lang]
    return p["idle"] >= p["size"]


def wait_full(srv, lang="python"):
    wait_for(lambda: full(srv, lang), timeout=30, what=f"the {lang} pool full")


@pytest.fixture(scope="module")
def server():
    with Server("--warm", "python=2,javascript=1", "--max-concurrency", "8") as srv:
        wait_full(srv)
        yield srv


def test_health_lists_the_pools(server):
    p = pools(server)
    assert set(p) >= {"python", "javascript", "maxMemoryBytes"}
    assert p["python"]["size"] == 2 and p["javascript"]["size"] == 1
    wait_full(server, "javascript")
    assert pools(server)["python"]["memoryPerSandboxBytes"] >= 0


def test_a_pooled_sandbox_is_never_used_twice(server):
    # The interpreter's own state (sys.fnbox_test_mark, os.environ) is the proof of a fresh process: a
    # namespace's inode number, or a pid and start tick, can repeat once the earlier one is gone.
    served = pools(server)["python"]["served"]
    for i in range(6):
        wait_full(server)
        status, res = post(server, {"language": "python", "code": PROBE, "args": [f"c{i}"]})
        assert status == 200 and res["status"] == "success", res
        assert res["meta"].get("warm") is True, res["meta"]
        found = res["result"]["found"]
        assert found == {"workspace": [], "tmp": [], "env": None, "module": None}, (i, found)
    assert pools(server)["python"]["served"] == served + 6


def test_concurrent_calls_share_nothing(server):
    def one(i):
        return post(server, {"language": "python", "code": PROBE, "args": [f"p{i}"]})

    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        results = list(ex.map(one, range(18)))
    warm = 0
    for status, res in results:
        assert status == 200 and res["status"] == "success", res
        assert res["result"]["found"] == {"workspace": [], "tmp": [], "env": None, "module": None}
        warm += bool(res["meta"].get("warm"))
    assert warm >= 1, "no call of the burst was warm"


@pytest.mark.parametrize("case", ["crash", "timeout", "memory", "exit"])
def test_the_pool_refills_after_a_call_ends_badly(server, case):
    code = {
        "crash": "import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
        "timeout": "def f():\n    while True:\n        pass\n",
        "memory": "def f():\n    x = bytearray(400 * 1024 * 1024)\n    return len(x)\n",
        "exit": "import os\ndef f():\n    os._exit(3)\n",
    }[case]
    wait_full(server)
    before = pools(server)["python"]["served"]
    status, res = post(server, {"language": "python", "code": code, "timeout": 1})
    assert status == 200, res
    assert res["meta"].get("warm") is True
    want = {"crash": "crash", "timeout": "timeout", "memory": "crash", "exit": "error"}[case]
    assert res["status"] == want, res
    if case == "memory":
        assert "memory" in json.dumps(res["error"]).lower(), res["error"]
    wait_full(server)
    status, res = post(server, {"language": "python", "code": "def f():\n    return 7\n"})
    assert res["result"] == 7 and res["meta"].get("warm") is True, res
    assert pools(server)["python"]["served"] >= before + 2


def test_files_limits_and_timeouts_of_the_request_apply_to_a_warm_call(server):
    wait_full(server)
    code = ("import os, resource\n"
            "def f():\n"
            "    with open('/workspace/out.txt', 'w') as fh:\n"
            "        fh.write(open('/workspace/in.txt').read().upper())\n"
            "    print('x' * 100)\n"
            "    return [open('/tmp/d/e.txt').read(), resource.getrlimit(resource.RLIMIT_CPU)[0]]\n")
    status, res = post(server, {"language": "python", "code": code, "timeout": 5,
                                "files": {"/workspace/in.txt": "hello", "/tmp/d/e.txt": "deep"},
                                "limits": {"stdoutBytes": 10}})
    assert status == 200 and res["status"] == "success", res
    assert res["meta"].get("warm") is True
    assert res["result"] == ["deep", 5 + 2]  # cpuSeconds: the timeout rounded up + 2, as in a cold call
    assert res["truncated"]["stdout"] is True and len(res["stdout"]) <= 10
    assert [c["path"] for c in res["files"]["created"] if c["path"].endswith("out.txt")] == ["/workspace/out.txt"]


SAME_ANSWER = {
    "python": {"code": "import sys\ndef f(a, b=2):\n    print('out'); print('err', file=sys.stderr)\n"
                       "    open('/workspace/n.txt', 'w').write('n')\n    return {'sum': a + b}\n",
               "args": [1], "kwargs": {"b": 5}},
    # the 'exit' listener writes after the result: the harness's fast exit comes after the listeners
    "javascript": {"code": "const fs = require('fs');\nfunction f(a, b) {\n  console.log('out'); console.error('err');\n"
                           "  process.on('exit', () => console.log('bye'));\n"
                           "  fs.writeFileSync('/workspace/n.txt', 'n');\n  return {sum: a + b};\n}\n",
                   "args": [1, 5]},
}


@pytest.mark.parametrize("lang", sorted(SAME_ANSWER))
def test_the_result_is_the_cold_paths(server, lang):
    """The same request through the warm pool and through `fnbox call`: the same answer but for timings."""
    request = {"language": lang, **SAME_ANSWER[lang], "files": {"/workspace/old.txt": "o"}}
    wait_full(server, lang)
    _, warm = post(server, request)
    cold = json.loads(subprocess.run([FNBOX, "call", "-"], input=json.dumps(request).encode(),
                                     capture_output=True, check=True).stdout)
    assert warm["meta"].pop("warm") is True
    # the largest process's peak as a cold call reads it (an early end reads it before the memory is gone)
    assert warm["usage"]["peakMemoryBytes"] >= cold["usage"]["peakMemoryBytes"] // 2, (warm["usage"], cold["usage"])
    for r in (warm, cold):
        r.pop("usage")
        r.pop("meta")
    assert warm == cold


# A warm call may end before its processes are gone (sandbox/prepared.c): once stdout and stderr are closed,
# the result is complete and every process of the call is exiting. A function that forges a result, closes
# its streams and runs on must keep the call open until it ends. With the check of every process's exit
# skipped (FNBOX_DISABLE_DEFENCES=early-end-exiting on a -DFB_DEFENCE_SWITCHES build) the forged answer
# comes back at once and the test fails (checked).
FORGER = """
import os, time
def f():
    os.write(3, b'{"ok":true}\\n1')
    os.close(1)
    os.close(2)
    %s
    return 2
"""


def test_a_warm_call_ends_only_once_every_process_is_exiting(server):
    wait_full(server)
    t0 = time.monotonic()
    status, res = post(server, {"language": "python", "code": FORGER % "time.sleep(0.6)"})
    took = time.monotonic() - t0
    assert status == 200 and res["meta"].get("warm") is True, res
    assert took >= 0.55 and res["usage"]["wallMs"] >= 550, (took, res)
    assert res.get("result") != 1, res  # not the forged answer: the harness's own came after it


def test_a_warm_calls_output_and_files_are_whole(server):
    """Ended before its teardown, a warm call still has all its output, files and usage."""
    # 30 ms of CPU: the process's CPU time is read from /proc, counted in clock ticks (10 ms), so a call
    # that only prints can end before its first tick (0.0 in an ASan run once)
    code = ("import sys, time\n"
            "def f():\n"
            "    t = time.process_time()\n"
            "    while time.process_time() - t < 0.03:\n"
            "        pass\n"
            "    for i in range(2000):\n"
            "        print('line', i)\n"
            "    print('to stderr', file=sys.stderr)\n"
            "    open('/workspace/big.txt', 'w').write('y' * 300000)\n"
            "    return 'done'\n")
    wait_full(server)
    status, res = post(server, {"language": "python", "code": code})
    assert status == 200 and res["status"] == "success" and res["meta"].get("warm") is True, res
    assert res["stdout"].count("\n") == 2000 and res["stdout"].endswith("line 1999\n"), res["stdout"][-50:]
    assert res["stderr"] == "to stderr\n"
    created = {c["path"]: c for c in res["files"]["created"]}
    assert created["/workspace/big.txt"]["size"] == 300000, created
    assert res["usage"]["cpuMs"] > 0 and res["usage"]["peakMemoryBytes"] > 1 << 20, res["usage"]


@pytest.mark.parametrize("extra", [
    {"permissions": {"env": {"A": "1"}}},
    {"limits": {"openFiles": 100}},
    {"workdir": "/work"},
    {"language": "ruby", "code": "def f()\n  7\nend\n"},
], ids=["env", "open-files", "workdir", "unpooled-language"])
def test_requests_a_pooled_sandbox_was_not_built_for_run_cold(server, extra):
    request = {"language": "python", "code": "def f():\n    return 7\n", **extra}
    wait_full(server)
    status, res = post(server, request)
    assert status == 200 and res["result"] == 7, res
    assert "warm" not in res["meta"]


MiB = 1024 * 1024
ALLOC = "def f(n):\n    x = bytearray(n * 1024 * 1024)\n    return len(x) // (1024 * 1024)\n"
THREADS = ("import threading, time\n"
           "def f(n):\n"
           "    ts = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(n)]\n"
           "    try:\n"
           "        for t in ts:\n"
           "            t.start()\n"
           "    except RuntimeError as e:\n"
           "        return 'refused: ' + str(e)\n"
           "    for t in ts:\n"
           "        t.join()\n"
           "    return 'ran'\n")


@pytest.mark.parametrize("limits, code, args, want", [
    ({"memoryBytes": 64 * MiB}, ALLOC, [100], "memory"),        # lowered: the limit kills as in a cold call
    ({"memoryBytes": 512 * MiB}, ALLOC, [300], 300),            # raised: the default 256 MiB would have killed it
    ({"pids": 3}, THREADS, [6], "refused: can't start new thread"),
    ({"pids": 100}, THREADS, [80], "ran"),                      # over the default 64
], ids=["memory-lower", "memory-higher", "pids-lower", "pids-higher"])
def test_a_warm_call_brings_its_own_memory_and_pids_limits(server, limits, code, args, want):
    """The pools are built with the default limits; a call's own memory and pids limits are set in its
    cgroup before its input. Each answer is also a cold call's."""
    request = {"language": "python", "code": code, "args": args, "limits": limits, "timeout": 10}
    wait_full(server)
    status, res = post(server, request)
    assert status == 200 and res["meta"].get("warm") is True, res
    cold = json.loads(subprocess.run([FNBOX, "call", "-"], input=json.dumps(request).encode(),
                                     capture_output=True).stdout)
    for r in (res, cold):
        if want == "memory":
            assert r["status"] == "crash" and "memory" in json.dumps(r["error"]).lower(), r
        else:
            assert r["status"] == "success" and r["result"] == want, r


def test_a_limit_the_started_runtime_exceeds_runs_cold(server):
    """A started runtime that already exceeds the call's limit would not have started under it as it did:
    such a call runs cold, as it would have without pools (Node starts several threads; pids 2 is less)."""
    request = {"language": "javascript", "code": "function f() { return 1; }", "limits": {"pids": 2}, "timeout": 2}
    wait_full(server, "javascript")
    served = pools(server)["javascript"]["served"]
    status, res = post(server, request)
    assert status == 200 and "warm" not in res["meta"], res
    assert pools(server)["javascript"]["served"] == served
    cold = json.loads(subprocess.run([FNBOX, "call", "-"], input=json.dumps(request).encode(),
                                     capture_output=True).stdout)
    assert res["status"] == cold["status"], (res, cold)


@pytest.fixture(scope="module")
def compiled_server():
    with Server("--warm", "c=1,cpp=1", "--max-concurrency", "4") as srv:
        assert pools(srv)["program"]["size"] == 2  # C's and C++'s programs share one pool
        for name in ("c", "cpp", "program"):
            wait_full(srv, name)
        yield srv


def cold_call(request):
    return json.loads(subprocess.run([FNBOX, "call", "-"], input=json.dumps(request).encode(),
                                     capture_output=True).stdout)


def test_c_and_cpp_compile_in_pooled_compilers(compiled_server):
    """`--warm c=1,cpp=1`: a program not in the compile cache compiles in a compiler started ahead (the pool
    serves it) and runs in a sandbox that waited for it; the same program again is a cache hit that needs no
    compiler; a compile error reads as in a cold call."""
    srv = compiled_server
    nonce = "%d-%d" % (os.getpid(), time.monotonic_ns())
    codes = {"c": "/* %s */\nint add(int a, int b) { return a + b; }\n" % nonce,
             "cpp": "// %s\n#include <string>\nint add(int a, int b) { return (int)std::to_string(a + b).size() + a + b - 1; }\n" % nonce}
    for lang, code in codes.items():
        wait_full(srv, lang)
        wait_full(srv, "program")
        served = pools(srv)[lang]["served"]
        ran = pools(srv)["program"]["served"]
        request = {"language": lang, "code": code, "functionName": "add", "args": [1, 2]}
        status, res = post(srv, request)
        assert status == 200 and res["status"] == "success" and res["result"] == 3, res
        assert res["meta"]["compile"] == "miss" and res["meta"].get("warm") is True, res["meta"]
        assert pools(srv)[lang]["served"] == served + 1
        assert pools(srv)["program"]["served"] == ran + 1
        wait_full(srv, lang)
        wait_full(srv, "program")
        status, res = post(srv, request)
        assert res["result"] == 3 and res["meta"]["compile"] == "hit" and res["meta"].get("warm") is True, res
        assert pools(srv)[lang]["served"] == served + 1  # a hit runs no compiler
        assert pools(srv)["program"]["served"] == ran + 2
    bad = {"language": "c", "code": "/* %s */ int add(int a, int b) { return a + ; }" % nonce,
           "functionName": "add", "args": [1, 2]}
    wait_full(srv, "c")
    served = pools(srv)["c"]["served"]
    _, warm = post(srv, bad)
    assert pools(srv)["c"]["served"] == served + 1
    cold = cold_call(bad)
    assert warm["status"] == cold["status"] == "error" and warm["error"] == cold["error"], (warm, cold)
    assert "expected expression" in warm["error"]["message"], warm["error"]


# What a C call finds of earlier ones and of its sandbox: a marker file in /tmp and /workspace (then
# written), whether its own program file can be opened for writing or replaced, and whether it may run
# another program (no permissions.childProcess: Landlock refuses execve).
C_PROBE = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
static char out[512];
const char *probe(const char *tag) {
    char path[128];
    struct stat st;
    int seen = stat("/tmp/mark", &st) == 0 || stat("/workspace/mark", &st) == 0;
    snprintf(path, sizeof path, "/tmp/mark");
    FILE *f = fopen(path, "w"); if (f) { fputs(tag, f); fclose(f); }
    f = fopen("/workspace/mark", "w"); if (f) { fputs(tag, f); fclose(f); }
    int w = open("/.fnbox/prog", O_WRONLY);
    int write_errno = w < 0 ? errno : 0;
    int u = unlink("/.fnbox/prog") == 0 ? 0 : errno;
    stat("/.fnbox/prog", &st);
    pid_t pid = fork();
    if (pid == 0) { char *argv[] = {"/bin/true", NULL}; execv("/bin/true", argv); _exit(errno); }
    int status = 0;
    waitpid(pid, &status, 0);
    snprintf(out, sizeof out, "seen=%d write=%s unlink=%s mode=%o exec=%s", seen, strerror(write_errno),
             strerror(u), (unsigned)(st.st_mode & 07777), strerror(WEXITSTATUS(status)));
    return out;
}
"""


def test_a_waiting_program_sandbox_is_a_cold_calls_sandbox(compiled_server):
    """The program placed into a waiting sandbox is read-only to itself, may run nothing else, and finds
    nothing of the calls before it (each program sandbox serves one call): the same answer as a cold call."""
    srv = compiled_server
    request = {"language": "c", "code": C_PROBE, "functionName": "probe", "args": ["x"]}
    cold = cold_call(request)
    assert cold["status"] == "success", cold
    for _ in range(3):
        wait_full(srv, "program")
        status, res = post(srv, request)
        assert status == 200 and res["meta"].get("warm") is True, res
        assert res["result"] == cold["result"], (res["result"], cold["result"])
    assert cold["result"].startswith("seen=0 write=Permission denied unlink=Read-only file system mode=555 "
                                     "exec=Permission denied"), cold["result"]


SAME_ANSWER_C = {
    "stdout": ("#include <stdio.h>\nint f(int x) { printf(\"out %d\\n\", x); fprintf(stderr, \"err\\n\"); "
               "return x * 2; }", [21]),
    "crash": ("int f(int x) { volatile int *p = 0; return *p + x; }", [1]),
    "abort": ("#include <stdlib.h>\nint f(int x) { if (x) abort(); return 0; }", [1]),
    "exit": ("#include <stdlib.h>\nint f(int x) { exit(x); }", [3]),
    "files": ("#include <stdio.h>\nint f(int x) { FILE *o = fopen(\"/workspace/out.txt\", \"w\"); "
              "fprintf(o, \"%d\", x); fclose(o); return x; }", [5]),
    "request files": ("#include <stdio.h>\nint f(int x) { char b[16] = {0}; FILE *i = fopen(\"/tmp/d/in.txt\", \"r\"); "
                      "if (!i || !fgets(b, sizeof b, i)) return -1; fclose(i); return x + b[0]; }", [1],
                      {"files": {"/tmp/d/in.txt": "A"}}),
}


@pytest.mark.parametrize("case", sorted(SAME_ANSWER_C))
def test_a_warm_c_call_answers_as_a_cold_one(compiled_server, case):
    code, args, *extra = SAME_ANSWER_C[case]
    request = {"language": "c", "code": code, "args": args, "timeout": 5, **(extra[0] if extra else {})}
    cold = cold_call(request)
    wait_full(compiled_server, "program")
    status, warm = post(compiled_server, request)
    assert status == 200 and warm["meta"].get("warm") is True, warm
    for key in ("status", "success", "result", "stdout", "stderr", "exitCode", "error", "files"):
        assert warm.get(key) == cold.get(key), (key, warm, cold)


def test_the_program_pool_refills_and_runs_cold_what_it_cannot_serve(compiled_server):
    """A timeout ends the program sandbox's call as a cold one's; the pool is refilled. A call with exec
    rights (permissions.childProcess) is not what the sandbox was built for: cold."""
    srv = compiled_server
    wait_full(srv, "program")
    status, res = post(srv, {"language": "c", "code": "int f(void) { for (;;) ; }", "timeout": 1})
    assert res["status"] == "timeout" and res["meta"].get("warm") is True, res
    wait_full(srv, "program")
    request = {"language": "c", "code": C_PROBE, "functionName": "probe", "args": ["y"],
               "permissions": {"childProcess": True}}
    status, res = post(srv, request)
    assert status == 200 and "warm" not in res["meta"] and res["result"].endswith("exec=Success"), res


def test_a_mount_runs_cold(server, tmp_path):
    (tmp_path / "a.txt").write_text("A")
    request = {"language": "python", "code": "def f():\n    return open('/data/a.txt').read()\n",
               "mount": {"dirs": {"/data": str(tmp_path)}}}
    status, res = post(server, request)
    assert status == 200 and res["result"] == "A", res
    assert "warm" not in res["meta"]


def test_nothing_is_built_ahead_while_the_calls_take_every_cpu():
    """Building ahead pays only with a CPU to spare (core/pool.c next_to_build): while as many calls run as
    the server has CPUs, the pool's thread builds nothing, even at its once-a-second sweep, which finds the
    pool empty; once they end, the pool refills."""
    n = len(os.sched_getaffinity(0))  # the server inherits this set
    with Server("--warm", "python=1", "--max-concurrency", str(n + 2)) as srv:
        wait_full(srv)
        built = pools(srv)["python"]["built"]
        code = "import time\ndef f():\n    time.sleep(4)\n    return 'slept'\n"
        with concurrent.futures.ThreadPoolExecutor(n) as ex:
            futures = [ex.submit(post, srv, {"language": "python", "code": code, "timeout": 30}) for _ in range(n)]
            time.sleep(0.8)  # every call started (the first took the pooled sandbox, the rest run cold)
            seen = []
            for _ in range(15):  # 1.5 s: past the thread's sweep
                seen.append(pools(srv)["python"]["built"])
                time.sleep(0.1)
            answers = [f.result() for f in futures]
        assert all(st == 200 and res["result"] == "slept" for st, res in answers), answers
        assert sum(1 for _, res in answers if res["meta"].get("warm")) == 1, answers
        assert set(seen) == {built}, f"built while {n} calls ran on {n} CPUs: {seen} (from {built})"
        wait_full(srv)
        assert pools(srv)["python"]["built"] == built + 1


def test_an_idle_sandbox_that_dies_is_replaced(server):
    wait_full(server)
    died = pools(server)["python"]["died"]
    # the idle harnesses of this server's pools: python3 children of children of the server (init's program)
    victims = [pid for pid in descendants(server.proc.pid) if cmdline(pid).endswith("/.fnbox/harness.py")]
    assert victims, "no idle harness found"
    for pid in victims:
        os.kill(pid, 9)
    wait_for(lambda: pools(server)["python"]["died"] > died, timeout=10, what="the dead sandbox noticed")
    wait_full(server)
    status, res = post(server, {"language": "python", "code": "def f():\n    return 7\n"})
    assert res["result"] == 7 and res["meta"].get("warm") is True


# `fnbox mcp` reads --warm and --warm-memory with serve's own code (src/cli/warm.c): the same values are refused
# for the same reasons, with exit 2 naming the option. stdin is empty: an `fnbox mcp` that accepted the value
# would serve nothing and exit 0.
VERBS = {"serve": ["serve", "--listen", "127.0.0.1:0"], "mcp": ["mcp"]}


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("option, value, why", [
    ("--warm", "cobol=1", "unknown language"),
    ("--warm", "python=65", "0 to 64"),
    ("--warm", "python", "LANG=N"),
    ("--warm", "python=x", "LANG=N"),
    ("--warm-memory", "0", "size in bytes"),
    ("--warm-memory", "5T", "size in bytes"),
])
def test_bad_warm_options_are_refused_naming_them(verb, option, value, why):
    require_binary()
    proc = subprocess.run([FNBOX, *VERBS[verb], option, value], capture_output=True, stdin=subprocess.DEVNULL,
                          timeout=30)
    assert proc.returncode == 2, proc
    err = proc.stderr.decode()
    assert err.startswith(f"fnbox {verb}: ") and option.lstrip("-") in err and why in err, err


def test_warm_none_and_a_memory_cap(tmp_path):
    with Server("--warm", "none") as srv:
        assert "warm" not in health(srv)
        status, res = post(srv, {"language": "python", "code": "def f():\n    return 1\n"})
        assert res["result"] == 1 and "warm" not in res["meta"]
    # a cap below one sandbox: the first is built (its size is not known before), no more
    with Server("--warm", "python=4", "--warm-memory", "1K") as srv:
        wait_for(lambda: pools(srv)["python"]["built"] >= 1, timeout=30, what="one sandbox built")
        time.sleep(2.5)  # the sweeps measure it again; the pool stays below its size
        assert pools(srv)["maxMemoryBytes"] == 1024
        p = pools(srv)["python"]
        assert p["built"] == 1 and p["idle"] <= 1, p


def test_a_stop_leaves_no_pooled_sandbox_behind():
    mark = marker()
    srv = Server("--warm", "python=3,javascript=1,c=1")
    for name in ("python", "javascript", "c", "program"):  # a program sandbox waits before its Landlock
        wait_full(srv, name)
    status, res = post(srv, {"language": "python", "code": "def f():\n    return 1\n"})
    assert res["result"] == 1
    srv.stop()
    assert srv.exit_code == 0
    assert_nothing_left(srv, mark)
    assert not [p for p in descendants(srv.proc.pid)], "processes of the server left"


def test_load_through_the_pools_leaves_fds_threads_and_memory_flat():
    """A burst of warm and cold calls; once the pools are full again, the server holds what it held before."""
    # A small ASan quarantine, as test_serve_load's: freed memory held for use-after-free checks is not growth.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4").lstrip(":")
    with Server("--warm", "python=2,javascript=1", "--max-concurrency", "4", env=env) as srv:
        wait_full(srv)
        wait_full(srv, "javascript")
        time.sleep(1.2)  # a sweep has measured them

        def state():
            return srv.fd_count(), srv.pid_status("Threads"), len(descendants(srv.proc.pid))

        fds0, threads0, procs0 = state()
        rss0 = srv.pid_status("VmRSS")
        requests = [{"language": lang, "code": code, "args": [i]}
                    for i in range(40)
                    for lang, code in (("python", "def f(x):\n    return x * 2\n"),
                                       ("javascript", "function f(x) { return x * 2; }"))]
        with concurrent.futures.ThreadPoolExecutor(6) as ex:
            results = list(ex.map(lambda r: post(srv, r), requests))
        for (status, res), r in zip(results, requests):
            assert status == 200 and res["result"] == r["args"][0] * 2, res
        wait_full(srv)
        wait_full(srv, "javascript")
        wait_for(lambda: state() == (fds0, threads0, procs0), timeout=15,
                 what=f"fds, threads, processes back to {(fds0, threads0, procs0)} (now {state()})")
        assert srv.pid_status("VmRSS") - rss0 < 16 * 1024, "RSS grew by more than 16 MiB"


def result_mappings(srv):
    """The server's mappings of result channels (util/mapped.h: a large result's answer is laid out in one)."""
    with open(f"/proc/{srv.proc.pid}/maps") as f:
        return [line for line in f if "fnbox-result" in line]


def test_large_results_come_whole_and_their_mappings_go(server):
    """A result of 1 MiB or more is mapped from its channel, not copied, and the answer laid out around it
    (util/mapped.h): warm and cold, plain and streamed, every byte is the function's, and once the answers
    are sent the server holds no mapping of any channel."""
    big = {"resultBytes": 64 * MiB}
    sizes = [(1 << 20) - 100, 1 << 20, 3 * (1 << 20) + 17]
    requests = [{"language": lang, "code": code, "args": [n], "limits": big}
                for n in sizes
                for lang, code in (("python", "def f(n):\n    return 'ab\"c\\\\' * (n // 6) + 'é'\n"),
                                   ("javascript", "function f(n) { return 'ab\"c\\\\'.repeat(Math.floor(n / 6)) + 'é'; }"))]
    requests.append({**requests[-1], "workdir": "/work"})  # not what a pooled sandbox was built for: cold
    want = {n: 'ab"c\\' * (n // 6) + "é" for n in sizes}
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda r: post(server, r), requests))
    for (status, res), r in zip(results, requests):
        assert status == 200 and res["status"] == "success", res.get("error")
        assert res["result"] == want[r["args"][0]], f"{r['language']} {r['args'][0]}: the result differs"
    resp = server.request("POST", "/v1/call", body=json.dumps(requests[-2]).encode(),
                          headers={"Content-Type": "application/json", "Accept": "application/x-ndjson"}, timeout=60)
    last = json.loads(resp.body.decode().strip().split("\n")[-1])
    assert last["type"] == "result" and last["result"] == want[sizes[-1]], last.get("error")
    wait_for(lambda: not result_mappings(server), timeout=10,
             what=f"no result channel mapped in the server (now {result_mappings(server)})")


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_a_client_hanging_up_kills_its_warm_run(streamed):
    """The run of a warm call ends when its client goes (its sandbox, the child it started included), and the
    pool refills."""
    mark = marker()
    with Server("--warm", "python=1") as srv:
        wait_full(srv)
        s = srv.raw_socket()
        body = json.dumps(sleeper_request(mark, seconds=60)).encode()
        accept = b"Accept: application/x-ndjson\r\n" if streamed else b""
        s.sendall(b"POST /v1/call HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + accept +
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        wait_for(lambda: host_pids_matching(mark), what="the marked child seen in /proc")
        assert pools(srv)["python"]["idle"] == 0  # the pool's one sandbox runs it
        s.close()
        wait_for(lambda: not host_pids_matching(mark), timeout=5, what="the sandbox's processes gone")
        wait_full(srv)
        status, res = post(srv, {"language": "python", "code": "def f():\n    return 7\n"})
        assert res["result"] == 7 and res["meta"].get("warm") is True
        assert pools(srv)["python"]["served"] == 2
    assert_nothing_left(srv, mark)
