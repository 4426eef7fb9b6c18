"""The adversarial suite (issue 5): attack programs in every language, each reporting what it achieved; the
test asserts it achieved nothing (attacklib.stopped raises AttackSucceeded otherwise).

ATTACKS below is the suite's table: area (test file) -> attack (test function) -> the defence that stops it,
the languages it is written in, and any other layers that stop it as well. Each test takes its `lang`
parameters from here (`attack(area, name)`), so every attack is a pytest param carrying a `defence` mark.

Two runs:

- normal (default): FNBOX (fnboxlib: $FNBOX or build/fnbox); every attack must be stopped.
- weak (`ADVERSARIAL_WEAK=1`, or `--adversarial-weak` when this directory is named on the command line):
  each attack runs against $FNBOX_WEAK (default build-weak/fnbox; a `-DFB_DEFENCE_SWITCHES` build) with
  `FNBOX_DISABLE_DEFENCES=<its defence>[,<its other layers>]`, and the test passes only if the attack now
  SUCCEEDS (it raised AttackSucceeded); it fails if the attack is still stopped (the defence is not what
  stops it) or if anything else went wrong. Attacks whose switches the build does not have are skipped,
  saying which switch is missing. The switches are found in the sources (`fb_defence_disabled("name")` in
  src/); `ADVERSARIAL_SWITCHES=a,b` overrides that list.

So one weak run shows, for every wired switch, that each attack naming it is stopped by that defence:

    FNBOX=build/fnbox pytest tests/security/adversarial
    ADVERSARIAL_WEAK=1 FNBOX_WEAK=build-weak/fnbox pytest tests/security/adversarial

Attacks are bounded so that they stay harmless on a shared host even with their defence off: the fork bomb
stops at 2000 processes, the memory bomb at 384 MiB, fills at 32 MiB, output at 16 MiB per stream, kill(-1)
sends only SIGURG and SIGCONT, and kernel settings are opened for writing but never written.
"""
import os
import re
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "integration"))

import fnboxlib  # noqa: E402

from .attacklib import AttackSucceeded, token  # noqa: E402

ALL = ("python", "javascript", "ruby", "php", "c")

# The defence names (the FNBOX_DISABLE_DEFENCES vocabulary of src/util/defences.h).
DEFENCE_NAMES = {
    "seccomp": "the seccomp allowlist (src/sandbox/seccomp.c)",
    "landlock": "Landlock: execute rights, path rights, signal and abstract-socket scoping",
    "netns": "a network namespace with only lo",
    "pids": "the per-call process limit (cgroup pids / RLIMIT_NPROC)",
    "memory": "the per-call memory limit (cgroup memory, tmpfs included)",
    "tmpfs-size": "size- and inode-limited tmpfs for the workspace, /tmp and /dev/shm",
    "timeout": "the wall-clock deadline: the PID namespace's init is killed",
    "pidns": "a PID namespace (the call sees and signals only its own processes; all die with its init)",
    "userns": "a user namespace: inner uid 1000 is nobody outside, never host root",
    "env": "a clean environment",
    "mountfs-rules": "the FUSE server's permission rules and link policy (src/fs/mountfs.c)",
    "beneath": "host paths of a mount resolved beneath its root (openat2 RESOLVE_BENEATH)",
    "caps": "every capability dropped, bounding set cleared",
    "rootfs": "pivot_root into a fresh tmpfs root: read-only system binds, private /tmp, minimal /dev, nosuid",
    # not in issue 5's list, added by this suite: the two defences its attacks needed that have no name there
    "ipcns": "an IPC namespace (System V shared memory, message queues, semaphores)",
    "output-limit": "stdout/stderr caps in the supervisor",
    "fds": "inherited file descriptors closed before exec (close_range); only 0-2 and the call's own channels",
    "cgroup-sweep": "after the call, whatever is left in its cgroup is killed before the cgroup is removed",
    "cgroup-early": "the program is inside the call's cgroup before its first instruction (it moves itself; init on v2)",
    "system-overlay": "the system tree (/usr, /etc/alternatives, /etc/php) is a per-call read-only overlay: its "
                      "inodes, and their file locks, are the call's own",
}

