"""permissions.network (docs/internals/network.md): denied by default; allowed destinations are reached
through fnbox's proxy (HTTP forward, CONNECT, SOCKS5 on 127.0.0.1:3128 inside the sandbox), which
resolves names itself and lists every connection in the result's `network`.

The destination is an HTTP server this test runs on the HOST's loopback: the sandbox can reach it only
through the proxy, and only when the policy names it literally."""
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fnboxlib import call, describe, marker, ok, req

PROXY_ENV = {"HTTP_PROXY": "http://127.0.0.1:3128", "HTTPS_PROXY": "http://127.0.0.1:3128",
             "http_proxy": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
             "ALL_PROXY": "socks5h://127.0.0.1:3128", "NO_PROXY": "", "no_proxy": ""}


class HostServer:
    """A threaded HTTP server on the host's 127.0.0.1 that answers `hello <tag> <path>` and records
    every request it saw."""

    def __init__(self):
        self.tag = marker()
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.seen.append({"path": self.path, "host": self.headers.get("Host"),
                                   "connection": self.headers.get("Connection"),
                                   "proxy": self.headers.get("Proxy-Connection")})
                body = f"hello {outer.tag} {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = HostServer()
    yield s
    s.close()


def net_call(lang, code, fn, args, network, timeout=60):
    r = req(lang, code, fn, args)
    if network is not None:
        r["permissions"] = {"network": network}
    res = call(r, timeout=timeout)
    return res


PY_URLOPEN = ("import os, urllib.request, urllib.error\n"
              "def f(url):\n"
              "    out = {'env': {k: os.environ.get(k) for k in %r}}\n"
              "    try:\n"
              "        out['body'] = urllib.request.urlopen(url, timeout=10).read().decode()\n"
              "    except urllib.error.HTTPError as e:\n"
              "        out['status'] = e.code\n"
              "        out['body'] = e.read().decode()\n"
              "    except Exception as e:\n"
              "        out['error'] = type(e).__name__ + ': ' + str(e)\n"
              "    return out\n") % (sorted(PROXY_ENV),)


def entries(result):
    log = result.get("network")
    assert isinstance(log, list), f"no network log in the result: {describe(result)}"
    return log


def test_default_denied_even_through_the_proxy_port(server):
    """No permissions: nothing listens on 127.0.0.1:3128, the proxy variables are unset, the host
    server is unreachable directly and 'through the proxy'."""
    code = ("import os, socket, urllib.request\n"
            "def f(port):\n"
            "    out = {'env': [k for k in os.environ if 'proxy' in k.lower()]}\n"
            "    for name, target in (('direct', ('127.0.0.1', port)), ('proxy', ('127.0.0.1', 3128))):\n"
            "        try:\n"
            "            socket.create_connection(target, timeout=3).close()\n"
            "            out[name] = 'CONNECTED'\n"
            "        except OSError as e:\n"
            "            out[name] = 'FAILED:' + type(e).__name__\n"
            "    opener = urllib.request.build_opener(urllib.request.ProxyHandler(\n"
            "        {'http': 'http://127.0.0.1:3128'}))\n"
            "    try:\n"
            "        opener.open('http://127.0.0.1:%d/' % port, timeout=5).read()\n"
            "        out['urllib'] = 'FETCHED'\n"
            "    except Exception as e:\n"
            "        out['urllib'] = 'FAILED:' + type(e).__name__\n"
            "    return out\n")
    for network in (None, False, []):
        res = net_call("python", code, "f", [server.port], network)
        got = ok(res)
        assert got["env"] == [], got
        assert got["direct"].startswith("FAILED") and got["proxy"].startswith("FAILED"), got
        assert got["urllib"].startswith("FAILED"), got
        assert res.result.get("network", []) == [], describe(res.result)
    assert server.seen == []


