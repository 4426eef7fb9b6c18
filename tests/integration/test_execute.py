"""`fnbox exec` (fnbox_execute): a shell command or a program's code in a fresh sandbox, judged by its exit
status, against the real binary, real interpreters and compilers. Exit codes (0 success, other, 127 missing,
137 killed, 124 timeout), stdin, args, env, cwd, every language and an unknown one, output (unicode, bytes
that are not UTF-8, --stream), files reported, host mounts (rules at the operation, batch and manual sync, as a call's), background processes,
isolation, and every bad field named."""
import json
import time

import pytest

from fnboxlib import assert_no_survivors, parse_one_result, readable_by_all, run_cli, unique_seconds


def execute(request, timeout=60, argv=("exec", "-")):
    """Run `fnbox exec -`; returns (result, exit status of fnbox)."""
    proc = run_cli(list(argv), input=json.dumps(request), timeout=timeout)
    result, _ = parse_one_result(proc.stdout)
    assert proc.returncode in (0, 2), f"fnbox exited {proc.returncode}: {proc.stderr[-2000:]!r}"
    for field in ("status", "success", "exitCode", "stdout", "stderr"):
        assert field in result, f"{field} missing: {result!r:.600}"
    assert result["success"] is (result["status"] == "success")
    return result, proc.returncode


def ran(request, **kw):
    result, code = execute(request, **kw)
    assert code == 0, result
    for field in ("usage", "truncated", "files", "meta"):
        assert field in result, f"{field} missing: {result!r:.600}"
    return result


def refused(request):
    result, code = execute(request)
    assert code == 2, result
    assert result["error"]["type"] == "InvalidRequest", result
    return result["error"]["message"]


def test_command_success():
    r = ran({"command": "echo hello; echo oops >&2"})
    assert (r["status"], r["exitCode"], r["stdout"], r["stderr"]) == ("success", 0, "hello\n", "oops\n")
    assert r["usage"]["wallMs"] > 0 and r["truncated"] == {"stdout": False, "stderr": False}


def test_command_nonzero_exit():
    r = ran({"command": "echo partial; exit 3"})
    assert (r["status"], r["exitCode"], r["stdout"]) == ("error", 3, "partial\n")


def test_missing_command_is_127():
    r = ran({"command": "no-such-command-xyz"})
    assert r["exitCode"] == 127 and r["status"] == "error"
    assert "not found" in r["stderr"]


def test_kill_9_is_137():
    r = ran({"command": "echo before; kill -9 $$"})
    assert (r["status"], r["exitCode"], r["stdout"]) == ("crash", 137, "before\n")
    assert "signal 9" in r["error"]["message"]


def test_timeout_keeps_partial_output():
    t0 = time.monotonic()
    r = ran({"command": "echo part; sleep 30", "timeout": 0.5})
    assert time.monotonic() - t0 < 10
    assert (r["status"], r["exitCode"], r["stdout"]) == ("timeout", 124, "part\n")
    assert r["error"]["limit"] == "timeout"
    # a command, not a function (it said "the function did not finish")
    assert r["error"]["message"] == "the command did not finish within the 0.5 s timeout", r["error"]
    assert r["error"]["reason"].startswith("the command's wall-clock time reached its timeout of 0.5 s"), r["error"]
    r = ran({"code": "import time\ntime.sleep(30)", "language": "python", "timeout": 0.5})
    assert r["status"] == "timeout" and r["error"]["message"] == "the code did not finish within the 0.5 s timeout", r


def test_memory_limit_is_137_and_named():
    r = ran({"command": "python3 -c 'x = bytearray(200 * 1024 * 1024); print(len(x))'",
             "limits": {"memoryBytes": 64 * 1024 * 1024}})
    assert (r["status"], r["exitCode"]) == ("crash", 137), r
    assert r["error"]["type"] == "MemoryLimitExceeded" and r["error"]["limit"] == "memoryBytes"
    assert r["error"]["message"] == "the command exceeded its memory limit of 64 MiB and was killed", r["error"]