# area -> attack -> (defence, languages[, other layers that also stop it: disabled together in the weak run])
ATTACKS = {
    "files": {
        "read_canary": ("rootfs", ALL),
        "find_canary": ("rootfs", ("python",)),
        "write_outside": ("rootfs", ALL),
        "mount_host_symlinks": ("beneath", ("python", "javascript", "c")),
        "mount_own_symlink": ("beneath", ("ruby",)),
        "mount_write_through_symlink": ("beneath", ("python",)),
        "mount_hardlink": ("mountfs-rules", ("php",)),
        "mount_rules_bypass": ("mountfs-rules", ("javascript",)),
        "leaked_fds": ("fds", ("python", "c")),
    },
    "proc": {
        # without the PID namespace, /proc/1 is the host's init, which the sandbox's outer uid may not inspect
        "proc1_root": ("pidns", ("python", "php"), ("userns",)),
        "init_mem": ("pidns", ("javascript", "c"), ("userns",)),
        "host_processes": ("pidns", ("ruby", "c")),
        # /proc/sys is read-only (rootfs), Landlock grants /proc read rights only, and its files are not the
        # sandbox user's (checked: host nobody gets EACCES opening them for writing)
        "proc_sys_write": ("userns", ("python", "ruby"), ("rootfs", "landlock")),
        "status_seccomp": ("seccomp", ALL),
        "status_caps": ("caps", ALL),
    },
    "env": {
        "env_canary": ("env", ALL),
    },
    "network": {
        "tcp_host": ("netns", ALL),
        "udp_host": ("netns", ("python", "javascript", "ruby")),
        "raw_socket": ("seccomp", ("python", "c")),
        "unix_host_path": ("rootfs", ("python", "php")),
        "abstract_host": ("netns", ("javascript", "ruby", "c"), ("landlock",)),
        "dns": ("netns", ("python", "javascript", "ruby", "php")),
    },
    "resources": {
        "fork_count": ("pids", ("python", "ruby", "php")),
        # the 2000 processes also need more than the memory limit: both switched off in the weak run
        "fork_bomb": ("pids", ("c",), ("memory",)),
        "thread_count": ("pids", ("python",)),
        # the pids limit is on in both runs: what is switched off is init joining the cgroup first
        "early_fork": ("cgroup-early", ("c",)),
        "memory_bomb": ("memory", ("python", "javascript", "c")),
        "memory_in_tmpfs": ("memory", ("ruby",)),
        "disk_fill": ("tmpfs-size", ("python", "php", "c")),
        "inode_fill": ("tmpfs-size", ("javascript",)),
        "output_flood": ("output-limit", ("python", "javascript", "ruby")),
        "cpu_loop": ("timeout", ("javascript", "php")),
        "sleep_past_timeout": ("timeout", ("ruby", "c")),
        "ignore_sigterm": ("timeout", ("python", "php")),
        # the per-call cgroup is swept after the call too: a second layer, switched off with it
        "daemon_grandchild": ("pidns", ("python", "javascript", "ruby", "c"), ("cgroup-sweep",)),
    },
    "syscalls": {
        "ptrace": ("seccomp", ("python", "c")),
        "mount": ("seccomp", ("php", "c"), ("landlock",)),
        "unshare": ("seccomp", ("python", "ruby")),
        "setns": ("seccomp", ("c",)),
        "keyctl": ("seccomp", ("python", "php")),
        "bpf": ("seccomp", ("python", "c")),
        "io_uring": ("seccomp", ("python", "c")),
        "userfaultfd": ("seccomp", ("ruby", "c")),
        "perf_event_open": ("seccomp", ("php", "c")),
        "personality": ("seccomp", ("c",)),
        "tiocsti": ("seccomp", ("python", "c")),
        "kill_all": ("pidns", ("python", "c"), ("landlock",)),
        # raising a hard limit needs CAP_SYS_RESOURCE in the host's user namespace
        "rlimits": ("userns", ("ruby", "c"), ("caps",)),
    },
    "exec": {
        "exec_programs": ("landlock", ALL),
        "exec_copied_binary": ("landlock", ("python", "javascript")),
        # a memfd has no path, so no Landlock rule covers it: seccomp lets only MFD_NOEXEC_SEAL ones be made
        "exec_memfd": ("seccomp", ("python",)),
        # a setuid-root program must first be executable (landlock), then nosuid (rootfs), no_new_privs (set
        # with the capability drop and by Landlock) and the unmapped host root (userns) each keep its ids
        "setuid_binaries": ("rootfs", ("python", "c"), ("landlock", "caps", "userns")),
    },
    "ipc": {
        "sysv_host": ("ipcns", ("python", "php")),
        "sysv_enumerate": ("ipcns", ("c",)),
        "sysv_concurrent": ("ipcns", ("php",)),
        "abstract_concurrent": ("netns", ("javascript",), ("landlock",)),
        "workspace_concurrent": ("rootfs", ("python", "javascript")),
        "signal_concurrent": ("pidns", ("ruby",), ("landlock",)),
        "lock_concurrent": ("system-overlay", ("python", "ruby")),
    },
    "devices": {
        "dev_open": ("rootfs", ("python", "javascript", "ruby", "php")),
        # CAP_MKNOD in the host's user namespace, and nodev on every writable mount
        "mknod": ("userns", ("python", "c"), ("caps", "rootfs")),
    },
}

