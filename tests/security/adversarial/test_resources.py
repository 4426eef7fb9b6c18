"""Resources: fork bombs and thread counts, memory bombs (heap and tmpfs), disk and inode fills, output
floods, CPU loops, sleeping past the deadline, ignoring SIGTERM, and a daemonized grandchild that tries to
outlive the call. Each attack reports how far it got; limits are set low in the request to keep it quick."""
import re
import secrets
import subprocess
import time

import pytest

from fnboxlib import describe, ok, req

from .attacklib import c_code, parse_c, stopped, survivors
from .conftest import attack

PIDS = 32

FORK_COUNT = {
    "python": r'''
import os, time
def f(n):
    kids = []
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(20)
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return len(kids)
''',
    # Ruby's fork retries EAGAIN forever (a second's sleep each time): the count is its last progress line
    "ruby": r'''
def f(n)
  kids = []
  n.times do
    begin
      kids << fork { sleep 20; exit!(0) }
      $stdout.syswrite("FORKED #{kids.size}\n")
    rescue SystemCallError
      break
    end
  end
  kids.each { |pid| Process.kill(:KILL, pid); Process.wait(pid) }
  kids.size
end
''',
    "php": r'''<?php
function f($n) {
  $kids = [];
  for ($i = 0; $i < $n; $i++) {
    $pid = @pcntl_fork();
    if ($pid < 0) break;
    if ($pid === 0) { sleep(20); exit(0); }
    $kids[] = $pid;
  }
  foreach ($kids as $pid) { posix_kill($pid, SIGKILL); pcntl_waitpid($pid, $status); }
  return count($kids);
}
''',
}


@attack("resources", "fork_count")
def test_fork_count(lang, box):
    """Start as many sleeping children as possible (up to 300) under `limits.pids` 32."""
    res = box.call(req(lang, FORK_COUNT[lang], "f", [300], timeout=3, limits={"pids": PIDS}), timeout=60)
    if lang == "ruby" and res.result["status"] == "timeout":
        n = max([int(m) for m in re.findall(r"^FORKED (\d+)$", res.result["stdout"], re.M)] or [0])
    else:
        n = ok(res)
    assert n > 0, f"not a single fork: {describe(res.result)}"
    stopped(f"started more processes than limits.pids ({PIDS})", n if n >= PIDS else 0)


FORK_BOMB = r'''
const char *f(const char *mark)
{
    /* a fork bomb, bounded (it stops at 2000 processes) so that it cannot hurt the host when the limit is off */
    long *count = mmap(NULL, sizeof *count, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    prctl(PR_SET_NAME, mark, 0, 0, 0);
    pid_t root = fork();
    if (root == 0) {
        while (__atomic_load_n(count, __ATOMIC_RELAXED) < 2000) {
            pid_t p = fork();
            if (p > 0)
                __atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
            else if (p < 0)
                usleep(2000);
        }
        for (;;)
            pause();
    }
    usleep(1500 * 1000);
    begin_();
    put_int("processes", __atomic_load_n(count, __ATOMIC_RELAXED));
    return end_();
}
'''


@attack("resources", "fork_bomb")
def test_fork_bomb(lang, box):
    """An exponential fork bomb (every process forks in a loop; capped at 2000) under `limits.pids` 32; it is
    still running when the function returns: all of it must die with the call, and the host still forks."""
    mark = "fb" + secrets.token_hex(6)
    t0 = time.monotonic()
    res = box.call(req(lang, c_code(FORK_BOMB), "f", [mark], timeout=10, limits={"pids": PIDS}), timeout=60)
    elapsed = time.monotonic() - t0
    got = parse_c(ok(res))
    left = survivors(mark, grace=0.3)
    assert got["processes"] > 0, got
    evidence = {}
    if got["processes"] >= PIDS:
        evidence["processes"] = got["processes"]
    if left:
        evidence["survivors"] = left[:10]
    if elapsed > 30:
        evidence["elapsed"] = elapsed
    stopped("the fork bomb got past the process limit", evidence)
    assert subprocess.run(["/bin/true"], timeout=10).returncode == 0


