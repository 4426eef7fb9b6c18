"""Named environments (issue 30): the operator's file (`--environments FILE`, FNBOX_ENVIRONMENTS) on every
verb that runs something, and a request's, a session's and an MCP configuration's `"environment": NAME`.

- A bad file (unknown key, relative or missing path, a file where a directory belongs, an index that is not
  an http(s) URL, a bad name, malformed JSON) stops `call`, `exec`, `serve`, `mcp` and `doctor` with exit 2
  and a message naming the field, from the option and from FNBOX_ENVIRONMENTS alike.
- An unknown name is InvalidRequest naming `environment` and listing the known ones (or saying none is
  configured), in `fnbox call`, `fnbox exec`, /v1/call, /v1/execute, /v1/sessions, the MCP configuration
  and Piston; a name the file has runs; without one, the host's (today's behaviour).
- `GET /v1/health`, `fnbox doctor` and Piston's runtimes list each environment's languages with their
  versions: an environment with only `python.paths` (no root) has the host's; one with the tests' trixie
  root (scripts/build-root.sh, the envroot work) has the root's own, read from its files.
- Warm pools per environment: `--warm python@NAME=1` builds a pool in NAME that only NAME's calls take.
What an environment does inside the sandbox (its root's system tree, the paths on the search path) is
tests/integration/test_environment_root.py's."""
import glob
import json
import os

import pytest

import fnboxlib
from fnboxlib import call, ok, req, run_cli, skip_unless_ci
from mcplib import Stdio
from servelib import Server, error_of, wait_for


def write(path, doc):
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


@pytest.fixture
def envs(tmp_path):
    """An environments file of three that need no root: `plain` (nothing: the host's), `datasci` (only
    python.paths) and `web` (indexes only)."""
    sp = tmp_path / "site-packages"
    sp.mkdir()
    return write(tmp_path / "envs.json", {"environments": {
        "plain": {},
        "datasci": {"python": {"paths": [str(sp)]}},
        "web": {"indexes": {"python": "http://127.0.0.1:9/simple", "npm": "https://registry.example/"}},
    }})


# ---- a bad file stops every verb, naming the field ----

BAD_FILES = [
    ("unknown key", {"environments": {"web": {"indexs": {}}}}, "environments.web.indexs: unknown key"),
    ("relative root", {"environments": {"py": {"root": "srv/rootfs"}}},
     'environments.py.root: must be an absolute path, got "srv/rootfs"'),
    ("missing root", {"environments": {"py": {"root": "/nonexistent/fnbox-root"}}},
     "environments.py.root: No such file or directory: /nonexistent/fnbox-root"),
    ("root is a file", {"environments": {"py": {"root": "/etc/hostname"}}},
     "environments.py.root: not a directory: /etc/hostname"),
    ("relative path", {"environments": {"ds": {"python": {"paths": ["venv/lib"]}}}},
     "environments.ds.python.paths[0]: must be an absolute path"),
    ("index not a URL", {"environments": {"web": {"indexes": {"npm": "npm.internal"}}}},
     "environments.web.indexes.npm: must be an http(s) URL"),
    ("bad name", {"environments": {"no spaces": {}}}, "environments.no spaces: a name is 1 to 64"),
    ("top-level key", {"environment": {}}, "environment: unknown key (expected environments)"),
    ("wrong type", {"environments": {"py": {"root": 3}}}, "environments.py.root: must be a string"),
    ("malformed", "{\"environments\": {", "environments: malformed JSON"),
]


