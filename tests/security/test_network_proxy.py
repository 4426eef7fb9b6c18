"""Defence: with permissions.network allowing something, the sandbox still has no interface but lo; its
only way out is fnbox's proxy (127.0.0.1:3128 inside), which refuses loopback, private, CGNAT,
link-local, metadata, unspecified and reserved addresses unless the policy names them literally (whatever
notation or protocol the function uses), never resolves a name the policy does not allow, sends one
request per upstream connection (a pipelined request cannot switch hosts), and bounds its connections.

Each attack reports what it reached; a host listener on 0.0.0.0 counts the connections that arrive. The
"named literally" runs prove the probes can succeed, so a refusal is the proxy's doing."""
import ipaddress
import socket
import threading
import time

import pytest

from fnboxlib import call, describe, marker, ok, req


def net_call(lang, code, fn, args, network, timeout=90):
    r = req(lang, code, fn, args)
    r["permissions"] = {"network": network}
    res = call(r, timeout=timeout)
    return res


class Listener:
    """A TCP listener on the host (0.0.0.0:<port>) that accepts and counts connections in a thread."""

    def __init__(self, port=0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", port))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.accepted = []
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            if self.stopping:
                conn.close()
                return
            conn.settimeout(2)
            try:
                data = conn.recv(65536)
            except OSError:
                data = b""
            self.accepted.append((peer, data))
            try:
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 7\r\n\r\nREACHED")
            except OSError:
                pass
            conn.close()

    def close(self):
        self.stopping = True
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            pass
        self.sock.close()
        self.thread.join(5)


@pytest.fixture
def listener():
    lst = Listener()
    yield lst
    lst.close()


def outbound_address():
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))
            return s.getsockname()[0]
    except OSError:
        return None


# f(targets): each target [kind, host, port] is tried through the proxy; kind is http (absolute-URI
# forward), connect, socks-ip (SOCKS5 with the address) or socks-name (SOCKS5 with the text as a domain
# name). The outcome is 'REFUSED:<HTTP status or SOCKS reply>' or 'REACHED' (the peer's body arrived).
PROBE = r'''
import socket, struct

def read_all(s):
    data = b''
    while True:
        try:
            chunk = s.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data

def one(kind, host, port):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=15)
    try:
        bracket = '[%s]' % host if ':' in host else host
        if kind in ('http', 'connect'):
            if kind == 'http':
                s.sendall(('GET http://%s:%d/ HTTP/1.1\r\nHost: %s:%d\r\n\r\n' % (bracket, port, bracket, port)).encode())
            else:
                s.sendall(('CONNECT %s:%d HTTP/1.1\r\n\r\n' % (bracket, port)).encode())
                head = b''
                while b'\r\n\r\n' not in head:
                    chunk = s.recv(1)
                    if not chunk:
                        break
                    head += chunk
                status = int(head.split(b' ')[1]) if head.startswith(b'HTTP/') else 0
                if status != 200:
                    return 'REFUSED:%d' % status
                s.sendall(b'GET / HTTP/1.0\r\n\r\n')
            data = read_all(s)
            if data.startswith(b'HTTP/') and b'REACHED' not in data:
                return 'REFUSED:%s' % data.split(b' ')[1].decode()
            return 'REACHED' if b'REACHED' in data else 'EMPTY'
        s.sendall(b'\x05\x01\x00')
        if s.recv(2) != b'\x05\x00':
            return 'NOAUTH'
        if kind == 'socks-name':
            addr = b'\x03' + bytes([len(host)]) + host.encode()
        elif ':' in host:
            addr = b'\x04' + socket.inet_pton(socket.AF_INET6, host)
        else:
            addr = b'\x01' + socket.inet_aton(host)
        s.sendall(b'\x05\x01\x00' + addr + struct.pack('>H', port))
        rep = b''
        while len(rep) < 10:
            chunk = s.recv(10 - len(rep))
            if not chunk:
                break
            rep += chunk
        if len(rep) < 2 or rep[1] != 0:
            return 'REFUSED:%d' % (rep[1] if len(rep) > 1 else -1)
        s.sendall(b'GET / HTTP/1.0\r\n\r\n')
        return 'REACHED' if b'REACHED' in read_all(s) else 'EMPTY'
    except OSError as e:
        return 'ERROR:' + type(e).__name__
    finally:
        s.close()

def f(targets):
    return {'%s %s %d' % tuple(t): one(*t) for t in targets}
'''

KINDS = ("http", "connect", "socks-ip", "socks-name")
REFUSED = {"http": "REFUSED:403", "connect": "REFUSED:403", "socks-ip": "REFUSED:2", "socks-name": "REFUSED:2"}