EARLY_FORK = r'''
static long *early_count_;

/* Runs before main, before the program has read anything: a spawner forked here that got out of the call's
 * cgroup would take all its children with it, past the process (and memory) limit. Bounded at 100. */
__attribute__((constructor)) static void early_(void)
{
    early_count_ = mmap(NULL, sizeof *early_count_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (early_count_ == MAP_FAILED || fork() != 0)
        return;
    for (int i = 0; i < 100; i++) {
        pid_t p = fork();
        if (p == 0)
            for (;;)
                pause();
        if (p > 0)
            __atomic_add_fetch(early_count_, 1, __ATOMIC_RELAXED);
    }
    for (;;)
        pause();
}

const char *f(void)
{
    usleep(300 * 1000);
    begin_();
    put_int("processes", early_count_ == MAP_FAILED ? -1 : __atomic_load_n(early_count_, __ATOMIC_RELAXED));
    return end_();
}
'''


@attack("resources", "early_fork")
def test_early_fork(lang, box):
    """A C constructor forks a spawner before main, while the program may not have joined the call's cgroup
    yet, and the spawner starts up to 100 sleepers under `limits.pids` 32. A process forked outside the cgroup
    keeps its children outside for good. The move's timing varies (a few ms), so it tries three calls."""
    counts = []
    for _ in range(3):
        got = parse_c(ok(box.call(req(lang, c_code(EARLY_FORK), "f", [], timeout=10, limits={"pids": PIDS}),
                                  timeout=60)))
        assert got["processes"] >= 0, got
        counts.append(got["processes"])
        if got["processes"] >= PIDS:
            break
    stopped(f"a constructor's children got past limits.pids ({PIDS})", [n for n in counts if n >= PIDS])


THREADS = r'''
import threading
def f(n):
    stop = threading.Event()
    started = []
    for _ in range(n):
        t = threading.Thread(target=stop.wait, daemon=True)
        try:
            t.start()
        except RuntimeError:
            break
        started.append(t)
    stop.set()
    for t in started:
        t.join()
    return len(started)
'''


@attack("resources", "thread_count")
def test_thread_count(lang, box):
    """Start as many threads as possible (up to 300): threads count against `limits.pids` too."""
    n = ok(box.call(req(lang, THREADS, "f", [300], timeout=20, limits={"pids": PIDS}), timeout=60))
    assert n > 0
    stopped(f"started more threads than limits.pids ({PIDS})", n if n >= PIDS else 0)


MEM_LIMIT = 64 << 20
MEMORY_BOMB = {
    "python": r'''
import os
def f(total_mb):
    keep = []
    for i in range(total_mb // 8):
        keep.append(b'x' * (8 << 20))
        os.write(1, b'MB %d\n' % ((i + 1) * 8))
    return len(keep) * 8
''',
    "javascript": r'''
const fs = require('fs');
function f(totalMb) {
  const keep = [];
  for (let i = 0; i < totalMb / 8; i++) {
    keep.push(Buffer.alloc(8 << 20, 1));
    fs.writeSync(1, `MB ${(i + 1) * 8}\n`);
  }
  return keep.length * 8;
}
''',
    "c": r'''
const char *f(int total_mb)
{
    for (int i = 0; i < total_mb / 8; i++) {
        char *p = malloc(8 << 20);
        if (!p)
            break;
        memset(p, 1, 8 << 20);
        char line[32];
        int n = snprintf(line, sizeof line, "MB %d\n", (i + 1) * 8);
        (void)!write(1, line, (size_t)n);
    }
    begin_();
    put_int("done", total_mb);
    return end_();
}
''',
}


def progress_mb(res):
    return max([int(m) for m in re.findall(r"^MB (\d+)$", res.result.get("stdout", ""), re.M)] or [0])