def test_python_urllib_reaches_a_literally_named_host(server):
    url = f"http://127.0.0.1:{server.port}/a/b?c=1"
    res = net_call("python", PY_URLOPEN, "f", [url], [f"127.0.0.1:{server.port}"])
    got = ok(res)
    assert got["env"] == PROXY_ENV, got
    assert got.get("body") == f"hello {server.tag} /a/b?c=1", got
    # forwarded in origin form, with the proxy's hop-by-hop headers replaced
    assert server.seen == [{"path": "/a/b?c=1", "host": f"127.0.0.1:{server.port}", "connection": "close",
                            "proxy": None}], server.seen
    (e,) = entries(res.result)
    assert e["protocol"] == "http" and e["host"] == "127.0.0.1" and e["port"] == server.port, e
    assert e["address"] == "127.0.0.1" and e["allowed"] is True, e
    assert f"127.0.0.1:{server.port}" in e["reason"], e
    assert e["bytesUp"] > 0 and e["bytesDown"] > len(server.tag), e


def test_refused_when_not_named(server):
    """Another port of the same host is not allowed: 403 with the reason, the log lists the refusal,
    the server sees nothing."""
    url = f"http://127.0.0.1:{server.port}/"
    res = net_call("python", PY_URLOPEN, "f", [url], [f"127.0.0.1:{server.port + 1 if server.port < 65535 else 1}"])
    got = ok(res)
    assert got.get("status") == 403, got
    assert "not allowed by permissions.network" in got["body"], got
    assert server.seen == []
    (e,) = entries(res.result)
    assert e["allowed"] is False and e["address"] is None and e["port"] == server.port, e
    assert e["bytesUp"] == 0 and e["bytesDown"] == 0, e


def test_allow_all_public_still_refuses_loopback(server):
    res = net_call("python", PY_URLOPEN, "f", [f"http://127.0.0.1:{server.port}/"], True)
    got = ok(res)
    assert got.get("status") == 403 and "loopback" in got["body"], got
    (e,) = entries(res.result)
    assert e["allowed"] is False and e["address"] == "127.0.0.1" and "loopback" in e["reason"], e
    assert server.seen == []


def test_node_http_request_through_the_proxy(server):
    """Node 20 has no proxy support of its own: http.request must be pointed at the proxy (absolute URL
    as the path), and fetch() ignores HTTP_PROXY, so it tries a direct connection, which fails."""
    code = ("const http = require('http');\n"
            "function viaProxy(url) {\n"
            "  return new Promise((resolve) => {\n"
            "    const u = new URL(url);\n"
            "    const r = http.request({ host: '127.0.0.1', port: 3128, path: url, headers: { Host: u.host } },\n"
            "      (res) => { let b = ''; res.setEncoding('utf8'); res.on('data', (d) => { b += d; });\n"
            "                 res.on('end', () => resolve({ status: res.statusCode, body: b })); });\n"
            "    r.on('error', (e) => resolve({ error: e.code || e.message }));\n"
            "    r.end();\n"
            "  });\n}\n"
            "async function f(url) {\n"
            "  const out = { proxy: await viaProxy(url), env: process.env.HTTP_PROXY };\n"
            "  try { const r = await fetch(url); out.fetch = 'FETCHED:' + r.status; }\n"
            "  catch (e) { out.fetch = 'FAILED:' + ((e.cause && e.cause.code) || e.name); }\n"
            "  return out;\n}\n")
    url = f"http://127.0.0.1:{server.port}/node"
    res = net_call("javascript", code, "f", [url], [f"127.0.0.1:{server.port}"])
    got = ok(res)
    assert got["proxy"] == {"status": 200, "body": f"hello {server.tag} /node"}, got
    assert got["env"] == "http://127.0.0.1:3128"
    assert got["fetch"].startswith("FAILED"), got
    assert [s["path"] for s in server.seen] == ["/node"], server.seen
    assert [e["allowed"] for e in entries(res.result)] == [True]


