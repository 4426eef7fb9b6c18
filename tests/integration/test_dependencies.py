"""Dependencies on demand (issue 30, part 3): `"dependencies": {"python": [...]}` in calls, execute requests,
/v1/call, /v1/execute and sessions, installed once from the environment's configured index into a cached
read-only layer, against a REAL index on loopback: a PEP 503 index of wheels this module builds from
tests/integration/registries/python with Debian's pip, served by http.server (registrylib.py).

- A call importing a fixture package (fixdep, which requires fixbase from the same index) works; meta says
  miss, then hit; the same list written differently (case, order, duplicates) is the same layer.
- Two concurrent first calls of one list build it once: one miss, one hit, the wheel fetched once.
- An unknown package: DependencyInstallFailed with pip's own message, and nothing cached.
- Bad entries (an option, a URL, a path, shell characters) are InvalidRequest naming the entry; an
  ecosystem without an index configured is InvalidRequest naming `dependencies` and the setting.
- The layer is read-only to the function; the index is the only destination the build reached.
The host's environment gets its index from the environments file's entry named "host"."""
import json
import os
import subprocess
import threading

import pytest

import fnboxlib
from fnboxlib import call, describe, ok, run_cli
import registrylib
from registrylib import IndexServer, build_wheels, simple_index
from servelib import TOKEN, Server, Session

IMPORT_FIXDEP = "def f():\n    import fixdep\n    return fixdep.VALUE\n"
FIXDEP_VALUE = "fixdep 2.1.0 on base 1.0.0"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("pyindex")
    wheels = build_wheels(root / "wheels")
    assert [w.name.split("-")[0] for w in wheels] == ["fixbase", "fixdep"], wheels
    srv = IndexServer(simple_index(wheels, root / "site"))
    yield srv
    srv.stop()


@pytest.fixture
def envfile(tmp_path, index):
    """The host's index (the reserved entry "host") and an environment `web` with the same index; `bare`
    has none."""
    path = tmp_path / "envs.json"
    path.write_text(json.dumps({"environments": {
        "host": {"indexes": {"python": index.url}},
        "web": {"indexes": {"python": index.url}},
        "bare": {},
    }}))
    return str(path)


@pytest.fixture
def env(tmp_path, envfile):
    """fnbox's environment: a cache of this test's own (first calls miss) and the environments file."""
    cache = tmp_path / "cache"
    cache.mkdir()
    # a sandbox's init (nobody, when the tests run as root) opens the layer by its path: its parents must
    # let it pass (pytest makes them 0700)
    fnboxlib.readable_by_all(cache, tmp_path, tmp_path.parent, tmp_path.parent.parent)
    return {**os.environ, "FNBOX_CACHE_DIR": str(cache), "FNBOX_ENVIRONMENTS": envfile}


def deps_call(env, deps, code=IMPORT_FIXDEP, argv=("call", "-"), **extra):
    body = {"language": "python", "code": code, "dependencies": {"python": deps}, **extra}
    return call(body, env=env, argv=argv, timeout=180)


def meta_of(res):
    return res.result.get("meta", {}).get("dependencies", {}).get("python")


def layer_dirs(env):
    d = os.path.join(env["FNBOX_CACHE_DIR"], "layers")
    return sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n))) if os.path.isdir(d) else []


def test_miss_then_hit_and_identical_lists_share_a_layer(env, index):
    first = deps_call(env, ["fixdep==2.1.0"])
    assert ok(first) == FIXDEP_VALUE
    m1 = meta_of(first)
    assert m1["cache"] == "miss" and m1["installMs"] > 0 and len(m1["layer"]) == 64, describe(first.result)
    second = deps_call(env, ["fixdep==2.1.0"])
    assert ok(second) == FIXDEP_VALUE
    assert meta_of(second)["cache"] == "hit" and meta_of(second)["layer"] == m1["layer"], describe(second.result)
    # normalized: PEP 503 case and separators, order, duplicates
    third = deps_call(env, ["FixDep==2.1.0", "fixdep==2.1.0"])
    assert ok(third) == FIXDEP_VALUE and meta_of(third) == {**meta_of(third), "cache": "hit", "layer": m1["layer"]}
    assert layer_dirs(env) == [m1["layer"]]
    # another environment with the same index is another layer (the key holds the environment)
    fourth = deps_call(env, ["fixdep==2.1.0"], environment="web")
    assert ok(fourth) == FIXDEP_VALUE and meta_of(fourth)["cache"] == "miss"
    assert meta_of(fourth)["layer"] != m1["layer"]


