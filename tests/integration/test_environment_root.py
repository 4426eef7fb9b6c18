"""Named environments in the sandbox (issue 30, docs/internals/environments.md): a root's system tree
(scripts/build-root.sh's Debian trixie: Python 3.13, Node 20) in place of the host's, its interpreters found
in it, and an environment's package directories on each language's own search path (python.paths on
sys.path, javascript.paths for require and import through /node_modules, ruby.paths on $LOAD_PATH,
php.paths on include_path) in calls, executes and session kernels."""
import json
import os
import subprocess

import pytest

from fnboxlib import (_environment_env, describe, env_call, env_exec, environment, ok, parse_one_result, run_cli,
                      test_root)
from servelib import TOKEN, Server, Session


@pytest.fixture(scope="module")
def trixie():
    return test_root("trixie")


def _host_version(*argv):
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


PY_VERSION = "import sys\ndef f(): return [list(sys.version_info[:2]), sys.executable]"


def test_python_of_the_root_and_of_the_host(trixie):
    res = env_call({"language": "python", "code": PY_VERSION}, environment("trixie", root=trixie))
    assert ok(res) == [[3, 13], "/usr/bin/python3"], describe(res)
    host = _host_version("/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
    res = env_call({"language": "python", "code": PY_VERSION}, environment("host"))
    assert ok(res)[0] == [int(x) for x in host.split(".")], describe(res)
    assert host != "3.13", "the host's Python is the root's: the test would prove nothing"


def test_node_of_the_root(trixie):
    code = "function f(){ return process.version }"
    res = env_call({"language": "javascript", "code": code}, environment("trixie", root=trixie))
    version = ok(res)
    assert version.startswith("v20."), describe(res)
    root_node = os.path.realpath(os.path.join(trixie, "usr", "bin", "node"))
    # the root's own binary says the same (run from the host: it is the same ELF, its libraries in the root)
    root_version = subprocess.run(["chroot", trixie, "node", "--version"], capture_output=True, text=True)
    if root_version.returncode == 0:
        assert version == root_version.stdout.strip(), (version, root_version.stdout, root_node)
    host = env_call({"language": "javascript", "code": code}, environment("host"))
    assert ok(host) == _host_version("node", "--version")


def test_harnesses_with_the_root_interpreters(trixie):
    env = environment("trixie", root=trixie)
    res = env_call({"language": "python", "code": "def f(a, b=2, **kw):\n    print('hi')\n    return [a, b, kw, 2**70]",
                    "args": [1], "kwargs": {"b": 3, "z": 4}}, env)
    assert ok(res) == [1, 3, {"z": 4}, 2**70] and res.result["stdout"] == "hi\n", describe(res)
    res = env_call({"language": "python", "code": "def f():\n    raise ValueError('boom')"}, env)
    assert res.result["error"]["type"] == "ValueError" and "user_code.py" in res.result["error"]["stack"], describe(res)
    res = env_call({"language": "javascript", "code": "function f(a, {b} = {}) { console.log('hi'); return [a, b, 2n ** 70n] }",
                    "args": [1], "kwargs": {"b": 3}}, env)
    assert ok(res) == [1, 3, 2**70] and res.result["stdout"] == "hi\n", describe(res)
    res = env_call({"language": "javascript", "code": "function f() { throw new TypeError('x') }"}, env)
    assert res.result["error"]["type"] == "TypeError", describe(res)


def test_execute_in_the_root(trixie):
    env = environment("trixie", root=trixie)
    res = env_exec({"language": "python", "code": "import sys; print(sys.version_info[:2])"}, env)
    assert res.result["stdout"] == "(3, 13)\n", describe(res)
    res = env_exec({"language": "javascript", "code": "console.log(process.version.split('.')[0])"}, env)
    assert res.result["stdout"] == "v20\n", describe(res)
    res = env_exec({"command": ". /usr/lib/os-release; echo $VERSION_ID"}, env)
    assert res.result["stdout"] == "13\n", describe(res)  # the root's /usr, not the host's (12)


def test_languages_the_root_lacks(trixie):
    env = environment("trixie", root=trixie)
    proc = run_cli(["call", "-"], input=json.dumps({"language": "ruby", "code": "def f; 1; end", "environment": "trixie"}),
                   env=_environment_env(env))
    result, _ = parse_one_result(proc.stdout)
    err = result["error"]
    assert "Language interpreter not found in environment trixie" in err["message"], result
    assert err["type"] == "KernelFeatureMissing", result  # the host's missing-runtime type
    proc = run_cli(["exec", "-"], input=json.dumps({"language": "ruby", "code": "p 1", "environment": "trixie"}), env=_environment_env(env))
    result, _ = parse_one_result(proc.stdout)
    assert result["exitCode"] == 127, result
    assert result["stderr"] == "Language interpreter not found in environment trixie: ruby\n", result


# ---- language paths ----

@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """Package directories as an operator would have them: two Python site-packages dirs (the first wins a
    name both have; one has a .pth line), two node_modules (a CommonJS and an ES module package), a Ruby
    lib and a PHP include dir."""
    base = tmp_path_factory.mktemp("pkgs")
    files = {
        "sp1/fixpkg/__init__.py": "VALUE = 42\nWHERE = 'sp1'\n",
        "sp1/fix.pth": "# a path line\nsub\n",
        "sp1/sub/fixextra.py": "EXTRA = 'from the .pth line'\n",
        "sp2/fixpkg/__init__.py": "VALUE = -1\nWHERE = 'sp2'\n",
        "sp2/fixother.py": "OTHER = 7\n",
        "nm1/fixcjs/package.json": json.dumps({"name": "fixcjs", "version": "1.0.0", "main": "index.js"}),
        "nm1/fixcjs/index.js": "module.exports = { v: 7 };\n",
        "nm2/fixesm/package.json": json.dumps({"name": "fixesm", "version": "1.0.0", "type": "module",
                                               "exports": "./index.js"}),
        "nm2/fixesm/index.js": "export const v = 8;\nexport default { w: 9 };\n",
        "rb/fixrb.rb": "module FixRb\n  V = 5\nend\n",
        "php/fixphp.php": "<?php\nfunction fixphp() { return 6; }\n",
    }
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for d in (base.parent.parent, base.parent):
        os.chmod(d, 0o755)
    for dirpath, dirs, names in os.walk(base):
        os.chmod(dirpath, 0o755)
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)
    return {"python": [str(base / "sp1"), str(base / "sp2")], "javascript": [str(base / "nm1"), str(base / "nm2")],
            "ruby": [str(base / "rb")], "php": [str(base / "php")]}


