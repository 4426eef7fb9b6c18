"""Defence: a user namespace mapping the sandbox to an unprivileged host id, all capabilities dropped,
no_new_privs and seccomp. The sandboxed uid is never host root, whether seen from inside (uid_map,
capabilities) or from the host (/proc/<pid>/status of the running sandboxed process), and things only
host root may do fail."""
import threading
import time


from fnboxlib import call, describe, host_pids_matching, marker, ok, req

IDS = {
    "python": ("import os\n"
               "def f():\n"
               "    out = {'uid': os.getuid(), 'euid': os.geteuid(), 'gid': os.getgid()}\n"
               "    out['uid_map'] = open('/proc/self/uid_map').read()\n"
               "    out['gid_map'] = open('/proc/self/gid_map').read()\n"
               "    for line in open('/proc/self/status'):\n"
               "        k, _, v = line.partition(':')\n"
               "        out[k] = v.strip()\n"
               "    return out\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  const out = { uid: process.getuid(), euid: process.geteuid(), gid: process.getgid() };\n"
                   "  out.uid_map = fs.readFileSync('/proc/self/uid_map', 'utf8');\n"
                   "  out.gid_map = fs.readFileSync('/proc/self/gid_map', 'utf8');\n"
                   "  for (const line of fs.readFileSync('/proc/self/status', 'utf8').split('\\n')) {\n"
                   "    const i = line.indexOf(':');\n"
                   "    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1).trim();\n"
                   "  }\n"
                   "  return out;\n}\n"),
}


def ranges(idmap):
    out = []
    for line in idmap.strip().splitlines():
        inside, outside, count = (int(x) for x in line.split())
        out.append((inside, outside, count))
    return out


def test_ids_and_capabilities_inside(lang):
    got = ok(call(req(lang, IDS[lang], "f", [])))
    for key in ("uid_map", "gid_map"):
        rs = ranges(got[key])
        assert rs, f"empty {key}: not in a user namespace? {describe(got)}"
        for inside, outside, count in rs:
            assert not (outside <= 0 < outside + count), f"{key} maps onto host id 0: {got[key]!r}"
    assert int(got["CapEff"], 16) == 0, f"effective capabilities: {got['CapEff']}"
    assert int(got["CapPrm"], 16) == 0, f"permitted capabilities: {got['CapPrm']}"
    assert int(got.get("CapAmb", "0"), 16) == 0
    assert int(got["CapBnd"], 16) == 0, f"bounding set not empty: {got['CapBnd']}"
    assert got["NoNewPrivs"] == "1", describe(got)
    assert got["Seccomp"] == "2", f"seccomp filter mode expected (2), got {got['Seccomp']}"


def test_host_view_of_sandboxed_process():
    """Seen from the host, a running sandboxed process has a non-root uid and gid."""
    mark = marker()
    code = ("import subprocess, sys, time\n"
            "def f(mark):\n"
            "    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', mark])\n"
            "    time.sleep(2.5)\n"
            "    p.kill()\n"
            "    return 'done'\n")
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("res", call(req("python", code, "f", [mark]))))
    t.start()
    seen = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and t.is_alive():
        for pid, _ in host_pids_matching(mark):
            try:
                with open(f"/proc/{pid}/status") as f:
                    seen = {k: v.strip() for k, _, v in (line.partition(":") for line in f)}
            except OSError:
                continue
            break
        if seen:
            break
        time.sleep(0.05)
    t.join(60)
    assert ok(box["res"]) == "done"
    assert seen, "could not find the sandboxed process from the host"
    uids = [int(x) for x in seen["Uid"].split()]
    gids = [int(x) for x in seen["Gid"].split()]
    assert 0 not in uids, f"sandboxed process runs as host uid 0: Uid {seen['Uid']}"
    assert 0 not in gids, f"sandboxed process runs as host gid 0: Gid {seen['Gid']}"


PRIVILEGED = r'''
import ctypes, os, socket, time

libc = ctypes.CDLL(None, use_errno=True)

def attempt(fn):
    try:
        r = fn()
        if r is not None and isinstance(r, int) and r < 0:
            return "DENIED:errno %d" % ctypes.get_errno()
        return "DONE"
    except Exception as e:
        return "DENIED:" + type(e).__name__

class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]

def bind_low():
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 80))
    finally:
        s.close()

def raise_nofile():
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard + 1))

def f():
    open("/workspace/mine", "w").write("x")
    return {
        "read /etc/shadow": attempt(lambda: open("/etc/shadow").read()),
        "read /proc/kcore": attempt(lambda: open("/proc/kcore", "rb").read(1)),
        "chroot": attempt(lambda: os.chroot("/workspace")),
        "sethostname": attempt(lambda: socket.sethostname("pwned")),
        "chown to another uid": attempt(lambda: os.chown("/workspace/mine", os.getuid() + 1, -1)),
        "setuid(0)": attempt(lambda: os.setuid(0) if os.getuid() != 0 else (_ for _ in ()).throw(OSError("already 0"))),
        "bind port 80": attempt(bind_low),
        "clock_settime": attempt(lambda: libc.clock_settime(0, ctypes.byref(Timespec(int(time.time()), 0)))),
        "setpriority -10": attempt(lambda: os.setpriority(os.PRIO_PROCESS, 0, -10)),
        "raise RLIMIT_NOFILE hard": attempt(raise_nofile),
    }
'''


def test_root_only_actions_fail():
    got = ok(call(req("python", PRIVILEGED, "f", [])))
    done = {k: v for k, v in got.items() if not v.startswith("DENIED")}
    assert not done, f"privileged actions succeeded in the sandbox: {done}"
