"""Defence: the sandbox gets a clean environment. A canary variable set in the CLI's environment is
invisible to the function (os.environ / process.env / /proc/*/environ)."""
import os
import secrets

from fnboxlib import call, ok, req

CODE = {
    "python": ("import os\n"
               "def f():\n"
               "    procs = {}\n"
               "    for p in os.listdir('/proc'):\n"
               "        if p.isdigit() or p == 'self':\n"
               "            try:\n"
               "                procs[p] = open(f'/proc/{p}/environ', 'rb').read().decode('latin-1')\n"
               "            except OSError:\n"
               "                pass\n"
               "    return {'env': dict(os.environ), 'procs': procs}\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  const procs = {};\n"
                   "  for (const p of fs.readdirSync('/proc')) {\n"
                   "    if (/^\\d+$/.test(p) || p === 'self') {\n"
                   "      try { procs[p] = fs.readFileSync(`/proc/${p}/environ`, 'latin1'); } catch (e) {}\n"
                   "    }\n"
                   "  }\n"
                   "  return { env: Object.assign({}, process.env), procs };\n}\n"),
}


def test_env_canary_invisible(lang):
    name = "FNBOX_CANARY_" + secrets.token_hex(4).upper()
    secret = "envsecret-" + secrets.token_hex(12)
    env = dict(os.environ, **{name: secret})
    res = call(req(lang, CODE[lang], "f", []), env=env)
    got = ok(res)
    assert name not in got["env"], f"{name} visible in the sandbox"
    assert not [k for k in got["env"] if k.startswith("FNBOX_CANARY")]
    assert "self" in got["procs"], "could not read /proc/self/environ inside (test cannot prove anything)"
    assert secret not in res.raw, "the canary value appears in the result"
    assert secret not in res.stderr
    # sanity: the host environment we passed really held the canary
    assert env[name] == secret
