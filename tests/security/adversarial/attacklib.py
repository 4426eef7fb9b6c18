"""Helpers of the adversarial suite: how an attack reports success, host-side canaries and listeners, and
the attack programs several areas share (read paths, write paths, connect), in every language.

An attack program returns what it achieved (the canary text it read, the connections it made, the number
of processes it started...). The test hands that evidence to `stopped(what, evidence)`, which raises
AttackSucceeded when the evidence is not empty. Checks that the program really ran (a syntax error would
"achieve nothing") are plain assertions: in the weak run (conftest.py) only AttackSucceeded counts as the
attack getting through."""
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration"))

from fnboxlib import describe, host_pids_matching  # noqa: E402


class AttackSucceeded(AssertionError):
    """The attack achieved something: the defence it names did not stop it."""


def stopped(what, evidence):
    """Assert the attack achieved nothing: `evidence` (what it got) must be empty / false / zero."""
    if evidence:
        text = evidence if isinstance(evidence, str) else json.dumps(evidence, default=str, ensure_ascii=False)
        raise AttackSucceeded(f"ATTACK SUCCEEDED: {what}: {text[:2000]}")


def token(prefix="fnboxadv"):
    return prefix + secrets.token_hex(8)


def outer_ids():
    """The host uid/gid the sandbox's processes have: nobody/nogroup when fnbox runs as root, else ours
    (docs/internals/sandbox.md, Identities)."""
    if os.geteuid() == 0:
        return 65534, 65534
    return os.getuid(), os.getgid()


def host_addresses():
    """127.0.0.1 plus the host's outbound address, if it has one (connecting a UDP socket sends nothing)."""
    addrs = ["127.0.0.1"]
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            a = s.getsockname()[0]
            if a and a not in addrs and not a.startswith("127."):
                addrs.append(a)
    except OSError:
        pass
    return addrs


def accepted(listener):
    """Connections a non-blocking listening socket has waiting (each closed): [peer, ...]."""
    peers = []
    while True:
        try:
            conn, peer = listener.accept()
        except (BlockingIOError, socket.timeout):
            return peers
        try:
            conn.settimeout(0.2)
            data = conn.recv(200)
        except OSError:
            data = b""
        conn.close()
        peers.append(f"{peer} sent {data!r}")


def received(udp):
    """Datagrams waiting on a non-blocking UDP socket: [(peer, data), ...]."""
    got = []
    while True:
        try:
            data, peer = udp.recvfrom(2048)
        except (BlockingIOError, socket.timeout):
            return got
        got.append(f"{peer}: {data!r}")


def survivors(mark, grace=0.3):
    """Host processes carrying `mark` after `grace` seconds; they are killed (they are ours)."""
    time.sleep(grace)
    left = host_pids_matching(mark)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


SLEEPER = r'''
import os, signal, sys, time
def note(sig, frame):
    os.write(1, ("SIGNAL %d\n" % sig).encode())
for s in (signal.SIGURG, signal.SIGCONT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, note)
os.write(1, b"READY\n")
end = time.time() + float(sys.argv[1])
while time.time() < end:
    time.sleep(0.05)
'''


class HostSleeper:
    """A host process (running as the sandbox's own outer uid, so that only the namespaces keep a signal
    from reaching it) that reports every signal it receives on its stdout. `mark` is in its argv."""

    def __init__(self, seconds=60):
        self.mark = token("fnboxsleeper")
        uid, gid = outer_ids()

        def demote():
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)

        self.proc = subprocess.Popen([sys.executable, "-c", SLEEPER, str(seconds), self.mark],
                                     stdout=subprocess.PIPE, preexec_fn=demote, cwd="/")
        line = self.proc.stdout.readline()
        assert line == b"READY\n", f"host sleeper did not start: {line!r}"
        os.set_blocking(self.proc.stdout.fileno(), False)

    def signals(self):
        try:
            data = self.proc.stdout.read() or b""
        except BlockingIOError:
            data = b""
        return [line for line in data.decode().splitlines() if line.startswith("SIGNAL")]

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()