def test_non_public_addresses_refused_in_every_notation(listener):
    """permissions.network: true allows public destinations only: every way of writing the host's
    loopback, its own address, private ranges and the metadata address is refused (403 / SOCKS reply 2,
    never 502: the proxy did not even try), and the host listener sees nothing."""
    p = listener.port
    hosts = ["127.0.0.1", "127.0.0.2", "0.0.0.0", "::1", "::ffff:127.0.0.1", "10.0.0.1", "192.168.1.1",
             "172.16.0.1", "100.64.0.1", "169.254.169.254", "fd00:ec2::254", "fe80::1"]
    out = outbound_address()
    if out and not ipaddress.ip_address(out).is_global:
        hosts.append(out)
    targets = [[k, h, p] for h in hosts for k in KINDS if not (k == "socks-ip" and ":" in h and "." in h)]
    # names and odd notations, which the proxy resolves itself (to loopback)
    targets += [[k, h, p] for h in ("localhost", "127.1", "0x7f000001", "2130706433") for k in ("http", "socks-name")]
    got = ok(net_call("python", PROBE, "f", [targets], True))
    wrong = {k: v for k, v in got.items() if v != REFUSED[k.split()[0]]}
    assert not wrong, f"not refused by the proxy: {wrong}"
    assert listener.accepted == [], f"the host listener was reached: {listener.accepted}"


def test_wildcards_and_other_ports_do_not_reach_loopback(listener):
    """A wildcard or another port never stands for a literal: the name and port must match as written."""
    p = listener.port
    policy = ["*.localhost", "*.0.0.1", f"127.0.0.1:{p + 1 if p < 65535 else 1}", f"localhost:{p + 1 if p < 65535 else 1}"]
    targets = [[k, h, p] for h in ("127.0.0.1", "localhost", "x.localhost") for k in ("http", "connect", "socks-name")]
    got = ok(net_call("python", PROBE, "f", [targets], policy))
    # x.localhost matches "*.localhost" by name; it then either does not resolve on the host (502 / SOCKS
    # 4) or resolves to loopback and is refused (403 / 2): never reached
    wrong = {k: v for k, v in got.items()
             if v != REFUSED[k.split()[0]] and not (" x.localhost " in k and v.startswith("REFUSED:"))}
    assert not wrong, f"not refused by the proxy: {wrong}"
    assert listener.accepted == []


def test_named_literally_is_reached(listener):
    """The control: naming the address (or the exact name) literally lets the same probes through, so the
    refusals above are the proxy's doing."""
    p = listener.port
    targets = [[k, "127.0.0.1", p] for k in KINDS] + [["http", "localhost", p], ["socks-name", "localhost", p]]
    res = net_call("python", PROBE, "f", [targets], [f"127.0.0.1:{p}", f"localhost:{p}"])
    got = ok(res)
    assert set(got.values()) == {"REACHED"}, got
    assert len(listener.accepted) == len(targets)
    assert all(e["allowed"] for e in res.result["network"]), describe(res.result)


DIRECT = {
    "python": ("import socket\n"
               "def f(targets):\n"
               "    out = {'ifaces': [l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]]}\n"
               "    for host, port in targets:\n"
               "        try:\n"
               "            socket.create_connection((host, port), timeout=3).close()\n"
               "            out['%s:%d' % (host, port)] = 'CONNECTED'\n"
               "        except OSError as e:\n"
               "            out['%s:%d' % (host, port)] = 'FAILED:' + type(e).__name__\n"
               "    try:\n"
               "        socket.getaddrinfo('example.com', 80)\n"
               "        out['dns'] = 'RESOLVED'\n"
               "    except OSError:\n"
               "        out['dns'] = 'FAILED'\n"
               "    s = socket.socket()\n"
               "    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
               "    try:\n"
               "        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
               "        s.bind(('127.0.0.1', 3128))\n"
               "        s.listen(1)\n"
               "        out['steal3128'] = 'BOUND'\n"
               "    except OSError as e:\n"
               "        out['steal3128'] = 'FAILED:' + type(e).__name__\n"
               "    socket.create_connection(('127.0.0.1', 3128), timeout=3).close()\n"
               "    out['proxy'] = 'CONNECTED'\n"
               "    return out\n"),
    "javascript": ("const net = require('net');\n"
                   "const fs = require('fs');\n"
                   "const dns = require('dns').promises;\n"
                   "function attempt(opts) {\n"
                   "  return new Promise((resolve) => {\n"
                   "    const s = net.connect(opts);\n"
                   "    const t = setTimeout(() => { s.destroy(); resolve('FAILED:timeout'); }, 3000);\n"
                   "    s.on('connect', () => { clearTimeout(t); s.end(); resolve('CONNECTED'); });\n"
                   "    s.on('error', (e) => { clearTimeout(t); resolve('FAILED:' + e.code); });\n"
                   "  });\n}\n"
                   "async function f(targets) {\n"
                   "  const out = { ifaces: fs.readFileSync('/proc/net/dev', 'utf8').split('\\n').slice(2)\n"
                   "    .filter((l) => l.trim()).map((l) => l.split(':')[0].trim()) };\n"
                   "  for (const [host, port] of targets) out[`${host}:${port}`] = await attempt({ host, port });\n"
                   "  try { await dns.lookup('example.com'); out.dns = 'RESOLVED'; } catch (e) { out.dns = 'FAILED'; }\n"
                   "  const srv = net.createServer();\n"
                   "  out.steal3128 = await new Promise((resolve) => {\n"
                   "    srv.on('error', (e) => resolve('FAILED:' + e.code));\n"
                   "    srv.listen({ host: '127.0.0.1', port: 3128, exclusive: false }, () => { srv.close(); resolve('BOUND'); });\n"
                   "  });\n"
                   "  out.proxy = await attempt({ host: '127.0.0.1', port: 3128 });\n"
                   "  return out;\n}\n"),
}


