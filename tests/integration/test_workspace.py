"""The function runs in its workdir (default /workspace), which starts empty: the harness and the
request never appear in the workspace or in change reports."""
import pytest

from fnboxlib import call, describe, ok, req

CODE = {
    "python": ("import os\n"
               "def f():\n"
               "    before = sorted(os.listdir('.'))\n"
               "    with open('out.txt', 'w') as fh:\n"
               "        fh.write('hello')\n"
               "    return {'cwd': os.getcwd(), 'before': before, 'tmp': sorted(os.listdir('/tmp'))}\n"),
    "javascript": ("const fs = require('fs');\n"
                   "function f() {\n"
                   "  const before = fs.readdirSync('.').sort();\n"
                   "  fs.writeFileSync('out.txt', 'hello');\n"
                   "  return { cwd: process.cwd(), before, tmp: fs.readdirSync('/tmp').sort() };\n}\n"),
    "ruby": ("def f\n"
             "  before = Dir.children('.').sort\n"
             "  File.write('out.txt', 'hello')\n"
             "  { 'cwd' => Dir.pwd, 'before' => before, 'tmp' => Dir.children('/tmp').sort }\n"
             "end\n"),
    "php": ("function f() {\n"
            "  $ls = function ($d) { $n = array_values(array_diff(scandir($d), ['.', '..'])); sort($n); return $n; };\n"
            "  $before = $ls('.');\n"
            "  file_put_contents('out.txt', 'hello');\n"
            "  return ['cwd' => getcwd(), 'before' => $before, 'tmp' => $ls('/tmp')];\n"
            "}\n"),
}


def test_workspace_starts_empty(lang):
    res = call(req(lang, CODE[lang], "f", []))
    got = ok(res)
    assert got["cwd"] == "/workspace"
    assert got["before"] == [], f"the workspace is not empty at start: {got['before']}"
    assert got["tmp"] == [], f"/tmp is not empty at start: {got['tmp']}"
    files = res.result.get("files")
    if files:
        paths = [c.get("path", "") for kind in ("created", "modified", "deleted") for c in files.get(kind, [])]
        leaked = [p for p in paths if "harness" in p or ".fnbox" in p or "request" in p]
        assert not leaked, f"harness/request files in the change report: {leaked}"
        assert any(p.endswith("out.txt") for p in paths), describe(res.result)


JS_MODULE = ("function f() {\n"
             "  return { dirname: __dirname, filename: __filename, argv1: process.argv[1], paths0: module.paths[0],\n"
             "           lib: require('./lib.js').v, resolved: require.resolve('./lib.js') };\n"
             "}\n")


@pytest.mark.parametrize("workdir", [None, "/workspace", "/work/sub"])
def test_javascript_module_and_require_follow_the_workdir(workdir):
    """The call's module, require and paths are made for its workdir: before the input comes for the usual
    one (a pooled sandbox's harness makes them while it waits), after it for any other."""
    base = workdir or "/workspace"
    extra = {"workdir": workdir} if workdir else {}
    got = ok(call(req("javascript", JS_MODULE, "f", [], files={f"{base}/lib.js": "exports.v = 7;\n"}, **extra)))
    assert got == {"dirname": base, "filename": f"{base}/user_code.js", "argv1": f"{base}/user_code.js",
                   "paths0": f"{base}/node_modules", "lib": 7, "resolved": f"{base}/lib.js"}, got