def test_stdin_args_env():
    r = ran({"command": 'cat; printf "[%s]" "$1" "$2" "$GREETING"', "stdin": "line one\nline two\n",
             "args": ["a b", "c"], "env": {"GREETING": "héllo wörld"}})
    assert r["stdout"] == "line one\nline two\n[a b][c][héllo wörld]"


def test_env_replaces_the_default_and_keeps_the_rest():
    r = ran({"command": 'echo "$HOME|$LANG|$FOO"', "env": {"HOME": "/workspace", "FOO": "x=y"}})
    assert r["stdout"] == "/workspace|C.UTF-8|x=y\n"


def test_no_stdin_reads_eof():
    assert ran({"command": "cat; echo done"})["stdout"] == "done\n"


@pytest.mark.parametrize("cwd,expected", [
    (None, "/workspace"),
    ("/tmp", "/tmp"),
    ("sub/dir", "/workspace/sub/dir"),
    ("./a/../b", "/workspace/b"),
    ("/workspace/x/", "/workspace/x"),
    ("/", "/"),
])
def test_cwd(cwd, expected):
    request = {"command": "pwd"}
    if cwd is not None:
        request["cwd"] = cwd
    assert ran(request)["stdout"] == expected + "\n"


@pytest.mark.parametrize("cwd,words", [
    ("/usr/lib", "read-only system path"),
    ("/etc", "read-only system path"),
    ("/.fnbox", "read-only system path"),
    ("../../..", "goes above /"),
    ("", "empty"),
    (5, "must be a string"),
    ("a\nb", "control characters"),
])
def test_bad_cwd_is_named(cwd, words):
    message = refused({"command": "pwd", "cwd": cwd})
    assert message.startswith("cwd: ") and words in message, message


CODE = {
    "python3": ("import sys\nprint('hi', sys.argv[1:], input())", "hi ['x'] IN\n"),
    "python": ("print('py')", "py\n"),
    "node": ("const fs = require('fs'); console.log('hi', process.argv.slice(2), fs.readFileSync(0, 'utf8'))",
             "hi [ 'x' ] IN\n"),
    "javascript": ("console.log(1 + 1)", "2\n"),
    "js": ("console.log('js')", "js\n"),
    "ruby": ("puts \"hi #{ARGV.inspect} #{STDIN.read}\"", "hi [\"x\"] IN\n"),
    "php": ("<?php echo 'hi ', json_encode(array_slice($argv, 1)), ' ', stream_get_contents(STDIN), \"\\n\";",
            "hi [\"x\"] IN\n"),
    "sh": ('echo "hi $1 $(cat)"', "hi x IN\n"),
    "bash": ('echo "hi ${BASH_VERSION%%.*} $1"', None),
    "c": ('#include <stdio.h>\nint main(int c, char **v) { char b[8] = ""; fgets(b, sizeof b, stdin);'
          ' printf("hi %s %s\\n", v[1], b); return 0; }', "hi x IN\n"),
    "cpp": ('#include <iostream>\n#include <string>\nint main(int c, char **v) { std::string s; std::cin >> s;'
            ' std::cout << "hi " << v[1] << " " << s << std::endl; }', "hi x IN\n"),
    "c++": ('#include <vector>\n#include <cstdio>\nint main() { std::vector<int> v{1, 2}; printf("%zu\\n", v.size()); }',
            "2\n"),
}


@pytest.mark.parametrize("language", sorted(CODE))
def test_language(language):
    code, expected = CODE[language]
    r = ran({"code": code, "language": language, "args": ["x"], "stdin": "IN"})
    assert r["status"] == "success", r
    if expected is None:
        assert r["stdout"].startswith("hi 5 x"), r
    else:
        assert r["stdout"] == expected, r
    if language in ("c", "cpp", "c++"):
        assert r["compile"] == {"exitCode": 0, "output": ""}, r


def test_language_error_exit():
    r = ran({"code": "import sys\nprint('x')\nsys.exit(7)", "language": "python3"})
    assert (r["status"], r["exitCode"], r["stdout"]) == ("error", 7, "x\n")
    r = ran({"code": "raise ValueError('boom')", "language": "python3"})
    assert r["exitCode"] == 1 and "ValueError: boom" in r["stderr"]