# ---------------------------------------------------------------------------------------------------------
# C: helpers every C attack starts with. The function returns a JSON object as text (parse_c).
C_PRELUDE = r'''
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#define UNUSED __attribute__((unused))
static char out_[1 << 17];
static size_t on_;
static int first_;
static UNUSED void raw_(const char *s, size_t n)
{
    if (n > sizeof out_ - 1 - on_)
        n = sizeof out_ - 1 - on_;
    memcpy(out_ + on_, s, n);
    on_ += n;
    out_[on_] = 0;
}
static UNUSED void rawf_(const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n > 0)
        raw_(b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}
static UNUSED void str_(const char *s, size_t n)
{
    raw_("\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            raw_(e, 2);
        } else if (c < 0x20 || c >= 0x7f) {
            rawf_("\\u%04x", c);
        } else {
            raw_((const char *)&c, 1);
        }
    }
    raw_("\"", 1);
}
static UNUSED void key_(const char *k)
{
    if (!first_)
        raw_(", ", 2);
    first_ = 0;
    str_(k, strlen(k));
    raw_(": ", 2);
}
static UNUSED void begin_(void) { on_ = 0; first_ = 1; raw_("{", 1); }
static UNUSED const char *end_(void) { raw_("}", 1); return out_; }
static UNUSED void put_int(const char *k, long v) { key_(k); rawf_("%ld", v); }
static UNUSED void put_str(const char *k, const char *v) { key_(k); str_(v, strlen(v)); }
static UNUSED void put_buf(const char *k, const char *v, size_t n) { key_(k); str_(v, n); }
/* a syscall's outcome: its value, or "ERR:<errno>" */
static UNUSED void put_rc(const char *k, long r, int e)
{
    if (r < 0) {
        char b[32];
        snprintf(b, sizeof b, "ERR:%d", e);
        put_str(k, b);
    } else {
        put_int(k, r);
    }
}
/* TRY("name", call): record the call's outcome (errno read after the call, not as a sibling argument) */
#define TRY(k, expr)                 \
    do {                             \
        errno = 0;                   \
        long r_ = (long)(expr);      \
        put_rc((k), r_, errno);      \
    } while (0)
static UNUSED long sys_(long nr, long a, long b, long c, long d, long e, int *err)
{
    errno = 0;
    long r = syscall(nr, a, b, c, d, e, 0L);
    *err = errno;
    return r;
}
/* the next line of a newline-separated list (modifies it); NULL at the end */
static UNUSED char *next_line(char **cursor)
{
    char *s = *cursor;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = 0;
        *cursor = nl + 1;
    } else {
        *cursor = s + strlen(s);
    }
    return s;
}
'''


def parse_c(value):
    assert isinstance(value, str), f"the C attack returned {value!r}"
    return json.loads(value)


def c_code(body):
    """A C attack: the prelude, then `body`, which defines `const char *f(...)` using begin_/put_*/end_."""
    return C_PRELUDE + body


def run_c(box, body, args=(), timeout=20, **extra):
    """Compile and run a C attack in the sandbox; returns its JSON object."""
    from fnboxlib import ok, req
    res = box.call(req("c", c_code(body), "f", list(args), timeout=timeout, **extra))
    return parse_c(ok(res))


