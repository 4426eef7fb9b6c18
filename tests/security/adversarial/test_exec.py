"""Starting other programs: every process API of every language (subprocess, os.system, child_process,
backticks, system, proc_open, popen, execve...), a binary copied into the writable scratch space, and
setuid-root binaries. Landlock grants the execute right to the runtime only (docs/internals/sandbox.md)."""
import json
import re

from fnboxlib import ok, req

from .attacklib import c_code, parse_c, stopped
from .conftest import attack

# What a program that ran prints: never the literal text of the command, only what running it produces.
SH = "echo $((6*7))x$((6*7))"
RAN = ("42x42", "HOME=/tmp")  # the shell's arithmetic; /usr/bin/env printing the sandbox's environment

EXEC = {
    "python": r'''
import os, subprocess
SH = %(sh)s
def attempt(fn):
    try:
        return str(fn())
    except Exception as e:
        return 'ERR:' + type(e).__name__
def execv_in_child(path, argv):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 1)
        try:
            os.execv(path, argv)
        except OSError as e:
            os.write(w, b'ERR:%%d' %% e.errno)
        os._exit(0)
    os.close(w)
    got = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    return got
def f():
    return {
        'subprocess sh': attempt(lambda: subprocess.run(['/bin/sh', '-c', SH], capture_output=True).stdout.decode()),
        'subprocess shell': attempt(lambda: subprocess.run(SH, shell=True, capture_output=True).stdout.decode()),
        'subprocess env': attempt(lambda: subprocess.run(['/usr/bin/env'], capture_output=True).stdout.decode()),
        'check_output': attempt(lambda: subprocess.check_output(['/usr/bin/env']).decode()),
        'os.system': attempt(lambda: os.system(SH)),
        'os.popen': attempt(lambda: os.popen(SH).read()),
        'posix_spawn': attempt(lambda: os.waitpid(os.posix_spawn('/usr/bin/env', ['env'], {}), 0)),
        'execv sh': execv_in_child('/bin/sh', ['sh', '-c', SH]),
        'execv env': execv_in_child('/usr/bin/env', ['env']),
        'execve busybox-style': execv_in_child('/usr/bin/perl', ['perl', '-e', 'print 6*7, "x", 6*7']),
    }
''',
    "javascript": r'''
const cp = require('child_process');
const SH = %(sh)s;
function attempt(fn) {
  try { return String(fn()); } catch (e) { return 'ERR:' + (e.code || e.name); }
}
const spawned = (r) => (r.error ? 'ERR:' + r.error.code : String(r.stdout) + '|' + r.status);
async function f() {
  const out = {
    execSync: attempt(() => cp.execSync(SH)),
    execFileSync: attempt(() => cp.execFileSync('/bin/sh', ['-c', SH])),
    'spawnSync env': attempt(() => spawned(cp.spawnSync('/usr/bin/env'))),
    'spawnSync shell': attempt(() => spawned(cp.spawnSync(SH, { shell: true }))),
  };
  out.exec = await new Promise((resolve) => cp.exec(SH, (e, so) => resolve(e ? 'ERR:' + (e.code || e.name) : so)));
  out.spawn = await new Promise((resolve) => {
    const c = cp.spawn('/usr/bin/env');
    let text = '';
    c.on('error', (e) => resolve('ERR:' + e.code));
    c.stdout.on('data', (d) => { text += d; });
    c.on('close', () => resolve(text));
  });
  return out;
}
''',
    "ruby": r'''
SH = %(sh)s
def attempt
  yield.to_s
rescue SystemCallError, IOError => e
  "ERR:#{e.class}"
end
def f
  {
    "backticks" => attempt { `#{SH}` },
    "%%x" => attempt { %%x(/usr/bin/env) },
    "system" => attempt { [system(SH), $?&.exitstatus].inspect },
    "IO.popen" => attempt { IO.popen(["/usr/bin/env"], &:read) },
    "Open3-less spawn" => attempt { r, w = IO.pipe; pid = Process.spawn("/bin/sh", "-c", SH, out: w); w.close; Process.wait(pid); r.read },
    "exec in fork" => attempt {
      r, w = IO.pipe
      pid = fork { r.close; $stdout.reopen(w); begin; exec("/usr/bin/env"); rescue SystemCallError => e; w.write("ERR:#{e.class}"); end; exit!(0) }
      w.close
      Process.wait(pid)
      r.read
    },
  }
end
''',
    "php": r'''<?php
function f() {
  $sh = %(sh)s;
  $o = [];
  $o['shell_exec'] = var_export(@shell_exec($sh), true);
  $o['backticks'] = var_export(@`/usr/bin/env`, true);
  $lines = []; $rc = 0; @exec($sh, $lines, $rc); $o['exec'] = implode(',', $lines) . '|' . $rc;
  ob_start(); @system($sh); $o['system'] = ob_get_clean();
  ob_start(); @passthru('/usr/bin/env'); $o['passthru'] = ob_get_clean();
  $h = @popen($sh, 'r'); $o['popen'] = $h ? stream_get_contents($h) : 'ERR';
  $p = @proc_open(['/usr/bin/env'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
  $o['proc_open'] = $p ? stream_get_contents($pipes[1]) : 'ERR';
  $pid = pcntl_fork();
  if ($pid === 0) { @pcntl_exec('/bin/sh', ['-c', $sh . ' > /workspace/pcntl_exec.txt']); FFI::cdef('void _exit(int);')->_exit(0); }
  pcntl_waitpid($pid, $st);
  $o['pcntl_exec'] = @file_get_contents('/workspace/pcntl_exec.txt') ?: 'ERR';
  return $o;
}
''',
    "c": r'''
#include <spawn.h>
extern char **environ;
static void capture(const char *name, const char *path, char *const argv[])
{
    int p[2];
    if (pipe(p) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        execve(path, argv, environ);
        char b[32];
        int n = snprintf(b, sizeof b, "ERR:%d", errno);
        (void)!write(p[1], b, (size_t)n);
        _exit(0);
    }
    close(p[1]);
    char buf[4096];
    ssize_t n = read(p[0], buf, sizeof buf);
    close(p[0]);
    waitpid(pid, NULL, 0);
    put_buf(name, buf, n > 0 ? (size_t)n : 0);
}
const char *f(const char *sh)
{
    begin_();
    char *sh_argv[] = {"sh", "-c", (char *)sh, NULL};
    char *env_argv[] = {"env", NULL};
    capture("execve sh", "/bin/sh", sh_argv);
    capture("execve env", "/usr/bin/env", env_argv);
    put_int("system", system(sh));
    FILE *fp = popen(sh, "r");
    char buf[256] = "";
    if (fp) {
        size_t n = fread(buf, 1, sizeof buf - 1, fp);
        buf[n] = 0;
        pclose(fp);
    }
    put_str("popen", fp ? buf : "ERR");
    pid_t pid;
    int r = posix_spawn(&pid, "/usr/bin/env", NULL, NULL, env_argv, environ);
    put_rc("posix_spawn", r ? -1 : 0, r);
    if (!r)
        waitpid(pid, NULL, 0);
    return end_();
}
''',
}


