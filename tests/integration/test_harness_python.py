"""The Python harness (src/harness/python_harness.py) on every Python 3 this machine has, outside the sandbox.

Inside the sandbox only Debian's /usr/bin/python3 exists, so this runs the harness file directly under each
interpreter found (/usr/bin/python3.X, /usr/local/bin/python3.X, pyenv's versions), speaking its protocol
(docs/internals/harness-protocol.md): the call input on fd 4 (a pipe), the result on fd 3 (a file), stdin
/dev/null. Each interpreter runs every case three ways:

- `fast`: as fnbox starts it, `python3 -I -S harness.py`: CPython's private `_json` accelerator;
- `no _json`: `_json` cannot be imported (None in sys.modules), as on an implementation without it: the
  harness must fall back on the json package's public API;
- `_json without make_scanner`: an `_json` lacking the scanner (the json package then mixes C and Python
  parts): the harness must fall back as well.

Two more modes start it as fnbox does when the build compiled the harness (src/harness/python_loader.py as
the script, reading harness.pyc and harness_source.py from a directory of the test's instead of /.fnbox):

- `bytecode`: the build's harness.pyc (build/gen/python_harness.bin): run by an interpreter of the builder's
  bytecode version, compiled from the source by any other;
- `another version's bytecode`: its magic number changed: every interpreter must compile the source.

The fallback is forced from outside (a `-c` wrapper that sets sys.modules, then runs the harness file as
__main__ with runpy), so the harness has no test-only switch. Every case checks the result against the value
the protocol promises, and every fallback run must write the very bytes the fast run wrote.

The harness needs Python 3.8 or newer (body mode compiles top-level `await` and builds AST nodes with end
positions); older interpreters found are skipped with that reason."""
import glob
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from fnboxlib import FNBOX

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "harness",
                       "python_harness.py")
LOADER = os.path.join(os.path.dirname(HARNESS), "python_loader.py")
BYTECODE = os.path.join(os.path.dirname(FNBOX), "gen", "python_harness.bin")
MIN_VERSION = (3, 8)
MIN_REASON = "the harness needs Python 3.8+ (body mode: top-level await, AST end positions)"

RUNPY = "import runpy, sys; {setup}; runpy.run_path(sys.argv[1], run_name='__main__')"
MODES = {
    "fast": [],
    "no _json": ["-c", RUNPY.format(setup="sys.modules['_json'] = None")],
    "_json without make_scanner": ["-c", RUNPY.format(setup=(
        "import _json, types; m = types.ModuleType('_json'); "
        "m.__dict__.update({k: v for k, v in vars(_json).items() if k != 'make_scanner'}); "
        "sys.modules['_json'] = m"))],
    "bytecode": None,                    # script_argv(): the directory is the test's
    "another version's bytecode": None,
}


def loader_script(where, magic=None, source=None):
    """fnbox's harness files in `where` instead of /.fnbox (as a session run has them in its own directory): the
    loader as harness.py, the build's harness.pyc (its magic replaced by `magic` if given) and
    harness_source.py (the harness, or `source`). Returns the script's path."""
    os.makedirs(where, exist_ok=True)
    with open(BYTECODE, "rb") as f:
        pyc = f.read()
    if source is None:
        with open(HARNESS, "rb") as f:
            source = f.read()
    with open(LOADER, "rb") as f:
        loader = f.read()
    files = {"harness.pyc": pyc if magic is None else magic + pyc[4:], "harness_source.py": source,
             "harness.py": loader}
    for name, data in files.items():
        with open(os.path.join(where, name), "wb") as f:
            f.write(data)
    return os.path.join(where, "harness.py")


def script_argv(mode, where):
    """What follows `python -I -S` in `mode`."""
    if mode == "bytecode":
        return [loader_script(where)]
    if mode == "another version's bytecode":
        return [loader_script(where, magic=b"\x00\x00\r\n")]
    return [*MODES[mode], HARNESS]


def interpreters():
    """[(version, path)] of every distinct CPython 3 found, oldest first."""
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = {}
    for pattern in ("/usr/bin/python3.*", "/usr/local/bin/python3.*", os.path.join(pyenv, "versions", "3.*",
                                                                                     "bin", "python3")):
        for path in sorted(glob.glob(pattern)):
            m = re.search(r"(?:python|versions/)3\.(\d+)(?:\.\d+)?(?:/bin/python3)?$", path)
            if not m or not os.access(path, os.X_OK):
                continue                     # python3.11-config and the like
            found.setdefault(os.path.realpath(path), ((3, int(m.group(1))), path))
    return sorted(found.values())


