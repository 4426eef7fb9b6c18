"""The host environment runs the common stack (issue 30, part 1): HTTPS through fnbox's proxy verifies
against the host's CA store in every language, and the host's data stack (numpy, pandas, matplotlib) works
in a call and in `fnbox exec`.

HTTPS: the test makes a CA and a leaf certificate for `fnbox-https.test` with the `openssl` command, serves
HTTPS on the host's loopback, and makes the CA "the host's" without touching the host: fnbox runs inside a
private mount namespace (`unshare -m`, root only) where a copy of /etc/ssl/certs with the test CA added
(to ca-certificates.crt, plus its hashed link) is bound over /etc/ssl/certs, and a copy of /etc/hosts
naming `fnbox-https.test` 127.0.0.1 over /etc/hosts. The name is resolved by fnbox's proxy only (the
sandbox's own /etc/hosts does not have it): so every client takes the proxy as it would for a real host
(Ruby skips the proxy for names that resolve to loopback inside the sandbox). A second server's
certificate comes from a CA in no store: every client must refuse it (verification is on)."""
import json
import os
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fnboxlib import FNBOX, call, describe, marker, ok, parse_one_result, req, run_cli, skip_unless_ci
from servelib import TOKEN, Server, Session

NAME = "fnbox-https.test"  # .test is reserved (RFC 2606): never a real host


def openssl(*argv, cwd):
    subprocess.run(["openssl", *argv], cwd=cwd, check=True, capture_output=True)


def make_pki(d, which):
    """A CA and a leaf certificate for NAME it signed, in d: <which>-ca.pem, <which>-leaf.{pem,key}."""
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
            "-keyout", f"{which}-ca.key", "-out", f"{which}-ca.pem", "-subj", f"/CN=fnbox test {which} CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=d)
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            f"{which}-leaf.key", "-out", f"{which}-leaf.csr", "-subj", f"/CN={NAME}", cwd=d)
    with open(os.path.join(d, f"{which}.ext"), "w") as f:
        f.write(f"subjectAltName=DNS:{NAME}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
                "keyUsage=critical,digitalSignature\n")
    openssl("x509", "-req", "-in", f"{which}-leaf.csr", "-CA", f"{which}-ca.pem", "-CAkey", f"{which}-ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{which}-leaf.pem", "-extfile", f"{which}.ext", cwd=d)


