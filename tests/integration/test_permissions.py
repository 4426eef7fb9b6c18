"""`permissions` (docs/guide/permissions-and-limits.md): env added to the minimal environment and nothing of fnbox's own,
childProcess false / list / true enforced by the kernel, network and presets decoded strictly, allowAllFs
on mounts. Every refusal is an InvalidRequest naming the field."""
import json
import os
import re
import secrets

import pytest

from fnboxlib import call, describe, failed, ok, req, run_cli

# The function returns its whole environment as an object.
ENV_DUMP = {
    "python": "import os\ndef f():\n    return dict(os.environ)\n",
    "javascript": "function f() {\n  return Object.assign({}, process.env);\n}\n",
    "ruby": "def f\n  ENV.to_h\nend\n",
    "php": "function f() {\n  return (object) getenv();\n}\n",
}

# Variables fnbox's minimal environment holds for every language (the drivers add their own few);
# MPLCONFIGDIR: matplotlib's directory, where the environment's font list is placed (core/env_caches.h);
# PYTHONDONTWRITEBYTECODE: no __pycache__ among a command's files.
BASE_KEYS = {"PATH", "HOME", "TMPDIR", "LANG", "USER", "LOGNAME", "MPLCONFIGDIR", "PYTHONDONTWRITEBYTECODE"}
# What a driver or the runtime itself may add on top (Python sets LC_CTYPE when it coerces the C locale).
RUNTIME_KEYS = {"PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "LC_CTYPE", "RUBYOPT"}


def canary_env():
    """fnbox's own environment with canaries the function must never see."""
    secret = "fnboxcanary" + secrets.token_hex(8)
    env = dict(os.environ)
    env.update({"FNBOX_TEST_SECRET": secret, "AWS_SECRET_ACCESS_KEY": secret, "FOO": secret, "LD_PRELOAD": ""})
    return env, secret


@pytest.fixture(scope="module")
def landlock():
    proc = run_cli(["doctor", "--json"])
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    check = checks.get("landlock", {})
    if not check.get("ok") or not re.match(r"ABI (\d+)", check.get("detail", "")):
        pytest.skip(f"no Landlock on this kernel: {check.get('detail')}")


# ---- env ----

def test_default_environment_is_minimal(lang):
    env, secret = canary_env()
    got = ok(call(req(lang, ENV_DUMP[lang], "f", []), env=env))
    assert BASE_KEYS <= set(got), describe(got)
    assert set(got) <= BASE_KEYS | RUNTIME_KEYS, f"unexpected variables: {set(got) - BASE_KEYS - RUNTIME_KEYS}"
    assert secret not in json.dumps(got)
    assert got["HOME"] == "/tmp" and got["PATH"] == "/usr/local/bin:/usr/bin:/bin"


def test_env_added(lang):
    env, secret = canary_env()
    variables = {"API_URL": "https://api.example.com/v1?a=b", "EMPTY": "", "UNICODE": "caf\u00e9 \u20ac",
                 "LANG": "C.UTF-8", "TZ": "UTC", "FOO": "mine"}
    got = ok(call(req(lang, ENV_DUMP[lang], "f", [], permissions={"env": variables}), env=env))
    for k, v in variables.items():
        assert got.get(k) == v, f"{k}: {describe(got)}"
    assert secret not in json.dumps(got), "fnbox's own environment reached the function"


def test_env_v02_options_shape():
    r = {"language": "python", "code": ENV_DUMP["python"], "options": {"permissions": {"env": {"X_Y": "1"}}}}
    assert ok(call(r))["X_Y"] == "1"


def test_canary_invisible_even_with_allow_all_and_children(landlock):
    """allowAll grants every domain, but fnbox's own environment still never reaches the function or the
    programs it starts (/proc/self/environ of a child included)."""
    env, secret = canary_env()
    code = ("import os, subprocess\n"
            "def f():\n"
            "    child = subprocess.run(['/usr/bin/env'], capture_output=True, text=True).stdout\n"
            "    sh = subprocess.run(['sh', '-c', 'cat /proc/self/environ; cat /proc/1/environ'],\n"
            "                        capture_output=True, text=True).stdout\n"
            "    own = open('/proc/self/environ', 'rb').read().decode('utf-8', 'replace')\n"
            "    return {'env': dict(os.environ), 'child': child, 'sh': sh, 'own': own}\n")
    got = ok(call(req("python", code, "f", [], permissions="allowAll"), env=env))
    assert "HOME=/tmp" in got["child"], describe(got)
    assert secret not in json.dumps(got), f"canary visible: {describe(got)}"


def test_reserved_key_refused_by_name():
    for key in ("LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "NODE_OPTIONS", "PYTHONPATH"):
        res = call(req("python", ENV_DUMP["python"], "f", [], permissions={"env": {key: "/x"}}))
        assert res.code == 2, describe(res.result)
        assert res.result["error"]["type"] == "InvalidRequest"
        assert res.result["error"]["message"].startswith(f"permissions.env.{key}:"), describe(res.result)
        assert "allowAllEnv" in res.result["error"]["message"]


def test_reserved_key_allowed_with_allow_all_env():
    got = ok(call(req("python", ENV_DUMP["python"], "f", [],
                      permissions={"preset": "allowAllEnv", "env": {"PATH": "/bin", "LD_LIBRARY_PATH": "/nowhere"}})))
    assert got["PATH"] == "/bin" and got["LD_LIBRARY_PATH"] == "/nowhere"


def test_env_bad_values_name_the_field():
    cases = [({"env": {"A=B": "x"}}, "permissions.env.A=B:"), ({"env": {"A": 1}}, "permissions.env.A:"),
             ({"env": True}, "permissions.env:"), ({"env": {"": "x"}}, "permissions.env:"),
             ({"env": {"A": "x\u0000y"}}, "permissions.env.A:")]
    for perm, prefix in cases:
        res = call(req("python", "def f(): pass\n", "f", [], permissions=perm))
        assert res.code == 2 and res.result["error"]["message"].startswith(prefix), describe(res.result)


def test_env_reaches_compiled_programs():
    code = "#include <stdlib.h>\nconst char *f(void) { const char *v = getenv(\"GREETING\"); return v ? v : \"unset\"; }\n"
    assert ok(call(req("c", code, "f", [], permissions={"env": {"GREETING": "hello"}}), timeout=180)) == "hello"


# ---- childProcess ----

RUN = {
    "python": ("import subprocess\n"
               "def f(argv):\n"
               "    try:\n"
               "        return subprocess.run(argv, capture_output=True, text=True).stdout\n"
               "    except OSError as e:\n"
               "        return 'DENIED:' + type(e).__name__\n"),
    "javascript": ("const cp = require('child_process');\n"
                   "function f(argv) {\n"
                   "  try { return cp.execFileSync(argv[0], argv.slice(1), {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}); }\n"
                   "  catch (e) { return 'DENIED:' + (e.code || e.name); }\n}\n"),
    "ruby": ("require 'open3'\n"
             "def f(argv)\n"
             "  out, _st = Open3.capture2(*argv)\n"
             "  out\n"
             "rescue SystemCallError => e\n"
             "  'DENIED:' + e.class.name\n"
             "end\n"),
    "php": ("function f($argv) {\n"
            "  $p = proc_open($argv, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);\n"
            "  if (!is_resource($p)) return 'DENIED:proc_open';\n"
            "  $out = stream_get_contents($pipes[1]);\n"
            "  $code = proc_close($p);\n"
            "  return $code === 0 ? $out : 'DENIED:exit ' . $code;\n}\n"),
}
SH = ["sh", "-c", "echo $((6*7))x$((6*7))"]
SH_RAN = "42x42"


def test_child_process_denied_by_default(lang, landlock):
    got = ok(call(req(lang, RUN[lang], "f", [SH])))
    assert SH_RAN not in got and got.startswith("DENIED"), got


def test_child_process_list(lang, landlock):
    perm = {"childProcess": ["sh"]}
    assert ok(call(req(lang, RUN[lang], "f", [SH], permissions=perm))).strip() == SH_RAN
    # a command not on the list stays refused, even through the listed shell
    got = ok(call(req(lang, RUN[lang], "f", [["sh", "-c", "/usr/bin/env && echo ran"]], permissions=perm)))
    assert "ran" not in got and "HOME=/tmp" not in got, got
    got = ok(call(req(lang, RUN[lang], "f", [["/usr/bin/env"]], permissions=perm)))
    assert "HOME=/tmp" not in got, got


def test_child_process_true(lang, landlock):
    assert ok(call(req(lang, RUN[lang], "f", [SH], permissions={"childProcess": True}))).strip() == SH_RAN
    assert "HOME=/tmp" in ok(call(req(lang, RUN[lang], "f", [["/usr/bin/env"]], permissions="allowAllChildProcess")))


def test_child_process_explicit_overrides_preset(landlock):
    got = ok(call(req("python", RUN["python"], "f", [SH], permissions={"preset": "allowAll", "childProcess": False})))
    assert got.startswith("DENIED"), got


def test_unknown_command_is_named():
    res = call(req("python", "def f(): pass\n", "f", [], permissions={"childProcess": ["sh", "no-such-cmd-xyz"]}))
    assert res.code == 2, describe(res.result)
    msg = res.result["error"]["message"]
    assert msg.startswith("permissions.childProcess[1]: command 'no-such-cmd-xyz' not found"), msg


def test_child_process_bad_shapes():
    for perm, prefix in [({"childProcess": "sh"}, "permissions.childProcess:"),
                         ({"childProcess": ["bin/sh"]}, "permissions.childProcess[0]:"),
                         ({"childProcess": [""]}, "permissions.childProcess[0]:")]:
        res = call(req("python", "def f(): pass\n", "f", [], permissions=perm))
        assert res.code == 2 and res.result["error"]["message"].startswith(prefix), describe(res.result)


# ---- network, fs, presets: the request side ----

def test_network_list_accepted_and_bad_patterns_named():
    perm = {"network": ["api.example.com:443", "*.example.org", "10.1.2.3:8080", "[::1]:80"]}
    assert ok(call(req("python", "def f(): return 1\n", "f", [], permissions=perm))) == 1
    for bad, why in [("*", "wildcard"), ("a.*.com", "wildcard"), ("a.com:0", "port"), ("::1", "[addr]"),
                     ("a..b", "empty label")]:
        res = call(req("python", "def f(): pass\n", "f", [], permissions={"network": ["ok.com", bad]}))
        assert res.code == 2, describe(res.result)
        msg = res.result["error"]["message"]
        assert msg.startswith("permissions.network[1]:") and why in msg, msg


def test_network_denied_by_default():
    code = ("import socket\n"
            "def f():\n"
            "    try:\n"
            "        socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
            "        return 'connected'\n"
            "    except OSError as e:\n"
            "        return 'DENIED:' + type(e).__name__\n")
    assert ok(call(req("python", code, "f", []))).startswith("DENIED")


def test_fs_switch_refused_with_the_reason():
    res = call(req("python", "def f(): pass\n", "f", [], permissions={"fs": True}))
    assert res.code == 2
    msg = res.result["error"]["message"]
    assert msg.startswith("permissions.fs:") and "mount" in msg and "allowAllFs" in msg, msg


def test_unknown_preset_and_field_named():
    for perm, prefix in [("allowEverything", "permissions:"), (["allowAllFs", "x"], "permissions[1]:"),
                         ({"preset": "nope"}, "permissions.preset:"), ({"envs": {}}, "permissions.envs:"), (5, "permissions:")]:
        res = call(req("python", "def f(): pass\n", "f", [], permissions=perm))
        assert res.code == 2 and res.result["error"]["message"].startswith(prefix), describe(res.result)


def test_permissions_given_twice_refused():
    r = {"language": "python", "code": "def f(): pass\n", "permissions": {}, "options": {"permissions": {}}}
    res = call(r)
    assert res.code == 2 and res.result["error"]["message"].startswith("permissions:"), describe(res.result)


WRITE_FILE = "def f():\n    open('/data/new.txt', 'w').write('made')\n    return 'ok'\n"


def test_allow_all_fs_makes_mounts_writable(tmp_path):
    mount = {"dirs": {"/data": str(tmp_path)}, "sync": {"mode": "batch"}}
    # default mount rights: read and list only
    res = call(req("python", WRITE_FILE, "f", [], mount=mount))
    assert res.result["status"] == "error" and res.result["error"]["type"] == "PermissionError", describe(res.result)
    assert not (tmp_path / "new.txt").exists()
    # allowAllFs: every operation, synced back
    res = call(req("python", WRITE_FILE, "f", [], mount=mount, permissions="allowAllFs"))
    assert ok(res) == "ok"
    assert (tmp_path / "new.txt").read_text() == "made"


def test_mount_permissions_override_allow_all_fs(tmp_path):
    mount = {"dirs": {"/data": str(tmp_path)}, "permissions": {"default": {"read": True, "list": True}},
             "sync": {"mode": "batch"}}
    res = call(req("python", WRITE_FILE, "f", [], mount=mount, permissions="allowAll"))
    assert failed(res)["type"] == "PermissionError", describe(res.result)
    assert not (tmp_path / "new.txt").exists()


def test_pythonpath_from_the_request_is_on_sys_path():
    """PYTHONPATH set by the request itself (a reserved name: the allowAllEnv preset) means what it means to
    python3: its directories come first on sys.path (the harness runs -I, which would ignore it)."""
    res = call(req("python", "import sys\ndef f():\n    import ppmod\n    return [ppmod.V, sys.path[:2]]",
                   files={"lib/ppmod.py": "V = 3"},
                   permissions={"preset": "allowAllEnv", "env": {"PYTHONPATH": "/workspace/lib:/nowhere"}}))
    assert ok(res) == [3, ["/workspace/lib", "/nowhere"]], describe(res)