def test_only_the_proxy_is_reachable_directly(lang, listener):
    """With the proxy running, the host's listeners (loopback and its own address) are still unreachable
    directly, the sandbox has only lo, no DNS, and cannot take over the proxy's port; only the proxy
    answers on 127.0.0.1:3128."""
    targets = [["127.0.0.1", listener.port]]
    out = outbound_address()
    if out:
        targets.append([out, listener.port])
    got = ok(net_call(lang, DIRECT[lang], "f", [targets], True))
    connected = {k: v for k, v in got.items() if v == "CONNECTED" and k != "proxy"}
    assert not connected, f"the sandbox reached the host directly: {connected}"
    assert [i for i in got["ifaces"] if i != "lo"] == [], got
    assert got["dns"] == "FAILED", got
    assert got["steal3128"].startswith("FAILED"), got
    assert got["proxy"] == "CONNECTED", got
    assert listener.accepted == []


def test_pipelined_request_cannot_switch_host(listener):
    """One forwarded request per upstream connection: a second request pipelined on the same client
    connection, naming a host the policy refuses, never reaches that host (it can only go, as bytes, to
    the host already allowed)."""
    allowed = Listener()
    try:
        code = ("import socket\n"
                "def f(a, b):\n"
                "    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
                "    s.sendall(('GET http://127.0.0.1:%d/one HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'\n"
                "               'GET http://127.0.0.1:%d/two HTTP/1.1\\r\\nHost: y\\r\\n\\r\\n' % (a, b)).encode())\n"
                "    data = b''\n"
                "    while True:\n"
                "        c = s.recv(65536)\n"
                "        if not c: break\n"
                "        data += c\n"
                "    return data.decode('latin-1')\n")
        res = net_call("python", code, "f", [allowed.port, listener.port], [f"127.0.0.1:{allowed.port}"])
        ok(res)
        assert listener.accepted == [], f"the pipelined request reached the refused host: {listener.accepted}"
        assert len(res.result["network"]) == 1, describe(res.result)
    finally:
        allowed.close()


def test_refused_names_are_never_resolved():
    """A name no pattern allows is refused before any look-up (DNS is a channel too): address null."""
    tag = marker()
    code = ("import urllib.request, urllib.error\n"
            "def f(url):\n"
            "    try:\n"
            "        urllib.request.urlopen(url, timeout=10)\n"
            "        return 'FETCHED'\n"
            "    except urllib.error.HTTPError as e:\n"
            "        return e.code\n")
    res = net_call("python", code, "f", [f"http://{tag}.attacker.invalid/"], ["*.example.org"])
    assert ok(res) == 403
    (e,) = res.result["network"]
    assert e["allowed"] is False and e["address"] is None and e["host"] == f"{tag}.attacker.invalid", e


def test_connection_flood_and_oversized_heads_are_bounded():
    """More connections than the proxy serves at once are closed (and logged), an endless request head is
    answered 431, and the call still ends promptly."""
    code = ("import socket, time\n"
            "def f():\n"
            "    held = []\n"
            "    for _ in range(80):\n"
            "        c = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n"
            "        c.sendall(b'GET ')\n"  # an unfinished head: the proxy keeps the connection
            "        held.append(c)\n"
            "    time.sleep(1)\n"
            "    closed = 0\n"
            "    for c in held:\n"
            "        c.setblocking(False)\n"
            "        try:\n"
            "            closed += c.recv(1) == b''\n"
            "        except BlockingIOError:\n"
            "            pass\n"
            "        except OSError:\n"
            "            closed += 1\n"
            "    for c in held: c.close()\n"
            "    time.sleep(0.3)\n"
            "    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
            "    try:\n"
            "        s.sendall(b'GET http://a.example.org/ HTTP/1.1\\r\\nX: ' + b'a' * 20000)\n"
            "    except OSError:\n"
            "        pass\n"
            "    return [closed, s.recv(200).decode('latin-1').split('\\r\\n')[0]]\n")
    t0 = time.monotonic()
    res = net_call("python", code, "f", [], ["*.example.org"], timeout=60)
    closed, status = ok(res)
    assert closed == 80 - 64 and "431" in status, (closed, status)
    assert time.monotonic() - t0 < 30
    flood = [e for e in res.result["network"] if "too many" in e["reason"]]
    assert flood and all(e["allowed"] is False for e in flood), describe(res.result)
