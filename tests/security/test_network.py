"""Defence: a fresh network namespace with loopback only. A listener on the host's 127.0.0.1 (and on
the host's other addresses, and an abstract unix socket) is unreachable: connects fail and the
listener never sees a connection."""
import socket


from fnboxlib import call, describe, marker, ok, req

CONNECT = {
    "python": ("import socket\n"
               "def f(targets, abstract):\n"
               "    out = {'ifaces': [n for _, n in socket.if_nameindex()]}\n"
               "    for host, port in targets:\n"
               "        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
               "        s.settimeout(3)\n"
               "        try:\n"
               "            s.connect((host, port))\n"
               "            s.sendall(b'hello from the sandbox')\n"
               "            out[f'{host}:{port}'] = 'CONNECTED'\n"
               "        except Exception as e:\n"
               "            out[f'{host}:{port}'] = 'FAILED:' + type(e).__name__\n"
               "        finally:\n"
               "            s.close()\n"
               "    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
               "    try:\n"
               "        u.connect('\\0' + abstract)\n"
               "        out['abstract'] = 'CONNECTED'\n"
               "    except Exception as e:\n"
               "        out['abstract'] = 'FAILED:' + type(e).__name__\n"
               "    return out\n"),
    "javascript": ("const net = require('net');\n"
                   "const os = require('os');\n"
                   "function attempt(opts) {\n"
                   "  return new Promise((resolve) => {\n"
                   "    const s = net.connect(opts);\n"
                   "    const t = setTimeout(() => { s.destroy(); resolve('FAILED:timeout'); }, 3000);\n"
                   "    s.on('connect', () => { clearTimeout(t); s.end('hello'); resolve('CONNECTED'); });\n"
                   "    s.on('error', (e) => { clearTimeout(t); resolve('FAILED:' + e.code); });\n"
                   "  });\n}\n"
                   "async function f(targets, abstract) {\n"
                   "  const out = { ifaces: Object.keys(os.networkInterfaces()) };\n"
                   "  for (const [host, port] of targets) out[`${host}:${port}`] = await attempt({ host, port });\n"
                   "  out.abstract = await attempt({ path: '\\0' + abstract });\n"
                   "  return out;\n}\n"),
}


def host_addresses():
    """127.0.0.1 plus the host's outbound address, if it has one (a UDP connect sends nothing)."""
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


def test_host_listener_unreachable(lang):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen(16)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    abstract = marker()
    ulistener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ulistener.bind("\0" + abstract)
    ulistener.listen(4)
    ulistener.setblocking(False)
    try:
        # sanity: the listeners work from the host, so "unreachable" below is the sandbox's doing
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        conn, _ = accept_one(listener)
        assert conn is not None, "host sanity check: could not connect to our own listener"
        conn.close()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as u:
            u.connect("\0" + abstract)
        uconn, _ = accept_one(ulistener)
        assert uconn is not None, "host sanity check: could not connect to our own abstract socket"
        uconn.close()

        targets = [[a, port] for a in host_addresses()]
        got = ok(call(req(lang, CONNECT[lang], "f", [targets, abstract]), timeout=60))
        connected = {k: v for k, v in got.items() if v == "CONNECTED"}
        assert not connected, f"the sandbox reached the host: {connected}"
        ifaces = [i for i in got["ifaces"] if i != "lo"]
        assert not ifaces, f"network interfaces other than lo inside the sandbox: {ifaces}"
        conn, peer = accept_one(listener)
        assert conn is None, f"the host listener received a connection from {peer}"
        uconn, _ = accept_one(ulistener)
        assert uconn is None, "the host's abstract unix socket received a connection"
    finally:
        listener.close()
        ulistener.close()


def accept_one(sock):
    try:
        return sock.accept()
    except BlockingIOError:
        return None, None


def test_no_outside_network():
    """Outside addresses are unreachable too (no route), and fail fast rather than hang."""
    code = ("import socket, time\ndef f():\n    out = {}\n"
            "    for host in ('1.1.1.1', '8.8.8.8', '10.0.0.1'):\n"
            "        t = time.monotonic()\n"
            "        try:\n"
            "            socket.create_connection((host, 53), timeout=2).close()\n"
            "            out[host] = 'CONNECTED'\n"
            "        except OSError as e:\n"
            "            out[host] = 'FAILED'\n"
            "    try:\n"
            "        socket.getaddrinfo('example.com', 80)\n"
            "        out['dns'] = 'RESOLVED'\n"
            "    except OSError:\n"
            "        out['dns'] = 'FAILED'\n"
            "    return out\n")
    got = ok(call(req("python", code, "f", []), timeout=60))
    assert set(got.values()) == {"FAILED"}, describe(got)