def test_c_compile_error_on_stderr_and_in_compile():
    r = ran({"code": "int main(void) { return undefined_name; }", "language": "c"})
    assert r["status"] == "error" and r["exitCode"] == 1
    assert "undefined_name" in r["stderr"]
    assert r["compile"]["exitCode"] == 1 and "undefined_name" in r["compile"]["output"]
    # the compiled program is scratch, not the function's file
    assert r["files"]["created"] == []


def test_unknown_language_is_127():
    r = ran({"code": "DISPLAY 'HI'.", "language": "cobol"})
    assert (r["status"], r["exitCode"], r["stdout"]) == ("error", 127, "")
    assert r["stderr"] == "Language interpreter not found: cobol\n"


def test_unicode_and_invalid_bytes():
    r = ran({"command": r"printf 'héllo 世界 \360\237\230\200\n'; printf '\377\376x' >&2"})
    assert r["stdout"] == "héllo 世界 😀\n"
    assert r["stderr"] == "\ufffd\ufffdx"


def test_output_cap_truncates():
    r = ran({"command": "head -c 100000 /dev/zero | tr '\\0' a", "limits": {"stdoutBytes": 1000}})
    assert len(r["stdout"]) == 1000 and r["truncated"]["stdout"] is True


def test_files_created_and_modified_in_workdir():
    r = ran({"command": "echo new > made.txt; echo more >> given.txt; mkdir d; echo x > /tmp/scratch",
             "files": {"given.txt": "start\n"}})
    created = {f["path"] for f in r["files"]["created"]}
    assert created == {"/workspace/made.txt", "/workspace/d"}, r["files"]
    assert [f["path"] for f in r["files"]["modified"]] == ["/workspace/given.txt"]
    assert all("content" not in f for f in r["files"]["created"])


def test_files_given_are_there():
    r = ran({"command": "cat sub/a.txt; base64 -d < /dev/null; od -An -tx1 bin", "files": {
        "sub/a.txt": "text\n", "bin": {"base64": "AAH/"}}})
    assert r["stdout"].split("\n")[0] == "text" and "00 01 ff" in r["stdout"]


def test_background_process_does_not_outlive_the_run():
    pause = f"sleep {unique_seconds(100)}"
    t0 = time.monotonic()
    r = ran({"command": f"{pause} & {pause} & echo started"})
    assert time.monotonic() - t0 < 10
    assert r["status"] == "success" and r["stdout"] == "started\n"
    assert_no_survivors(pause)


def test_stream_chunks_then_result():
    proc = run_cli(["exec", "--stream", "-"], input=json.dumps({"command": "echo a; echo b >&2; echo c"}))
    assert proc.returncode == 0
    lines = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "success"
    out = "".join(line["data"] for line in lines[:-1] if line["type"] == "stdout")
    err = "".join(line["data"] for line in lines[:-1] if line["type"] == "stderr")
    assert out == lines[-1]["stdout"] == "a\nc\n" and err == lines[-1]["stderr"] == "b\n"


def test_exec_help_and_file_argument(tmp_path):
    proc = run_cli(["exec", "--help"])
    assert proc.returncode == 0 and proc.stdout.startswith(b"usage: fnbox exec")
    path = tmp_path / "req.json"
    path.write_text(json.dumps({"command": "echo from-file"}))
    proc = run_cli(["exec", str(path)])
    assert proc.returncode == 0 and json.loads(proc.stdout)["stdout"] == "from-file\n"


# ---- main: one of files run as the program's code, from where it is placed ----

@pytest.mark.parametrize("language,files,out", [
    ("python3", {"app.py": "import sys, helper\nprint(helper.x, sys.argv[1])", "helper.py": "x = 'py'"}, "py A\n"),
    ("node", {"app.js": "console.log(require('./helper').x, process.argv[2])", "helper.js": "exports.x = 'js'"},
     "js A\n"),
    ("ruby", {"app.rb": "require_relative 'helper'\nputs \"#{X} #{ARGV[0]}\"", "helper.rb": "X = 'rb'"}, "rb A\n"),
    ("php", {"app.php": "<?php include __DIR__ . '/helper.php'; echo \"$x $argv[1]\n\";",
             "helper.php": "<?php $x = 'php';"}, "php A\n"),
    ("c", {"app.c": "#include <stdio.h>\n#include \"helper.h\"\nint main(int c, char **v) "
                    "{ printf(\"%s %s\\n\", X, v[1]); return 0; }",
           "helper.h": "#define X \"c\""}, "c A\n"),
])
def test_main_runs_beside_the_other_files(language, files, out):
    r = ran({"main": next(iter(files)), "language": language, "files": files, "args": ["A"]})
    assert (r["status"], r["stdout"]) == ("success", out), r