def test_without_dependencies_the_package_is_not_there(env, index):
    res = call({"language": "python", "code": IMPORT_FIXDEP}, env=env)
    assert res.result["status"] == "error" and res.result["error"]["type"] in ("ModuleNotFoundError", "ImportError"), \
        describe(res.result)


def test_concurrent_first_calls_build_once(env, index):
    before = len(index.asked("fixbase-1.0.0"))
    results = [None, None]

    def one(i):
        results[i] = deps_call(env, ["fixbase==1.0.0"], code="def f():\n    import fixbase\n    return fixbase.BASE\n")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [ok(r) for r in results] == ["base 1.0.0"] * 2
    assert sorted(meta_of(r)["cache"] for r in results) == ["hit", "miss"], [describe(r.result) for r in results]
    assert meta_of(results[0])["layer"] == meta_of(results[1])["layer"]
    assert len(index.asked("fixbase-1.0.0")) - before == 1, index.paths  # one download: one install


def test_failed_install_caches_nothing(env, index):
    res = deps_call(env, ["nosuchpkg==1.0"], code="def f():\n    return 1\n")
    err = res.result["error"]
    assert res.result["status"] == "error" and err["type"] == "DependencyInstallFailed", describe(res.result)
    assert "No matching distribution found for nosuchpkg" in err["message"], err
    assert layer_dirs(env) == []
    again = deps_call(env, ["nosuchpkg==1.0"], code="def f():\n    return 1\n")
    assert again.result["error"]["type"] == "DependencyInstallFailed"  # not a cached failure either


BAD_ENTRIES = [
    ("--index-url=http://evil.example/simple", "an installer option"),
    ("-e", "an installer option"),
    ("https://evil.example/x.whl", "a URL or VCS reference"),
    ("git+https://evil.example/x", "a URL or VCS reference"),
    ("fixdep @ file:///tmp/x", "a URL or VCS reference"),
    ("fixdep@https://evil.example/x.whl", "a URL or VCS reference"),
    ("fixdep@1.0", "'@' is not allowed"),
    ("/tmp/fixdep.whl", "a path"),
    ("fixdep;id", "';' is not allowed"),
    ("fixdep$(id)", "shell characters"),
    ("fixdep ==2.1.0", "whitespace"),
]


@pytest.mark.parametrize("entry,why", BAD_ENTRIES)
def test_bad_entries_are_refused(env, entry, why):
    res = deps_call(env, ["fixbase", entry])
    assert res.code == 2 and res.result["error"]["type"] == "InvalidRequest", describe(res.result)
    msg = res.result["error"]["message"]
    assert msg.startswith(f"dependencies.python[1]: {json.dumps(entry)[:82]}") or msg.startswith("dependencies.python[1]: "), msg
    assert why in msg, msg
    assert layer_dirs(env) == []


def test_unknown_ecosystem_and_shapes(env):
    res = call({"language": "python", "code": "def f():\n    return 1\n", "dependencies": {"ruby": ["rake"]}}, env=env)
    assert res.code == 2 and res.result["error"]["message"] == \
        "dependencies.ruby: unknown ecosystem (known: python, javascript)", describe(res.result)
    res = call({"language": "python", "code": "def f():\n    return 1\n", "options": {"dependencies": ["six"]}}, env=env)
    assert res.code == 2 and res.result["error"]["message"].startswith("options.dependencies: must be an object")


def test_no_index_configured(env, tmp_path):
    res = deps_call(env, ["fixdep"], environment="bare")
    assert res.code == 2 and res.result["error"]["type"] == "InvalidRequest", describe(res.result)
    assert res.result["error"]["message"].startswith(
        "dependencies.python: no package index configured for environment bare: set `indexes.python`"), res.result
    # the host's environment without a "host" entry in the file
    empty = tmp_path / "none.json"
    empty.write_text('{"environments": {}}')
    res = deps_call({**env, "FNBOX_ENVIRONMENTS": str(empty)}, ["fixdep"])
    assert res.code == 2 and "no package index configured for the host's environment" in \
        res.result["error"]["message"], describe(res.result)
    assert "an environment named \"host\"" in res.result["error"]["message"]


