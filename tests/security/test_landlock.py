"""Defence: Landlock (src/sandbox/landlock.c), the second layer. The function may execve only its own runtime
(and what a request allows): /bin/sh, /usr/bin/env or a binary it copied into /tmp are refused with EACCES
through every process API of every language, while the runtime itself keeps working (imports, native
extensions, threads, starting itself again). With ABI >= 6 it may not signal init nor reach abstract unix
sockets bound outside its domain.

Run against a build with defence switches (`make BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES`) and
FNBOX_DISABLE_DEFENCES=landlock, every attack test here fails except the abstract-socket one (the network
namespace also keeps the host's abstract names out of reach) and the known gap marked xfail."""
import json
import os
import re
import secrets
import socket
import subprocess

import pytest

from fnboxlib import call, describe, ok, req, run_cli, weak_fnbox


LANGS = ["python", "javascript", "ruby", "php"]

# What a program that ran would print: never the literal text of the command (PHP echoes a refused command
# line in its warning), always something only running it produces.
SH = "echo $((6*7))x$((6*7))"
SH_RAN = "42x42"
ENV_RAN = "HOME=/tmp"  # /usr/bin/env prints the sandbox's environment


@pytest.fixture(scope="module")
def landlock_abi():
    proc = run_cli(["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    check = checks.get("landlock", {})
    m = re.match(r"ABI (\d+)", check.get("detail", ""))
    if not check.get("ok") or not m:
        pytest.skip(f"no Landlock on this kernel: {check.get('detail')}")
    return int(m.group(1))


# Each program tries every way its language has to start another program and returns {method: outcome}.
EXEC_ATTACKS = {
    "python": r'''
import os, shutil, subprocess

SH = %(sh)r

def attempt(fn):
    try:
        return fn()
    except OSError as e:
        return "ERR:" + type(e).__name__ + ":" + str(e.errno)

def exec_in_child(path, argv):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.execv(path, argv)
        except OSError as e:
            os.write(w, ("ERR:execv:" + str(e.errno)).encode())
        os._exit(0)
    os.close(w)
    got = os.read(r, 200).decode()
    os.close(r)
    os.waitpid(pid, 0)
    return got or "exec succeeded"

def f():
    shutil.copy("/usr/bin/env", "/tmp/myenv")
    os.chmod("/tmp/myenv", 0o755)
    return {
        "subprocess sh": attempt(lambda: subprocess.run(["/bin/sh", "-c", SH], capture_output=True).stdout.decode()),
        "subprocess env": attempt(lambda: subprocess.run(["/usr/bin/env"], capture_output=True).stdout.decode()),
        "subprocess shell=True": attempt(lambda: subprocess.run(SH, shell=True, capture_output=True).stdout.decode()),
        "os.system": attempt(lambda: os.system(SH)),
        "os.popen": attempt(lambda: os.popen(SH).read() + "|" + str(os.wait())),
        "os.posix_spawn": attempt(lambda: os.waitpid(os.posix_spawn("/usr/bin/env", ["env"], {}), 0)),
        "os.execv sh": exec_in_child("/bin/sh", ["sh", "-c", SH]),
        "os.execv env": exec_in_child("/usr/bin/env", ["env"]),
        "copied binary in /tmp": attempt(lambda: subprocess.run(["/tmp/myenv"], capture_output=True).stdout.decode()),
    }
''',
    "javascript": r'''
const cp = require('child_process');
const fs = require('fs');
const SH = %(sh_js)s;

function attempt(fn) {
  try { return fn(); } catch (e) { return 'ERR:' + (e.code || e.name); }
}

function f() {
  fs.copyFileSync('/usr/bin/env', '/tmp/myenv');
  fs.chmodSync('/tmp/myenv', 0o755);
  const spawned = (r) => r.error ? 'ERR:' + r.error.code : String(r.stdout) + '|' + r.status;
  return {
    'execSync': attempt(() => String(cp.execSync(SH))),
    'execFileSync sh': attempt(() => String(cp.execFileSync('/bin/sh', ['-c', SH]))),
    'spawnSync env': attempt(() => spawned(cp.spawnSync('/usr/bin/env'))),
    'spawnSync shell': attempt(() => spawned(cp.spawnSync(SH, { shell: true }))),
    'copied binary in /tmp': attempt(() => spawned(cp.spawnSync('/tmp/myenv'))),
  };
}
''',
    "ruby": r'''
SH = %(sh)r

def attempt
  yield
rescue SystemCallError => e
  "ERR:#{e.class}"
end

def f
  File.binwrite("/tmp/myenv", File.binread("/usr/bin/env"))
  File.chmod(0o755, "/tmp/myenv")
  {
    "backticks" => attempt { `#{SH}` },
    "%%x" => attempt { %%x(/usr/bin/env) },
    "system sh" => attempt { [system(SH), $?&.exitstatus].inspect },
    "system env" => attempt { [system("/usr/bin/env"), $?&.exitstatus].inspect },
    "IO.popen" => attempt { IO.popen(["/usr/bin/env"], &:read) },
    "Process.spawn" => attempt { Process.wait(Process.spawn("/bin/sh", "-c", SH)); $?.exitstatus.inspect },
    "exec in fork" => attempt {
      pid = fork { begin; exec("/usr/bin/env"); rescue SystemCallError; exit!(99); end }
      Process.wait(pid)
      $?.exitstatus == 99 ? "ERR:exec refused" : "exec ran: #{$?.exitstatus}"
    },
    "copied binary in /tmp" => attempt { IO.popen(["/tmp/myenv"], &:read) },
  }
end
''',
    "php": r'''
function f() {
  $sh = %(sh_php)s;
  copy('/usr/bin/env', '/tmp/myenv');
  chmod('/tmp/myenv', 0755);
  $run = function ($cmd) {
    $p = @proc_open($cmd, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
    if ($p === false) return 'ERR:proc_open false';
    $out = stream_get_contents($pipes[1]);
    stream_get_contents($pipes[2]);
    return $out . '|' . proc_close($p);
  };
  $o = [];
  $o['shell_exec'] = var_export(@shell_exec($sh), true);
  $o['backticks'] = var_export(@`/usr/bin/env`, true);
  $lines = []; $rc = 0; @exec($sh, $lines, $rc); $o['exec'] = implode(',', $lines) . '|' . $rc;
  ob_start(); $rc = 0; @system($sh, $rc); $o['system'] = ob_get_clean() . '|' . $rc;
  ob_start(); $rc = 0; @passthru('/usr/bin/env', $rc); $o['passthru'] = ob_get_clean() . '|' . $rc;
  $h = @popen($sh, 'r'); $o['popen'] = $h ? stream_get_contents($h) . '|' . pclose($h) : 'ERR:popen false';
  $o['proc_open string'] = $run($sh);
  $o['proc_open array'] = $run(['/usr/bin/env']);
  $o['copied binary in /tmp'] = $run(['/tmp/myenv']);
  return $o;
}
''',
}

# An outcome that says the program was refused: an EACCES error, a shell's 127, a null/false result.
REFUSED = re.compile(r"EACCES|PermissionError:13|ERR:|\b127\b|32512|\bnil\b|NULL|false|\|-1$")


def exec_attack_code(lang):
    return EXEC_ATTACKS[lang] % {"sh": SH, "sh_js": json.dumps(SH), "sh_php": json.dumps(SH)}


@pytest.mark.parametrize("lang", LANGS)
def test_exec_of_other_programs_refused(lang, landlock_abi):
    res = call(req(lang, exec_attack_code(lang), "f", []))
    got = ok(res)
    ran = {k: v for k, v in got.items() if SH_RAN in str(v) or ENV_RAN in str(v)}
    assert not ran, f"programs ran that the sandbox must refuse: {ran}"
    for text in (res.result["stdout"], res.result["stderr"]):
        assert SH_RAN not in text and ENV_RAN not in text, f"a refused program printed: {text[:600]!r}"
    not_refused = {k: v for k, v in got.items() if not REFUSED.search(str(v))}
    assert not not_refused, f"attempts that neither ran nor were refused: {not_refused}; all: {got}"
    if lang in ("python", "javascript", "ruby"):  # their errors carry the errno: it is the kernel's EACCES
        errors = [str(v) for v in got.values() if str(v).startswith("ERR:")]
        assert any("EACCES" in e or "PermissionError:13" in e for e in errors), describe(got)


RUNTIME_WORKS = {
    "python": r'''
import ctypes, decimal, hashlib, json, sqlite3, ssl, subprocess, sys, threading, zlib

def f():
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(sum(range(i * 1000)))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    db = sqlite3.connect(":memory:")  # a native extension (.so) and the library it links
    again = subprocess.run([sys.executable, "-c", "print(6*7)"], capture_output=True, text=True)
    return {
        "threads": len(results),
        "sqlite": db.execute("select 6*7").fetchone()[0],
        "sha256": hashlib.sha256(b"x").hexdigest()[:8],
        "zlib": len(zlib.compress(b"a" * 1000)) < 100,
        "decimal": str(decimal.Decimal(1) / 8),
        "ssl": ssl.OPENSSL_VERSION.split()[0],
        "ctypes": ctypes.CDLL(None).getpid() > 0,
        "itself again": again.stdout.strip(),
    }
''',
    "javascript": r'''
const cp = require('child_process');
const crypto = require('crypto');
const zlib = require('zlib');
const { Worker } = require('worker_threads');

async function f() {
  const fromWorker = await new Promise((resolve, reject) => {
    const w = new Worker('require("worker_threads").parentPort.postMessage(6 * 7)', { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  });
  const again = cp.spawnSync(process.execPath, ['-e', 'console.log(6*7)']);
  return {
    threads: fromWorker,
    sha256: crypto.createHash('sha256').update('x').digest('hex').slice(0, 8),
    zlib: zlib.gzipSync('a'.repeat(1000)).length < 100,
    'itself again': String(again.stdout).trim(),
  };
}
''',
    "ruby": r'''
require "json"
require "zlib"
require "digest"
require "rbconfig"

def f
  threads = 4.times.map { |i| t = Thread.new { (0...i * 1000).sum }; t.name = "worker#{i}"; t }
  again = IO.popen([RbConfig.ruby, "--disable-gems", "-e", "puts 6*7"], &:read)
  {
    "threads" => threads.map(&:value).size,
    "sha256" => Digest::SHA256.hexdigest("x")[0, 8],
    "zlib" => Zlib::Deflate.deflate("a" * 1000).bytesize < 100,
    "itself again" => again.strip,
  }
end
''',
    "php": r'''
function f() {
  $p = proc_open([PHP_BINARY, '-r', 'echo 6*7;'], [1 => ['pipe', 'w']], $pipes);
  $again = stream_get_contents($pipes[1]);
  proc_close($p);
  return [
    'sha256' => substr(hash('sha256', 'x'), 0, 8),
    'zlib' => strlen(gzcompress(str_repeat('a', 1000))) < 100,
    'json' => json_encode(['a' => 1]),
    'itself again' => $again,
  ];
}
''',
}


@pytest.mark.parametrize("lang", LANGS)
def test_runtime_itself_still_works(lang, landlock_abi):
    """Not an attack: the restriction must not break the runtime. Shared libraries are mapped executable
    without Landlock's execute right (that right governs execve only), and the runtime may start itself."""
    got = ok(call(req(lang, RUNTIME_WORKS[lang], "f", [])))
    assert got["sha256"] == "2d711642"
    assert got["itself again"] == "42", describe(got)
    if "threads" in got:
        assert got["threads"] in (4, 42), describe(got)
    if lang == "python":
        assert got["sqlite"] == 42 and got["ctypes"] is True and got["decimal"] == "0.125", describe(got)


SIGNAL_INIT = {
    "python": ("import os, signal\n"
               "def f():\n"
               "    out = {}\n"
               "    for name, sig in (('probe', 0), ('SIGCONT', signal.SIGCONT), ('SIGTERM', signal.SIGTERM)):\n"
               "        try:\n"
               "            os.kill(1, sig)\n"
               "            out[name] = 'sent'\n"
               "        except OSError as e:\n"
               "            out[name] = 'ERR:' + str(e.errno)\n"
               "    return out\n"),
    "javascript": ("function f() {\n"
                   "  const out = {};\n"
                   "  for (const sig of [0, 'SIGCONT', 'SIGTERM']) {\n"
                   "    try { process.kill(1, sig); out[String(sig)] = 'sent'; }\n"
                   "    catch (e) { out[String(sig)] = 'ERR:' + e.code; }\n"
                   "  }\n"
                   "  return out;\n}\n"),
}


@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_cannot_signal_init(lang, landlock_abi):
    """The sandbox's init (outside the program's Landlock domain) cannot be signalled: EPERM, where without
    Landlock the kernel would accept the signal (and drop it, init having no handler)."""
    if landlock_abi < 6:
        pytest.skip(f"signal scoping needs Landlock ABI 6 (have {landlock_abi})")
    got = ok(call(req(lang, SIGNAL_INIT[lang], "f", [])))
    assert all(v in ("ERR:1", "ERR:EPERM") for v in got.values()), f"signals reached init: {got}"


def test_abstract_socket_outside_unreachable(landlock_abi):
    """An abstract unix socket the host listens on cannot be connected to. (Two layers stop this: the call's
    network namespace has its own abstract names, and Landlock's scoping from ABI 6.)"""
    name = "fnbox-landlock-test-" + secrets.token_hex(6)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind("\0" + name)
        srv.listen(4)
        srv.settimeout(0.5)
        code = ("import socket\n"
                "def f(name):\n"
                "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                "    try:\n"
                "        s.connect('\\0' + name)\n"
                "        s.sendall(b'hello from the sandbox')\n"
                "        return 'connected'\n"
                "    except OSError as e:\n"
                "        return 'ERR:' + str(e.errno)\n")
        got = ok(call(req("python", code, "f", [name])))
        assert got.startswith("ERR:"), f"the sandbox reached the host's abstract socket: {got}"
        try:
            conn, _ = srv.accept()
            conn.close()
            pytest.fail("the host's abstract socket accepted a connection from the sandbox")
        except socket.timeout:
            pass
    finally:
        srv.close()


def test_proc_is_read_only(landlock_abi):
    """/proc is read-only (the program binds it so before it drops its capabilities; Landlock's rights on the
    writable root reach beneath it): even the function's own /proc files refuse writes."""
    code = ("import errno\n"
            "def f():\n"
            "    out = {}\n"
            "    for p in ('/proc/self/comm', '/proc/self/attr/current', '/proc/self/clear_refs'):\n"
            "        try:\n"
            "            with open(p, 'w') as fh:\n"
            "                fh.write('x')\n"
            "            out[p] = 'written'\n"
            "        except OSError as e:\n"
            "            out[p] = errno.errorcode.get(e.errno, str(e.errno))\n"
            "    return out\n")
    got = ok(call(req("python", code, "f", [])))
    assert got["/proc/self/comm"] == "EROFS", describe(got)
    assert "written" not in got.values(), describe(got)


@pytest.mark.xfail(strict=True, reason="known gap (docs/internals/sandbox.md, Landlock): the dynamic loader "
                                       "needs the execute right for the runtime to start, and run directly it "
                                       "maps any readable program itself")
def test_exec_through_the_dynamic_loader_refused(landlock_abi):
    code = ("import subprocess\n"
            "def f():\n"
            "    try:\n"
            "        return subprocess.run(['/lib64/ld-linux-x86-64.so.2', '/bin/sh', '-c', %r],\n"
            "                              capture_output=True, text=True).stdout\n"
            "    except OSError as e:\n"
            "        return 'ERR:' + str(e.errno)\n" % SH)
    got = ok(call(req("python", code, "f", [])))
    assert SH_RAN not in got, "ld.so ran /bin/sh"



def test_fails_closed_without_landlock():
    """A kernel without Landlock (simulated by the test-only switch `landlock-kernel`): it alone restricts
    which programs a function may start, so a call that restricts them is refused (KernelFeatureMissing,
    exit 3) rather than run unrestricted; a call allowing every command still runs, and doctor says why."""
    exe = weak_fnbox()
    env = {**os.environ, "FNBOX_DISABLE_DEFENCES": "landlock-kernel"}
    code = "import subprocess\ndef f():\n    return subprocess.run(['/bin/sh', '-c', 'echo ran'], capture_output=True).stdout.decode()\n"
    p = subprocess.run([exe, "call", "-"], input=json.dumps(req("python", code, "f", [])).encode(),
                       capture_output=True, env=env, timeout=60)
    res = json.loads(p.stdout)
    assert p.returncode == 3 and res["error"]["type"] == "KernelFeatureMissing", res
    assert "landlock" in res["error"]["message"] and "childProcess" in res["error"]["message"], res
    assert "ran" not in p.stdout.decode()
    allowed = req("python", code, "f", [], permissions={"childProcess": True})
    p = subprocess.run([exe, "call", "-"], input=json.dumps(allowed).encode(), capture_output=True, env=env,
                       timeout=60)
    assert json.loads(p.stdout)["result"] == "ran\n", p.stdout
    p = subprocess.run([exe, "doctor", "--json"], capture_output=True, env=env, timeout=60)
    check = {c["name"]: c for c in json.loads(p.stdout)["checks"]}["landlock"]
    assert not check["ok"] and check["required"] and "refused" in check["detail"], check