PY_PATHS = ("import fixpkg, fixextra, fixother\n"
            "def f(): return [fixpkg.VALUE, fixpkg.WHERE, fixextra.EXTRA, fixother.OTHER]")
PY_EXPECT = [42, "sp1", "from the .pth line", 7]
JS_PATHS = ("async function f() { const m = await import('fixesm'); "
            "return [require('fixcjs').v, m.v, m.default.w] }")
JS_EXPECT = [7, 8, 9]


@pytest.mark.parametrize("where", ["trixie", "host"])
def test_python_and_javascript_paths_in_calls_and_executes(where, trixie, packages):
    env = environment(where, root=trixie if where == "trixie" else None, python=packages["python"],
                      javascript=packages["javascript"])
    assert ok(env_call({"language": "python", "code": PY_PATHS}, env)) == PY_EXPECT
    assert ok(env_call({"language": "javascript", "code": JS_PATHS}, env)) == JS_EXPECT
    res = env_exec({"language": "python", "code": "import fixpkg, fixother; print(fixpkg.WHERE, fixother.OTHER)"}, env)
    assert res.result["stdout"] == "sp1 7\n", describe(res)
    res = env_exec({"language": "javascript",
                    "code": "import('fixesm').then(m => console.log(require('fixcjs').v, m.v))"}, env)
    assert res.result["stdout"] == "7 8\n", describe(res)
    # read-only, and no file of the function's
    res = env_call({"language": "python", "code": "import fixpkg\ndef f():\n    try:\n        open(fixpkg.__file__, 'a')\n"
                    "    except OSError as e:\n        return e.errno"}, env)
    assert ok(res) == 30, describe(res)  # EROFS
    assert res.result["files"]["created"] == [], describe(res)


def test_ruby_and_php_paths(packages):
    env = environment("host", ruby=packages["ruby"], php=packages["php"])
    assert ok(env_call({"language": "ruby", "code": "require 'fixrb'\ndef f; FixRb::V; end"}, env)) == 5
    assert ok(env_call({"language": "php", "code": "require_once 'fixphp.php';\nfunction f() { return fixphp(); }"},
                       env)) == 6
    res = env_exec({"language": "ruby", "code": "require 'fixrb'; p FixRb::V"}, env)
    assert res.result["stdout"] == "5\n", describe(res)
    res = env_exec({"language": "php", "code": "<?php require_once 'fixphp.php'; echo fixphp();"}, env)
    assert res.result["stdout"] == "6", describe(res)


def test_without_the_environment_nothing_is_there(packages):
    res = env_call({"language": "python", "code": PY_PATHS}, environment("host"))
    assert res.result["error"]["type"] == "ModuleNotFoundError", describe(res)


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(f"{TOKEN}\n")
    path.chmod(0o600)
    return str(path)


@pytest.mark.parametrize("where", ["trixie", "host"])
def test_kernels(where, trixie, packages, token_file):
    env = environment(where, root=trixie if where == "trixie" else None, python=packages["python"],
                      javascript=packages["javascript"], ruby=packages["ruby"], php=packages["php"])
    with Server("--token-file", token_file, env=_environment_env(env)) as srv:
        s = Session(srv, {"environment": where})
        try:
            res = s.kernel("import sys, fixpkg, fixextra\n[list(sys.version_info[:2]), fixpkg.WHERE, fixextra.EXTRA]")
            assert res["status"] == "success" and res["result"], res
            version = res["result"][0]
            assert (version == [3, 13]) == (where == "trixie"), res
            assert res["result"][1:] == ["sp1", "from the .pth line"], res
            # a cell's promise is awaited for its value (a cell with a top-level await has none)
            res = s.kernel("import('fixesm').then(m => [process.version.split('.')[0], require('fixcjs').v, m.v])",
                           "javascript")
            assert res["status"] == "success" and res["result"] and res["result"][1:] == [7, 8], res
            if where == "trixie":
                assert res["result"][0] == "v20", res
                r = s.req("POST", "/kernels/ruby/execute", {"code": "1"})
                assert r.status == 400 and r.json()["error"]["type"] == "InvalidRequest", r
                assert "Language interpreter not found in environment trixie" in r.json()["error"]["message"], r
            else:
                res = s.kernel("require 'fixrb'\nFixRb::V", "ruby")
                assert res["status"] == "success" and res["result"] == 5, res
                res = s.kernel("require_once 'fixphp.php';\nreturn fixphp();", "php")
                assert res["status"] == "success" and res["result"] == 6, res
        finally:
            s.close()