def test_connect_tunnel(server):
    """HTTP CONNECT (what clients use for https://): a tunnel to the named host, bytes relayed as they are."""
    code = ("import http.client\n"
            "def f(port):\n"
            "    c = http.client.HTTPConnection('127.0.0.1', 3128, timeout=10)\n"
            "    c.set_tunnel('127.0.0.1', port)\n"
            "    c.request('GET', '/tunnelled')\n"
            "    r = c.getresponse()\n"
            "    return [r.status, r.read().decode()]\n")
    res = net_call("python", code, "f", [server.port], [f"127.0.0.1:{server.port}"])
    assert ok(res) == [200, f"hello {server.tag} /tunnelled"]
    (e,) = entries(res.result)
    assert e["protocol"] == "connect" and e["allowed"] is True and e["address"] == "127.0.0.1", e


SOCKS = ("import socket, struct\n"
         "def socks(host, port, atyp):\n"
         "    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
         "    s.sendall(b'\\x05\\x01\\x00')\n"
         "    assert s.recv(2) == b'\\x05\\x00'\n"
         "    if atyp == 'name':\n"
         "        addr = b'\\x03' + bytes([len(host)]) + host.encode()\n"
         "    else:\n"
         "        addr = b'\\x01' + socket.inet_aton(host)\n"
         "    s.sendall(b'\\x05\\x01\\x00' + addr + struct.pack('>H', port))\n"
         "    rep = b''\n"
         "    while len(rep) < 10:\n"
         "        chunk = s.recv(10 - len(rep))\n"
         "        if not chunk: break\n"
         "        rep += chunk\n"
         "    if rep[1:2] != b'\\x00':\n"
         "        return 'REFUSED:%d' % rep[1]\n"
         "    s.sendall(b'GET /socks HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')\n"
         "    data = b''\n"
         "    while True:\n"
         "        chunk = s.recv(65536)\n"
         "        if not chunk: break\n"
         "        data += chunk\n"
         "    return data.split(b'\\r\\n\\r\\n', 1)[1].decode()\n"
         "def f(port, other):\n"
         "    return {'name': socks('localhost', port, 'name'), 'ip': socks('127.0.0.1', port, 'ip'),\n"
         "            'other': socks('127.0.0.1', other, 'ip')}\n")


def test_socks5_names_and_addresses(server):
    """SOCKS5 with a domain name (resolved by the proxy, on the host) and with an IPv4 address; a
    destination not named gets reply 2 (not allowed by ruleset)."""
    other = server.port + 1 if server.port < 65535 else 1
    res = net_call("python", SOCKS, "f", [server.port, other], [f"localhost:{server.port}", f"127.0.0.1:{server.port}"])
    got = ok(res)
    assert got == {"name": f"hello {server.tag} /socks", "ip": f"hello {server.tag} /socks", "other": "REFUSED:2"}, got
    log = entries(res.result)
    assert [(e["protocol"], e["host"], e["allowed"]) for e in log] == [
        ("socks5", "localhost", True), ("socks5", "127.0.0.1", True), ("socks5", "127.0.0.1", False)], log
    assert log[0]["address"] in ("127.0.0.1", "::1"), log


def host_name_on_loopback(port):
    """The host's own name, when it resolves (on the host) to 127.0.0.1; else the test is skipped."""
    name = socket.gethostname().lower()
    try:
        addrs = {ai[4][0] for ai in socket.getaddrinfo(name, port, socket.AF_INET, socket.SOCK_STREAM)}
    except OSError:
        addrs = set()
    if "127.0.0.1" not in addrs or name in ("localhost", "fnbox"):
        pytest.skip(f"the host name {name!r} does not resolve to 127.0.0.1 here")
    return name