@pytest.mark.parametrize("label,doc,message", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_file_stops_call_and_exec(tmp_path, label, doc, message):
    path = write(tmp_path / "bad.json", doc)
    for verb, request in (("call", req("python", "def f(): return 1")), ("exec", {"command": "true"})):
        p = run_cli([verb, "--environments", path, "-"], input=json.dumps(request))
        assert p.returncode == 2, (verb, p)
        stderr = p.stderr.decode()
        assert message in stderr and f"--environments {path}" in stderr, (verb, stderr)
        result = json.loads(p.stdout)  # still one result, as for any request that cannot run
        assert result["error"]["type"] == "InvalidRequest" and message in result["error"]["message"], result


@pytest.mark.parametrize("label,doc,message", BAD_FILES[:4], ids=[b[0] for b in BAD_FILES[:4]])
def test_bad_file_stops_serve_mcp_and_doctor(tmp_path, label, doc, message):
    path = write(tmp_path / "bad.json", doc)
    for argv in (["serve", "--listen", "127.0.0.1:0", "--warm", "none", "--environments", path],
                 ["mcp", "--warm", "none", f"--environments={path}"], ["doctor", "--environments", path]):
        p = run_cli(argv, input=b"", timeout=30)
        assert p.returncode == 2, (argv, p)
        assert message in p.stderr.decode(), (argv, p.stderr)


def test_bad_file_from_the_environment_variable(tmp_path):
    path = write(tmp_path / "bad.json", BAD_FILES[0][1])
    env = {**os.environ, "FNBOX_ENVIRONMENTS": path}
    for argv in (["call", "-"], ["serve", "--listen", "127.0.0.1:0", "--warm", "none"], ["mcp", "--warm", "none"]):
        p = run_cli(argv, input=json.dumps(req("python", "def f(): return 1")), env=env, timeout=30)
        assert p.returncode == 2, (argv, p)
        assert f"FNBOX_ENVIRONMENTS {path}: {BAD_FILES[0][2]}" in p.stderr.decode(), (argv, p.stderr)


def test_missing_file(tmp_path):
    p = run_cli(["call", "--environments", str(tmp_path / "absent.json"), "-"],
                input=json.dumps(req("python", "def f(): return 1")))
    assert p.returncode == 2 and "absent.json: No such file or directory" in p.stderr.decode(), p


# ---- `environment` in the CLI ----

def test_call_and_exec_choose_an_environment(envs):
    assert ok(call(req("python", "def f(): return 6 * 7", environment="plain"),
                   argv=("call", "--environments", envs, "-"))) == 42
    assert ok(call(req("python", "def f(): return 1", options={"environment": "web"}),
                   argv=("call", "--environments", envs, "-"))) == 1
    res, code, _ = call({"command": "echo hi", "environment": "plain"}, argv=("exec", "--environments", envs, "-"))
    assert code == 0 and res["stdout"] == "hi\n", res
    # through FNBOX_ENVIRONMENTS, and null as absent
    assert ok(call(req("python", "def f(): return 2", environment=None),
                   env={**os.environ, "FNBOX_ENVIRONMENTS": envs})) == 2


def test_unknown_name_lists_the_known_ones(envs):
    want = 'environment: unknown environment "gpu" (known: plain, datasci, web)'
    for argv, request in ((("call", "--environments", envs, "-"), req("python", "def f(): return 1", environment="gpu")),
                          (("exec", "--environments", envs, "-"), {"command": "true", "environment": "gpu"})):
        res, code, _ = call(request, argv=argv)
        assert code == 2 and res["error"]["type"] == "InvalidRequest", res
        assert res["error"]["message"] == want, res
    res, code, _ = call(req("python", "def f(): return 1", options={"environment": "gpu"}),
                        argv=("call", "--environments", envs, "-"))
    assert code == 2 and res["error"]["message"].startswith('options.environment: unknown environment "gpu"'), res


def test_unknown_name_without_a_file():
    for argv, request in ((("call", "-"), req("python", "def f(): return 1", environment="py313")),
                          (("exec", "-"), {"command": "true", "environment": "py313"})):
        res, code, _ = call(request, argv=argv, env={k: v for k, v in os.environ.items() if k != "FNBOX_ENVIRONMENTS"})
        assert code == 2, res
        assert res["error"]["message"] == (
            'environment: unknown environment "py313" (none configured: fnbox serve --environments FILE)'), res


def test_environment_must_be_a_string(envs):
    res, code, _ = call(req("python", "def f(): return 1", environment=["plain"]), argv=("call", "--environments", envs, "-"))
    assert code == 2 and res["error"]["message"].startswith("environment: must be the name of an environment"), res


# ---- listings: doctor, health ----

def test_doctor_lists_each_environment(envs):
    p = run_cli(["doctor", "--json", "--environments", envs])
    assert p.returncode in (0, 1), p
    listed = {e["name"]: e for e in json.loads(p.stdout)["environments"]}
    assert list(listed) == ["plain", "datasci", "web"]
    ds = listed["datasci"]
    assert ds["root"] is None and ds["paths"]["python"][0].endswith("/site-packages"), ds
    langs = {l["name"]: l["version"] for l in ds["languages"]}
    host = {l["name"]: l["version"] for l in json.loads(run_cli(["doctor", "--json"]).stdout).get("environments", [])}
    assert host == {}, "without a file, no environment is listed"
    assert langs["python"].startswith("3."), ds  # the host's python, as `python3 --version` says
    text = run_cli(["doctor", "--environments", envs]).stdout.decode()
    assert "env      datasci          the host's: python 3." in text, text


def test_health_lists_each_environment(envs):
    with Server("--environments", envs) as srv:
        r = srv.request("GET", "/v1/health")
        assert r.status == 200, r
        envs_listed = r.json()["environments"]
        assert [e["name"] for e in envs_listed] == ["plain", "datasci", "web"], envs_listed
        py = [l for l in envs_listed[1]["languages"] if l["name"] == "python"]
        assert py and py[0]["version"].startswith("3."), envs_listed
        assert "paths" not in envs_listed[1], "the health check does not tell host paths"
    with Server() as srv:
        assert srv.request("GET", "/v1/health").json()["environments"] == []
        host_runtimes = srv.request("GET", "/api/v2/runtimes").json()
    with Server("--environments", envs) as srv:
        # environments without a root have the host's versions: Piston lists each runtime once
        assert srv.request("GET", "/api/v2/runtimes").json() == host_runtimes


# ---- the server: /v1/call, /v1/execute, /v1/sessions ----

@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("envs")
    path = write(d / "envs.json", {"environments": {"plain": {}, "other": {}}})
    with Server("--environments", path) as srv:
        yield srv


def test_server_unknown_name(served):
    want = 'environment: unknown environment "gpu" (known: plain, other)'
    for path, body in (("/v1/call", req("python", "def f(): return 1", environment="gpu")),
                       ("/v1/execute", {"command": "true", "environment": "gpu"}),
                       ("/v1/sessions", {"environment": "gpu"})):
        r = served.request("POST", path, body=body)
        assert error_of(r, 400, "InvalidRequest") == want, (path, r)


def test_server_known_name(served):
    r = served.request("POST", "/v1/call", body=req("python", "def f(): return 5", environment="plain"))
    assert r.status == 200 and r.json()["result"] == 5, r
    r = served.request("POST", "/v1/execute", body={"command": "echo ok", "environment": "other"})
    assert r.status == 200 and r.json()["stdout"] == "ok\n", r


def test_session_environment_is_its_own(served):
    r = served.request("POST", "/v1/sessions", body={"environment": "plain"})
    assert r.status == 201, r
    base = f"/v1/sessions/{r.json()['id']}"
    try:
        r = served.request("POST", base + "/commands", body={"command": "echo in"})
        assert r.status == 200 and r.json()["stdout"] == "in\n", r
        r = served.request("POST", base + "/kernels/python/execute", body={"code": "6 * 7"})
        assert r.status == 200 and r.json()["result"] == 42, r
        # a command or call cannot pick another: the session's sandbox is built in its own
        r = served.request("POST", base + "/call", body=req("python", "def f(): return 1", environment="other"))
        assert "environment: the session's own" in error_of(r, 400, "InvalidRequest"), r
    finally:
        served.request("DELETE", base)


# ---- MCP: the configuration's session.environment ----

def test_mcp_configuration_environment(tmp_path, envs):
    bad = write(tmp_path / "bad.json", {"session": {"environment": "gpu"}})
    p = run_cli(["mcp", "--warm", "none", "--config", bad, "--environments", envs], input=b"", timeout=30)
    assert p.returncode == 2, p
    assert 'session.environment: unknown environment "gpu" (known: plain, datasci, web)' in p.stderr.decode(), p
    p = run_cli(["mcp", "--warm", "none", "--config", bad], input=b"", timeout=30)
    assert p.returncode == 2 and "none configured" in p.stderr.decode(), p
    good = write(tmp_path / "good.json", {"session": {"environment": "plain"}})
    mcp = Stdio("--config", good, "--environments", envs)
    try:
        for i, (tool, args) in enumerate((("run_code", {"language": "python", "code": "print(6 * 7)"}),
                                          ("call_function", {"language": "python", "code": "def f(): return 42"}),
                                          ("exec_command", {"command": "echo 42"}))):
            m = mcp.request("tools/call", {"name": tool, "arguments": args}, 10 + i)
            assert not m["result"].get("isError"), m
            assert "42" in json.dumps(m["result"]["structuredContent"]), m
    finally:
        mcp.close()


def test_serve_mcp_configuration_environment(tmp_path, envs):
    bad = write(tmp_path / "bad.json", {"session": {"environment": "gpu"}})
    p = run_cli(["serve", "--listen", "127.0.0.1:0", "--warm", "none", "--mcp-config", bad, "--environments", envs],
                timeout=30)
    assert p.returncode == 2 and 'session.environment: unknown environment "gpu"' in p.stderr.decode(), p


# ---- warm pools per environment ----

def test_warm_pool_per_environment(envs):
    p = run_cli(["serve", "--listen", "127.0.0.1:0", "--warm", "python@gpu=1", "--environments", envs], timeout=30)
    assert p.returncode == 2 and 'warm.python@gpu: unknown environment "gpu"' in p.stderr.decode(), p
    with Server("--warm", "python@plain=1", "--environments", envs) as srv:
        def warm():
            return srv.request("GET", "/v1/health").json().get("warm", {})
        wait_for(lambda: warm().get("python@plain", {}).get("idle") == 1, timeout=60, what="the pool filled")
        assert "python" not in warm(), "only the environment's pool"
        r = srv.request("POST", "/v1/call", body=req("python", "def f(): return 1"))
        assert r.status == 200 and not r.json()["meta"].get("warm"), "the host's call does not take it"
        r = srv.request("POST", "/v1/call", body=req("python", "def f(): return 2", environment="plain"))
        assert r.status == 200 and r.json()["result"] == 2 and r.json()["meta"].get("warm") is True, r
        assert warm()["python@plain"]["served"] == 1, warm()


# ---- a real root: the versions found in it (scripts/build-root.sh, the envroot work) ----

def trixie_root():
    helper = getattr(fnboxlib, "test_root", None)
    if helper:
        return helper("trixie")
    found = sorted(glob.glob(os.path.join(os.environ.get("FNBOX_TEST_ROOTS", "/var/cache/fnbox-test/roots"),
                                          "trixie-*", "usr", "bin", "python3")))
    if not found:
        skip_unless_ci("no trixie test root (scripts/build-root.sh trixie)")
    return os.path.dirname(os.path.dirname(os.path.dirname(found[-1])))


def test_root_versions_are_listed_and_picked(tmp_path):
    root = trixie_root()
    path = write(tmp_path / "envs.json", {"environments": {"py313": {"root": root}}})
    p = run_cli(["doctor", "--json", "--environments", path])
    langs = {l["name"]: l["version"] for l in json.loads(p.stdout)["environments"][0]["languages"]}
    assert langs["python"].startswith("3.13."), langs  # trixie's python3.13, read from the root's files
    assert "javascript" in langs and "ruby" not in langs, langs
    with Server("--environments", path) as srv:
        health = srv.request("GET", "/v1/health").json()
        assert health["environments"][0]["languages"][0] == {"name": "python", "version": langs["python"]}, health
        runtimes = srv.request("GET", "/api/v2/runtimes").json()
        pythons = [r["version"] for r in runtimes if r["language"] == "python"]
        assert langs["python"] in pythons and len(pythons) == 2, runtimes  # the host's and the root's
        r = srv.request("POST", "/api/v2/execute", body={"language": "python", "version": "3.13", "files": [
            {"content": "import sys; print('%d.%d' % sys.version_info[:2])"}]})
        assert r.status == 200 and r.json()["run"]["stdout"] == "3.13\n", r
        assert r.json()["version"] == langs["python"], r