def test_main_compiles_the_other_units_and_quotes_their_names():
    files = {"sub/main.cpp": "#include <iostream>\nint twice(int);\nint main() { std::cout << twice(21) << std::endl; }",
             "it's here.cc": "int twice(int x) { return 2 * x; }", "notes.txt": "not compiled"}
    r = ran({"main": "sub/main.cpp", "language": "cpp", "files": files})
    assert (r["stdout"], r["compile"]["exitCode"]) == ("42\n", 0), r

# ---- mounts: a call's `mount`, same rules, loading and sync ----

@pytest.fixture
def host(tmp_path):
    """A host directory: in.txt and mod.txt to read, out/ to write into, ro/ and secret/ that rules keep."""
    root = tmp_path / "data"
    (root / "out").mkdir(parents=True)
    (root / "ro").mkdir()
    (root / "in.txt").write_text("hello from the host\n")
    (root / "mod.txt").write_text("old\n")
    (root / "ro" / "keep.txt").write_text("keep\n")
    return readable_by_all(root, tmp_path)


def mount_of(root, **extra):
    """Reads and lists everywhere; creates and modifies under out/, modifies mod.txt; nothing else (ro/ and
    the rest are read-only: create, modify and delete default to refused)."""
    m = {"dirs": {"/data": str(root)},
         "permissions": {"default": {"read": True, "list": True},
                         "rules": [{"pattern": "out/**", "allow": ["create", "modify"]},
                                   {"pattern": "mod.txt", "allow": ["modify"]}]},
         "sync": {"mode": "batch"}}
    m.update(extra)
    return m


# Reads a host file, writes a new one and changes one; then tries what the rules refuse: modifying a
# read-only file, creating outside out/, deleting one. Each refusal is EACCES (the shell goes on).
MOUNT_WORK = ("cat /data/in.txt; echo made > /data/out/new.txt; echo changed > /data/mod.txt; "
              "(echo no > /data/ro/keep.txt) 2>/dev/null || echo refused-modify; "
              "(echo no > /data/top.txt) 2>/dev/null || echo refused-create; "
              "rm /data/in.txt 2>/dev/null || echo refused-delete")


def host_tree(root):
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_mount_reads_writes_and_syncs_as_the_rules_allow(host):
    r = ran({"command": MOUNT_WORK, "mount": mount_of(host)})
    assert r["status"] == "success", r
    assert r["stdout"] == "hello from the host\nrefused-modify\nrefused-create\nrefused-delete\n", r
    assert host_tree(host) == {"in.txt": "hello from the host\n", "mod.txt": "changed\n",
                               "out/new.txt": "made\n", "ro/keep.txt": "keep\n"}
    files = r["files"]
    assert [(f["path"], f["content"]) for f in files["created"]] == [("/data/out/new.txt", "made\n")], files
    assert [(f["path"], f["content"]) for f in files["modified"]] == [("/data/mod.txt", "changed\n")], files
    assert {(d["path"], d["operation"]) for d in files["denied"]} == {
        ("/data/ro/keep.txt", "modify"), ("/data/top.txt", "create"), ("/data/in.txt", "delete")}, files
    assert r["sync"]["success"] and sorted(r["sync"]["synced"]) == ["/data/mod.txt", "/data/out/new.txt"], r["sync"]
    assert [e["type"] for e in r["events"] if e["type"] != "permissionDenied"] == ["beforeSync", "afterSync"] * 2


