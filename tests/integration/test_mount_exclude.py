"""`mount.permissions.exclude` hides, as the seed's loader does: excluded names (at any depth, files and
directories, by name or by path pattern) are not loaded. Inside the sandbox they do not exist: stat, lstat,
open and access answer ENOENT, listings and recursive walks (os.walk, glob, fs.readdirSync recursive,
Dir.glob, scandir) leave them out, and nothing beneath an excluded directory is reachable, in every loading
mode. Creating at an excluded path (a file, a directory, a rename onto it) is refused like any forbidden
create, per onPermissionDenied, and never reaches the host. A plain `deny` rule keeps its behaviour: the
entry is listed and the operation fails with EACCES."""
import os

import pytest

from fnboxlib import call, describe, ok, readable_by_all, req

EXCLUDE = ["node_modules", ".git", "a/b/secret.txt"]
# what the function sees of the tree below, recursively, whatever the loading mode
VISIBLE = ["a", "a/b", "a/b/visible.txt", "input", "input/a.txt", "sub"]
HIDDEN = ["/data/node_modules", "/data/node_modules/lib/x.js", "/data/.git", "/data/.git/config",
          "/data/a/b/secret.txt", "/data/sub/node_modules", "/data/sub/node_modules/y.js"]
ABSENT = "/data/nothing-here"  # the control: what an absent path looks like