def ran(res):
    return [m for m in RAN if m in res.raw]


@attack("exec", "exec_programs")
def test_exec_programs(lang, box):
    """Start /bin/sh and /usr/bin/env through every process API the language has."""
    if lang == "c":
        res = box.call(req("c", c_code(EXEC["c"]), "f", [SH], timeout=20))
        got = parse_c(ok(res))
    else:
        res = box.call(req(lang, EXEC[lang] % {"sh": json.dumps(SH)}, "f", [], timeout=20))
        got = ok(res)
    assert len(got) >= 5, got
    stopped("started another program", {"printed": ran(res)} if ran(res) else {})


COPIED = {
    "python": r'''
import os, shutil, subprocess
def f():
    out = {}
    for d in ('/tmp', '/workspace', '/dev/shm'):
        p = d + '/myenv'
        shutil.copy('/usr/bin/env', p)
        os.chmod(p, 0o755)
        try:
            out[p] = subprocess.run([p], capture_output=True).stdout.decode()
        except OSError as e:
            out[p] = 'ERR:%d' % e.errno
    return out
''',
    "javascript": r'''
const cp = require('child_process');
const fs = require('fs');
function f() {
  const out = {};
  for (const d of ['/tmp', '/workspace', '/dev/shm']) {
    const p = d + '/myenv';
    fs.copyFileSync('/usr/bin/env', p);
    fs.chmodSync(p, 0o755);
    const r = cp.spawnSync(p);
    out[p] = r.error ? 'ERR:' + r.error.code : String(r.stdout);
  }
  return out;
}
''',
}


@attack("exec", "exec_copied_binary")
def test_exec_copied_binary(lang, box):
    """Copy /usr/bin/env into each writable scratch area, make it executable, run it."""
    res = box.call(req(lang, COPIED[lang], "f", [], timeout=20))
    got = ok(res)
    assert len(got) == 3, got
    stopped("ran a binary it wrote", {"printed": ran(res)} if ran(res) else {})


MEMFD = r'''
import os
def run_in_child(fd):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 1)
        try:
            os.execve(fd, ['env'], {'HOME': '/tmp'})  # an int: fexecve (execveat with AT_EMPTY_PATH)
        except OSError as e:
            os.write(w, b'ERR:%d' % e.errno)
        os._exit(0)
    os.close(w)
    got = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    return got
def f():
    out = {}
    data = open('/usr/bin/env', 'rb').read()
    for name, flags in (('default', 0), ('noexec-seal', 0x8), ('exec', 0x10)):
        try:
            fd = os.memfd_create('x', flags)
        except OSError as e:
            out[name] = 'ERR:%d' % e.errno
            continue
        os.write(fd, data)
        out[name] = run_in_child(fd)
        out[name + ' by path'] = run_in_child('/proc/self/fd/%d' % fd)
    return out
'''


