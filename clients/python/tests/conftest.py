"""Fixtures: the fnbox binary, real `fnbox serve` processes (TCP with a token, unix socket), helpers.

No mocks: every test talks to a real server running real sandboxes. The binary is $FNBOX_BIN or
<repo>/build/fnbox; without it the suite is skipped, or fails when CI=true.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PKG_ROOT = HERE.parent                      # clients/python
REPO = PKG_ROOT.parent.parent               # the fnbox repository
sys.path.insert(0, str(PKG_ROOT))
TOKEN = "test-token-0123456789abcdef"


def _binary():
    cand = os.environ.get("FNBOX_BIN") or str(REPO / "build" / "fnbox")
    return cand if os.path.isfile(cand) and os.access(cand, os.X_OK) else None


FNBOX_BIN = _binary()
MISSING = "no fnbox binary: set FNBOX_BIN or build %s (make)" % (REPO / "build" / "fnbox")
if FNBOX_BIN is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError(MISSING)
else:
    os.environ["FNBOX_BIN"] = FNBOX_BIN  # local mode finds it the documented way


def pytest_collection_modifyitems(config, items):
    if FNBOX_BIN is None:  # outside CI: skip everything, saying why
        for item in items:
            item.add_marker(pytest.mark.skip(reason=MISSING))


class Server:
    """A `fnbox serve` started for the tests; its stderr is drained into .log."""

    def __init__(self, listen, token_file=None, extra=()):
        argv = [FNBOX_BIN, "serve", "--listen", listen, "--grace", "1"] + list(extra)
        if token_file:
            argv += ["--token-file", str(token_file)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.log = []
        self.address = None
        deadline = time.monotonic() + 10
        while self.address is None:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("fnbox serve exited: %s" % "".join(self.log))
            self.log.append(line.decode())
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "listening":
                self.address = event["address"]
            if time.monotonic() > deadline:
                raise RuntimeError("fnbox serve did not say it was listening")
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()
        self.base_url = self.address if self.address.startswith("unix:") else "http://" + self.address

    def _read(self):
        for line in iter(self.proc.stderr.readline, b""):
            self.log.append(line.decode())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._drain.join(2)


def require_host_mounts():
    """Skips a test that mounts a host directory when this user cannot: mounts are served over FUSE, and a
    user other than root without read-write access to /dev/fuse gets them refused (`fnbox doctor`: fuse).
    scripts/test.sh runs this suite once more as such a user."""
    if os.geteuid() != 0 and not os.access("/dev/fuse", os.R_OK | os.W_OK):
        pytest.skip("host mounts need read-write access to /dev/fuse, which this user lacks (fnbox doctor: fuse)")


@pytest.fixture(scope="session")
def fnbox_bin():
    return FNBOX_BIN


@pytest.fixture(scope="session")
def tcp_server(tmp_path_factory):
    d = tmp_path_factory.mktemp("tcp")
    tokens = d / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    server = Server("127.0.0.1:0", token_file=tokens)
    server.token = TOKEN
    yield server
    server.stop()


@pytest.fixture(scope="session")
def unix_server(tmp_path_factory):
    d = tmp_path_factory.mktemp("unix")
    server = Server("unix:%s" % (d / "fnbox.sock"))
    server.token = None
    yield server
    server.stop()


@pytest.fixture(params=["local", "tcp", "unix"])
def mode(request):
    """Connection arguments for each mode: local (a private server / `fnbox call`), TCP + token, unix."""
    if request.param == "local":
        return {}
    server = request.getfixturevalue(request.param + "_server")
    return {"base_url": server.base_url, "token": server.token}


@pytest.fixture(params=["tcp", "unix"])
def remote(request):
    server = request.getfixturevalue(request.param + "_server")
    return {"base_url": server.base_url, "token": server.token}


def processes_mentioning(text):
    """Pids of processes whose command line contains ``text``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmd and int(entry) != os.getpid():
            out.append(int(entry))
    return out


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def wait_until(pred, timeout=5.0, step=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()