class HttpsServer:
    """HTTPS on the host's 127.0.0.1 with the given leaf certificate; answers `hello <tag>`."""

    def __init__(self, d, which):
        self.tag = marker()
        tag = self.tag

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = f"hello {tag}".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(d, f"{which}-leaf.pem"), os.path.join(d, f"{which}-leaf.key"))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"https://{NAME}:{self.port}/x"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """Root (for the private mount namespace) and the openssl command, or a skip; the two servers and the
    directories bound over /etc/ssl/certs and /etc/hosts."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the test CA is made the host's in a private mount namespace (unshare -m)")
    if not shutil.which("openssl") or not shutil.which("unshare"):
        skip_unless_ci("needs the openssl and unshare commands (scripts/install-deps.sh)")
    d = str(tmp_path_factory.mktemp("pki"))
    make_pki(d, "good")
    make_pki(d, "rogue")
    store = os.path.join(d, "certs")
    shutil.copytree("/etc/ssl/certs", store, symlinks=True)
    shutil.copy(os.path.join(d, "good-ca.pem"), os.path.join(store, "fnbox-test-ca.pem"))
    bundle = os.path.join(store, "ca-certificates.crt")
    if os.path.islink(bundle):
        os.unlink(bundle)
        shutil.copy("/etc/ssl/certs/ca-certificates.crt", bundle)
    with open(bundle, "a") as out, open(os.path.join(d, "good-ca.pem")) as ca:
        out.write("\n" + ca.read())
    h = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", os.path.join(d, "good-ca.pem")],
                       capture_output=True, text=True, check=True).stdout.strip()
    os.symlink("fnbox-test-ca.pem", os.path.join(store, f"{h}.0"))
    hosts = os.path.join(d, "hosts")
    with open("/etc/hosts") as f, open(hosts, "w") as out:
        out.write(f.read() + f"\n127.0.0.1\t{NAME}\n")
    good, rogue = HttpsServer(d, "good"), HttpsServer(d, "rogue")
    yield {"store": store, "hosts": hosts, "good": good, "rogue": rogue}
    good.close()
    rogue.close()


def in_namespace(p, argv):
    """`unshare -m` argv: fnbox with the test store over /etc/ssl/certs and the test hosts over /etc/hosts."""
    script = 'mount --bind "$1" /etc/ssl/certs && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"'
    return ["-m", "--propagation", "private", "sh", "-c", script, "sh", p["store"], p["hosts"], FNBOX, *argv]


def call_with_store(p, request):
    return call(request, argv=in_namespace(p, ["call", "-"]), exe="unshare")


def network(server):
    return {"network": [f"{NAME}:{server.port}"]}


# Each returns the body it fetched, or "ERR:" and the error (a verification failure names the certificate).
CLIENTS = {
    "python-urllib": ("python", "import urllib.request\n"
                      "def f(url):\n"
                      "    try:\n"
                      "        return urllib.request.urlopen(url, timeout=20).read().decode()\n"
                      "    except Exception as e:\n"
                      "        return 'ERR:' + repr(e)\n"),
    # ssl.create_default_context() with http.client's own tunnel through the proxy named by HTTPS_PROXY
    "python-ssl": ("python", "import http.client, os, ssl, urllib.parse\n"
                   "def f(url):\n"
                   "    u, p = urllib.parse.urlsplit(url), urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])\n"
                   "    try:\n"
                   "        c = http.client.HTTPSConnection(p.hostname, p.port, timeout=20,\n"
                   "                                        context=ssl.create_default_context())\n"
                   "        c.set_tunnel(u.hostname, u.port)\n"
                   "        c.request('GET', u.path)\n"
                   "        return c.getresponse().read().decode()\n"
                   "    except Exception as e:\n"
                   "        return 'ERR:' + repr(e)\n"),
    "node-https": ("javascript", "const https = require('https');\n"
                   "function f(url) {\n"
                   "  return new Promise((resolve) => {\n"
                   "    https.get(url, (res) => {\n"
                   "      let body = '';\n"
                   "      res.on('data', (c) => { body += c; });\n"
                   "      res.on('end', () => resolve(body));\n"
                   "    }).on('error', (e) => resolve('ERR:' + e.code + ' ' + e.message));\n"
                   "  });\n"
                   "}\n"),
    "ruby-net-http": ("ruby", "require 'net/http'\n"
                      "def f(url)\n"
                      "  Net::HTTP.get(URI(url))\n"
                      "rescue => e\n"
                      "  'ERR:' + e.class.name + ' ' + e.message\n"
                      "end\n"),
    "php-file-get-contents": ("php", "function f($url) {\n"
                              "  $warnings = [];\n"  # OpenSSL's reason comes in a warning before the last one
                              "  set_error_handler(function ($no, $msg) use (&$warnings) { $warnings[] = $msg; });\n"
                              "  $body = file_get_contents($url);\n"
                              "  restore_error_handler();\n"
                              "  return $body === false ? 'ERR:' . implode(' / ', $warnings) : $body;\n"
                              "}\n"),
}


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_https_verifies_against_the_host_store(pki, client):
    lang, code = CLIENTS[client]
    server = pki["good"]
    res = call_with_store(pki, req(lang, code, "f", [server.url], permissions=network(server)))
    assert ok(res) == f"hello {server.tag}", describe(res.result)
    assert any(c["protocol"] == "connect" and c["host"] == NAME and c["allowed"]
               for c in res.result.get("network") or []), describe(res.result)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_https_refuses_a_ca_not_in_the_store(pki, client):
    """The rogue server's CA is in no store: the same client fails, naming the certificate (so a success
    above is verification, not its absence)."""
    lang, code = CLIENTS[client]
    server = pki["rogue"]
    got = ok(call_with_store(pki, req(lang, code, "f", [server.url], permissions=network(server))))
    assert got.startswith("ERR:"), got
    assert server.tag not in got
    assert any(w in got.lower() for w in ("certificate", "verify", "issuer")), got


def exec_with_store(p, request):
    proc = run_cli(in_namespace(p, ["exec", "-"]), input=json.dumps(request), timeout=60,
                   exe="unshare")
    result, _ = parse_one_result(proc.stdout)
    assert proc.returncode == 0, describe(result)
    return result


def test_curl_in_exec_verifies_against_the_host_store(pki):
    if not shutil.which("curl"):
        skip_unless_ci("needs curl (scripts/install-deps.sh)")
    good, rogue = pki["good"], pki["rogue"]
    perms = {"network": [f"{NAME}:{good.port}", f"{NAME}:{rogue.port}"]}
    res = exec_with_store(pki, {"command": f"curl -sS --max-time 20 {good.url}", "permissions": perms})
    assert res["exitCode"] == 0 and res["stdout"] == f"hello {good.tag}", describe(res)
    res = exec_with_store(pki, {"command": f"curl -sS --max-time 20 {rogue.url}", "permissions": perms})
    assert res["exitCode"] == 60, describe(res)  # CURLE_PEER_FAILED_VERIFICATION
    assert rogue.tag not in res["stdout"] and "certificate" in res["stderr"].lower(), describe(res)


# ------------------------------------------------------------------------------------------ the data stack

PLOT = """import os
import numpy as np
import pandas as pd
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

