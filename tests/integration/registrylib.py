"""Package registries on loopback for the dependency tests (tests/integration/test_dependencies.py): a PEP 503
index of wheels built here from tests/integration/registries/python/ with Debian's pip (no PyPI: --no-index,
--no-build-isolation, the installed setuptools and wheel), served by Python's http.server, which records
every path asked for."""
import http.server
import os
import re
import subprocess
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY_FIXTURES = HERE / "registries" / "python"
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-pip, setuptools and wheel


def build_wheels(out):
    """Wheels of every fixture project under registries/python into out; their paths."""
    out.mkdir(parents=True, exist_ok=True)
    # built from copies: pip builds in the source tree (build/, *.egg-info), which must stay the repository's
    import shutil
    projects = []
    for p in sorted(PY_FIXTURES.iterdir()):
        if (p / "setup.py").exists():
            dst = out / "src" / p.name
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(p, dst, ignore=shutil.ignore_patterns("build", "*.egg-info"))
            projects.append(str(dst))
    subprocess.run([SYSTEM_PYTHON, "-m", "pip", "wheel", "--no-index", "--no-build-isolation", "--no-deps",
                    "--disable-pip-version-check", "-q", "-w", str(out), *projects], check=True,
                   capture_output=True, env={**os.environ, "PIP_CONFIG_FILE": "/dev/null"})
    return sorted(out.glob("*.whl"))


def simple_index(wheels, root):
    """A PEP 503 simple index of wheels under root/simple: one page per normalized project name."""
    for w in wheels:
        name = re.sub(r"[-_.]+", "-", w.name.split("-")[0]).lower()
        d = root / "simple" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / w.name).write_bytes(w.read_bytes())
        links = "".join(f'<a href="{p.name}">{p.name}</a>\n' for p in sorted(d.glob("*.whl")))
        (d / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    return root


class IndexServer:
    """http.server over a directory on 127.0.0.1 (an ephemeral port); .paths lists what was asked for."""

    def __init__(self, directory):
        self.paths = []
        lock = threading.Lock()
        paths = self.paths

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=str(directory), **kw)

            def log_message(self, fmt, *args):  # quiet; record instead
                with lock:
                    paths.append(self.path)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/simple/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def asked(self, fragment):
        return [p for p in list(self.paths) if fragment in p]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---- npm: verdaccio (pinned in registries/npm/package-lock.json, installed by scripts/install-deps.sh) ----

NPM_DIR = HERE / "registries" / "npm"
VERDACCIO = NPM_DIR / "node_modules" / "verdaccio" / "bin" / "verdaccio"


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Verdaccio:
    """verdaccio on 127.0.0.1 with storage under root, no uplink (it serves only what the test publishes);
    a user is created so `npm publish` has a token (.npmrc under root)."""

    def __init__(self, root):
        import json
        import time
        import urllib.request
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        config = root / "config.yaml"
        config.write_text(
            f"storage: {root / 'storage'}\n"
            f"auth:\n  htpasswd:\n    file: {root / 'htpasswd'}\n    max_users: 10\n"
            "uplinks: {}\n"
            "packages:\n  '**':\n    access: $all\n    publish: $authenticated\n    unpublish: $authenticated\n"
            "log: {type: stdout, format: json, level: http}\n")
        self.log = open(root / "verdaccio.log", "wb")
        self.proc = subprocess.Popen(["node", str(VERDACCIO), "--config", str(config), "--listen",
                                      f"127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=str(root))
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.url + "-/ping", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("verdaccio did not start: " + (root / "verdaccio.log").read_text()[-2000:])
                time.sleep(0.2)
        body = json.dumps({"name": "fnbox", "password": "fnbox-test-pw"}).encode()
        r = urllib.request.Request(self.url + "-/user/org.couchdb.user:fnbox", data=body, method="PUT",
                                   headers={"Content-Type": "application/json"})
        token = json.loads(urllib.request.urlopen(r, timeout=10).read())["token"]
        self.npmrc = root / ".npmrc"
        self.npmrc.write_text(f"//127.0.0.1:{self.port}/:_authToken={token}\nregistry={self.url}\n")

    def publish(self, package_dir):
        subprocess.run(["npm", "publish", "--registry", self.url, "--userconfig", str(self.npmrc), "--no-audit",
                        "--loglevel", "error", str(package_dir)], check=True, capture_output=True,
                       cwd=str(package_dir))

    def tarball_requests(self, name):
        """How many times the tarball of package name was fetched (verdaccio's http log)."""
        n = 0
        for line in (self.root / "verdaccio.log").read_text(errors="replace").splitlines():
            if f"/{name}/-/{name}-" in line and ".tgz" in line and "GET" in line:
                n += 1
        return n

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