def test_mount_deny_rule_refuses_reading(host):
    (host / "ro" / "secret.txt").write_text("s3cret\n")
    m = mount_of(host)
    m["permissions"]["rules"].append({"pattern": "ro/secret.txt", "deny": ["read"]})
    r = ran({"code": "try:\n    print(open('/data/ro/secret.txt').read())\n"
                     "except PermissionError as e:\n    print('denied', e.errno)\n"
                     "print(open('/data/ro/keep.txt').read(), end='')",
             "language": "python3", "mount": m})
    assert r["stdout"] == "denied 13\nkeep\n", r
    assert [(d["path"], d["operation"]) for d in r["files"]["denied"]] == [("/data/ro/secret.txt", "read")]


def test_mount_manual_sync_reports_contents_and_leaves_the_host(host):
    """Without sync.mode batch nothing reaches the host; the changes come with their contents, which
    `fnbox sync` applies later, as with a call's result."""
    m = {"dirs": {"/data": str(host)}}  # no permissions, no sync: manual, every operation allowed
    r = ran({"command": "echo made > /data/out/new.txt; echo changed > /data/mod.txt; rm /data/in.txt; "
                        "echo scratch > w.txt", "mount": m})
    assert host_tree(host)["mod.txt"] == "old\n" and (host / "in.txt").exists() and "sync" not in r
    files = r["files"]
    assert {(f["path"], f.get("content")) for f in files["created"]} == {
        ("/data/out/new.txt", "made\n"), ("/workspace/w.txt", None)}, files  # the workdir by size only
    assert [f["path"] for f in files["deleted"]] == ["/data/in.txt"]
    changes = files["created"][:1] + files["modified"]
    proc = run_cli(["sync", "-"], input=json.dumps({"changes": changes, "mount": m}))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert host_tree(host) == {"in.txt": "hello from the host\n", "mod.txt": "changed\n",
                               "out/new.txt": "made\n", "ro/keep.txt": "keep\n"}


def test_mount_failed_run_syncs_nothing(host):
    r = ran({"command": "echo made > /data/out/new.txt; exit 4", "mount": mount_of(host)})
    assert r["exitCode"] == 4 and [f["path"] for f in r["files"]["created"]] == ["/data/out/new.txt"]
    assert not (host / "out" / "new.txt").exists() and "sync" not in r
    r = ran({"command": "echo made > /data/out/new.txt; exit 4",
             "mount": mount_of(host, sync={"mode": "batch", "onFunctionError": "sync"})})
    assert (host / "out" / "new.txt").read_text() == "made\n" and r["sync"]["success"]


def test_mount_as_workdir_with_loading_limits(host):
    """A mount over the workdir: relative paths reach the host; eager loading's maxFileSize leaves a big
    file out of the view and lists it in files.skipped."""
    (host / "big.txt").write_text("x" * 5000)
    m = {"dirs": {"/workspace": str(host)}, "sync": {"mode": "batch"},
         "permissions": {"default": {"read": True, "list": True, "create": True}},
         "loading": {"mode": "eager", "maxFileSize": 1000}}
    r = ran({"command": "cat in.txt; ls; echo new > made.txt", "mount": m})
    assert r["stdout"] == "hello from the host\nin.txt\nmod.txt\nout\nro\n", r
    assert [(s["path"], s["reason"]) for s in r["files"]["skipped"]] == [("/workspace/big.txt", "maxFileSize")]
    assert (host / "made.txt").read_text() == "new\n"


# ---- isolation ----

def test_host_files_are_not_visible():
    r = ran({"command": "cat /etc/shadow; ls /root /home; cat /proc/1/cmdline | tr '\\0' ' '; id -u"})
    assert "root:" not in r["stdout"]
    assert "No such file" in r["stderr"]
    assert r["stdout"].strip().endswith("1000")


def test_system_is_read_only():
    r = ran({"command": "touch /usr/bin/x || echo refused"})
    assert "refused" in r["stdout"]


def test_network_denied_by_default():
    r = ran({"command": "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)\" "
                        "2>&1 | tail -1; python3 -c \"import socket; print(socket.getaddrinfo('example.com', 80))\" "
                        "2>&1 | tail -1"})
    assert "Network is unreachable" in r["stdout"] or "unreachable" in r["stdout"].lower(), r
    assert "Name or service not known" in r["stdout"] or "Temporary failure" in r["stdout"], r