def plot():
    df = pd.DataFrame({'x': np.arange(10), 'y': np.arange(10) ** 2})
    fig, ax = plt.subplots()
    ax.plot(df['x'], df['y'])
    fig.savefig('plot.png')
    with open('plot.png', 'rb') as f:
        png = f.read(8) == b'\\x89PNG\\r\\n\\x1a\\n'
    return {'size': os.path.getsize('plot.png'), 'png': png, 'mean': float(df['y'].mean())}
"""


def require_data_stack():
    # the system's python3, as the sandbox finds it (not a pyenv or venv one earlier on the caller's PATH)
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    probe = python and subprocess.run([python, "-c", "import numpy, pandas, matplotlib, PIL"], capture_output=True)
    if not probe or probe.returncode != 0:
        skip_unless_ci("needs python3-numpy, python3-pandas, python3-matplotlib, python3-pil "
                       "(scripts/install-deps.sh)")


def test_data_stack_in_a_call():
    require_data_stack()
    res = call(req("python", PLOT, "plot"), timeout=120)
    got = ok(res)
    assert got["png"] and got["size"] > 1000 and got["mean"] == 28.5, describe(res.result)


def test_data_stack_in_exec():
    require_data_stack()
    code = PLOT + "\nimport json\nprint(json.dumps(plot()))\n"
    proc = run_cli(["exec", "-"], input=json.dumps({"code": code, "language": "python3"}),
                   timeout=120)
    result, _ = parse_one_result(proc.stdout)
    assert proc.returncode == 0 and result["exitCode"] == 0, describe(result)
    got = json.loads(result["stdout"])
    assert got["png"] and got["size"] > 1000 and got["mean"] == 28.5, describe(result)


# Kernel cells (the value of the last expression is the result); the harness sets up their https, as a call's.
KERNEL_CELLS = {
    "javascript": ("var https = require('https');\n"
                   "var body = await new Promise((resolve) => {\n"
                   "  https.get(URL, (res) => {\n"
                   "    let text = '';\n"
                   "    res.on('data', (c) => { text += c; });\n"
                   "    res.on('end', () => resolve(text));\n"
                   "  }).on('error', (e) => resolve('ERR:' + e.code + ' ' + e.message));\n"
                   "});\n"
                   "body"),
    "php": ("$body = @file_get_contents(URL);\n"
            "return $body === false ? 'ERR:' . (error_get_last()['message'] ?? '?') : $body;"),
}


@pytest.mark.parametrize("language", sorted(KERNEL_CELLS))
def test_https_in_a_session_kernel(pki, tmp_path, language):
    wrapper = tmp_path / "fnbox-in-namespace"
    wrapper.write_text("#!/bin/sh\nexec unshare " + " ".join(f"'{a}'" for a in in_namespace(pki, [])) + ' "$@"\n')
    wrapper.chmod(0o755)
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    good, rogue = pki["good"], pki["rogue"]
    with Server("--token-file", str(tokens), exe=str(wrapper)) as srv:
        sess = Session(srv, {"permissions": {"network": [f"{NAME}:{good.port}", f"{NAME}:{rogue.port}"]}})
        try:
            res = sess.kernel(KERNEL_CELLS[language].replace("URL", repr(good.url)), language)
            assert res.get("result") == f"hello {good.tag}", describe(res)
            res = sess.kernel(KERNEL_CELLS[language].replace("URL", repr(rogue.url)), language)
            assert str(res.get("result", "")).startswith("ERR:") and rogue.tag not in json.dumps(res), describe(res)
        finally:
            sess.close()