def test_layer_is_read_only_to_the_function(env, index):
    code = ("def f():\n    import fixdep, os\n    d = os.path.dirname(fixdep.__file__)\n"
            "    try:\n        open(os.path.join(d, 'evil.py'), 'w').write('x')\n        return 'wrote'\n"
            "    except OSError as e:\n        return type(e).__name__\n")
    res = deps_call(env, ["fixdep==2.1.0"], code=code)
    assert ok(res) in ("OSError", "PermissionError"), describe(res.result)
    layer = os.path.join(env["FNBOX_CACHE_DIR"], "layers", meta_of(res)["layer"])
    assert not os.path.exists(os.path.join(layer, "fixdep", "evil.py"))


def test_exec_command_and_code(env, index):
    res = call({"command": "python3 -c 'import fixdep; print(fixdep.VALUE)'", "dependencies": {"python": ["fixdep"]}},
               env=env, argv=("exec", "-"), timeout=180)
    assert res.result["status"] == "success" and res.result["stdout"] == FIXDEP_VALUE + "\n", describe(res.result)
    assert res.result["meta"]["dependencies"]["python"]["cache"] == "miss"
    res = call({"language": "python", "code": "import fixdep\nprint(fixdep.VALUE)", "dependencies": {"python": ["fixdep"]}},
               env=env, argv=("exec", "-"), timeout=180)
    assert res.result["stdout"] == FIXDEP_VALUE + "\n" and res.result["meta"]["dependencies"]["python"]["cache"] == "hit"


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(f"{TOKEN}\n")
    path.chmod(0o600)
    return str(path)


def test_server_call_execute_and_session(env, index, token_file):
    with Server("--token-file", token_file, env=env) as srv:
        r = srv.request("POST", "/v1/call", body={"language": "python", "code": IMPORT_FIXDEP,
                                                  "dependencies": {"python": ["fixdep==2.1.0"]}}, token=TOKEN,
                        timeout=180)
        assert r.status == 200 and r.json()["result"] == FIXDEP_VALUE, r
        assert r.json()["meta"]["dependencies"]["python"]["cache"] == "miss"
        r = srv.request("POST", "/v1/execute", body={"command": "python3 -c 'import fixdep; print(fixdep.VALUE)'",
                                                     "dependencies": {"python": ["fixdep==2.1.0"]}}, token=TOKEN)
        assert r.status == 200 and r.json()["stdout"] == FIXDEP_VALUE + "\n", r
        assert r.json()["meta"]["dependencies"]["python"]["cache"] == "hit"
        r = srv.request("POST", "/v1/call", body={"language": "python", "code": IMPORT_FIXDEP,
                                                  "dependencies": {"python": ["fixdep", "-e"]}}, token=TOKEN)
        assert r.status == 400 and r.json()["error"]["message"].startswith("dependencies.python[1]: \"-e\""), r
        s = Session(srv, {"dependencies": {"python": ["fixdep==2.1.0"]}}, token=TOKEN)
        res = s.cmd("python3 -c 'import fixdep; print(fixdep.VALUE)'")
        assert res["stdout"] == FIXDEP_VALUE + "\n", res
        res = s.req("POST", "/call", {"language": "python", "code": IMPORT_FIXDEP})
        assert res.json()["result"] == FIXDEP_VALUE, res
        res = s.kernel("import fixdep\nfixdep.VALUE")
        assert res["result"] == FIXDEP_VALUE, res
        r = s.req("POST", "/commands", {"command": "true", "dependencies": {"python": ["six"]}})
        assert r.status == 400 and "dependencies: a session's own" in r.json()["error"]["message"], r


# ---- JavaScript: npm from verdaccio on loopback ----

JS_LEFT = "module.exports = (s, n) => String(s).padStart(n);\n"
JS_DEP = 'const pad = require("fixleft");\nmodule.exports = { v: pad("x", 3) + " from @fix/npmdep" };\n'
# The install script of `fixscript`: what it can reach from the build sandbox, in a report beside it.
JS_INSTALL = r"""
const fs = require('fs'), net = require('net'), http = require('http');
const report = { ran: true };
try { fs.writeFileSync(process.env.FIX_HOST_FILE || '%(host_file)s', 'pwned'); report.write = 'written'; }
catch (e) { report.write = e.code; }
function done() { fs.writeFileSync(__dirname + '/install-report.json', JSON.stringify(report)); }
const s = net.connect(%(port)d, '127.0.0.1');
s.on('connect', () => { report.direct = 'connected'; s.destroy(); viaProxy(); });
s.on('error', (e) => { report.direct = e.code; viaProxy(); });
function viaProxy() {
  const req = http.get({ host: '127.0.0.1', port: 3128, path: 'http://127.0.0.1:%(port)d/' }, (res) => {
    report.proxy = res.statusCode; res.resume(); done();
  });
  req.on('error', (e) => { report.proxy = e.code; done(); });
}
"""