def memory_verdict(res, what):
    reached = progress_mb(res)
    assert reached > 0, f"the bomb did not even start: {describe(res.result)}"
    evidence = {}
    if res.result["status"] == "success":
        evidence["status"] = "success"
    if reached > (MEM_LIMIT >> 20) * 3 // 2:
        evidence["MiB held"] = reached
    stopped(what, evidence)
    assert res.result["status"] == "crash" and res.result["error"]["type"] == "MemoryLimitExceeded", \
        describe(res.result)


@attack("resources", "memory_bomb")
def test_memory_bomb(lang, box):
    """Allocate and touch up to 384 MiB in 8 MiB steps under `limits.memoryBytes` 64 MiB."""
    code = c_code(MEMORY_BOMB["c"]) if lang == "c" else MEMORY_BOMB[lang]
    res = box.call(req(lang, code, "f", [384], timeout=20, limits={"memoryBytes": MEM_LIMIT}), timeout=60)
    memory_verdict(res, "held more memory than limits.memoryBytes")


TMPFS_MEMORY = r'''
def f(per_dir_mb)
  total = 0
  chunk = "x" * (8 << 20)
  ["/tmp", "/dev/shm", "/workspace"].each do |d|
    (per_dir_mb / 8).times do |i|
      begin
        File.binwrite("#{d}/fill#{i}", chunk)
      rescue SystemCallError
        break
      end
      total += 8
      $stdout.syswrite("MB #{total}\n")
    end
  end
  total
end
'''


@attack("resources", "memory_in_tmpfs")
def test_memory_in_tmpfs(lang, box):
    """Hold memory as files in the three tmpfs areas (each up to 56 MiB) under `limits.memoryBytes` 64 MiB."""
    res = box.call(req(lang, TMPFS_MEMORY, "f", [56], timeout=20, limits={"memoryBytes": MEM_LIMIT}), timeout=60)
    memory_verdict(res, "held more memory (in tmpfs files) than limits.memoryBytes")


FILL_LIMIT = 1 << 20
DISK_FILL = {
    "python": r'''
def f(path, max_mb):
    written = 0
    chunk = b'x' * 65536
    try:
        with open(path, 'wb') as fh:
            while written < max_mb << 20:
                fh.write(chunk)
                fh.flush()
                written += len(chunk)
    except OSError as e:
        return {'written': written, 'error': e.errno}
    return {'written': written, 'error': None}
''',
    "php": r'''<?php
function f($path, $max_mb) {
  $written = 0;
  $chunk = str_repeat('x', 65536);
  $h = fopen($path, 'wb');
  while ($written < ($max_mb << 20)) {
    $n = @fwrite($h, $chunk);
    if ($n === false || $n < strlen($chunk)) { fflush($h); return ['written' => $written + (int)$n, 'error' => 'short']; }
    fflush($h);
    $written += $n;
  }
  return ['written' => $written, 'error' => null];
}
''',
    "c": r'''
const char *f(const char *path, int max_mb)
{
    static char chunk[65536];
    long written = 0;
    int e = 0;
    memset(chunk, 'x', sizeof chunk);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    while (fd >= 0 && written < (long)max_mb << 20) {
        ssize_t n = write(fd, chunk, sizeof chunk);
        if (n <= 0) {
            e = errno;
            break;
        }
        written += n;
    }
    begin_();
    put_int("written", written);
    put_int("error", e);
    return end_();
}
''',
}
FILL_TARGET = {"python": ("/workspace/fill", "workspaceBytes"), "php": ("/tmp/fill", "tmpBytes"),
               "c": ("/dev/shm/fill", "tmpBytes")}


@attack("resources", "disk_fill")
def test_disk_fill(lang, box):
    """Write up to 32 MiB into the workspace, /tmp or /dev/shm limited to 1 MiB: the writes stop at the limit
    (ENOSPC), in memory, never on the host's disk."""
    path, limit = FILL_TARGET[lang]
    code = c_code(DISK_FILL["c"]) if lang == "c" else DISK_FILL[lang]
    res = box.call(req(lang, code, "f", [path, 32], timeout=20, limits={limit: FILL_LIMIT}), timeout=60)
    got = ok(res)
    got = parse_c(got) if lang == "c" else got
    assert got["written"] > 0, got
    stopped(f"wrote beyond limits.{limit}", got["written"] if got["written"] > FILL_LIMIT + 65536 else 0)