@attack("exec", "exec_memfd")
def test_exec_memfd(lang, box):
    """Copy /usr/bin/env into a memfd (a file with no path, which no Landlock rule covers) and execute it, by
    fd and through /proc/self/fd."""
    res = box.call(req(lang, MEMFD, "f", [], timeout=20))
    got = ok(res)
    assert {"default", "noexec-seal", "exec"} <= set(got), got
    stopped("ran a program from a memfd", {"printed": ran(res)} if ran(res) else {})


SETUID = ["/usr/bin/passwd", "/usr/bin/su", "/usr/bin/chsh", "/usr/bin/chfn", "/usr/bin/newgrp",
          "/usr/bin/gpasswd", "/usr/bin/mount", "/usr/bin/umount", "/usr/bin/sudo", "/usr/bin/pkexec"]

SETUID_CODE = {
    "python": r'''
import os, subprocess, time
def f(progs):
    out = {}
    for p in progs:
        if not os.path.exists(p):
            continue
        try:
            proc = subprocess.Popen([p], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            out[p] = 'ERR:%d' % e.errno
            continue
        seen = set()
        end = time.time() + 0.5
        while time.time() < end:
            try:
                with open('/proc/%d/status' % proc.pid) as fh:
                    st = dict(l.split(':', 1) for l in fh.read().splitlines() if ':' in l)
                seen.add(st['Name'].strip() + ' uid ' + ' '.join(st['Uid'].split()))
            except (OSError, KeyError):
                break
            if proc.poll() is not None:
                break
            time.sleep(0.005)
        proc.kill()
        proc.communicate()
        out[p] = sorted(seen)
    return out
''',
    "c": r'''
const char *f(char *progs)
{
    begin_();
    for (char *p; (p = next_line(&progs)) != NULL;) {
        if (access(p, F_OK) != 0)
            continue;
        int in[2], err[2];
        if (pipe(in) < 0 || pipe(err) < 0)
            break;
        fcntl(err[1], F_SETFD, FD_CLOEXEC);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(in[0], 0);
            int nul = open("/dev/null", O_WRONLY);
            dup2(nul, 1);
            dup2(nul, 2);
            char *argv[] = {p, NULL};
            execv(p, argv);
            int e = errno;
            (void)!write(err[1], &e, sizeof e);
            _exit(127);
        }
        close(in[0]);
        close(err[1]);
        int e = 0;
        char seen[1024] = "";
        if (read(err[0], &e, sizeof e) == sizeof e) {
            snprintf(seen, sizeof seen, "ERR:%d", e);
        } else {
            for (int i = 0; i < 100; i++) {
                char path[64], st[4096];
                snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
                int fd = open(path, O_RDONLY);
                if (fd < 0)
                    break;
                ssize_t n = read(fd, st, sizeof st - 1);
                close(fd);
                if (n <= 0)
                    break;
                st[n] = 0;
                char *u = strstr(st, "\nUid:");
                if (u) {
                    char line[128];
                    sscanf(u + 1, "%127[^\n]", line);
                    if (!strstr(seen, line)) {
                        strncat(seen, line, sizeof seen - strlen(seen) - 3);
                        strcat(seen, "; ");
                    }
                }
                if (waitpid(pid, NULL, WNOHANG) == pid) {
                    pid = -1;
                    break;
                }
                usleep(5000);
            }
        }
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        close(in[1]);
        close(err[0]);
        put_str(p, seen);
    }
    return end_();
}
''',
}


def privileged(entries):
    """Uid lines (real, effective, saved, fs) showing any id other than the sandbox's 1000."""
    out = {}
    for prog, seen in entries.items():
        text = " ".join(seen) if isinstance(seen, list) else seen
        for ids in re.findall(r"(?:Uid:|uid)\s*((?:\d+\s*){4})", text):
            if any(n != "1000" for n in ids.split()):
                out[prog] = text[:200]
    return out


@attack("exec", "setuid_binaries")
def test_setuid_binaries(lang, box):
    """Run the host's setuid-root programs (passwd, su, chsh, mount...) and watch their ids while they run:
    no id may change from the sandbox's 1000."""
    arg = "\n".join(SETUID) if lang == "c" else SETUID
    code = c_code(SETUID_CODE["c"]) if lang == "c" else SETUID_CODE[lang]
    got = ok(box.call(req(lang, code, "f", [arg], timeout=30), timeout=60))
    got = parse_c(got) if lang == "c" else got
    assert got, "no setuid program found to attack"
    stopped("a setuid program ran with other ids", privileged(got))