def npm_package(root, name, version, files, **extra):
    d = root / name.replace("/", "__")
    d.mkdir(parents=True)
    (d / "package.json").write_text(json.dumps({"name": name, "version": version, "main": "index.js", **extra}))
    for fname, text in files.items():
        (d / fname).write_text(text)
    return d


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """What the install script tries to reach: a host file's path and a listener on another loopback port."""
    import socket
    root = tmp_path_factory.mktemp("outside")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.05)
    secret = root / "secret.txt"
    secret.write_text("host secret 7f3a")
    fnboxlib.readable_by_all(root, root.parent, root.parent.parent)  # the sandbox's user could read it, were it there
    yield {"file": root / "pwned", "port": listener.getsockname()[1], "listener": listener, "secret": secret}
    listener.close()


# The install script of `fixhostile`: what a hostile package could leave in its layer: absolute symlinks to a
# host file (the test's secret) and to /proc, a set-id file, a fifo.
JS_HOSTILE = r"""
const fs = require('fs'), cp = require('child_process');
fs.symlinkSync('%(secret)s', __dirname + '/host-secret');
fs.symlinkSync('/proc/1/root', __dirname + '/proc-root');
fs.writeFileSync(__dirname + '/suid.sh', '#!/bin/sh\nid -u\n');
fs.chmodSync(__dirname + '/suid.sh', 0o6755);
try { cp.execFileSync('mkfifo', [__dirname + '/fifo']); } catch (e) {}
"""


@pytest.fixture(scope="module")
def npm_registry(tmp_path_factory, outside):
    if not registrylib.VERDACCIO.exists():
        fnboxlib.skip_unless_ci("no verdaccio: scripts/install-deps.sh (npm ci in tests/integration/registries/npm)")
    root = tmp_path_factory.mktemp("npmreg")
    reg = registrylib.Verdaccio(root / "verdaccio")
    pkgs = root / "packages"
    reg.publish(npm_package(pkgs, "fixleft", "1.3.0", {"index.js": JS_LEFT}))
    reg.publish(npm_package(pkgs, "@fix/npmdep", "2.0.0", {"index.js": JS_DEP}, dependencies={"fixleft": "^1.2.0"}))
    script = JS_INSTALL % {"host_file": outside["file"], "port": outside["port"]}
    reg.publish(npm_package(pkgs, "fixscript", "1.0.0", {"index.js": "module.exports = 1;\n", "install.js": script},
                            scripts={"install": "node install.js"}))
    hostile = JS_HOSTILE % {"secret": outside["secret"]}
    reg.publish(npm_package(pkgs, "fixhostile", "1.0.0", {"index.js": "module.exports = 1;\n", "install.js": hostile},
                            scripts={"install": "node install.js"}))
    yield reg
    reg.stop()


@pytest.fixture
def js_env(tmp_path, npm_registry):
    path = tmp_path / "envs.json"
    path.write_text(json.dumps({"environments": {"host": {"indexes": {"npm": npm_registry.url}}}}))
    cache = tmp_path / "cache"
    cache.mkdir()
    fnboxlib.readable_by_all(cache, tmp_path, tmp_path.parent, tmp_path.parent.parent)
    return {**os.environ, "FNBOX_CACHE_DIR": str(cache), "FNBOX_ENVIRONMENTS": str(path)}


def js_call(env, deps, code):
    return call({"language": "javascript", "code": code, "dependencies": {"javascript": deps}}, env=env, timeout=180)


def test_javascript_require_and_import_miss_then_hit(js_env, npm_registry):
    code = "function f() { return require('@fix/npmdep').v; }"
    first = js_call(js_env, ["@fix/npmdep@^2.0.0"], code)
    assert ok(first) == "  x from @fix/npmdep", describe(first.result)
    m = first.result["meta"]["dependencies"]["javascript"]
    assert m["cache"] == "miss" and len(m["layer"]) == 64
    esm = js_call(js_env, ["@fix/npmdep@^2.0.0"],
                  "export async function f() { const m = await import('fixleft'); return m.default('y', 2); }")
    assert ok(esm) == " y", describe(esm.result)
    assert esm.result["meta"]["dependencies"]["javascript"] == {**m, "cache": "hit",
                                                               "installMs": esm.result["meta"]["dependencies"]["javascript"]["installMs"]}
    both = call({"language": "python", "code": IMPORT_FIXDEP, "dependencies": {"javascript": ["fixleft@1.x"]}},
                env=js_env, timeout=180)
    assert both.result["status"] == "error", describe(both.result)  # a JavaScript layer is not on sys.path