@pytest.fixture
def project(tmp_path):
    """input/a.txt, a/b/{secret,visible}.txt, node_modules/lib/x.js, .git/config, sub/node_modules/y.js."""
    root = tmp_path / "data"
    files = {"input/a.txt": "alpha", "a/b/secret.txt": "top secret" * 100, "a/b/visible.txt": "v" * 200,
             "node_modules/lib/x.js": "x", ".git/config": "[core]", "sub/node_modules/y.js": "y"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return readable_by_all(root, tmp_path)


def snapshot(root):
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def mount_of(root, loading=None, rules=None, **extra):
    m = {"dirs": {"/data": str(root)},
         "permissions": {"default": {"read": True, "list": True},
                         "rules": rules if rules is not None else [],
                         "exclude": EXCLUDE},
         "sync": {"mode": "batch"}}
    if loading:
        m["loading"] = loading
    m.update(extra)
    return m


# f(paths) -> {root, ab, walk, glob, paths: {path: [stat, lstat, open, access]}}; each outcome is "ok" or
# the errno's name. walk and glob are every path below /data, relative, through the language's own
# recursive APIs.
PROBE = {
    "python": (
        "import errno, glob, os\n"
        "def attempt(fn):\n"
        "    try:\n"
        "        fn(); return 'ok'\n"
        "    except OSError as e:\n"
        "        return errno.errorcode.get(e.errno, str(e.errno))\n"
        "def f(paths):\n"
        "    walk = []\n"
        "    for d, dirs, files in os.walk('/data'):\n"
        "        walk += [os.path.relpath(os.path.join(d, n), '/data') for n in dirs + files]\n"
        "    found = glob.glob('**', root_dir='/data', recursive=True, include_hidden=True)\n"
        "    return {'root': sorted(os.listdir('/data')), 'ab': sorted(os.listdir('/data/a/b')),\n"
        "            'walk': sorted(walk), 'glob': sorted(p.rstrip('/') for p in found),\n"
        "            'paths': {p: [attempt(lambda: os.stat(p)), attempt(lambda: os.lstat(p)),\n"
        "                          attempt(lambda: open(p).close()),\n"
        "                          'ok' if os.access(p, os.F_OK) else 'ENOENT'] for p in paths}}\n"),
    "javascript": (
        "const fs = require('fs');\n"
        "function attempt(fn) { try { fn(); return 'ok'; } catch (e) { return e.code; } }\n"
        "function f(paths) {\n"
        "  const out = {root: fs.readdirSync('/data').sort(), ab: fs.readdirSync('/data/a/b').sort()};\n"
        "  out.walk = fs.readdirSync('/data', {recursive: true}).sort();\n"
        "  const glob = [];\n"
        "  (function visit(rel) {\n"
        "    for (const d of fs.readdirSync('/data/' + rel, {withFileTypes: true})) {\n"
        "      glob.push(rel + d.name);\n"
        "      if (d.isDirectory()) visit(rel + d.name + '/');\n"
        "    }\n"
        "  })('');\n"
        "  out.glob = glob.sort();\n"
        "  out.paths = {};\n"
        "  for (const p of paths)\n"
        "    out.paths[p] = [attempt(() => fs.statSync(p)), attempt(() => fs.lstatSync(p)),\n"
        "                    attempt(() => fs.closeSync(fs.openSync(p, 'r'))), attempt(() => fs.accessSync(p))];\n"
        "  return out;\n"
        "}\n"),
    "ruby": (
        "def attempt\n"
        "  yield\n"
        "  'ok'\n"
        "rescue SystemCallError => e\n"
        "  e.class.name.split('::').last\n"
        "end\n"
        "def walk(dir, rel, out)\n"
        "  Dir.each_child(dir) do |n|\n"
        "    r = rel.empty? ? n : \"#{rel}/#{n}\"\n"
        "    out << r\n"
        "    walk(\"#{dir}/#{n}\", r, out) if File.directory?(\"#{dir}/#{n}\")\n"
        "  end\n"
        "  out\n"
        "end\n"
        "def f(paths)\n"
        "  glob = Dir.glob('**/*', File::FNM_DOTMATCH, base: '/data').reject { |p| File.basename(p) == '.' }\n"
        "  {'root' => Dir.children('/data').sort, 'ab' => Dir.children('/data/a/b').sort,\n"
        "   'walk' => walk('/data', '', []).sort, 'glob' => glob.sort,\n"
        "   'paths' => paths.to_h { |p| [p, [attempt { File.stat(p) }, attempt { File.lstat(p) },\n"
        "                                    attempt { File.open(p).close }, File.exist?(p) ? 'ok' : 'ENOENT']] }}\n"
        "end\n"),
    "php": (
        "function open_outcome($p) {\n"
        "  error_clear_last();\n"
        "  $h = @fopen($p, 'r');\n"
        "  if ($h !== false) { fclose($h); return 'ok'; }\n"
        "  $m = error_get_last()['message'] ?? '';\n"
        "  if (strpos($m, 'No such file') !== false) return 'ENOENT';\n"
        "  return strpos($m, 'Permission denied') !== false ? 'EACCES' : $m;\n"
        "}\n"
        "function names($d) { $n = array_values(array_diff(@scandir($d) ?: [], ['.', '..'])); sort($n); return $n; }\n"
        "function walk($dir, $rel, &$out) {\n"
        "  foreach (names($dir) as $n) {\n"
        "    $r = $rel === '' ? $n : \"$rel/$n\";\n"
        "    $out[] = $r;\n"
        "    if (is_dir(\"$dir/$n\")) walk(\"$dir/$n\", $r, $out);\n"
        "  }\n"
        "}\n"
        "function f($paths) {\n"
        "  $walk = [];\n"
        "  walk('/data', '', $walk);\n"
        "  sort($walk);\n"
        "  $glob = [];\n"
        "  $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator('/data', FilesystemIterator::SKIP_DOTS),\n"
        "                                     RecursiveIteratorIterator::SELF_FIRST);\n"
        "  foreach ($it as $path => $_) $glob[] = substr($path, strlen('/data/'));\n"
        "  sort($glob);\n"
        "  $out = ['root' => names('/data'), 'ab' => names('/data/a/b'), 'walk' => $walk, 'glob' => $glob, 'paths' => []];\n"
        "  foreach ($paths as $p) {\n"
        "    clearstatcache();\n"
        "    $out['paths'][$p] = [@stat($p) !== false ? 'ok' : 'ENOENT', @lstat($p) !== false ? 'ok' : 'ENOENT',\n"
        "                         open_outcome($p), file_exists($p) ? 'ok' : 'ENOENT'];\n"
        "  }\n"
        "  return $out;\n"
        "}\n"),
}

LOADINGS = {
    "lazy": None,
    "eager": {"mode": "eager"},
    # with limits the eager walk runs before the call: it must not even look at excluded files
    "eager-limits": {"mode": "eager", "maxFileSize": 100000, "maxTotalSize": 100000},
    # an include that names excluded files does not bring them back
    "explicit": {"mode": "explicit", "include": ["**/*.txt", "**/*.js", ".git/**"]},
}


@pytest.mark.parametrize("loading", list(LOADINGS))
def test_excluded_names_do_not_exist_inside(project, lang, loading):
    before = snapshot(project)
    res = call(req(lang, PROBE[lang], "f", [HIDDEN + [ABSENT]], mount=mount_of(project, LOADINGS[loading])))
    got = ok(res)
    assert got["root"] == ["a", "input", "sub"], describe(res.result)
    assert got["ab"] == ["visible.txt"], describe(res.result)
    assert got["walk"] == VISIBLE, describe(res.result)
    assert got["glob"] == VISIBLE, describe(res.result)
    assert got["paths"] == {p: ["ENOENT"] * 4 for p in HIDDEN + [ABSENT]}, describe(res.result)
    files = res.result["files"]
    # looking for something absent is no refusal; the caller's own exclude list is no skipped file
    assert files["denied"] == [] and files.get("skipped", []) == [], describe(res.result)
    assert not any(e["type"] == "permissionDenied" for e in res.result.get("events", [])), describe(res.result)
    assert snapshot(project) == before


def test_eager_limits_ignore_excluded_files(project):
    """The eager walk never weighs an excluded file: it is not in files.skipped and uses no maxTotalSize."""
    code = ("import os\n"
            "def f():\n"
            "    return sorted(os.listdir('/data/a/b'))\n")
    # secret.txt (1000 bytes) comes before visible.txt (200) in the walk's order: were it weighed, it would
    # be skipped for maxFileSize, or take the budget visible.txt needs
    for limits, skipped in (({"maxFileSize": 500}, []), ({"maxTotalSize": 300}, [])):
        res = call(req("python", code, "f", mount=mount_of(project, {"mode": "eager", **limits})))
        assert ok(res) == ["visible.txt"], (limits, describe(res.result))
        assert res.result["files"].get("skipped", []) == skipped, (limits, describe(res.result))


# f(seen) tries each create at an excluded path, in this order, then reports what it sees: {ops: {name:
# outcome}, seen: {path: exists}, secret: content of a/b/secret.txt or null, git: listing of .git or null}.
CREATES = {
    "python": (
        "import errno, os\n"
        "def attempt(fn):\n"
        "    try:\n"
        "        fn(); return 'ok'\n"
        "    except OSError as e:\n"
        "        return errno.errorcode.get(e.errno, str(e.errno))\n"
        "def write(path, mode, text):\n"
        "    with open(path, mode) as fh: fh.write(text)\n"
        "def rename_onto():\n"
        "    write('/data/input/tmp.txt', 'w', 'tmp')\n"
        "    os.rename('/data/input/tmp.txt', '/data/a/b/secret.txt')\n"
        "def f(seen):\n"
        "    ops = {'newInExcludedDir': lambda: write('/data/node_modules/new.js', 'x', 'new'),\n"
        "           'overExcludedFile': lambda: write('/data/a/b/secret.txt', 'x', 'new'),\n"
        "           'mkdirExcludedExisting': lambda: os.mkdir('/data/.git'),\n"
        "           'writeInRemadeDir': lambda: write('/data/.git/config', 'w', 'new'),\n"
        "           'mkdirExcludedNew': lambda: os.mkdir('/data/input/node_modules'),\n"
        "           'renameOnto': rename_onto}\n"
        "    out = {'ops': {k: attempt(v) for k, v in ops.items()}}\n"
        "    out['seen'] = {p: os.path.exists(p) for p in seen}\n"
        "    try: out['secret'] = open('/data/a/b/secret.txt').read()\n"
        "    except OSError: out['secret'] = None\n"
        "    try: out['git'] = sorted(os.listdir('/data/.git'))\n"
        "    except OSError: out['git'] = None\n"
        "    return out\n"),
    "javascript": (
        "const fs = require('fs');\n"
        "function attempt(fn) { try { fn(); return 'ok'; } catch (e) { return e.code; } }\n"
        "function f(seen) {\n"
        "  const ops = {\n"
        "    newInExcludedDir: () => fs.writeFileSync('/data/node_modules/new.js', 'new', {flag: 'wx'}),\n"
        "    overExcludedFile: () => fs.writeFileSync('/data/a/b/secret.txt', 'new', {flag: 'wx'}),\n"
        "    mkdirExcludedExisting: () => fs.mkdirSync('/data/.git'),\n"
        "    writeInRemadeDir: () => fs.writeFileSync('/data/.git/config', 'new'),\n"
        "    mkdirExcludedNew: () => fs.mkdirSync('/data/input/node_modules'),\n"
        "    renameOnto: () => { fs.writeFileSync('/data/input/tmp.txt', 'tmp');\n"
        "                        fs.renameSync('/data/input/tmp.txt', '/data/a/b/secret.txt'); },\n"
        "  };\n"
        "  const out = {ops: {}, seen: {}};\n"
        "  for (const [k, v] of Object.entries(ops)) out.ops[k] = attempt(v);\n"
        "  for (const p of seen) out.seen[p] = fs.existsSync(p);\n"
        "  try { out.secret = fs.readFileSync('/data/a/b/secret.txt', 'utf8'); } catch (e) { out.secret = null; }\n"
        "  try { out.git = fs.readdirSync('/data/.git').sort(); } catch (e) { out.git = null; }\n"
        "  return out;\n"
        "}\n"),
}

# op -> its path and, per onPermissionDenied mode, (outcome, whether the path exists afterwards). A file
# made under "ignore" is gone once closed; a directory made under "ignore" stays, as under "virtual".
# Inside a hidden directory there is nothing to create in (ENOENT, as for any absent directory), unless
# the function made that directory itself (virtually).
OPS = {
    "newInExcludedDir": ("/data/node_modules/new.js",
                         {"throw": ("ENOENT", False), "ignore": ("ENOENT", False), "virtual": ("ENOENT", False)}),
    "overExcludedFile": ("/data/a/b/secret.txt",
                         {"throw": ("EACCES", False), "ignore": ("ok", False), "virtual": ("ok", True)}),
    "mkdirExcludedExisting": ("/data/.git",
                              {"throw": ("EACCES", False), "ignore": ("ok", True), "virtual": ("ok", True)}),
    "writeInRemadeDir": ("/data/.git/config",
                         {"throw": ("ENOENT", False), "ignore": ("ok", False), "virtual": ("ok", True)}),
    "mkdirExcludedNew": ("/data/input/node_modules",
                         {"throw": ("EACCES", False), "ignore": ("ok", True), "virtual": ("ok", True)}),
    "renameOnto": (None, {"throw": ("EACCES", None), "ignore": ("ok", None), "virtual": ("ok", None)}),
}
# the refusals each mode records: (path, operation, rule)
DENIED = {("/data/a/b/secret.txt", "create", 'exclude "a/b/secret.txt"'),
          ("/data/.git", "create", 'exclude ".git"'),
          ("/data/input/node_modules", "create", 'exclude "node_modules"')}
DENIED_REMADE = DENIED | {("/data/.git/config", "create", 'exclude ".git"')}


@pytest.mark.parametrize("lang", ["python", "javascript"])
@pytest.mark.parametrize("mode", ["throw", "ignore", "virtual"])
@pytest.mark.parametrize("loading", ["lazy", "eager-limits", "explicit"])
def test_creating_at_excluded_paths(project, lang, mode, loading):
    rules = [{"pattern": "**", "allow": "*"}]  # everything allowed but the excluded names
    before = snapshot(project)
    seen = [path for path, _ in OPS.values() if path]
    res = call(req(lang, CREATES[lang], "f", [seen],
                   mount=mount_of(project, LOADINGS[loading], rules=rules, onPermissionDenied=mode)))
    got = ok(res)
    assert got["ops"] == {op: per_mode[mode][0] for op, (_, per_mode) in OPS.items()}, describe(res.result)
    assert got["seen"] == {path: per_mode[mode][1] for path, per_mode in OPS.values() if path}, \
        describe(res.result)
    # the host's secret never shows through; under "virtual" the function sees what it wrote last there
    assert got["secret"] == {"throw": None, "ignore": None, "virtual": "tmp"}[mode], describe(res.result)
    # a re-made excluded directory shows only what the function put in it, never the host's entries
    assert got["git"] == {"throw": None, "ignore": [], "virtual": ["config"]}[mode], describe(res.result)
    files = res.result["files"]
    denied = {(d["path"], d["operation"], d["rule"]) for d in files["denied"]}
    assert denied == (DENIED if mode == "throw" else DENIED_REMADE), describe(res.result)
    events = {(e["path"], e["operation"]) for e in res.result.get("events", []) if e["type"] == "permissionDenied"}
    assert events == {(p, o) for p, o, _ in denied}, describe(res.result)
    # nothing at an excluded path is reported or synced; the one host change is the allowed tmp.txt,
    # still there unless the virtual rename took it (a file this call made: no host deletion either)
    changed = [c["path"] for kind in ("created", "modified", "deleted") for c in files[kind]]
    tmp_left = mode != "virtual"
    assert changed == (["/data/input/tmp.txt"] if tmp_left else []), describe(res.result)
    sync = res.result.get("sync", {"success": True, "synced": []})  # absent when there was nothing to sync
    assert sync["success"] is True and sync["synced"] == changed, describe(res.result)
    after = snapshot(project)
    if tmp_left:
        assert after.pop("input/tmp.txt") == b"tmp"
    assert after == before, "an excluded path changed on the host"


def test_plain_deny_rule_still_lists(project):
    """A `deny` rule is no exclude: the entry is listed, stat works, the operation fails with EACCES."""
    code = ("import os\n"
            "def f():\n"
            "    out = [sorted(os.listdir('/data/input')), os.path.exists('/data/input/a.txt')]\n"
            "    try: open('/data/input/a.txt').read(); out.append('read')\n"
            "    except OSError as e: out.append(type(e).__name__)\n"
            "    return out\n")
    m = mount_of(project, rules=[{"pattern": "input/a.txt", "deny": ["read"]}])
    res = call(req("python", code, "f", mount=m))
    assert ok(res) == [["a.txt"], True, "PermissionError"], describe(res.result)
    assert [(d["path"], d["operation"]) for d in res.result["files"]["denied"]] == [("/data/input/a.txt", "read")]


def test_restricted_links_to_excluded_entries_are_hidden(project):
    """followSymlinks "restricted" follows host links beneath the root: one leading to an excluded entry,
    or through a linked directory into one, is as absent as the entry itself."""
    os.symlink("a/b/secret.txt", project / "to-secret")
    os.symlink("node_modules", project / "deps")
    os.symlink("a/b/visible.txt", project / "to-visible")
    code = ("import os\n"
            "def f():\n"
            "    out = {'root': sorted(os.listdir('/data'))}\n"
            "    for p in ('/data/to-secret', '/data/deps', '/data/deps/lib/x.js', '/data/to-visible'):\n"
            "        try: out[p] = open(p).read() if not os.path.isdir(p) else sorted(os.listdir(p))\n"
            "        except OSError as e: out[p] = type(e).__name__\n"
            "    return out\n")
    res = call(req("python", code, "f", mount=mount_of(project, security={"followSymlinks": "restricted"})))
    assert ok(res) == {"root": ["a", "input", "sub", "to-visible"],
                       "/data/to-secret": "FileNotFoundError", "/data/deps": "FileNotFoundError",
                       "/data/deps/lib/x.js": "FileNotFoundError", "/data/to-visible": "v" * 200}, \
        describe(res.result)


def test_deleting_a_directory_never_deletes_what_it_hides(project):
    """rmtree of a directory holding excluded entries empties it in the view; on the host those entries
    stay, so the directory cannot go and the sync says so (rolled back: the visible deletions return)."""
    code = ("import os, shutil\n"
            "def f():\n"
            "    shutil.rmtree('/data/a')\n"
            "    return os.path.exists('/data/a')\n")
    res = call(req("python", code, "f", mount=mount_of(project, rules=[{"pattern": "**", "allow": "*"}])))
    assert ok(res) is False, describe(res.result)
    deleted = sorted(c["path"] for c in res.result["files"]["deleted"])
    assert deleted == ["/data/a", "/data/a/b", "/data/a/b/visible.txt"], describe(res.result)
    sync = res.result["sync"]
    assert sync["success"] is False and [f["path"] for f in sync["failed"]] == ["/data/a/b"], describe(res.result)
    assert "not empty" in sync["failed"][0]["error"], describe(res.result)
    assert (project / "a" / "b" / "secret.txt").read_text() == "top secret" * 100
    assert (project / "a" / "b" / "visible.txt").exists()  # rolled back