INODES = r'''
const fs = require('fs');
function f(n) {
  let made = 0;
  try {
    for (; made < n; made++) fs.writeFileSync(`/tmp/i${made}`, '');
  } catch (e) { return { made, error: e.code }; }
  return { made, error: null };
}
'''


@attack("resources", "inode_fill")
def test_inode_fill(lang, box):
    """Create up to 3000 empty files in /tmp limited to 64 inodes."""
    got = ok(box.call(req(lang, INODES, "f", [3000], timeout=20, limits={"inodes": 64}), timeout=60))
    assert got["made"] > 0, got
    stopped("created more files than limits.inodes (64)", got["made"] if got["made"] > 64 else 0)


OUT_LIMIT = 65536
OUTPUT_FLOOD = {
    "python": r'''
import sys
def f(mb):
    line = 'A' * 1023 + '\n'
    for _ in range(mb * 1024):
        sys.stdout.write(line)
        sys.stderr.write(line)
    sys.stdout.flush()
    return 'done'
''',
    "javascript": r'''
const fs = require('fs');
function f(mb) {
  const chunk = Buffer.alloc(1 << 16, 65);
  for (let i = 0; i < mb * 16; i++) { fs.writeSync(1, chunk); fs.writeSync(2, chunk); }
  return 'done';
}
''',
    "ruby": r'''
def f(mb)
  chunk = "A" * 65536
  (mb * 16).times { $stdout.syswrite(chunk); $stderr.syswrite(chunk) }
  "done"
end
''',
}


@attack("resources", "output_flood")
def test_output_flood(lang, box):
    """Write 16 MiB to stdout and to stderr, each capped at 64 KiB: the call still returns, with the output
    truncated at the cap."""
    limits = {"stdoutBytes": OUT_LIMIT, "stderrBytes": OUT_LIMIT}
    t0 = time.monotonic()
    res = box.call(req(lang, OUTPUT_FLOOD[lang], "f", [16], timeout=20, limits=limits), timeout=60)
    elapsed = time.monotonic() - t0
    assert ok(res) == "done"
    evidence = {s: len(res.result[s]) for s in ("stdout", "stderr") if len(res.result[s]) > OUT_LIMIT + 4096}
    if len(res.raw) > 4 * OUT_LIMIT:
        evidence["result size"] = len(res.raw)
    if elapsed > 15:
        evidence["elapsed"] = elapsed
    stopped("got past the output caps", evidence)
    assert res.result["truncated"] == {"stdout": True, "stderr": True}, describe(res.result)


def bounded_call(box, request, host_timeout=20):
    """A call that must end at its deadline; a call still running after host_timeout is the attack winning."""
    t0 = time.monotonic()
    try:
        res = box.call(request, timeout=host_timeout)
    except pytest.fail.Exception as e:
        stopped("the call did not end at its deadline", str(e)[:300])
    return res, time.monotonic() - t0


SPIN = {
    "javascript": "function f() {\n  for (;;) {}\n}\n",
    "php": "<?php\nfunction f() {\n  $x = 0;\n  for (;;) { $x++; }\n}\n",
}
SLEEP = {
    "ruby": "def f\n  sleep 30\n  'woke up'\nend\n",
    "c": "#include <unistd.h>\nint f(void) { sleep(30); return 1; }\n",
}
DEADLINE = 0.5


def deadline_verdict(res, elapsed, what):
    evidence = {}
    if res.result["status"] != "timeout":
        evidence["status"] = res.result["status"]
    if elapsed > DEADLINE + 8:
        evidence["elapsed"] = round(elapsed, 1)
    stopped(what, evidence)
    assert res.result["error"]["type"] == "TimeoutError" and res.result["exitCode"] == 124, describe(res.result)