def test_javascript_failed_install(js_env, npm_registry):
    res = js_call(js_env, ["no-such-fixture@1.0.0"], "function f() { return 1; }")
    err = res.result["error"]
    assert err["type"] == "DependencyInstallFailed" and "404" in err["message"], describe(res.result)
    assert layer_dirs(js_env) == []


def test_install_script_runs_only_in_the_build_sandbox(js_env, npm_registry, outside):
    res = js_call(js_env, ["fixscript@1.0.0"], "function f() { return require('fixscript/install-report.json'); }")
    report = ok(res)
    assert report["ran"] is True, report
    assert report["write"] in ("ENOENT", "EACCES", "EROFS"), report  # the host's directory is not there
    assert report["direct"] in ("ECONNREFUSED", "EACCES", "ENETUNREACH"), report  # its own loopback
    assert report["proxy"] == 403, report  # the proxy lets through the registry only
    assert not outside["file"].exists()
    import socket
    try:
        conn, _ = outside["listener"].accept()
        conn.close()
        pytest.fail("the install script reached a host port")
    except socket.timeout:
        pass
    # the function itself does not run it again: a hit installs nothing
    again = js_call(js_env, ["fixscript@1.0.0"], "function f() { return 1; }")
    assert again.result["meta"]["dependencies"]["javascript"]["cache"] == "hit"


# ---- MCP: the configuration's session.dependencies, and the argument it may allow ----

