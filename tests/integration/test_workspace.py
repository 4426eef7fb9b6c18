"""The function runs in its workdir (default /workspace), which starts empty: the harness and the
request never appear in the workspace or in change reports."""
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