def test_child_process_may_be_refused():
    r = ran({"command": "ls / >/dev/null && echo ran", "permissions": {"childProcess": False}})
    assert r["exitCode"] != 0 and "ran" not in r["stdout"]
    r = ran({"command": "echo builtin-only", "permissions": {"childProcess": False}})
    assert r["stdout"] == "builtin-only\n"


# ---- invalid requests: each names its field ----

@pytest.mark.parametrize("request_,prefix", [
    ({}, "command: required"),
    ({"command": "x", "code": "y", "language": "sh"}, "command: give one of"),
    ({"command": 5}, "command: must be a string"),
    ({"command": "a\u0000b"}, "command: contains a NUL"),
    ({"command": "x" * 200000}, "command: 200000 bytes"),
    ({"code": "print(1)"}, "language: required"),
    ({"code": 1, "language": "python3"}, "code: must be a string"),
    ({"code": "x", "language": 3}, "language: must be a string"),
    ({"code": "x", "language": ""}, "language: must be"),
    ({"command": "x", "language": "python3"}, "language: goes with code"),
    ({"command": "x", "bogus": 1}, "bogus: unknown field"),
    ({"command": "x", "args": "a"}, "args: must be an array"),
    ({"command": "x", "args": ["a", 2]}, "args[1]: must be a string"),
    ({"command": "x", "stdin": 3}, "stdin: must be a string"),
    ({"command": "x", "env": []}, "env: must be an object"),
    ({"command": "x", "env": {"A=B": "c"}}, "env.A=B: the name contains '='"),
    ({"command": "x", "env": {"": "c"}}, "env: a variable name is empty"),
    ({"command": "x", "env": {"FOO": 1}}, "env.FOO: must be a string"),
    ({"command": "x", "env": {"FOO": "a\u0000b"}}, "env.FOO: the value contains a NUL"),
    ({"command": "x", "env": {"N" * 300: "v"}}, "env.NNN"),
    ({"command": "x", "timeout": 0}, "timeout: must be more than 0"),
    ({"command": "x", "timeout": 99999}, "timeout: must be more than 0 and at most 3600"),
    ({"command": "x", "timeout": "1"}, "timeout: must be a number"),
    ({"command": "x", "files": []}, "files: must be an object"),
    ({"command": "x", "files": {"../up": "x"}}, "files[\"../up\"]"),
    ({"command": "x", "limits": {"memoryBytes": 1}}, "limits.memoryBytes: must be at least"),
    ({"command": "x", "limits": {"nope": 1}}, "limits.nope: unknown field"),
    ({"command": "x", "permissions": {"nope": 1}}, "permissions.nope: unknown field"),
    ({"command": "x", "mount": []}, "mount: "),
    ({"main": "a.py", "language": "python3", "files": {"b.py": ""}}, "main: 'a.py' is not one of files"),
    ({"main": "a.py", "language": "python3"}, "main: 'a.py' is not one of files"),
    ({"main": 1, "language": "python3", "files": {"b.py": ""}}, "main: must be a string"),
    ({"main": "a.py", "files": {"a.py": ""}}, "language: required with main"),
    ({"main": "a.py", "code": "x", "language": "python3", "files": {"a.py": ""}}, "code: give one of"),
    ({"main": "a.py", "command": "x", "files": {"a.py": ""}}, "command: give one of"),
    ({"command": "x", "mount": {"dirs": {"/data": "/nonexistent-xyz"}}}, "mount.dirs"),
    ({"command": "x", "mount": {"dirs": {"/usr": "/tmp"}}}, "mount.dirs"),
    ({"command": "x", "permissions": {"childProcess": ["no-such-cmd-xyz"]}}, "permissions.childProcess[0]"),
    ({"code": "int main(){}", "language": "c", "permissions": {"childProcess": False}}, "permissions.childProcess"),
])
def test_bad_field_is_named(request_, prefix):
    message = refused(request_)
    assert message.startswith(prefix), message


def test_malformed_json():
    proc = run_cli(["exec", "-"], input="{nope")
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["message"].startswith("request: malformed JSON")
