"""Timeouts: status "timeout", exit code 124, output produced before the deadline kept, and every process
of the call (children, daemonized grandchildren) dead right after the CLI returns."""
import pytest

from fnboxlib import assert_no_survivors, call, describe, marker, req

BUSY = {
    "python": "def f():\n    print('before the deadline', flush=True)\n    while True:\n        pass\n",
    "javascript": "function f() {\n  console.log('before the deadline');\n  for (;;) {}\n}\n",
    "ruby": "def f\n  puts 'before the deadline'\n  $stdout.flush\n  loop {}\nend\n",
    "php": "function f() {\n  echo \"before the deadline\\n\";\n  while (true) {}\n}\n",
}

SLEEPING = {
    "python": "import time\ndef f():\n    time.sleep(30)\n",
    "javascript": "function f() {\n  return new Promise(r => setTimeout(r, 30000));\n}\n",
    "ruby": "def f\n  sleep 30\nend\n",
    "php": "function f() {\n  sleep(30);\n}\n",
}


def test_busy_loop_times_out(lang):
    res = call(req(lang, BUSY[lang], "f", [], timeout=1))
    result = res.result
    assert res.code == 0
    assert result["status"] == "timeout", describe(result)
    assert result["success"] is False
    assert result["exitCode"] == 124
    assert "before the deadline" in result["stdout"], describe(result)
    assert 0.9 <= res.elapsed < 6, f"call took {res.elapsed:.2f}s for a 1 s timeout"
    assert result["meta"]["duration"] >= 900, describe(result)


def test_fractional_timeout_sleeping_function(lang):
    res = call(req(lang, SLEEPING[lang], "f", [], timeout=0.5))
    assert res.result["status"] == "timeout", describe(res.result)
    assert 0.45 <= res.elapsed < 4, f"call took {res.elapsed:.2f}s for a 0.5 s timeout"


def test_v02_root_timeout():
    r = {"language": "javascript", "code": "function f() {\n  for (;;) {}\n}\n", "functionName": "f",
         "timeout": 0.7, "options": {}}
    res = call(r)
    assert res.result["status"] == "timeout", describe(res.result)
    assert res.elapsed < 5


def test_under_timeout_succeeds():
    res = call(req("python", "import time\ndef f():\n    time.sleep(0.3)\n    return 'in time'\n", "f", [],
                   timeout=5))
    assert res.result["status"] == "success" and res.result["result"] == "in time", describe(res.result)


PY_SPAWN = r'''
import os, subprocess, sys, time

MARK = {mark!r}

def spawn_all():
    # a plain child
    subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)", MARK + "-child"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # a daemonized grandchild: double fork + setsid, still holding our stdout/stderr pipes
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c",
                     "import time\nwhile True: time.sleep(1)", MARK + "-daemon"])
        os._exit(0)
    os.wait()
    time.sleep(0.2)

def f(stay):
    spawn_all()
    print("spawned", flush=True)
    if stay:
        while True:
            time.sleep(1)
    return "returned"
'''

JS_SPAWN = r'''
const cp = require('child_process');
const MARK = {mark!r};
function f(stay) {{
  cp.spawn(process.execPath, ['-e', 'setInterval(() => {{}}, 1000)', MARK + '-child'],
           {{ stdio: 'ignore' }});
  const d = cp.spawn(process.execPath, ['-e', 'setInterval(() => {{}}, 1000)', MARK + '-daemon'],
                     {{ detached: true, stdio: ['ignore', 'inherit', 'inherit'] }});
  d.unref();
  console.log('spawned');
  if (stay) {{
    const t = Date.now();
    while (Date.now() - t < 60000) {{}}
  }}
  return 'returned';
}}
'''


RB_SPAWN = r'''
MARK = "{mark}"

def f(stay)
  spawn("/usr/bin/ruby", "--disable-gems", "-e", "loop { sleep 1 }", MARK + "-child", out: File::NULL, err: File::NULL)
  # a daemonized grandchild: fork + setsid, still holding our stdout/stderr pipes
  pid = fork do
    Process.setsid
    exec("/usr/bin/ruby", "--disable-gems", "-e", "loop { sleep 1 }", MARK + "-daemon")
  end
  Process.detach(pid)
  puts "spawned"
  $stdout.flush
  loop { sleep 1 } if stay
  "returned"
end
'''

PHP_SPAWN = r'''
const MARK = "{mark}";

function f($stay) {
  $child = proc_open([PHP_BINARY, '-r', 'while (true) sleep(1);', MARK . '-child'], [], $pipes);
  // a daemonized grandchild: fork + setsid, still holding our stdout/stderr pipes
  $pid = pcntl_fork();
  if ($pid === 0) {
    posix_setsid();
    pcntl_exec(PHP_BINARY, ['-r', 'while (true) sleep(1);', MARK . '-daemon']);
    exit(1);
  }
  echo "spawned\n";
  if ($stay) {
    while (true) sleep(1);
  }
  return "returned";
}
'''


def spawn_code(lang, mark):
    if lang == "python":
        return PY_SPAWN.replace("{mark!r}", repr(mark))
    if lang == "ruby":
        return RB_SPAWN.replace("{mark}", mark)
    if lang == "php":
        return PHP_SPAWN.replace("{mark}", mark)
    return JS_SPAWN.format(mark=mark)


def test_timeout_kills_children_and_daemons(lang):
    """The function starts a child and a setsid'd grandchild, then loops past the deadline."""
    mark = marker()
    res = call(req(lang, spawn_code(lang, mark), "f", [True], timeout=1.5))
    assert res.result["status"] == "timeout", describe(res.result)
    assert "spawned" in res.result["stdout"], describe(res.result)
    assert_no_survivors(mark, grace=0.2)


def test_return_kills_leftover_processes(lang):
    """A function that returns while its children and a daemon still run (holding the stdout pipe):
    the call returns promptly with the result, and leaves no process behind."""
    mark = marker()
    res = call(req(lang, spawn_code(lang, mark), "f", [False], timeout=20))
    assert res.result["status"] == "success" and res.result["result"] == "returned", describe(res.result)
    assert res.elapsed < 8, f"call took {res.elapsed:.2f}s: waiting on the daemon's pipe?"
    assert_no_survivors(mark, grace=0.2)


@pytest.mark.parametrize("bad", [-1, "10", True, [1], {"s": 1}])
def test_invalid_timeout(bad):
    result, rc, _ = call({"language": "python", "code": "def f():\n    return 1\n", "timeout": bad})
    assert rc == 2, describe(result)
    assert result["error"]["type"] == "InvalidRequest"
    assert "timeout" in result["error"]["message"], describe(result)


@pytest.mark.parametrize("huge", [10**9, 1e300])
def test_huge_timeout_rejected_or_clamped(huge):
    """Above the documented maximum: either an InvalidRequest naming `timeout`, or clamped — never an
    overflow that times out at once."""
    res = call({"language": "python", "code": "def f():\n    return 1\n", "timeout": huge})
    if res.code == 2:
        assert "timeout" in res.result["error"]["message"], describe(res.result)
    else:
        assert res.result["status"] == "success" and res.result["result"] == 1, describe(res.result)