for _area, _attacks in ATTACKS.items():
    for _name, _entry in _attacks.items():
        for _d in (_entry[0],) + tuple(_entry[2] if len(_entry) > 2 else ()):
            assert _d in DEFENCE_NAMES, f"{_area}/{_name}: unknown defence {_d!r}"
        assert set(_entry[1]) <= set(ALL), f"{_area}/{_name}: unknown language in {_entry[1]}"


def attack(area, name):
    """The `lang` parametrization of one attack: a param per language, each marked with its defence."""
    entry = ATTACKS[area][name]
    defences = (entry[0],) + tuple(entry[2] if len(entry) > 2 else ())
    return pytest.mark.parametrize("lang", [
        pytest.param(lang, id=lang, marks=pytest.mark.defence(*defences, area=area, attack=name))
        for lang in entry[1]])


def attack_count():
    """{language: {area: number of attacks}}"""
    counts = {}
    for area, attacks in ATTACKS.items():
        for entry in attacks.values():
            for lang in entry[1]:
                counts.setdefault(lang, {}).setdefault(area, 0)
                counts[lang][area] += 1
    return counts


# ---- weak mode ------------------------------------------------------------------------------------------
REPO = fnboxlib.REPO
WEAK = os.environ.get("ADVERSARIAL_WEAK", "") not in ("", "0")
FNBOX_WEAK = os.path.abspath(os.environ.get("FNBOX_WEAK") or str(REPO / "build-weak" / "fnbox"))


def wired_switches():
    """Defence names the sandbox's test switches honour (the names src/ passes to fb_defence_disabled)."""
    if os.environ.get("ADVERSARIAL_SWITCHES") is not None:
        return {s for s in os.environ["ADVERSARIAL_SWITCHES"].split(",") if s}
    found = set()
    for path in (REPO / "src").rglob("*.c"):
        found.update(re.findall(r'fb_defence_disabled\("([\w-]+)"\)', path.read_text(errors="replace")))
    return found


def pytest_addoption(parser):
    parser.addoption("--adversarial-weak", action="store_true",
                     help="run the adversarial suite against $FNBOX_WEAK with each attack's defence switched "
                          "off, expecting every attack to succeed (same as ADVERSARIAL_WEAK=1)")


