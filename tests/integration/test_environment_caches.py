"""The environment's library caches (core/env_caches.c, issue 30): Debian's matplotlib draws and saves a plot in
every mode (call, exec, a session's kernel, MCP run_code) with no matplotlib or fontconfig warning; its font list
is built once by fnbox (in a sandbox of its own, into its cache directory) and placed as each call's own copy in
/var/cache, so no call rebuilds it (matplotlib's own log says where it loaded its font list from) and `files`
lists only what the function wrote; what a call writes over its copy is its own, never what the next call
reads; a request's own file at that path wins. fontconfig reads the system's caches, read-only; Python reads
Debian's bytecode and writes none."""
import hashlib
import json
import os

import pytest

from fnboxlib import call, ok, parse_one_result, req, run_cli
from mcplib import Http
from servelib import TOKEN, Server, Session

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/lib/python3/dist-packages/matplotlib/font_manager.py"),
                                reason="Debian's python3-matplotlib is not installed (scripts/install-deps.sh)")

FONT_LIST = "/var/cache/matplotlib/fontlist-v330.json"
WARNINGS = ("Matplotlib", "Fontconfig", "fontconfig", "matplotlibrc")

# Draws and saves the plot; says whether matplotlib rebuilt its font list and where it loaded it from (its
# font_manager logs both).
PLOT = """import logging
_seen = []
class _Keep(logging.Handler):
    def emit(self, record):
        _seen.append(record.getMessage())
_log = logging.getLogger('matplotlib.font_manager')
_log.addHandler(_Keep())
_log.setLevel(logging.DEBUG)
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3, 4], [1, 4, 9, 16])
fig.savefig('plot.png')
report = {'rebuilt': any('generated new fontManager' in m for m in _seen),
          'loaded': [m for m in _seen if m.startswith('Using fontManager instance')]}
"""
FUNCTION = "def plot():\n" + "".join("    " + line + "\n" for line in PLOT.splitlines()) + "    return report\n"
SCRIPT = PLOT + "import json\nprint(json.dumps(report))\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """fnbox's environment with a cache directory of the module's own: the first call builds the caches."""
    cache = tmp_path_factory.mktemp("fnbox-cache")
    return {**os.environ, "FNBOX_CACHE_DIR": str(cache)}


def cache_entries(env):
    """fnbox's cache entries and a digest of each (a hit refreshes an entry's mtime: least recently used)."""
    d = env["FNBOX_CACHE_DIR"]
    return {n: hashlib.sha256(open(os.path.join(d, n), "rb").read()).hexdigest() for n in os.listdir(d)
            if n.endswith(".bin")}


def check_plot(report, stderr):
    assert report["rebuilt"] is False, report
    assert report["loaded"] and FONT_LIST in report["loaded"][0], report
    assert not any(w in stderr for w in WARNINGS), stderr


def only_the_plot(files):
    assert [f["path"] for f in files["created"]] == ["/workspace/plot.png"], files
    assert files["modified"] == [] and files["deleted"] == [], files


def test_call_plots_with_the_shared_font_list(env):
    res = call(req("python", FUNCTION, "plot", []), env=env, timeout=180)
    check_plot(ok(res), res.result["stderr"])
    only_the_plot(res.result["files"])
    built = cache_entries(env)
    assert len(built) == 1, built
    # the next call neither rebuilds (matplotlib loads the placed list) nor makes fnbox build again
    res = call(req("python", FUNCTION, "plot", []), env=env)
    check_plot(ok(res), res.result["stderr"])
    only_the_plot(res.result["files"])
    assert cache_entries(env) == built


def execute(request, env):
    proc = run_cli(["exec", "-"], input=json.dumps(request), env=env, timeout=180)
    result, _ = parse_one_result(proc.stdout)
    assert proc.returncode == 0 and result["status"] == "success", result
    return result


def test_exec_code_plots(env):
    result = execute({"code": SCRIPT, "language": "python"}, env)
    check_plot(json.loads(result["stdout"]), result["stderr"])
    only_the_plot(result["files"])


def test_python_writes_no_bytecode(env):
    """Debian's bytecode of the libraries is read, none is written: a command's Python leaves no __pycache__ of
    the workspace's modules among the call's files, and compiles no library from source (`python3 -v`)."""
    result = execute({"command": "python3 -v -c 'import mod, matplotlib.pyplot' 2>&1 | grep '^# code object from '",
                      "files": {"mod.py": "X = 1\n"}}, env)
    assert result["files"]["created"] == [], result["files"]
    loaded = [line.split("from ", 1)[1].strip("'") for line in result["stdout"].splitlines()]
    from_source = [p for p in loaded if not p.endswith(".pyc")]
    assert "/workspace/mod.py" in from_source and len(loaded) > 100, result["stdout"][-2000:]
    assert not [p for p in from_source if "-packages/" in p], from_source


def test_fontconfig_finds_its_caches(env):
    """fc-list reads the system's caches (/var/cache/fontconfig, read-only like /usr): no warning, nothing
    written (no user cache appears in $HOME/.cache), and no call can change them for the next."""
    result = execute({"command": "fc-list > /dev/null; ls -A /tmp; ls /var/cache/fontconfig | grep -c cache-; "
                                 "touch /var/cache/fontconfig/x 2>/dev/null || echo read-only"}, env)
    lines = result["stdout"].split()
    assert int(lines[0]) > 0 and lines[1:] == ["read-only"], result["stdout"]
    assert result["stderr"] == "", result["stderr"]
    assert result["files"]["created"] == [], result["files"]


@pytest.fixture(scope="module")
def server(env, tmp_path_factory):
    tokens = tmp_path_factory.mktemp("tokens") / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    with Server("--token-file", str(tokens), env=env) as srv:
        yield srv


def test_session_kernel_plots(server):
    s = Session(server)
    try:
        r = s.kernel(SCRIPT)
        assert r["status"] == "success", r
        check_plot(json.loads(r["stdout"]), r["stderr"])
        r = s.cmd("ls -A /var/cache/matplotlib /workspace; test -e /tmp/.cache || echo no-home-cache")
        assert r["stdout"] == "/var/cache/matplotlib:\nfontlist-v330.json\n\n/workspace:\nplot.png\nno-home-cache\n", r
    finally:
        s.close()


def test_mcp_run_code_plots(env):
    with Server(env=env) as srv:
        c = Http(srv)
        try:
            doc = c.request("tools/call", {"name": "run_code", "arguments": {"code": SCRIPT, "language": "python"}},
                            1)
            sc = doc["result"]["structuredContent"]
            assert not doc["result"].get("isError"), doc
            check_plot(json.loads(sc["stdout"]), sc["stderr"])
        finally:
            c.close()


SPOIL = """import hashlib, os
def spoil(path):
    before = hashlib.sha256(open(path, 'rb').read()).hexdigest()
    with open(path, 'w') as f:
        f.write('{"_version": 330, "poisoned": true}')
    return before