def test_names_are_resolved_by_the_proxy(server):
    """The host's own name resolves on the host (its /etc/hosts), not in the sandbox (no DNS there): the
    function can still fetch by name through the proxy, and the log shows the address the proxy found."""
    name = host_name_on_loopback(server.port)
    code = ("import socket, urllib.request\n"
            "def f(name, url):\n"
            "    try:\n"
            "        socket.getaddrinfo(name, 80)\n"
            "        inside = 'RESOLVED'\n"
            "    except OSError:\n"
            "        inside = 'FAILED'\n"
            "    return [inside, urllib.request.urlopen(url, timeout=10).read().decode()]\n")
    url = f"http://{name}:{server.port}/byname"
    res = net_call("python", code, "f", [name, url], [f"{name}:{server.port}"])
    assert ok(res) == ["FAILED", f"hello {server.tag} /byname"]
    (e,) = entries(res.result)
    assert e["host"] == name and e["address"] == "127.0.0.1" and e["allowed"] is True, e


def test_ruby_net_http_uses_the_proxy_variables(server):
    """Ruby's Net::HTTP reads http_proxy, but bypasses it for names that resolve to loopback (there are
    none here: the sandbox cannot resolve the host's name), so the test fetches by the host's name."""
    name = host_name_on_loopback(server.port)
    code = ("require 'net/http'\n"
            "def f(url)\n"
            "  Net::HTTP.get(URI(url))\n"
            "end\n")
    url = f"http://{name}:{server.port}/ruby"
    res = net_call("ruby", code, "f", [url], [f"{name}:{server.port}"])
    assert ok(res) == f"hello {server.tag} /ruby"
    assert [e["allowed"] for e in entries(res.result)] == [True]


def test_php_streams_use_the_proxy(server):
    """file_get_contents on http:// with no stream context of the function's own: the harness's default
    context sends it through the proxy (PHP's wrappers ignore the proxy variables)."""
    code = "function f($url) { return file_get_contents($url); }"
    url = f"http://127.0.0.1:{server.port}/php"
    res = net_call("php", code, "f", [url], [f"127.0.0.1:{server.port}"])
    assert ok(res) == f"hello {server.tag} /php"
    (e,) = entries(res.result)
    assert e["protocol"] == "http" and e["allowed"] is True, e


@pytest.mark.parametrize("network, field", [
    ("yes", "permissions.network"),
    (["a.example.com:443", "b.example.com:99999"], "permissions.network[1]"),
    (["*"], "permissions.network[0]"),
    (["::1"], "permissions.network[0]"),
])
def test_invalid_policies_are_refused_by_name(network, field):
    res = net_call("python", "def f():\n    return 1\n", "f", [], network)
    assert res.code == 2, describe(res.result)
    err = res.result["error"]
    assert err["type"] == "InvalidRequest" and err["message"].startswith(field + ":"), err


def test_every_connection_is_logged_with_byte_counts(server):
    """Several connections, allowed and refused, in the order they were made."""
    code = ("import urllib.request, urllib.error\n"
            "def f(urls):\n"
            "    out = []\n"
            "    for u in urls:\n"
            "        try:\n"
            "            out.append(len(urllib.request.urlopen(u, timeout=10).read()))\n"
            "        except urllib.error.HTTPError as e:\n"
            "            out.append(e.code)\n"
            "    return out\n")
    base = f"http://127.0.0.1:{server.port}"
    urls = [base + "/1", "http://blocked.example.com/", base + "/" + "x" * 1000, "http://10.0.0.1/"]
    res = net_call("python", code, "f", [urls], [f"127.0.0.1:{server.port}"])
    got = ok(res)
    assert got[1] == 403 and got[3] == 403 and got[0] > 0 and got[2] > 1000, got
    log = entries(res.result)
    assert [(e["host"], e["allowed"]) for e in log] == [
        ("127.0.0.1", True), ("blocked.example.com", False), ("127.0.0.1", True), ("10.0.0.1", False)], log
    assert log[2]["bytesUp"] > 1000 and log[2]["bytesDown"] > 1000, log
    assert log[1]["address"] is None, log  # refused by name: never resolved
    json.dumps(log)
