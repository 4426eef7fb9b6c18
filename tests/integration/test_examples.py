"""Every example in examples/ runs against the build and prints what it promises: the CLI's request files,
the curl tour (examples/http), the Node app (examples/node), the Python script (examples/python) and the MCP
client (examples/mcp). The C program on the C API (examples/c) is built and run through `make install` by
test_install.py."""
import json
import os
import shutil
import subprocess

import pytest

from fnboxlib import FNBOX, REPO, require_binary, skip_unless_ci
from servelib import Server

EXAMPLES = REPO / "examples"


def run(argv, **kw):
    kw.setdefault("timeout", 180)
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{argv} exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


@pytest.mark.parametrize("name,result", [("greet.json", "Hi, World!"), ("calculate.json", 80)])
def test_request_files(name, result):
    require_binary()
    out = json.loads(run([FNBOX, "call", str(EXAMPLES / name)]))
    assert out["status"] == "success", out
    assert out["result"] == result


def test_http_quickstart_script():
    if not shutil.which("jq"):
        skip_unless_ci("jq is not installed (scripts/install-deps.sh installs it)")
    with Server() as srv:
        env = dict(os.environ, FNBOX_URL=f"http://{srv.host}:{srv.port}")
        lines = [json.loads(l) for l in run([str(EXAMPLES / "http" / "quickstart.sh")], env=env).splitlines()]
    assert lines == [
        {"status": "ok", "languages": ["python", "javascript", "ruby", "php", "c", "cpp"]},
        {"status": "success", "result": "Hi, World!"},
        {"status": "success", "stdout": "hi from Linux\n"},
        {"type": "stdout", "data": "working\n", "result": None},
        {"type": "result", "data": None, "result": 7},
        {"status": "success", "stdout": "hello\n2\n"},
        ["in.csv"],
        {"status": "success"},
        {"status": "success", "result": 3},
    ]


def test_http_quickstart_script_with_a_token(tmp_path):
    """The script sends FNBOX_TOKEN, as a server with --token-file needs."""
    if not shutil.which("jq"):
        skip_unless_ci("jq is not installed (scripts/install-deps.sh installs it)")
    token = "example-token-0123456789abcdef"
    (tmp_path / "tokens").write_text(token + "\n")
    os.chmod(tmp_path / "tokens", 0o600)
    with Server("--token-file", str(tmp_path / "tokens")) as srv:
        env = dict(os.environ, FNBOX_URL=f"http://{srv.host}:{srv.port}")
        r = subprocess.run([str(EXAMPLES / "http" / "quickstart.sh")], env=env, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode != 0, "a server with tokens must refuse the script without FNBOX_TOKEN"
        out = run([str(EXAMPLES / "http" / "quickstart.sh")], env=dict(env, FNBOX_TOKEN=token))
    assert json.loads(out.splitlines()[-1]) == {"status": "success", "result": 3}


def test_python_quickstart():
    require_binary()
    env = dict(os.environ, PYTHONPATH=str(REPO / "clients" / "python"), FNBOX_BIN=FNBOX)
    out = run(["/usr/bin/python3", str(EXAMPLES / "python" / "quickstart.py")], env=env, cwd="/")
    assert out.splitlines() == ["call: success 3", "command: 5", "kernel: 42"]


@pytest.fixture(scope="module")
def node_client(tmp_path_factory):
    """The Node client as an app's node_modules/fnbox: its TypeScript compiled into a scratch copy (the
    repository's own clients/node/dist is not needed, nor written)."""
    tsc = REPO / "clients" / "node" / "node_modules" / "typescript" / "bin" / "tsc"
    if not tsc.exists():
        skip_unless_ci("clients/node/node_modules is missing (scripts/install-deps.sh installs it)")
    pkg = tmp_path_factory.mktemp("node-app") / "node_modules" / "fnbox"
    pkg.mkdir(parents=True)
    shutil.copy(REPO / "clients" / "node" / "package.json", pkg)
    run(["node", str(tsc), "-p", str(REPO / "clients" / "node" / "tsconfig.json"), "--outDir", str(pkg / "dist")])
    return pkg.parent.parent


def test_node_app(node_client):
    require_binary()
    for f in (EXAMPLES / "node").iterdir():
        shutil.copy(f, node_client)
    out = run(["node", "app.mjs"], cwd=node_client, env=dict(os.environ, FNBOX_BIN=FNBOX))
    assert out.splitlines() == ["greet: success Hi, World!", "count: 3 [ '/workspace/count.txt' ]",
                                "error: error ZeroDivisionError"]


def test_node_app_against_a_server(node_client):
    for f in (EXAMPLES / "node").iterdir():
        shutil.copy(f, node_client)
    with Server() as srv:
        env = dict(os.environ, FNBOX_URL=f"http://{srv.host}:{srv.port}", FNBOX_BIN="/nonexistent")
        out = run(["node", "app.mjs"], cwd=node_client, env=env)
    assert out.splitlines()[0] == "greet: success Hi, World!"


def test_mcp_client_script():
    require_binary()
    config = json.loads((EXAMPLES / "mcp" / "config.json").read_text())
    assert config["mcpServers"]["fnbox"]["args"] == ["mcp"]
    out = run(["/usr/bin/python3", str(EXAMPLES / "mcp" / "client.py")], env=dict(os.environ, FNBOX_BIN=FNBOX))
    lines = out.splitlines()
    assert lines[0] == "server: fnbox"
    assert "run_code" in lines[1] and "run_in_kernel" in lines[1]
    assert lines[2:] == ["run_code: 45", "kernel: 2", "cat: kept for this client's session"]