INTERPRETERS = interpreters()


# ---- the cases: (name, input text, check(header, body, exit status)) ----

def nested(depth):
    """A document `depth` containers deep, lists and objects alternating, as compact JSON text."""
    return '{"k":[' * (depth // 2) + '"end"' + ']}' * (depth // 2)


BIG = "1" + "0" * 5000                    # 10**5000: past CPython's 4300-digit limit for int(str)


def request(code, name="f", args=(), kwargs=None, args_text=None):
    text = json.dumps({"code": code, "functionName": name, "args": list(args), "kwargs": kwargs or {},
                       "workdir": "/tmp"})
    if args_text is not None:           # arguments JSON cannot dump (too big, too deep)
        text = text.replace('"args": []', '"args": ' + args_text)
    return text.encode()


CONVERSIONS = '''
import dataclasses, datetime, decimal

@dataclasses.dataclass
class P:
    x: int
    y: str = "\u00e9"

class J:
    def to_json(self):
        return '{"from": "to_json", "n": [1, 2.5]}'

def f():
    return {"nan": float("nan"), "inf": [float("inf"), float("-inf")], "dec": decimal.Decimal("1.10"),
            "bytes": b"\\x00\\xff", "set": {3}, "tuple": (1, 2), "date": datetime.date(2024, 2, 29),
            "dc": P(1), "keys": {2: "a", False: "b", None: "c", 2.5: "d"}, "gen": (i * i for i in range(3)),
            "json": J(), "big": 10 ** 4400, "surrogate": "\\ud800x"}
'''
CONVERTED = ('{"nan":null,"inf":[null,null],"dec":1.10,"bytes":{"base64":"AP8="},"set":[3],"tuple":[1,2],'
             '"date":"2024-02-29","dc":{"x":1,"y":"\u00e9"},"keys":{"2":"a","false":"b","null":"c","2.5":"d"},'
             '"gen":[0,1,4],"json":{"from":"to_json","n":[1,2.5]},"big":1' + "0" * 4400 + ','
             '"surrogate":"\\ud800x"}')


def success(body_text):
    def check(header, body, status):
        assert (header, status) == ({"ok": True}, 0)
        assert body == body_text.encode("utf-8")
    return check


def failure(etype, message, exit_code=1, stack=None):
    def check(header, body, status):
        assert header["ok"] is False and body == b""
        err = header["error"]
        assert (err["type"], err["message"], header["exitCode"], status) == (etype, message, exit_code, exit_code)
        if stack is not None:
            assert stack in err["stack"], err["stack"]
    return check


def invalid_input(header, body, status):
    assert (header["error"]["type"], header["exitCode"], status) == ("HarnessError", 1, 1)
    assert header["error"]["message"].startswith("cannot read the call input on fd 4: "), header


# Which modes a case runs in: every case in the fast mode; the ones that parse or write JSON in the fallback
# modes too (the scanner-only mode: the input side). The invalid input's message is the json package's in
# the fallback, so only its type is compared there.
ALL, OUT, IN = set(MODES), {"fast", "no _json"}, {"fast", "no _json", "_json without make_scanner"}
FAST = {"fast"}

CASES = [
    ("native values", request("def f(a, b=2, *, c):\n    return [a, b, c, '\u00e9\U0001F600\\x00', 1.5, None, True, "
                              "{'k': [1, 2]}]\n", args=[1], kwargs={"c": "x"}),
     success('[1,2,"x","\u00e9\U0001F600\\u0000",1.5,null,true,{"k":[1,2]}]'), ALL),
    ("big integers in and out", request("def f(n):\n    return [n + 1, n.bit_length()]\n", args_text="[" + BIG + "]"),
     success("[1" + "0" * 4999 + "1,%d]" % (10 ** 5000).bit_length()), ALL),
    ("3000 levels in and out", request("def f(x):\n    return x\n", args_text="[" + nested(3000) + "]"),
     success(nested(3000)), ALL),
    ("conversions", request(CONVERSIONS), success(CONVERTED), OUT),
    ("async function", request("async def f(a):\n    return a * 2\n", args=[21]), success("42"), FAST),
    ("body mode, top-level await", request("import asyncio\nx = await asyncio.sleep(0, result=41)\nx + 1\n", name=None),
     success("42"), FAST),
    ("exception, non-ASCII message", request("def f():\n    raise ValueError('\u00fcn\u00efcode \u2603')\n"),
     failure("ValueError", "\u00fcn\u00efcode \u2603", stack='File "user_code.py", line 2, in f'), OUT),
    ("cycle", request("def f():\n    a = []\n    a.append(a)\n    return a\n"),
     failure("SerializationError", "circular reference in the result"), OUT),
    ("sys.exit", request("import sys\ndef f():\n    sys.exit(3)\n"), failure("SystemExit", "exit code 3", 3), FAST),
    ("invalid input", b'{"code": "def f(): pass", "args": [1,', invalid_input, IN),
]


def run_harness(python, mode, payload, out_path):
    """(raw fd 3 bytes, exit status, stderr) of one harness run; the input arrives on fd 4 through a pipe."""
    argv = [python, "-I", "-S", *script_argv(mode, out_path + ".d")]
    shell = 'out=$1; shift; exec "$@" 3>"$out" 4<&0 0</dev/null'
    proc = subprocess.run(["/bin/sh", "-c", shell, "sh", out_path, *argv], input=payload, capture_output=True,
                          timeout=60, cwd="/tmp", env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"})
    with open(out_path, "rb") as f:
        return f.read(), proc.returncode, proc.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("version, python", INTERPRETERS, ids=[p for _, p in INTERPRETERS])
def test_harness_on_every_python(version, python, tmp_path):
    if version < MIN_VERSION:
        pytest.skip(f"Python {version[0]}.{version[1]}: {MIN_REASON}")
    jobs = [(mode, i) for mode in MODES for i, case in enumerate(CASES) if mode in case[3]]
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = dict(zip(jobs, pool.map(lambda j: run_harness(python, j[0], CASES[j[1]][1],
                                                             str(tmp_path / f"{j[1]}-{list(MODES).index(j[0])}")),
                                       jobs)))
    problems = []
    for (mode, i), (raw, status, stderr) in runs.items():
        name, _, check, _ = CASES[i]
        what = f"{python} [{mode}] {name}"
        head, _, body = raw.partition(b"\n")
        try:
            assert head.isascii(), "the header line is not ASCII"
            check(json.loads(head), body, status)
            fast = runs[("fast", i)]
            if check is not invalid_input:
                assert (raw, status) == fast[:2], f"differs from the fast path's {fast[:2]!r:.300}"
        except (AssertionError, ValueError, KeyError) as e:
            problems.append(f"{what}: {e!s:.600}\n  fd 3: {raw[:300]!r}\n  exit {status}, stderr: {stderr[-600:]}")
    assert not problems, "\n".join(problems)


def test_some_python_is_found():
    """The discovery above finds at least the interpreter fnbox runs in the sandbox (Debian's python3.X)."""
    assert any(os.path.realpath(p) == os.path.realpath("/usr/bin/python3") for _, p in INTERPRETERS), INTERPRETERS


def test_the_loader_runs_the_builds_bytecode_only_on_its_own_version(tmp_path):
    """With the harness's source replaced by a program that fails, the call still succeeds from the bytecode
    (the build compiled it with /usr/bin/python3, as `make` does); with the magic changed, the loader
    compiles that source and fails with it."""
    assert os.path.getsize(BYTECODE) > 0, f"{BYTECODE} is empty: the build found no /usr/bin/python3"
    broken = b"raise SystemExit('the source was compiled')\n"
    payload = request("def f(a):\n    return a + 1\n", args=[41])
    for name, magic, want in (("same", None, (b'{"ok":true}\n42', 0)),
                              ("other", b"\x00\x00\r\n", (b"", 1))):
        where, out = str(tmp_path / name), str(tmp_path / f"{name}.out")
        argv = ["/usr/bin/python3", "-I", "-S", loader_script(where, magic, broken)]
        shell = 'out=$1; shift; exec "$@" 3>"$out" 4<&0 0</dev/null'
        proc = subprocess.run(["/bin/sh", "-c", shell, "sh", out, *argv], input=payload, capture_output=True,
                              timeout=60, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
        with open(out, "rb") as f:
            got = (f.read(), proc.returncode)
        assert got == want, (name, got, proc.stderr[-500:])
        if magic is not None:
            assert b"the source was compiled" in proc.stderr
