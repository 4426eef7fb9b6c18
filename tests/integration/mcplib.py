"""MCP clients for the tests, one per transport with the same methods: Stdio (one `fnbox mcp` process) and Http
(one MCP session on a servelib Server's /mcp)."""
import json
import queue
import subprocess
import threading
import time

from fnboxlib import FNBOX, check_sanitizers, require_binary

VERSION = "2025-06-18"
INIT = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "kernel-test", "version": "1"}}


class Stdio:
    """One `fnbox mcp` process: lines in, lines out (a reader thread queues every message it sends)."""

    def __init__(self, *args):
        require_binary()
        # No warm pools unless the test asks for them (as servelib's Server): their sandboxes' processes would
        # be the test's to count and its CPU to share.
        if not any(a == "--warm" or a.startswith("--warm=") for a in args):
            args = (*args, "--warm", "none")
        self.proc = subprocess.Popen([FNBOX, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.messages = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        assert self.request("initialize", INIT, "init")["result"]["protocolVersion"] == VERSION
        self.notify("notifications/initialized", {})

    def _read(self):
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def start(self, method, params, id):
        self.send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        return lambda timeout=60: self.answer(id, timeout)

    def answer(self, id, timeout=60):
        """The answer to request id (None when none came within timeout); other messages are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                m = self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if m.get("id") == id:
                return m

    def request(self, method, params, id):
        return self.start(method, params, id)()

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0
        check_sanitizers(self.proc.stderr.read().decode("utf-8", "replace"))


class Http:
    """One MCP session on srv's /mcp; a request runs on a connection of its own (so a cancel can come while it
    runs)."""

    def __init__(self, srv):
        self.srv = srv
        self.sid = None
        r = self._post({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
        self.sid = r.header("Mcp-Session-Id")
        assert r.status == 200 and self.sid, r
        self.notify("notifications/initialized", {})

    def _headers(self):
        h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        return h

    def _post(self, msg):
        return self.srv.request("POST", "/mcp", body=json.dumps(msg).encode(), headers=self._headers())

    def notify(self, method, params):
        assert self._post({"jsonrpc": "2.0", "method": method, "params": params}).status == 202

    def start(self, method, params, id):
        c = self.srv.connection(timeout=60)
        c.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                                                   "params": params}).encode(),
                  headers={**self._headers(), "Accept": "application/json"})

        def answer(timeout=60):
            c.sock.settimeout(timeout)
            try:
                r = c.getresponse()
                return json.loads(r.read())
            finally:
                c.close()
        return answer

    def request(self, method, params, id):
        return self.start(method, params, id)()

    def close(self):
        assert self.srv.request("DELETE", "/mcp", headers={"Mcp-Session-Id": self.sid}).status == 204
