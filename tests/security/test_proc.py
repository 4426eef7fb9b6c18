"""Defence: a PID namespace with a fresh /proc. The sandbox sees only its own processes: none of the
host's (not the test runner, not fnbox itself)."""
from fnboxlib import call, describe, ok, req

CODE = {
    "python": ("import os\n"
               "def f():\n"
               "    out = {}\n"
               "    for p in os.listdir('/proc'):\n"
               "        if p.isdigit():\n"
               "            try:\n"
               "                out[p] = open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode('latin-1')\n"
               "            except OSError:\n"
               "                out[p] = None\n"
               "    return {'self': os.getpid(), 'procs': out}\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  const out = {};\n"
                   "  for (const p of fs.readdirSync('/proc')) {\n"
                   "    if (/^\\d+$/.test(p)) {\n"
                   "      try { out[p] = fs.readFileSync(`/proc/${p}/cmdline`, 'latin1').split('\\0').join(' '); }\n"
                   "      catch (e) { out[p] = null; }\n"
                   "    }\n"
                   "  }\n"
                   "  return { self: process.pid, procs: out };\n}\n"),
}


def test_proc_shows_only_sandbox(lang):
    got = ok(call(req(lang, CODE[lang], "f", [])))
    procs = got["procs"]
    assert str(got["self"]) in procs, f"own pid {got['self']} not in /proc: {describe(got)}"
    assert len(procs) <= 4, f"too many processes visible: {procs}"
    assert got["self"] < 100, f"pid {got['self']}: not a fresh pid namespace?"
    for pid, cmd in procs.items():
        # (the sandbox's own init may be a fork of fnbox; the test runner must never be visible)
        assert cmd is None or "pytest" not in cmd, \
            f"host process visible in the sandbox: {pid}: {cmd}"