# ---------------------------------------------------------------------------------------------------------
# READ: f(paths) -> {path: "READ:<first 4 KiB>" | "DIR:<names>" | "ERR:<error>"}
READ = {
    "python": r'''
import os
def f(paths):
    out = {}
    for p in paths:
        try:
            if os.path.isdir(p):
                out[p] = 'DIR:' + ' '.join(sorted(os.listdir(p)))
            else:
                with open(p, 'rb') as fh:
                    out[p] = 'READ:' + fh.read(4096).decode('latin-1')
        except Exception as e:
            out[p] = 'ERR:' + type(e).__name__
    return out
''',
    "javascript": r'''
const fs = require('fs');
function f(paths) {
  const out = {};
  for (const p of paths) {
    try {
      if (fs.statSync(p).isDirectory()) out[p] = 'DIR:' + fs.readdirSync(p).sort().join(' ');
      else out[p] = 'READ:' + fs.readFileSync(p, 'latin1').slice(0, 4096);
    } catch (e) { out[p] = 'ERR:' + (e.code || e.name); }
  }
  return out;
}
''',
    "ruby": r'''
def f(paths)
  out = {}
  paths.each do |p|
    out[p] = begin
      if File.directory?(p)
        "DIR:" + Dir.children(p).sort.join(" ")
      else
        "READ:" + File.binread(p, 4096).to_s.force_encoding("ISO-8859-1").encode("UTF-8")
      end
    rescue SystemCallError, IOError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
    "php": r'''<?php
function f($paths) {
  $out = [];
  foreach ($paths as $p) {
    if (@is_dir($p)) {
      $l = @scandir($p);
      $out[$p] = $l === false ? 'ERR:scandir' : 'DIR:' . implode(' ', $l);
      continue;
    }
    $c = @file_get_contents($p, false, null, 0, 4096);
    if ($c === false) { $out[$p] = 'ERR:read'; continue; }
    $out[$p] = 'READ:' . (preg_match('//u', $c) ? $c : 'HEX:' . bin2hex($c));
  }
  return $out;
}
''',
    "c": C_PRELUDE + r'''
const char *f(char *paths)
{
    static char buf[4096];
    begin_();
    for (char *p; (p = next_line(&paths)) != NULL;) {
        DIR *d = opendir(p);
        if (d) {
            char names[4096] = "DIR:";
            for (struct dirent *e; (e = readdir(d)) != NULL;) {
                strncat(names, e->d_name, sizeof names - strlen(names) - 2);
                strcat(names, " ");
            }
            closedir(d);
            put_str(p, names);
            continue;
        }
        int fd = open(p, O_RDONLY | O_NONBLOCK);
        if (fd < 0) {
            put_rc(p, -1, errno);
            continue;
        }
        memcpy(buf, "READ:", 5);
        ssize_t n = read(fd, buf + 5, sizeof buf - 5);
        int e = errno;
        close(fd);
        if (n < 0)
            put_rc(p, -1, e);
        else
            put_buf(p, buf, (size_t)n + 5);
    }
    return end_();
}
''',
}

# WRITE: f(paths, payload) -> {path: "WROTE" | "ERR:<error>"}
WRITE = {
    "python": r'''
def f(paths, payload):
    out = {}
    for p in paths:
        try:
            with open(p, 'w') as fh:
                fh.write(payload)
            out[p] = 'WROTE'
        except Exception as e:
            out[p] = 'ERR:' + type(e).__name__
    return out
''',
    "javascript": r'''
const fs = require('fs');
function f(paths, payload) {
  const out = {};
  for (const p of paths) {
    try { fs.writeFileSync(p, payload); out[p] = 'WROTE'; }
    catch (e) { out[p] = 'ERR:' + (e.code || e.name); }
  }
  return out;
}
''',
    "ruby": r'''
def f(paths, payload)
  out = {}
  paths.each do |p|
    out[p] = begin
      File.write(p, payload)
      "WROTE"
    rescue SystemCallError, IOError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
    "php": r'''<?php
function f($paths, $payload) {
  $out = [];
  foreach ($paths as $p) {
    $out[$p] = @file_put_contents($p, $payload) === false ? 'ERR:write' : 'WROTE';
  }
  return $out;
}
''',
    "c": C_PRELUDE + r'''
const char *f(char *paths, const char *payload)
{
    begin_();
    for (char *p; (p = next_line(&paths)) != NULL;) {
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd < 0) {
            put_rc(p, -1, errno);
            continue;
        }
        ssize_t n = write(fd, payload, strlen(payload));
        int e = errno;
        close(fd);
        if (n < 0)
            put_rc(p, -1, e);
        else
            put_str(p, "WROTE");
    }
    return end_();
}
''',
}

