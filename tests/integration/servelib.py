"""Helpers for the `fnbox serve` suites: start the real server binary ($FNBOX) as a subprocess, talk HTTP to it
with the standard library only (http.client, socket), stop it and check what it left behind.

The server logs one JSON line per request on stderr; the suites send that to a file (a pipe nobody reads
would fill up and block the server) and read the "listening" line from it for the address (port 0: the
kernel picks a free port, so parallel runs never collide)."""
import http.client
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse

import pytest

import openapi_check
from fnboxlib import FNBOX, check_sanitizers, host_pids_matching, require_binary

TOKEN = "serve-test-token-0123456789abcdef"


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over a unix socket."""

    def __init__(self, path, timeout=60):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return f"<{self.status} {self.body[:400]!r}>"


def check_contract(method, path, resp, request=None):
    """Fails the test when the answer does not match docs/openapi.yaml (openapi_check.py): every answer of
    Server.request is checked."""
    try:
        openapi_check.check(method, path, resp.status, {k.lower(): v for k, v in resp.headers}, resp.body,
                            request if isinstance(request, (bytes, str)) else None)
        mismatch = None
    except openapi_check.Mismatch as e:
        mismatch = str(e)
    if mismatch:
        pytest.fail(mismatch, pytrace=False)


class Server:
    """One `fnbox serve` process. Use as a context manager, or call stop()."""

    def __init__(self, *args, listen="127.0.0.1:0", env=None, exe=None):
        require_binary()
        self.workdir = tempfile.mkdtemp(prefix="fnbox-serve-test.")
        self.log_path = os.path.join(self.workdir, "server.log")
        self.log = open(self.log_path, "wb")
        # No warm pools unless the test asks for them (test_serve_warm.py): their sandboxes' processes, threads
        # and descriptors would count in the other tests' accounting of what the server holds.
        if "--warm" not in args:
            args = (*args, "--warm", "none")
        argv = [exe or FNBOX, "serve", "--listen", listen, *args]
        self.started = time.time()  # cgroups older than this are another process's (a reused pid)
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log,
                                     env=env)
        self.exit_code = None
        self.address = self._wait_listening()
        if self.address.startswith("unix:"):
            self.unix_path, self.host, self.port = self.address[5:], None, None
        else:
            self.unix_path = None
            self.host, port = self.address.rsplit(":", 1)
            self.host, self.port = self.host.strip("[]"), int(port)

    def _wait_listening(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines():
                if line.get("event") == "listening":
                    return line["address"]
            if self.proc.poll() is not None:
                pytest.fail(f"fnbox serve exited {self.proc.returncode} before listening: {self.log_text()[-3000:]}")
            time.sleep(0.02)
        self.proc.kill()
        pytest.fail(f"fnbox serve did not listen within {timeout}s: {self.log_text()[-3000:]}")

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def lines(self):
        """The log's JSON lines (a line that is not JSON fails the test: the log is one object per line)."""
        out = []
        for raw in self.log_text().splitlines():
            if not raw.strip():
                continue
            try:
                out.append(json.loads(raw))
            except json.JSONDecodeError:
                if any(m in raw for m in ("Sanitizer", "runtime error")):
                    continue  # reported by check_sanitizers with the whole text
                pytest.fail(f"a server log line is not JSON: {raw!r}")
        return out

    def connection(self, timeout=60):
        if self.unix_path:
            return UnixHTTPConnection(self.unix_path, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def raw_socket(self, timeout=30):
        if self.unix_path:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            s.connect(self.unix_path)
        else:
            s = socket.create_connection((self.host, self.port), timeout=timeout)
        return s

    def request(self, method, path, body=None, headers=None, token=None, conn=None, timeout=60):
        """One request; a new connection unless conn is given (then kept open)."""
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        c = conn or self.connection(timeout=timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            resp = Response(r.status, r.getheaders(), r.read())
        finally:
            if conn is None:
                c.close()
        check_contract(method, path, resp, body)
        return resp

    def call(self, request, **kw):
        return self.request("POST", "/v1/call", body=request, **kw)

    def pid_status(self, field):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise KeyError(field)

    def fd_count(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def signal(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)

    def wait(self, timeout=60):
        try:
            self.exit_code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"fnbox serve did not exit within {timeout}s: {self.log_text()[-3000:]}")
        self.log.close()
        check_sanitizers(self.log_text())
        return self.exit_code

    def stop(self, timeout=60):
        """SIGTERM, then the exit code (0 expected), after checking the log for sanitizer reports."""
        if self.exit_code is None:
            if self.proc.poll() is None:
                self.signal(signal.SIGTERM)
            self.wait(timeout)
        return self.exit_code

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        code = self.stop()
        if exc[0] is None:
            assert code == 0, f"fnbox serve exited {code}: {self.log_text()[-3000:]}"
            assert_nothing_left(self)


def cgroups_of(pid, since):
    """Per-call cgroups fnbox made for process pid (sandbox/limits.c names them fnbox-<pid>-<n>-...) at or
    after `since` (time.time()). Older ones are another process's that had the same pid: a process killed
    with SIGKILL (tests do that) cannot remove its cgroups, and pids are reused within a long test run."""
    left = []
    for root, dirs, _files in os.walk("/sys/fs/cgroup"):
        for d in dirs:
            path = os.path.join(root, d)
            try:
                if d.startswith(f"fnbox-{pid}-") and os.stat(path).st_mtime >= since - 1:
                    left.append(path)
            except FileNotFoundError:
                pass
        if root.count("/") > 8:
            dirs[:] = []
    return left


def cmdline(pid):
    """Process pid's command line, its arguments joined by spaces ('' once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def descendants(pid):
    """Host pids of every process below pid (its sandboxes' inits and all they run)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def assert_nothing_left(server, mark=None):
    """After the server exited: no cgroup of its calls, no process of its calls (found by the mark a test's
    function gave its child), its unix socket file gone."""
    assert server.exit_code is not None
    assert not cgroups_of(server.proc.pid, server.started), cgroups_of(server.proc.pid, server.started)
    if mark:
        assert not host_pids_matching(mark), host_pids_matching(mark)
    if server.unix_path:
        assert not os.path.exists(server.unix_path), f"{server.unix_path} left behind"


def sleeper_request(mark, seconds=60, timeout=120):
    """A Python function that starts a child marked with `mark` (so its processes can be found from the host),
    prints 'started', then sleeps."""
    code = ("import subprocess, sys, time\n"
            "def f():\n"
            f"    subprocess.Popen([sys.executable, '-c', 'import time\\ntime.sleep({seconds})', {mark!r}])\n"
            "    print('started', flush=True)\n"
            f"    time.sleep({seconds})\n"
            "    return 'slept'\n")
    return {"language": "python", "code": code, "functionName": "f", "timeout": timeout}


def wait_for(predicate, timeout=10, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    pytest.fail(f"{what} not reached within {timeout}s")


def metric(srv, name):
    """The value of one metric line (name with its labels) from srv's GET /metrics; 0 when absent."""
    for line in srv.request("GET", "/metrics").body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


# ---- sessions (/v1/sessions...) ----

def q(path):
    return urllib.parse.quote(path, safe="")


def error_of(resp, status, etype=None):
    assert resp.status == status, resp
    assert resp.header("Content-Type") == "application/json", resp.headers
    doc = resp.json()
    assert set(doc) >= {"error"}, doc
    if etype:
        assert doc["error"]["type"] == etype, doc
    assert isinstance(doc["error"]["message"], str) and doc["error"]["message"], doc
    return doc["error"]["message"]


class Session:
    """A session opened on srv with token; the calls below return servelib Responses."""

    def __init__(self, srv, options=None, token=TOKEN):
        self.srv, self.token = srv, token
        r = srv.request("POST", "/v1/sessions", body=options, token=token)
        assert r.status == 201, r
        self.info = r.json()
        self.id = self.info["id"]
        self.base = f"/v1/sessions/{self.id}"
        assert r.header("Location") == self.base, r.headers

    def req(self, method, suffix="", body=None, token=None, **kw):
        return self.srv.request(method, self.base + suffix, body=body, token=token or self.token, **kw)

    def cmd(self, command, **extra):
        r = self.req("POST", "/commands", {"command": command, **extra})
        assert r.status == 200, r
        return r.json()

    def code(self, code, language, **extra):
        r = self.req("POST", "/code", {"code": code, "language": language, **extra})
        assert r.status == 200, r
        return r.json()

    def kernel(self, code, language="python", **extra):
        """An execute in the session's kernel for language (state kept between them)."""
        r = self.req("POST", f"/kernels/{language}/execute", {"code": code, **extra})
        assert r.status == 200, r
        return r.json()

    def put(self, path, data):
        return self.req("PUT", "/files?path=" + q(path), data if isinstance(data, bytes) else data.encode(),
                        headers={"Content-Type": "application/octet-stream"})

    def get(self, path, **kw):
        return self.req("GET", "/files?path=" + q(path), **kw)

    def rm(self, path):
        return self.req("DELETE", "/files?path=" + q(path))

    def ls(self, path):
        return self.req("GET", "/files/list?path=" + q(path))

    def close(self):
        return self.req("DELETE")


def ok(res):
    assert res["status"] == "success" and res["exitCode"] == 0, res
    return res["stdout"]