@attack("resources", "cpu_loop")
def test_cpu_loop(lang, box):
    """Spin forever under a 0.5 s timeout."""
    res, elapsed = bounded_call(box, req(lang, SPIN[lang], "f", [], timeout=DEADLINE))
    deadline_verdict(res, elapsed, "spun past the deadline")


@attack("resources", "sleep_past_timeout")
def test_sleep_past_timeout(lang, box):
    """Sleep 30 s under a 0.5 s timeout."""
    res, elapsed = bounded_call(box, req(lang, SLEEP[lang], "f", [], timeout=DEADLINE))
    deadline_verdict(res, elapsed, "slept past the deadline")


IGNORE_TERM = {
    "python": r'''
import ctypes, os, signal, time
def f(mark):
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
              signal.SIGALRM, signal.SIGXCPU, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    ctypes.CDLL(None).prctl(15, mark.encode(), 0, 0, 0)
    os.fork()  # and a child doing the same
    while True:
        time.sleep(0.05)
''',
    "php": r'''<?php
function f($mark) {
  foreach ([SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGPIPE] as $s) pcntl_signal($s, SIG_IGN);
  cli_set_process_title($mark);
  pcntl_fork();
  for (;;) { usleep(50000); }
}
''',
}


@attack("resources", "ignore_sigterm")
def test_ignore_sigterm(lang, box):
    """Ignore every catchable signal (in the function and a child) and loop past the 0.5 s timeout."""
    mark = "ig" + secrets.token_hex(6)
    res, elapsed = bounded_call(box, req(lang, IGNORE_TERM[lang], "f", [mark], timeout=DEADLINE))
    left = survivors(mark, grace=0.2)
    stopped("a process ignoring SIGTERM outlived the call", left)
    deadline_verdict(res, elapsed, "ignored the deadline")


DAEMON = {
    "python": r'''
import ctypes, os, signal, time
def f(mark):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(s, signal.SIG_IGN)
            ctypes.CDLL(None).prctl(15, mark.encode(), 0, 0, 0)
            time.sleep(20)
        os._exit(0)
    os.wait()
    time.sleep(0.1)
    return 'returned'
''',
    "javascript": r'''
const cp = require('child_process');
async function f(mark) {
  const c = cp.spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)', mark],
                     { detached: true, stdio: 'ignore' });
  c.unref();
  await new Promise((r) => setTimeout(r, 300));
  return c.pid ? 'returned' : 'spawn failed';
}
''',
    "ruby": r'''
def f(mark)
  pid = fork do
    Process.setsid
    fork do
      %w[TERM HUP INT].each { |s| Signal.trap(s, "IGNORE") }
      Process.setproctitle(mark)
      $stdout.reopen(File::NULL, "w")  # as a daemon does: nothing ties it to the call any more
      $stderr.reopen(File::NULL, "w")
      sleep 30
    end
    exit!(0)
  end
  Process.wait(pid)
  sleep 0.1
  "returned"
end
''',
    "c": r'''
const char *f(const char *mark)
{
    pid_t p = fork();
    if (p == 0) {
        setsid();
        if (fork() == 0) {
            signal(SIGTERM, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
            prctl(PR_SET_NAME, mark, 0, 0, 0);
            sleep(20);
        }
        _exit(0);
    }
    waitpid(p, NULL, 0);
    usleep(100 * 1000);
    begin_();
    put_str("status", "returned");
    return end_();
}
''',
}


@attack("resources", "daemon_grandchild")
def test_daemon_grandchild(lang, box):
    """Double-fork a daemon (new session, signals ignored) that should live on after the function returns;
    check the host's process table for it."""
    mark = "dm" + secrets.token_hex(6)
    code = c_code(DAEMON["c"]) if lang == "c" else DAEMON[lang]
    res = box.call(req(lang, code, "f", [mark], timeout=10), timeout=60)
    got = ok(res)
    assert "returned" in str(got), got
    stopped("a process of the call outlived it", survivors(mark, grace=0.3))