def pytest_configure(config):
    global WEAK
    config.addinivalue_line("markers", "defence(name, ...): the defence(s) an adversarial attack is stopped by")
    try:
        if config.getoption("--adversarial-weak"):
            WEAK = True
    except ValueError:  # this conftest was loaded after option parsing
        pass


HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    wired = wired_switches() if WEAK else set()
    for item in items:
        if HERE not in Path(str(item.fspath)).resolve().parents:
            continue
        mark = item.get_closest_marker("defence")
        if mark is None:
            raise pytest.UsageError(f"{item.nodeid}: an adversarial test without a defence (use attack())")
        if WEAK:
            missing = [d for d in mark.args if d not in wired]
            if missing:
                item.add_marker(pytest.mark.skip(
                    reason=f"weak run: no FNBOX_DISABLE_DEFENCES switch for {', '.join(missing)} in this build"))


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):
    outcome = yield
    if not WEAK or pyfuncitem.get_closest_marker("defence") is None:
        return
    exc = outcome.excinfo
    disabled = ",".join(pyfuncitem.get_closest_marker("defence").args)
    if exc is not None and isinstance(exc[1], AttackSucceeded):
        outcome.force_result(True)  # the proof: with the defence off, the attack gets through
        pyfuncitem.user_properties.append(("flipped", disabled))
        FLIPPED.append((pyfuncitem.nodeid.split("::")[-1], disabled, str(exc[1])))
    elif exc is None:
        pytest.fail(f"weak run: the attack was still stopped with FNBOX_DISABLE_DEFENCES={disabled}: "
                    f"this defence is not what stops it (or the switch does nothing)", pytrace=False)


FLIPPED = []


def pytest_terminal_summary(terminalreporter):
    if WEAK and FLIPPED:
        terminalreporter.section("adversarial weak run: attacks that got through with their defence off")
        for name, disabled, message in FLIPPED:
            terminalreporter.write_line(f"{name} [{disabled}]: {message.replace('ATTACK SUCCEEDED: ', '')[:160]}")
        terminalreporter.write_line(f"{len(FLIPPED)} attacks flipped")