"""
READ = """import hashlib
def read(path):
    return hashlib.sha256(open(path, 'rb').read()).hexdigest()
"""


def test_a_call_cannot_poison_the_next(env):
    call(req("python", FUNCTION, "plot", []), env=env, timeout=180)  # built
    stored = cache_entries(env)
    res = call(req("python", SPOIL, "spoil", [FONT_LIST]), env=env)
    original = ok(res)
    # the write landed in the call's own copy, and is reported as its change
    assert [f["path"] for f in res.result["files"]["modified"]] == [FONT_LIST], res.result["files"]
    assert ok(call(req("python", READ, "read", [FONT_LIST]), env=env)) == original
    res = call(req("python", FUNCTION, "plot", []), env=env)
    check_plot(ok(res), res.result["stderr"])
    assert cache_entries(env) == stored
    # nothing of fnbox's cache directory is in the sandbox
    probe = "import os\ndef f(d):\n    return os.path.exists(d)\n"
    assert ok(call(req("python", probe, "f", [env["FNBOX_CACHE_DIR"]]), env=env)) is False


def test_a_request_file_at_that_path_wins(env):
    res = call(req("python", "def f(p):\n    return open(p).read()\n", "f", [FONT_LIST],
                   files={FONT_LIST: "mine"}), env=env)
    assert ok(res) == "mine"
    assert res.result["files"]["created"] == [] and res.result["files"]["modified"] == [], res.result["files"]


def test_other_languages_get_nothing(env):
    code = "function f() { return require('fs').existsSync('/var/cache/matplotlib'); }"
    res = call(req("javascript", code, "f", []), env=env)
    assert ok(res) is False


def test_without_a_cache_directory_a_call_builds_its_own(tmp_path):
    """No usable cache directory: nothing is built ahead (a one-shot call would run the builder each time) and
    matplotlib makes its list in the call, as it always did."""
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    res = call(req("python", FUNCTION, "plot", []), env={**os.environ, "FNBOX_CACHE_DIR": str(not_a_dir)},
               timeout=180)
    assert ok(res)["rebuilt"] is True
    assert "/workspace/plot.png" in [f["path"] for f in res.result["files"]["created"]], res.result["files"]
