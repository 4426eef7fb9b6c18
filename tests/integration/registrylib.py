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
    projects = sorted(str(p) for p in PY_FIXTURES.iterdir() if (p / "setup.py").exists())
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