# ---- fixtures ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def cache_dir():
    d = tempfile.mkdtemp(prefix="fnbox-adv-cache-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def weak_binary(cache_dir):
    """In the weak run: $FNBOX_WEAK, checked to honour the switches (a seccomp-less call shows Seccomp: 0)."""
    if not WEAK:
        return None
    if not os.access(FNBOX_WEAK, os.X_OK):
        pytest.fail(f"weak run: {FNBOX_WEAK} missing (make BUILD=build-weak CFLAGS=-DFB_DEFENCE_SWITCHES all, "
                    f"or set FNBOX_WEAK)")
    code = "def f():\n    return open('/proc/self/status').read()\n"
    old = fnboxlib.FNBOX
    fnboxlib.FNBOX = FNBOX_WEAK
    try:
        res = fnboxlib.call(fnboxlib.req("python", code, "f", []),
                            env=dict(os.environ, FNBOX_DISABLE_DEFENCES="seccomp", FNBOX_CACHE_DIR=cache_dir))
    finally:
        fnboxlib.FNBOX = old
    status = fnboxlib.ok(res)
    if not re.search(r"^Seccomp:\s+0$", status, re.M):
        pytest.fail(f"weak run: {FNBOX_WEAK} ignores FNBOX_DISABLE_DEFENCES (not a -DFB_DEFENCE_SWITCHES build?)")
    return FNBOX_WEAK


class Box:
    """Runs requests for one attack: `call(request, timeout=60, env={...})` -> fnboxlib.CallResult.

    In the weak run it uses $FNBOX_WEAK with the attack's defences switched off."""

    def __init__(self, defences, cache, weak_bin):
        self.defences = defences
        self.cache = cache
        self.weak_bin = weak_bin

    def env(self, extra=None):
        env = dict(os.environ, FNBOX_CACHE_DIR=self.cache)
        env.pop("FNBOX_DISABLE_DEFENCES", None)
        if self.weak_bin:
            env["FNBOX_DISABLE_DEFENCES"] = ",".join(self.defences)
        env.update(extra or {})
        return env

    def call(self, request, timeout=60, env=None, pass_fds=()):
        return fnboxlib.call(request, timeout=timeout, env=self.env(env), pass_fds=pass_fds)


@pytest.fixture(autouse=True)
def _weak_binary_in_use(request, weak_binary):
    """The weak run points fnboxlib at $FNBOX_WEAK for the duration of each test."""
    if not weak_binary:
        yield
        return
    old = fnboxlib.FNBOX
    fnboxlib.FNBOX = weak_binary
    try:
        yield
    finally:
        fnboxlib.FNBOX = old


@pytest.fixture
def box(request, cache_dir, weak_binary):
    mark = request.node.get_closest_marker("defence")
    return Box(mark.args if mark else (), cache_dir, weak_binary)


class Canary:
    """Canary files on the host, outside anything the sandbox may see: /tmp/<dir>/<name> and /var/tmp/<dir>/<name>,
    mode 0644 in 0755 directories (readable by anyone on the host, the sandbox's outer uid included)."""

    def __init__(self):
        self.text = token("CANARY-")
        self.name = token("canary-") + ".txt"
        self.dirs, self.files = [], []
        for base in ("/tmp", "/var/tmp"):
            if not os.path.isdir(base):
                continue
            d = tempfile.mkdtemp(prefix="fnbox-adv-canary-", dir=base)
            os.chmod(d, 0o755)
            p = os.path.join(d, self.name)
            with open(p, "w") as fh:
                fh.write(self.text + "\n")
            os.chmod(p, 0o644)
            self.dirs.append(d)
            self.files.append(p)

    def found_in(self, got):
        """Values of a READ result that hold the canary: its text read, or its name in a listing."""
        hits = {}
        items = got.items() if isinstance(got, dict) else enumerate(got)
        for k, v in items:
            v = v if isinstance(v, str) else str(v)
            if self.text in v or self.text.encode().hex() in v or (v.startswith("DIR:") and self.name in v):
                hits[k] = v[:300]
        return hits

    def cleanup(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def canary():
    c = Canary()
    yield c
    c.cleanup()


@pytest.fixture
def host_dir():
    """An empty, world-writable host directory under /tmp: nothing a call does may appear in it."""
    d = tempfile.mkdtemp(prefix="fnbox-adv-out-", dir="/tmp")
    os.chmod(d, 0o777)
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def tcp_listener():
    """A TCP listener on every host address (0.0.0.0), non-blocking; checked to accept from the host."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 0))
    s.listen(64)
    port = s.getsockname()[1]
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    s.settimeout(2)
    conn, _ = s.accept()
    conn.close()
    s.setblocking(False)
    yield s, port
    s.close()


@pytest.fixture
def udp_listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", 0))
    s.setblocking(False)
    yield s, s.getsockname()[1]
    s.close()


def padded_abstract(name):
    """The abstract address Node.js binds and connects to for '\\0name': all of sun_path, NUL-padded (108
    bytes), where Python, Ruby and C use the name's own length. A listener for each."""
    return "\0" + name + "\0" * (107 - len(name))


@pytest.fixture
def abstract_listener():
    """Abstract unix sockets the host listens on under one name, in both address forms (exact length and
    Node's padded one; abstract names belong to a network namespace): ([sockets], name)."""
    name = token("fnbox-adv-abstract-")
    socks = []
    for addr in ("\0" + name, padded_abstract(name)):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(addr)
        s.listen(16)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.connect(addr)
        s.settimeout(2)
        conn, _ = s.accept()
        conn.close()
        s.setblocking(False)
        socks.append(s)
    yield socks, name
    for s in socks:
        s.close()