def mcp_config(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def tool(mcp, name, args, id):
    m = mcp.request("tools/call", {"name": name, "arguments": args}, id)
    return m["result"]


def test_mcp_configuration_and_arguments(env, index, tmp_path, monkeypatch):
    from mcplib import Stdio
    monkeypatch.setenv("FNBOX_CACHE_DIR", env["FNBOX_CACHE_DIR"])
    cfg = mcp_config(tmp_path, "mcp.json", {"session": {"dependencies": {"python": ["fixdep==2.1.0"]}},
                                             "allowDependencies": True})
    mcp = Stdio("--config", cfg, "--environments", env["FNBOX_ENVIRONMENTS"])
    try:
        listed = {t["name"]: t for t in mcp.request("tools/list", {}, 2)["result"]["tools"]}
        for name in ("run_code", "run_in_kernel"):
            assert "dependencies" in listed[name]["inputSchema"]["properties"], listed[name]
        assert "dependencies" not in listed["call_function"]["inputSchema"].get("properties", {})
        r = tool(mcp, "run_code", {"language": "python", "code": "import fixdep\nprint(fixdep.VALUE)"}, 3)
        assert not r.get("isError") and FIXDEP_VALUE in r["structuredContent"]["stdout"], r
        r = tool(mcp, "call_function", {"language": "python", "code": IMPORT_FIXDEP}, 4)
        assert not r.get("isError") and r["structuredContent"]["result"] == FIXDEP_VALUE, r
        r = tool(mcp, "run_code", {"language": "python", "code": "import fixbase\nprint(fixbase.BASE)",
                                   "dependencies": {"python": ["fixbase==1.0.0"]}}, 5)
        assert not r.get("isError") and "base 1.0.0" in r["structuredContent"]["stdout"], r
        r = tool(mcp, "run_in_kernel", {"code": "import fixdep\nfixdep.VALUE"}, 6)
        assert not r.get("isError") and r["structuredContent"]["result"] == FIXDEP_VALUE, r
        r = tool(mcp, "exec_command", {"command": "python3 -c 'import fixdep; print(fixdep.VALUE)'"}, 7)
        assert not r.get("isError") and FIXDEP_VALUE in r["structuredContent"]["stdout"], r
        r = tool(mcp, "run_in_kernel", {"code": "1", "dependencies": {"python": ["fixdep==2.1.0"]}}, 8)
        assert not r.get("isError"), r  # already the session's
        r = tool(mcp, "run_in_kernel", {"code": "1", "dependencies": {"python": ["fixbase==1.0.0"]}}, 9)
        assert r.get("isError") and "already started without" in json.dumps(r), r
    finally:
        mcp.close()
    # a first run_in_kernel opens the session with its dependencies
    cfg = mcp_config(tmp_path, "allow.json", {"allowDependencies": True})
    mcp = Stdio("--config", cfg, "--environments", env["FNBOX_ENVIRONMENTS"])
    try:
        r = tool(mcp, "run_in_kernel", {"code": "import fixdep\nfixdep.VALUE",
                                        "dependencies": {"python": ["fixdep==2.1.0"]}}, 2)
        assert not r.get("isError") and r["structuredContent"]["result"] == FIXDEP_VALUE, r
    finally:
        mcp.close()
    # not allowed: the argument is refused and not listed
    cfg = mcp_config(tmp_path, "plain.json", {"session": {}})
    mcp = Stdio("--config", cfg, "--environments", env["FNBOX_ENVIRONMENTS"])
    try:
        listed = {t["name"]: t for t in mcp.request("tools/list", {}, 2)["result"]["tools"]}
        assert "dependencies" not in listed["run_code"]["inputSchema"]["properties"]
        r = tool(mcp, "run_code", {"language": "python", "code": "print(1)", "dependencies": {"python": ["fixdep"]}}, 3)
        assert r.get("isError") and "allowDependencies" in json.dumps(r), r
    finally:
        mcp.close()


def test_concurrent_first_calls_in_one_server_build_once(env, index, token_file):
    """Two threads of one `fnbox serve` (flock belongs to the open file description, so they exclude each
    other as two processes do)."""
    before = len(index.asked("fixdep-2.1.0-py3"))
    body = {"language": "python", "code": IMPORT_FIXDEP, "dependencies": {"python": ["fixdep==2.1.0", "fixbase"]}}
    results = [None, None]
    with Server("--token-file", token_file, env=env) as srv:
        def one(i):
            results[i] = srv.request("POST", "/v1/call", body=body, token=TOKEN, timeout=180)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert all(r.status == 200 and r.json()["result"] == FIXDEP_VALUE for r in results), results
    caches = sorted(r.json()["meta"]["dependencies"]["python"]["cache"] for r in results)
    assert caches == ["hit", "miss"], [r.json()["meta"] for r in results]
    assert len(index.asked("fixdep-2.1.0-py3")) - before == 1, index.paths


def test_hostile_package_layer(js_env, npm_registry, outside):
    """What an install script leaves gives the function nothing of the host: its absolute symlinks resolve in
    the function's own sandbox, set-id bits are dropped in the copy, a fifo is not copied."""
    code = r"""
function f() {
  const fs = require('fs'), d = '/node_modules/fixhostile', r = {};
  try { r.secret = fs.readFileSync(d + '/host-secret', 'utf8'); } catch (e) { r.secret = e.code; }
  try { r.procRoot = fs.readdirSync(d + '/proc-root').sort(); } catch (e) { r.procRoot = e.code; }
  r.suidMode = fs.statSync(d + '/suid.sh').mode & 0o7777;
  r.fifo = fs.existsSync(d + '/fifo');
  try { fs.writeFileSync(d + '/index.js', 'tampered'); r.write = 'written'; } catch (e) { r.write = e.code; }
  return r;
}"""
    res = js_call(js_env, ["fixhostile@1.0.0"], code)
    r = ok(res)
    assert r["secret"] == "ENOENT", r  # the host file's path does not exist in the sandbox
    assert r["suidMode"] == 0o755 and r["fifo"] is False, r
    assert r["write"] in ("EROFS", "EACCES", "EPERM"), r
    assert isinstance(r["procRoot"], str) or "workspace" in r["procRoot"] or "node_modules" in r["procRoot"], r
    layer = os.path.join(js_env["FNBOX_CACHE_DIR"], "layers", res.result["meta"]["dependencies"]["javascript"]["layer"])
    pkg = os.path.join(layer, "fixhostile")
    assert os.stat(os.path.join(pkg, "suid.sh")).st_mode & 0o7777 == 0o755
    assert not os.path.exists(os.path.join(pkg, "fifo"))
    assert os.readlink(os.path.join(pkg, "host-secret")) == str(outside["secret"])  # kept as it was, inert
    assert outside["secret"].read_text() == "host secret 7f3a"
