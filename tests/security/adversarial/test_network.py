"""Network: TCP listeners on the host's 127.0.0.1 and external address, UDP datagrams to the host, raw
sockets, a unix socket on a host path, an abstract unix socket the host bound, and DNS."""
import os
import socket
import time

from fnboxlib import ok, req

from .attacklib import CONNECT, accepted, host_addresses, lines, parse_c, received, run_c, stopped, token
from .conftest import attack


@attack("network", "tcp_host")
def test_tcp_host(lang, box, tcp_listener):
    """Connect to a listener on every host address and send a payload: the listener must see nothing."""
    listener, port = tcp_listener
    targets = [[a, port] for a in host_addresses()]
    payload = token("hello-from-the-sandbox-")
    arg = lines(f"{h}:{p}" for h, p in targets) if lang == "c" else targets
    got = ok(box.call(req(lang, CONNECT[lang], "f", [arg, payload], timeout=20)))
    got = parse_c(got) if lang == "c" else got
    assert len(got) >= len(targets), got
    evidence = {k: v for k, v in got.items() if v == "CONNECTED"}
    evidence.update({f"host accepted {i}": p for i, p in enumerate(accepted(listener))})
    stopped("connected to a host listener", evidence)


UDP = {
    "python": r'''
import socket
def f(targets, payload):
    out = {}
    for host, port in targets:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(payload.encode(), (host, port))
            s.sendto(payload.encode(), (host, port))
            out[f'{host}:{port}'] = 'SENT'
        except OSError as e:
            out[f'{host}:{port}'] = 'ERR:' + str(e.errno)
        s.close()
    return out
''',
    "javascript": r'''
const dgram = require('dgram');
async function f(targets, payload) {
  const out = {};
  for (const [host, port] of targets) {
    out[`${host}:${port}`] = await new Promise((resolve) => {
      const s = dgram.createSocket('udp4');
      s.on('error', (e) => { s.close(); resolve('ERR:' + e.code); });
      s.send(payload, port, host, (e) => { s.close(); resolve(e ? 'ERR:' + e.code : 'SENT'); });
    });
  }
  return out;
}
''',
    "ruby": r'''
require 'socket'
def f(targets, payload)
  out = {}
  targets.each do |host, port|
    out["#{host}:#{port}"] = begin
      s = UDPSocket.new
      s.send(payload, 0, host, port)
      s.close
      "SENT"
    rescue SystemCallError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
}


@attack("network", "udp_host")
def test_udp_host(lang, box, udp_listener):
    """Send datagrams to a UDP socket on every host address: none may arrive (a send always 'succeeds')."""
    sock, port = udp_listener
    payload = token("udp-from-the-sandbox-")
    targets = [[a, port] for a in host_addresses()]
    got = ok(box.call(req(lang, UDP[lang], "f", [targets, payload], timeout=20)))
    assert len(got) == len(targets), got
    time.sleep(0.1)
    stopped("a datagram reached the host", received(sock))


RAW = {
    "python": r'''
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
KINDS = {'AF_PACKET/SOCK_RAW': (17, 3, 0x0300), 'AF_INET/SOCK_RAW/ICMP': (2, 3, 1), 'AF_INET/SOCK_RAW/TCP': (2, 3, 6)}
def attempt():
    out = {}
    for name, (fam, typ, proto) in KINDS.items():
        try:
            s = socket.socket(fam, typ, proto)
            out[name] = 'CREATED'
            s.close()
        except OSError as e:
            out[name] = 'ERR:' + str(e.errno)
    return out
def f():
    out = {'here': attempt()}
    # in a user and network namespace of its own the function would hold CAP_NET_RAW
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        rc = libc.unshare(0x10000000 | 0x40000000)
        res = {'unshare': rc if rc == 0 else 'ERR:%d' % ctypes.get_errno()}
        res.update(attempt())
        os.write(w, repr(res).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 4096).decode()
    os.waitpid(pid, 0)
    out['own namespaces'] = eval(data)
    return out
''',
    "c": r'''
static void attempt(const char *prefix)
{
    static const struct { const char *name; int fam, type, proto; } kinds[] = {
        {"AF_PACKET/SOCK_RAW", AF_PACKET, SOCK_RAW, 0x0300},
        {"AF_INET/SOCK_RAW/ICMP", AF_INET, SOCK_RAW, IPPROTO_ICMP},
        {"AF_INET6/SOCK_RAW/ICMPV6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        char k[96];
        snprintf(k, sizeof k, "%s %s", prefix, kinds[i].name);
        int s = socket(kinds[i].fam, kinds[i].type, kinds[i].proto);
        put_rc(k, s < 0 ? -1 : 0, errno);
        if (s >= 0)
            close(s);
    }
}
const char *f(void)
{
    begin_();
    attempt("here");
    int p[2];
    if (pipe(p) < 0)
        return end_();
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        begin_();
        int rc = unshare(CLONE_NEWUSER | CLONE_NEWNET);
        put_rc("unshare", rc, errno);
        attempt("own namespaces");
        /* the object so far, without its closing brace */
        (void)!write(p[1], out_ + 1, on_ - 1);
        _exit(0);
    }
    close(p[1]);
    char buf[4096];
    ssize_t n = read(p[0], buf, sizeof buf);
    waitpid(pid, NULL, 0);
    if (n > 0) {
        raw_(", ", 2);
        raw_(buf, (size_t)n);
    }
    return end_();
}
''',
}


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + " "))
        else:
            out[prefix + k] = v
    return out


@attack("network", "raw_socket")
def test_raw_socket(lang, box):
    """Open raw sockets (AF_PACKET, raw IP), here and after creating its own user + network namespace."""
    if lang == "c":
        got = run_c(box, RAW["c"])
    else:
        got = ok(box.call(req(lang, RAW[lang], "f", [], timeout=20)))
    got = flatten(got)
    evidence = {k: v for k, v in got.items() if v in (0, "CREATED")}
    stopped("opened a raw socket", evidence)


UNIX_PATH = {
    "python": r'''
import socket
def f(paths):
    out = {}
    for p in paths:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(p)
            s.sendall(b'hello from the sandbox')
            out[p] = 'CONNECTED'
        except OSError as e:
            out[p] = 'ERR:' + str(e.errno)
        s.close()
    return out
''',
    "php": r'''<?php
function f($paths) {
  $out = [];
  foreach ($paths as $p) {
    $s = @stream_socket_client("unix://$p", $errno, $errstr, 2);
    if ($s === false) { $out[$p] = "ERR:$errno"; continue; }
    fwrite($s, 'hello from the sandbox');
    fclose($s);
    $out[$p] = 'CONNECTED';
  }
  $s = @socket_create(AF_UNIX, SOCK_STREAM, 0);
  $out['socket_connect'] = $s && @socket_connect($s, $paths[0]) ? 'CONNECTED' : 'ERR';
  return $out;
}
''',
}


@attack("network", "unix_host_path")
def test_unix_host_path(lang, box, host_dir):
    """Connect to a unix socket the host listens on at a host path (world-connectable)."""
    path = str(host_dir / "sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o777)
    srv.listen(8)
    srv.setblocking(False)
    try:
        paths = [path, "/proc/1/root" + path, "/proc/self/root" + path, "../../../../.." + path]
        got = ok(box.call(req(lang, UNIX_PATH[lang], "f", [paths], timeout=20)))
        evidence = {k: v for k, v in got.items() if v == "CONNECTED"}
        evidence.update({f"host accepted {i}": p for i, p in enumerate(accepted(srv))})
        stopped("connected to a host unix socket", evidence)
    finally:
        srv.close()


ABSTRACT = {
    "javascript": r'''
const net = require('net');
function f(name) {
  return new Promise((resolve) => {
    const s = net.connect({ path: '\0' + name });
    const t = setTimeout(() => { s.destroy(); resolve('ERR:timeout'); }, 2000);
    s.on('connect', () => { clearTimeout(t); s.end('hello from the sandbox'); resolve('CONNECTED'); });
    s.on('error', (e) => { clearTimeout(t); resolve('ERR:' + e.code); });
  });
}
''',
    "ruby": r'''
require 'socket'
def f(name)
  s = UNIXSocket.new("\0" + name)
  s.write("hello from the sandbox")
  s.close
  "CONNECTED"
rescue SystemCallError => e
  "ERR:#{e.class}"
end
''',
    "c": r'''
const char *f(const char *name)
{
    begin_();
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    if (n > sizeof a.sun_path - 2)
        n = sizeof a.sun_path - 2;
    memcpy(a.sun_path + 1, name, n);
    for (int type = SOCK_STREAM; type <= SOCK_DGRAM; type++) {
        int s = socket(AF_UNIX, type, 0);
        int r = connect(s, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
        int e = errno;
        if (r == 0)
            (void)!write(s, "hello from the sandbox", 22);
        put_str(type == SOCK_STREAM ? "stream" : "dgram", r == 0 ? "CONNECTED" : (e == ECONNREFUSED ? "ERR:refused" : "ERR"));
        close(s);
    }
    return end_();
}
''',
}


@attack("network", "abstract_host")
def test_abstract_host(lang, box, abstract_listener):
    """Connect to an abstract unix socket name the host bound (in both address forms, see padded_abstract)."""
    socks, name = abstract_listener
    if lang == "c":
        got = run_c(box, ABSTRACT["c"], [name])
    else:
        got = ok(box.call(req(lang, ABSTRACT[lang], "f", [name], timeout=20)))
    got = got if isinstance(got, dict) else {"connect": got}
    evidence = {k: v for k, v in got.items() if v == "CONNECTED"}
    evidence.update({f"host accepted {i}": p for i, p in enumerate(accepted(s) for s in socks) if p})
    stopped("connected to the host's abstract socket", evidence)


NAMES = ["deb.debian.org", "example.com", "pypi.org", "registry.npmjs.org"]


def nameservers():
    try:
        with open("/etc/resolv.conf") as fh:
            return [line.split()[1] for line in fh if line.startswith("nameserver") and len(line.split()) > 1
                    and ":" not in line.split()[1]]
    except OSError:
        return []


DNS = {
    "python": r'''
import socket, struct
def query(name):
    q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)
    for part in name.split('.'):
        q += bytes([len(part)]) + part.encode()
    return q + b'\x00\x00\x01\x00\x01'
def f(names, servers):
    out = {}
    for n in names:
        try:
            out[n] = sorted({a[4][0] for a in socket.getaddrinfo(n, 443)})
        except OSError as e:
            out[n] = 'ERR:' + type(e).__name__
    for srv in servers:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(1)
        try:
            s.sendto(query(names[0]), (srv, 53))
            out['direct ' + srv] = 'ANSWER:' + s.recv(512).hex()
        except OSError as e:
            out['direct ' + srv] = 'ERR:' + type(e).__name__
        s.close()
    return out
''',
    "javascript": r'''
const dns = require('dns').promises;
async function f(names, servers) {
  const out = {};
  for (const n of names) {
    try { out[n] = (await dns.lookup(n, { all: true })).map((a) => a.address); }
    catch (e) { out[n] = 'ERR:' + e.code; }
    try { out['resolve4 ' + n] = await dns.resolve4(n); }
    catch (e) { out['resolve4 ' + n] = 'ERR:' + e.code; }
  }
  if (servers.length) {
    const r = new (require('dns').promises.Resolver)({ timeout: 1000, tries: 1 });
    r.setServers(servers);
    try { out['direct'] = await r.resolve4(names[0]); } catch (e) { out['direct'] = 'ERR:' + e.code; }
  }
  return out;
}
''',
    "ruby": r'''
require 'socket'
require 'resolv'
def f(names, servers)
  out = {}
  names.each do |n|
    out[n] = begin
      Addrinfo.getaddrinfo(n, 443).map(&:ip_address).uniq
    rescue SocketError, SystemCallError => e
      "ERR:#{e.class}"
    end
  end
  unless servers.empty?
    out["direct"] = begin
      Resolv::DNS.open(nameserver: servers, timeouts: 1) { |d| d.getaddresses(names[0]).map(&:to_s) }
    rescue StandardError => e
      "ERR:#{e.class}"
    end
  end
  out
end
''',
    "php": r'''<?php
function f($names, $servers) {
  $out = [];
  foreach ($names as $n) {
    $ip = gethostbyname($n);
    $out[$n] = $ip === $n ? 'ERR' : [$ip];
    $r = @dns_get_record($n, DNS_A);
    $out['dns_get_record ' . $n] = $r ? array_column($r, 'ip') : 'ERR';
  }
  // ask the host's nameservers directly: one A query over UDP, any answer counts
  $q = pack('nnnnnn', 0x4242, 0x0100, 1, 0, 0, 0);
  foreach (explode('.', $names[0]) as $label) $q .= chr(strlen($label)) . $label;
  $q .= "\0" . pack('nn', 1, 1);
  foreach ($servers as $srv) {
    $s = @stream_socket_client("udp://$srv:53", $errno, $errstr, 1);
    if (!$s) { $out['ask ' . $srv] = 'ERR'; continue; }
    stream_set_timeout($s, 1);
    @fwrite($s, $q);
    $resp = @fread($s, 512);
    fclose($s);
    $out['ask ' . $srv] = ($resp !== false && strlen($resp) > 12) ? 'ANSWER:' . strlen($resp) : 'ERR';
  }
  return $out;
}
''',
}


def resolved(value):
    """Addresses other than loopback that a lookup returned."""
    if not isinstance(value, list):
        return []
    return [a for a in value if not (a.startswith("127.") or a == "::1")]


@attack("network", "dns")
def test_dns(lang, box):
    """Resolve public names (the host resolves at least deb.debian.org here), through the resolver and by
    asking the host's own nameserver directly."""
    servers = nameservers()
    got = ok(box.call(req(lang, DNS[lang], "f", [NAMES, servers], timeout=30), timeout=60))
    evidence = {k: v for k, v in got.items() if resolved(v) or (isinstance(v, str) and v.startswith("ANSWER:"))}
    stopped("resolved a name", evidence)