# CONNECT (TCP): f(targets, payload) -> {"host:port": "CONNECTED" | "ERR:<error>"}; sends payload when connected
CONNECT = {
    "python": r'''
import socket
def f(targets, payload):
    out = {}
    for host, port in targets:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect((host, port))
            s.sendall(payload.encode())
            out[f'{host}:{port}'] = 'CONNECTED'
        except Exception as e:
            out[f'{host}:{port}'] = 'ERR:' + type(e).__name__
        finally:
            s.close()
    return out
''',
    "javascript": r'''
const net = require('net');
function attempt(host, port, payload) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const t = setTimeout(() => { s.destroy(); resolve('ERR:timeout'); }, 2000);
    s.on('connect', () => { clearTimeout(t); s.end(payload); resolve('CONNECTED'); });
    s.on('error', (e) => { clearTimeout(t); resolve('ERR:' + e.code); });
  });
}
async function f(targets, payload) {
  const out = {};
  for (const [host, port] of targets) out[`${host}:${port}`] = await attempt(host, port, payload);
  return out;
}
''',
    "ruby": r'''
require 'socket'
require 'timeout'
def f(targets, payload)
  out = {}
  targets.each do |host, port|
    out["#{host}:#{port}"] = begin
      Timeout.timeout(2) do
        s = TCPSocket.new(host, port)
        s.write(payload)
        s.close
      end
      "CONNECTED"
    rescue StandardError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
    "php": r'''<?php
function f($targets, $payload) {
  $out = [];
  foreach ($targets as [$host, $port]) {
    $s = @stream_socket_client("tcp://$host:$port", $errno, $errstr, 2);
    if ($s === false) { $out["$host:$port"] = "ERR:$errno"; continue; }
    fwrite($s, $payload);
    fclose($s);
    $out["$host:$port"] = 'CONNECTED';
  }
  $s = @fsockopen($targets[0][0], $targets[0][1], $errno, $errstr, 2);
  $out['fsockopen'] = $s === false ? "ERR:$errno" : 'CONNECTED';
  return $out;
}
''',
    "c": C_PRELUDE + r'''
const char *f(char *targets, const char *payload)
{
    begin_();
    for (char *t; (t = next_line(&targets)) != NULL;) {
        char host[64];
        int port;
        if (sscanf(t, "%63[^:]:%d", host, &port) != 2)
            continue;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        inet_pton(AF_INET, host, &a.sin_addr);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0) {
            put_rc(t, -1, errno);
            continue;
        }
        int r = connect(s, (struct sockaddr *)&a, sizeof a);
        int e = errno;
        if (r == 0) {
            (void)!write(s, payload, strlen(payload));
            put_str(t, "CONNECTED");
        } else {
            put_rc(t, -1, e);
        }
        close(s);
    }
    return end_();
}
''',
}


def lines(items):
    """The C programs take lists as one newline-separated string."""
    return "\n".join(str(i) for i in items)


__all__ = ["AttackSucceeded", "stopped", "token", "outer_ids", "host_addresses", "accepted", "received",
           "survivors", "HostSleeper", "C_PRELUDE", "parse_c", "c_code", "run_c", "READ", "WRITE", "CONNECT",
           "lines", "describe"]


def skip_unless_host_allows(what, probe):
    """In the weak run only: skip when even this host's own root cannot do what the attack tries (probe()
    False), since then no defence of fnbox's is what stops it here and the run has nothing to show."""
    import pytest  # noqa: PLC0415 (only the tests need it)
    if os.environ.get("ADVERSARIAL_WEAK", "") in ("", "0"):
        return
    try:
        allowed = probe()
    except OSError:
        allowed = False
    if not allowed:
        pytest.skip(f"weak run: even this host's root cannot {what}, with or without fnbox")


def host_reads_proc1():
    """Whether this process can read PID 1's root and memory map (the host's own ptrace rules)."""
    os.listdir("/proc/1/root")
    with open("/proc/1/maps") as f:
        return bool(f.read(1))


def host_has_cap(bit):
    """Whether this process's effective capabilities include capability `bit`."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> bit & 1)
    return False
