"""`fnbox serve` sessions: every /v1/sessions route and error answer, against the real binary with real
interpreters: open (options, 400 naming the field, 413, 503 at --max-sessions), info, close, commands and
code (exit codes 127 / 137 / 124, env, cwd, stdin, every language), files (binary, unicode and hostile
names, parents, list, remove), bearer-token ownership, idleTimeout / maxLifetime reaping, DELETE during a
command, concurrent commands, and SIGTERM with sessions open (nothing left behind)."""
import json
import os
import shutil
import signal
import threading
import time

import pytest

from fnboxlib import cgroup_refused, marker
from servelib import TOKEN, Server, Session, cgroups_of, cmdline, descendants, error_of, host_pids_matching, metric, ok, wait_for

OTHER = "second-token-abcdefghijklmnop"


@pytest.fixture(scope="module")
def token_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokens") / "tokens"
    path.write_text(f"{TOKEN}\n{OTHER}\n")
    path.chmod(0o600)
    return str(path)


@pytest.fixture(scope="module")
def server(token_file):
    """One token server for the module: every request names a token (A = TOKEN, B = OTHER)."""
    with Server("--token-file", token_file, "--max-concurrency", "4") as srv:
        yield srv


@pytest.fixture
def sess(server):
    s = Session(server)
    yield s
    s.close()


# ---- open, info, close ----

def test_open_defaults_info_and_close(server):
    s = Session(server)
    info = s.info
    assert len(s.id) >= 16 and all(c in "0123456789abcdef" for c in s.id), s.id
    assert info["running"] == 0 and info["workdir"] == "/workspace", info
    assert info["idleTimeout"] == 900 and info["maxLifetime"] == 3600, info
    for k in ("createdAt", "lastUsedAt", "expiresAt"):
        assert info[k].endswith("Z") and "T" in info[k], info
    r = s.req("GET")
    assert r.status == 200 and r.json()["id"] == s.id and r.json()["workdir"] == "/workspace", r
    assert s.req("HEAD").status == 200
    assert s.close().status == 204
    error_of(s.req("GET"), 404, "NotFound")
    error_of(s.close(), 404, "NotFound")
    error_of(s.req("POST", "/commands", {"command": "true"}), 404)
    error_of(s.get("x"), 404)


def test_info_reals_as_given(server):
    # idleTimeout 0.1 came back as 0.10000000000000001 (jansson's 17 digits)
    s = Session(server, {"idleTimeout": 30.1, "maxLifetime": 60.3})
    try:
        for r in (s.req("GET"),):
            raw = r.body.decode()
            assert '"idleTimeout":30.1,' in raw and '"maxLifetime":60.3,' in raw, raw
    finally:
        s.close()


def test_open_with_options(server):
    s = Session(server, {"workdir": "/work/proj", "files": {"hello.txt": "hi there", "sub/data.bin": "x"},
                         "permissions": {"env": {"GREETING": "howdy"}}, "limits": {"stdoutBytes": 100},
                         "idleTimeout": 30, "maxLifetime": 60.5})
    try:
        assert s.info["workdir"] == "/work/proj" and s.info["idleTimeout"] == 30 and s.info["maxLifetime"] == 60.5
        out = ok(s.cmd("pwd; cat hello.txt; echo; ls sub; echo $GREETING"))
        assert out == "/work/proj\nhi there\ndata.bin\nhowdy\n", out
        assert s.get("/work/proj/hello.txt").body == b"hi there"
        big = s.cmd("yes | head -c 5000")
        assert big["truncated"]["stdout"] is True and len(big["stdout"]) <= 100, big
    finally:
        s.close()


@pytest.mark.parametrize("body, field", [
    (b"{", "options"),
    (b"[1]", "options"),
    (b'"x"', "options"),
    (b'{"a": 1, "a": 2}', "options"),
    (b'{"foo": 1}', "foo"),
    (b'{"mount": {"/tmp": "/x"}}', "mount"),
    (b'{"idleTimeout": "10"}', "idleTimeout"),
    (b'{"idleTimeout": 0}', "idleTimeout"),
    (b'{"idleTimeout": -1}', "idleTimeout"),
    (b'{"maxLifetime": 100000}', "maxLifetime"),
    (b'{"workdir": 5}', "workdir"),
    (b'{"workdir": "relative"}', "workdir"),
    (b'{"workdir": "/etc"}', "workdir"),
    (b'{"files": 3}', "files"),
    (b'{"files": {"a": 3}}', "files"),
    (b'{"files": {"../../etc/x": "y"}}', "files"),
    (b'{"limits": {"memoryBytes": "lots"}}', "limits.memoryBytes"),
    (b'{"limits": {"nope": 1}}', "limits"),
    (b'{"limits": 7}', "limits"),
    (b'{"permissions": 3}', "permissions"),
    (b'{"permissions": {"childProcess": "maybe"}}', "permissions"),
])
def test_open_refuses_bad_options(server, body, field):
    r = server.request("POST", "/v1/sessions", body=body, token=TOKEN, headers={"Content-Type": "application/json"})
    msg = error_of(r, 400, "InvalidRequest")
    assert msg.startswith(field), (field, msg)


def test_open_content_type_and_empty_body(server):
    msg = error_of(server.request("POST", "/v1/sessions", body=b"{}", token=TOKEN,
                                  headers={"Content-Type": "text/plain"}), 400)
    assert "Content-Type" in msg
    # No body: every default (no Content-Type needed); an empty JSON object too.
    for body, headers in ((None, {}), (b"{}", {"Content-Type": "application/json"}),
                          (b"  \n", {"Content-Type": "application/json; charset=utf-8"})):
        r = server.request("POST", "/v1/sessions", body=body, token=TOKEN, headers=headers)
        assert r.status == 201, (body, r)
        assert server.request("DELETE", f"/v1/sessions/{r.json()['id']}", token=TOKEN).status == 204


def test_unknown_routes_and_methods(server, sess):
    error_of(server.request("GET", "/v1/sessions/" + "0" * 32, token=TOKEN), 404, "NotFound")
    error_of(server.request("GET", "/v1/sessions/nope/files?path=x", token=TOKEN), 404, "NotFound")
    error_of(sess.req("GET", "/nothing"), 404, "NotFound")
    error_of(sess.req("GET", "/files/list/more"), 404, "NotFound")
    for method, suffix in (("PATCH", ""), ("POST", ""), ("PUT", ""), ("GET", "/commands"), ("PUT", "/code"),
                           ("POST", "/files?path=x"), ("DELETE", "/files/list?path=x")):
        r = sess.req(method, suffix)
        error_of(r, 405, "MethodNotAllowed")
        assert r.header("Allow"), r.headers
    for method in ("GET", "DELETE", "PUT"):
        error_of(server.request(method, "/v1/sessions", token=TOKEN), 405, "MethodNotAllowed")


def test_token_is_required(server, sess):
    for method, path in (("POST", "/v1/sessions"), ("GET", sess.base), ("DELETE", sess.base),
                         ("GET", sess.base + "/files?path=x"), ("PUT", sess.base + "/files?path=x"),
                         ("GET", sess.base + "/files/list?path=."), ("POST", sess.base + "/commands")):
        error_of(server.request(method, path, body=b"{}" if method in ("POST", "PUT") else None), 401)
        error_of(server.request(method, path, token="not-a-token-0123456789abcdef",
                                body=b"{}" if method in ("POST", "PUT") else None), 401)
    assert sess.req("GET").status == 200  # still there


def test_sessions_belong_to_their_token(server):
    a = Session(server, token=TOKEN)
    b = Session(server, token=OTHER)
    try:
        assert a.put("mine.txt", "A's").status == 204
        for s, other in ((a, OTHER), (b, TOKEN)):
            error_of(s.req("GET", token=other), 404, "NotFound")
            error_of(s.req("POST", "/commands", {"command": "echo hi"}, token=other), 404)
            error_of(s.req("POST", "/code", {"code": "print(1)", "language": "python"}, token=other), 404)
            error_of(s.req("GET", "/files?path=mine.txt", token=other), 404)
            error_of(s.req("PUT", "/files?path=evil.txt", b"x", token=other), 404)
            error_of(s.req("DELETE", "/files?path=mine.txt", token=other), 404)
            error_of(s.req("GET", "/files/list?path=.", token=other), 404)
            error_of(s.req("DELETE", token=other), 404)
        # untouched by all that
        assert a.get("mine.txt").body == b"A's"
        assert a.get("evil.txt").status == 404
        assert a.req("GET").status == 200 and b.req("GET").status == 200
    finally:
        a.close()
        b.close()


def test_max_sessions_and_max_body():
    with Server("--max-sessions", "2", "--max-body", "4096") as srv:
        a, b = Session(srv), Session(srv)
        msg = error_of(srv.request("POST", "/v1/sessions"), 503, "Overloaded")
        assert "--max-sessions" in msg
        assert a.close().status == 204
        c = Session(srv)  # a place again
        big = b"x" * 5000
        error_of(b.put("big", big), 413, "PayloadTooLarge")
        error_of(b.req("POST", "/commands", {"command": "echo " + "y" * 5000}), 413, "PayloadTooLarge")
        error_of(b.req("POST", "/code", {"code": "#" * 5000, "language": "python"}), 413, "PayloadTooLarge")
        error_of(srv.request("POST", "/v1/sessions", body={"files": {"f": "z" * 5000}}), 413, "PayloadTooLarge")
        assert b.put("small", b"x" * 4000).status == 204
        assert b.get("small").body == b"x" * 4000
        b.close()
        c.close()
    with Server("--max-sessions", "0") as srv:
        error_of(srv.request("POST", "/v1/sessions"), 503, "Overloaded")


# ---- commands and code ----

def test_command_outcomes(sess):
    r = sess.cmd("echo out; echo err >&2; exit 3")
    assert r["status"] == "error" and r["exitCode"] == 3 and r["success"] is False, r
    assert r["stdout"] == "out\n" and r["stderr"] == "err\n", r
    assert set(r) >= {"status", "success", "exitCode", "stdout", "stderr", "usage", "truncated", "meta"}, r
    assert "files" not in r
    r = sess.cmd("no-such-command-here")
    assert r["exitCode"] == 127 and "not found" in r["stderr"], r
    r = sess.cmd("kill -9 $$")
    assert r["exitCode"] == 137 and r["status"] == "crash", r
    r = sess.cmd("echo partial; sleep 20", timeout=0.5)
    assert r["status"] == "timeout" and r["exitCode"] == 124 and r["stdout"] == "partial\n", r
    assert r["error"]["message"] == "the command did not finish within the 0.5 s timeout", r["error"]
    r = sess.code("import time\ntime.sleep(20)", "python", timeout=0.5)
    assert r["status"] == "timeout" and r["error"]["message"] == "the code did not finish within the 0.5 s timeout", r
    assert r["usage"]["wallMs"] < 5000, r
    r = sess.code("x", "cobol")
    assert r["exitCode"] == 127 and "Language interpreter not found: cobol" in r["stderr"], r
    assert ok(sess.cmd("echo still here")) == "still here\n"


def test_command_env_stdin_args(sess):
    out = ok(sess.cmd('echo "$FOO|$BAR"; cat', env={"FOO": "foo value", "BAR": "ü"}, stdin="line1\nline2\n"))
    assert out == "foo value|ü\nline1\nline2\n", out
    out = ok(sess.code("import sys\nprint(sys.argv[1:], sys.stdin.read())", "python", args=["a b", "c"],
                       stdin="in"))
    assert out == "['a b', 'c'] in\n", out
    # env is per command
    assert ok(sess.cmd('echo "[$FOO]"')) == "[]\n"


# ---- function calls in the session (FunctionCallRequest, as POST /v1/call) ----

CALLS = {
    "python": ("def f(x):\n    return open('n.txt').read().strip() + x\n", "f"),
    "javascript": ("function f(x) { return require('fs').readFileSync('n.txt', 'utf8').trim() + x; }\n", "f"),
    "ruby": ("def f(x)\n  File.read('n.txt').strip + x\nend\n", "f"),
    "php": ("<?php\nfunction f($x) { return trim(file_get_contents('n.txt')) . $x; }\n", "f"),
    "c": ("#include <stdio.h>\nint f(int x) { int n = 0; FILE *p = fopen(\"n.txt\", \"r\");\n"
          "  if (p) { fscanf(p, \"%d\", &n); fclose(p); } return n * 10 + x; }\n", "f"),
    "cpp": ("#include <fstream>\nint f(int x) { std::ifstream in(\"n.txt\"); int n = 0; in >> n; return n * 10 + x; }\n",
            "f"),
}


@pytest.mark.parametrize("lang", sorted(CALLS))
def test_function_call_sees_and_keeps_the_session_files(sess, lang):
    code, name = CALLS[lang]
    assert ok(sess.cmd("echo 4 > n.txt && echo ready")) == "ready\n"
    arg = 2 if lang in ("c", "cpp") else "2"
    r = sess.req("POST", "/call", {"language": lang, "code": code, "functionName": name, "args": [arg]})
    assert r.status == 200, r
    res = r.json()
    assert res["status"] == "success", res
    assert res["result"] == (42 if lang in ("c", "cpp") else "42"), res
    assert "files" not in res, res
    # the harness's files are gone from the session again
    assert ok(sess.cmd("ls -A /tmp/.fnbox-run | wc -l")).strip() == "0"


def test_function_call_writes_stay_and_errors_are_the_languages(sess):
    body = {"language": "python", "code": "def f():\n    open('out.txt', 'w').write('kept')\n    raise KeyError('k')\n"}
    res = sess.req("POST", "/call", body).json()
    assert res["status"] == "error" and res["error"]["type"] == "KeyError", res
    assert sess.get("out.txt").body == b"kept"


@pytest.mark.parametrize("field", ["files", "mount", "permissions", "limits", "workdir"])
def test_function_call_refuses_what_the_session_owns(sess, field):
    value = {"files": {"a": "b"}, "mount": {"dirs": []}, "permissions": {}, "limits": {},
             "workdir": "/w"}[field]
    r = sess.req("POST", "/call", {"language": "python", "code": "def f():\n    return 1\n", field: value})
    assert r.status == 400, r
    assert r.json()["error"]["message"].startswith(field), r


def test_function_call_streams_and_times_out(sess):
    code = "import sys, time\ndef f():\n    print('early', flush=True)\n    time.sleep(30)\n"
    r = sess.req("POST", "/call", {"language": "python", "code": code, "timeout": 1},
                 headers={"Accept": "application/x-ndjson"})
    assert r.status == 200, r
    lines = [json.loads(x) for x in r.body.decode().splitlines()]
    assert lines[0] == {"type": "stdout", "data": "early\n"}, lines
    assert lines[-1]["type"] == "result" and lines[-1]["status"] == "timeout", lines[-1]


def test_command_cwd(sess):
    assert sess.put("sub/dir/f.txt", "x").status == 204
    assert ok(sess.cmd("pwd", cwd="sub/dir")) == "/workspace/sub/dir\n"
    assert ok(sess.cmd("pwd", cwd="./sub/../sub")) == "/workspace/sub\n"
    assert ok(sess.cmd("pwd", cwd="/tmp")) == "/tmp\n"
    assert ok(sess.cmd("pwd", cwd="/")) == "/\n"
    assert ok(sess.cmd("pwd")) == "/workspace\n"
    # a missing cwd is made, as `fnbox exec` makes it (the root outside the system directories is scratch)
    assert ok(sess.cmd("pwd", cwd="missing/deeper")) == "/workspace/missing/deeper\n"
    assert ok(sess.cmd("pwd", cwd="/no/such/dir")) == "/no/such/dir\n"
    assert sess.ls("missing").status == 200
    # not a directory, or where the sandbox's user may not make one: refused, nothing made
    for cwd in ("sub/dir/f.txt", "sub/dir/f.txt/below", "/usr/fnbox-cwd", "/proc/fnbox-cwd"):
        r = sess.req("POST", "/commands", {"command": "pwd", "cwd": cwd})
        assert r.status == 400, (cwd, r)
        assert r.json()["error"]["message"].startswith("cwd"), r
    assert not os.path.exists("/usr/fnbox-cwd")
    r = sess.req("POST", "/commands", {"command": "pwd", "cwd": 5})
    assert r.status == 400 and "cwd" in r.json()["error"]["message"], r


@pytest.mark.parametrize("body, field", [
    (b"{bad", "request"),
    (b"[]", None),
    (b'{"command": 5}', "command"),
    (b'{"command": "true", "env": []}', "env"),
    (b'{"command": "true", "env": {"A": 1}}', "env"),
    (b'{"command": "true", "timeout": "1"}', "timeout"),
    (b'{"command": "true", "timeout": -1}', "timeout"),
    (b'{"command": "true", "stdin": 5}', "stdin"),
    (b'{"command": "true", "args": "x"}', "args"),
    (b'{"command": "true", "bogus": 1}', "bogus"),
    (b'{"command": "true", "files": {"a": "b"}}', "files"),
    (b'{"command": "true", "limits": {"memoryBytes": 100000000}}', "limits"),
    (b'{"command": "true", "permissions": {}}', "permissions"),
    (b'{"command": "true", "mount": {}}', "mount"),
    (b'{"cwd": "/tmp"}', "command"),
])
def test_command_refused(sess, body, field):
    r = sess.req("POST", "/commands", body, headers={"Content-Type": "application/json"})
    assert r.status == 400, r
    doc = r.json()
    msg = doc["error"]["message"]
    assert doc["error"]["type"] in ("InvalidRequest",), doc
    if field:
        assert msg.startswith(field) or f"{field}:" in msg, (field, msg)


def test_code_route_refusals(sess):
    r = sess.req("POST", "/code", {"command": "true"})
    assert r.status == 400 and r.json()["error"]["message"].startswith("code"), r
    r = sess.req("POST", "/code", {"code": "print(1)", "language": "python", "files": {"a": "b"}})
    assert r.status == 400 and r.json()["error"]["message"].startswith("files"), r
    r = sess.req("POST", "/code", {"code": "print(1)"})
    assert r.status == 400 and "language" in r.json()["error"]["message"], r
    r = sess.req("POST", "/commands", b"{}", headers={"Content-Type": "text/plain"})
    assert r.status == 400 and "Content-Type" in r.json()["error"]["message"], r
    r = sess.req("POST", "/commands")
    assert r.status == 400 and "body" in r.json()["error"]["message"], r


# Each program reads shared.txt (written by the file API), prints it, and writes out.txt.
PROGRAMS = {
    "python": "import sys\nd = open('shared.txt').read()\nprint('py:' + d)\nopen('out_python.txt', 'w').write(d + '!')\n",
    "javascript": "const fs = require('fs');\nconst d = fs.readFileSync('shared.txt', 'utf8');\n"
                  "console.log('js:' + d);\nfs.writeFileSync('out_javascript.txt', d + '!');\n",
    "ruby": "d = File.read('shared.txt')\nputs 'rb:' + d\nFile.write('out_ruby.txt', d + '!')\n",
    "php": "<?php\n$d = file_get_contents('shared.txt');\necho 'php:' . $d . \"\\n\";\n"
           "file_put_contents('out_php.txt', $d . '!');\n",
    "sh": "d=$(cat shared.txt)\necho \"sh:$d\"\nprintf '%s!' \"$d\" > out_sh.txt\n",
    "bash": "d=$(<shared.txt)\necho \"bash:${d}\"\nprintf '%s!' \"$d\" > out_bash.txt\n",
    "c": "#include <stdio.h>\nint main(void) {\n  char b[64] = {0};\n  FILE *f = fopen(\"shared.txt\", \"r\");\n"
         "  if (!f || !fgets(b, sizeof b, f)) return 2;\n  fclose(f);\n  printf(\"c:%s\\n\", b);\n"
         "  f = fopen(\"out_c.txt\", \"w\");\n  fprintf(f, \"%s!\", b);\n  return fclose(f) != 0;\n}\n",
    "cpp": "#include <fstream>\n#include <iostream>\n#include <string>\nint main() {\n  std::ifstream in(\"shared.txt\");\n"
           "  std::string d;\n  std::getline(in, d);\n  std::cout << \"cpp:\" << d << std::endl;\n"
           "  std::ofstream(\"out_cpp.txt\") << d << '!';\n  return 0;\n}\n",
}
PREFIX = {"python": "py", "javascript": "js", "ruby": "rb", "php": "php", "sh": "sh", "bash": "bash", "c": "c",
          "cpp": "cpp"}
RUNTIMES = {"python": "python3", "javascript": "node", "ruby": "ruby", "php": "php", "sh": "sh", "bash": "bash",
            "c": "gcc", "cpp": "g++"}


@pytest.fixture(scope="module")
def lang_session(server):
    s = Session(server)
    yield s
    s.close()


@pytest.mark.parametrize("language", list(PROGRAMS))
def test_code_in_every_language_shares_files(lang_session, language):
    s = lang_session
    if not shutil.which(RUNTIMES[language]) and not (language in ("c", "cpp") and shutil.which("cc")):
        pytest.skip(f"{language}: runtime {RUNTIMES[language]} not installed")
    assert s.put("shared.txt", "data-" + language).status == 204
    r = s.code(PROGRAMS[language], language, timeout=60)
    assert r["status"] == "success", r
    assert r["stdout"] == f"{PREFIX[language]}:data-{language}\n", r
    if language in ("c", "cpp"):
        assert r["compile"]["exitCode"] == 0, r
    got = s.get(f"out_{language}.txt")
    assert got.status == 200 and got.body == f"data-{language}!".encode(), got
    # and a later command sees it, the code's scratch directory gone
    assert ok(s.cmd(f"cat out_{language}.txt")) == f"data-{language}!"
    assert ok(s.cmd("ls -A /tmp/.fnbox-run 2>/dev/null | wc -l")).strip() == "0"


def test_c_compile_error_is_reported(sess):
    r = sess.code("int main(void) { return nope; }\n", "c", timeout=60)
    assert r["status"] == "error" and r["exitCode"] != 0, r
    assert r["compile"]["exitCode"] != 0 and "nope" in r["compile"]["output"], r


def test_files_persist_between_commands_and_code(sess):
    ok(sess.cmd("echo from-command > a.txt; mkdir -p d; echo x > d/x"))
    assert ok(sess.code("print(open('a.txt').read().strip())", "python")) == "from-command\n"
    ok(sess.code("open('b.txt', 'w').write('from-code')", "python"))
    assert ok(sess.cmd("cat b.txt")) == "from-code"
    assert sess.get("b.txt").body == b"from-code"
    ok(sess.cmd("echo tmp > /tmp/t"))
    assert sess.get("/tmp/t").body == b"tmp\n"


# ---- files ----

def test_binary_round_trip(sess):
    data = bytes(range(256))
    assert sess.put("bin/all.bytes", data).status == 204
    r = sess.get("bin/all.bytes")
    assert r.status == 200 and r.body == data and r.header("Content-Type") == "application/octet-stream"
    out = ok(sess.cmd("od -An -v -tx1 bin/all.bytes | tr -d ' \\n'"))
    assert out == data.hex(), out
    # and what a command writes comes back byte for byte
    ok(sess.code("import sys\nsys.stdout.buffer.write(b'')\nopen('rev.bytes','wb').write(bytes(range(255,-1,-1)))",
                 "python"))
    assert sess.get("rev.bytes").body == bytes(range(255, -1, -1))
    assert sess.put("empty", b"").status == 204
    r = sess.get("empty")
    assert r.status == 200 and r.body == b""
    big = os.urandom(3 << 20)
    assert sess.put("big.bin", big).status == 204
    assert sess.get("big.bin").body == big
    assert ok(sess.cmd("wc -c < big.bin")).strip() == str(len(big))


@pytest.mark.skipif(not os.path.exists("/etc/mime.types"), reason="no /etc/mime.types (Debian's media-types)")
def test_download_type_from_the_extension(sess):
    # Every file was application/octet-stream; the type now follows the name (the server reads
    # /etc/mime.types), a text says UTF-8 where it is, and the untrusted bytes are sent so that a browser
    # neither guesses their type nor runs them in the server's origin.
    png = b"\x89PNG\r\n\x1a\n" + bytes(24)
    for path, data, want in (("out/plot.png", png, "image/png"),
                             ("out/data.csv", b"a,b\n1,2\n", "text/csv; charset=utf-8"),
                             ("out/notes.txt", "café\n".encode(), "text/plain; charset=utf-8"),
                             ("out/latin1.TXT", b"caf\xe9\n", "text/plain"),
                             ("out/r.json", b'{"a": 1}', "application/json"),
                             ("out/page.html", b"<script>alert(1)</script>", "text/html; charset=utf-8"),
                             ("out/Makefile", b"all:\n", "application/octet-stream"),
                             ("out/blob.fnbox-unknown", b"\x00\x01", "application/octet-stream")):
        assert sess.put(path, data).status == 204
        r = sess.get(path)
        assert r.status == 200 and r.body == data, (path, r)
        assert r.header("Content-Type") == want, (path, r.header("Content-Type"))
        assert r.header("X-Content-Type-Options") == "nosniff", path
        assert r.header("Content-Security-Policy") == "default-src 'none'; sandbox", path
        name = path.rsplit("/", 1)[1]
        assert r.header("Content-Disposition") == f"attachment; filename=\"{name}\"; filename*=UTF-8''{name}", path
    # a name that needs escaping is still named, and no header can be smuggled in through it
    assert sess.put("out/résumé \"1\".txt", "x").status == 204
    r = sess.get("out/résumé \"1\".txt")
    assert r.header("Content-Disposition") == ("attachment; filename=\"r__sum__ _1_.txt\"; "
                                               "filename*=UTF-8''r%C3%A9sum%C3%A9%20%221%22.txt"), r
    assert r.header("Content-Type") == "text/plain; charset=utf-8"


NAMES = ["with space", "new\nline", "tab\tname", "quo\"te'", "ünïcødé-✓-名前", "back\\slash", "-dash", "*star?",
         "$(touch pwned)", "%2e%2e", ".hidden", "x" * 255]


def test_hostile_and_unicode_names(sess):
    for i, name in enumerate(NAMES):
        r = sess.put("names/" + name, f"v{i}")
        assert r.status == 204, (name, r)
        assert sess.get("names/" + name).body == f"v{i}".encode(), name
    listed = sess.ls("names").json()
    assert [e["name"] for e in listed] == sorted(NAMES, key=lambda n: n.encode()), listed
    # a command sees the same names
    out = ok(sess.code("import os\nfor n in sorted(os.listdir('names')):\n    print(repr(n))", "python"))
    assert out == "".join(repr(n) + "\n" for n in sorted(NAMES)), out
    assert sess.get("pwned").status == 404 and sess.get("names/pwned").status == 404
    for i, name in enumerate(NAMES):
        assert sess.rm("names/" + name).status == 204, name
    assert sess.ls("names").json() == []


def test_dot_dot_stays_in_the_sandbox(sess):
    # ".." is lexical and stops at the sandbox's root: it names the sandbox's own files
    assert sess.put("../../../../tmp/up.txt", "up").status == 204
    assert ok(sess.cmd("cat /tmp/up.txt")) == "up"
    assert sess.get("a/../../tmp/up.txt").body == b"up"
    assert sess.get("/../../../tmp/up.txt").body == b"up"
    assert not os.path.exists("/tmp/up.txt") or open("/tmp/up.txt", "rb").read() != b"up"


@pytest.mark.parametrize("path, status", [
    ("", 400), ("x" * 256, 400), ("d/" + "y" * 300 + "/f", 400), ("z/" * 2100, 400), ("/", 400), (".", 400),
    ("..", 400), ("a\0b", 400),
])
def test_bad_paths(sess, path, status):
    # (DELETE "." is not here: it removes the workdir when empty, as `rmdir /workspace` in the sandbox would)
    for r in (sess.put(path, "x"), sess.get(path)) + ((sess.rm(path),) if path != "." else ()):
        assert r.status == status, (path[:40], r)
        assert r.json()["error"]["message"].startswith("path"), r


def raw_status(srv, method, target, body=b""):
    """The status line's code of a request sent whole on a raw socket, or None when the connection was reset
    before an answer could be read: a server that refuses a request line it will not read closes with the
    rest unread, and the kernel then resets the connection, which may discard its 4xx unread (http.client
    raised on that now and then)."""
    s = srv.raw_socket()
    try:
        head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        try:
            s.sendall(head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            line = s.recv(64)
        except ConnectionResetError:
            return None
        return int(line.split(b" ")[1]) if line.startswith(b"HTTP/1.1 ") else line
    finally:
        s.close()


def test_very_long_url_is_refused_not_500(sess, server):
    path = sess.base + "/files?path=" + "q" * 200000
    for method, body in (("GET", b""), ("PUT", b"x")):
        status = raw_status(server, method, path, body)
        assert status in (None, 400, 413, 414, 431), status
    assert sess.req("GET").status == 200


def test_missing_path_argument(sess):
    for method, suffix in (("GET", "/files"), ("PUT", "/files"), ("DELETE", "/files")):
        msg = error_of(sess.req(method, suffix, body=b"x" if method == "PUT" else None), 400, "InvalidRequest")
        assert msg.startswith("path"), msg


def test_list_without_path_lists_the_workdir(server):
    # It was 400 "path: missing": a listing without a path is the workdir's, as MCP's list_files gives.
    s = Session(server, {"workdir": "/work/proj", "files": {"b.txt": "bb", "a/x": "1"}})
    try:
        whole = [{"name": "a", "isDir": True, "size": 0}, {"name": "b.txt", "isDir": False, "size": 2}]
        for suffix in ("/files/list", "/files/list?path=", "/files/list?path"):
            r = s.req("GET", suffix)
            assert r.status == 200 and r.header("Content-Type") == "application/json", (suffix, r)
            assert r.json() == whole, (suffix, r.json())
        assert s.ls(".").json() == whole
    finally:
        s.close()


def test_write_creates_parents_and_replaces(sess):
    assert sess.put("p/q/r/s.txt", "one").status == 204
    assert sess.put("p/q/r/s.txt", "two").status == 204
    assert sess.get("p/q/r/s.txt").body == b"two"
    assert ok(sess.cmd("stat -c '%U %a' p p/q p/q/r p/q/r/s.txt")) == ("sandbox 755\n" * 3) + "sandbox 644\n"
    # a file in the way of a parent, a directory in the way of the file
    msg = error_of(sess.put("p/q/r/s.txt/under", "x"), 404)
    assert msg.startswith("path")
    r = sess.put("p/q", "x")
    assert r.status == 400 and r.json()["error"]["message"].startswith("path"), r
    # read-only system paths
    for path in ("/etc/new", "/usr/bin/new", "/etc/passwd"):
        error_of(sess.put(path, "x"), 403, "PermissionDenied")
    error_of(sess.rm("/etc/passwd"), 403, "PermissionDenied")
    assert b"sandbox" in sess.get("/etc/passwd").body


def test_list_sorted_with_types_and_sizes(sess):
    for name, data in (("b.txt", "bb"), ("a.txt", "a"), ("C", "ccc"), ("dir/x", "1234")):
        assert sess.put("ls/" + name, data).status == 204
    ok(sess.cmd("mkdir ls/empty && ln -s a.txt ls/link"))
    r = sess.ls("ls")
    assert r.status == 200 and r.header("Content-Type") == "application/json", r
    assert r.json() == [{"name": "C", "isDir": False, "size": 3}, {"name": "a.txt", "isDir": False, "size": 1},
                        {"name": "b.txt", "isDir": False, "size": 2}, {"name": "dir", "isDir": True, "size": 0},
                        {"name": "empty", "isDir": True, "size": 0}, {"name": "link", "isDir": False, "size": 5}]
    assert sess.ls("/workspace/ls/dir").json() == [{"name": "x", "isDir": False, "size": 4}]
    assert sess.ls("ls/empty").json() == []
    error_of(sess.ls("ls/missing"), 404, "NotFound")
    error_of(sess.ls("ls/a.txt"), 404, "NotFound")
    names = [e["name"] for e in sess.ls("/").json()]
    assert {"workspace", "tmp", "etc", "usr"} <= set(names), names
    error_of(sess.get("ls/dir"), 400, "InvalidRequest")
    error_of(sess.get("ls/nothing"), 404, "NotFound")


def test_remove_file_and_empty_dir(sess):
    assert sess.put("rm/d/f", "x").status == 204
    assert sess.put("rm/g", "y").status == 204
    assert sess.rm("rm/g").status == 204
    error_of(sess.get("rm/g"), 404)
    error_of(sess.rm("rm/g"), 404)
    msg = error_of(sess.rm("rm/d"), 400, "InvalidRequest")  # not empty
    assert msg.startswith("path")
    assert sess.rm("rm/d/f").status == 204
    assert sess.rm("rm/d").status == 204
    assert sess.ls("rm").json() == []
    assert ok(sess.cmd("ls -A rm | wc -l")).strip() == "0"
    for workdir in (".", "/workspace", "rm/.."):  # the workdir itself stays
        assert error_of(sess.rm(workdir), 400, "InvalidRequest").startswith("path"), workdir
    assert ok(sess.cmd("pwd")) == "/workspace\n"



# ---- life: reaping, DELETE during a command, concurrency, SIGTERM ----

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_idle_timeout_reaps(server):
    before = descendants(server.proc.pid)
    s = Session(server, {"idleTimeout": 1})
    assert ok(s.cmd("echo hi")) == "hi\n"
    mine = descendants(server.proc.pid) - before
    assert mine, "the session's init is not a child of the server"
    t0 = time.monotonic()
    wait_for(lambda: s.req("GET").status == 404, timeout=6, what="idle session reaped")
    assert time.monotonic() - t0 >= 0.9
    error_of(s.req("POST", "/commands", {"command": "true"}), 404)
    wait_for(lambda: not [p for p in mine if alive(p)], timeout=5, what="the reaped session's processes gone")


def test_idle_timeout_counts_from_last_use(server):
    s = Session(server, {"idleTimeout": 1.5})
    try:
        for _ in range(4):  # ~3 s of use, each request well within the idle time
            assert ok(s.cmd("sleep 0.6; echo x")) == "x\n"
        assert s.req("GET").status == 200
    finally:
        s.close()


def test_max_lifetime_reaps_even_a_busy_session(server):
    s = Session(server, {"maxLifetime": 2, "idleTimeout": 60})
    mark = marker()
    t0 = time.monotonic()
    r = s.req("POST", "/commands", {"command": f"cp /bin/sleep /tmp/{mark} && /tmp/{mark} 30", "timeout": 60})
    took = time.monotonic() - t0
    assert 1.5 < took < 8, (took, r)
    # killed by the reaper: "terminated" (143), as a cancelled call, not an exit of its own
    assert r.status == 200, r
    res = r.json()
    assert res["status"] == "terminated" and res["exitCode"] == 143, res
    wait_for(lambda: s.req("GET").status == 404, timeout=5, what="session past maxLifetime reaped")
    wait_for(lambda: not host_pids_matching(mark), timeout=5, what="the command's processes gone")


def test_delete_while_a_command_runs(server):
    s = Session(server)
    mark = marker()
    box = {}

    def run():
        box["t0"] = time.monotonic()
        box["r"] = s.req("POST", "/commands", {"command": f"cp /bin/sleep /tmp/{mark} && /tmp/{mark} 60",
                                               "timeout": 120})
        box["t1"] = time.monotonic()

    t = threading.Thread(target=run)
    t.start()
    wait_for(lambda: host_pids_matching(mark), timeout=10, what="the command started")
    info = s.req("GET").json()
    assert info["running"] == 1, info
    t_del = time.monotonic()
    assert s.close().status == 204
    t.join(10)
    assert not t.is_alive(), "the command's request did not come back after DELETE"
    assert box["t1"] - t_del < 5, box
    r = box["r"]
    assert r.status == 200, r
    res = r.json()
    assert res["status"] == "terminated" and res["exitCode"] == 143 and res["success"] is False, res
    wait_for(lambda: not host_pids_matching(mark), timeout=5, what="no process of the command left")
    error_of(s.req("GET"), 404)


def test_concurrent_commands_in_one_session(sess):
    results = [None] * 4

    def run(i):
        results[i] = sess.cmd(f"sleep 1; echo {i} > c{i}.txt; echo done{i}")

    t0 = time.monotonic()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    took = time.monotonic() - t0
    for i, r in enumerate(results):
        assert r and ok(r) == f"done{i}\n", r
    assert took < 3.5, f"4 commands of 1 s took {took:.1f} s: not concurrent"
    assert [e["name"] for e in sess.ls(".").json() if e["name"].startswith("c")] == [f"c{i}.txt" for i in range(4)]
    # concurrent file operations and commands too
    errs = []

    def files(i):
        try:
            for k in range(10):
                assert sess.put(f"cf/{i}/{k}", f"{i}-{k}").status == 204
                assert sess.get(f"cf/{i}/{k}").body == f"{i}-{k}".encode()
        except AssertionError as e:
            errs.append(e)

    threads = [threading.Thread(target=files, args=(i,)) for i in range(4)]
    threads.append(threading.Thread(target=lambda: sess.cmd("sleep 0.3")))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errs, errs
    assert ok(sess.cmd("find cf -type f | wc -l")).strip() == "40"


def test_sessions_are_separate(server):
    a, b = Session(server), Session(server)
    try:
        assert a.put("only-a.txt", "a").status == 204
        ok(a.cmd("echo a > /tmp/a-tmp"))
        error_of(b.get("only-a.txt"), 404)
        error_of(b.get("/tmp/a-tmp"), 404)
        assert ok(b.cmd("ls -A /workspace; ls -A /tmp")) == ""
    finally:
        a.close()
        b.close()


def test_sigterm_with_open_sessions_leaves_nothing(token_file):
    mark = marker()
    srv = Server("--grace", "0.5", "--token-file", token_file)
    box = {}
    try:
        a, b = Session(srv), Session(srv, token=OTHER)
        assert a.put("f", "x").status == 204
        ok(b.cmd("echo started"))

        def run():
            box["r"] = a.req("POST", "/commands", {"command": f"cp /bin/sleep /tmp/{mark}; /tmp/{mark} 60 & "
                                                              f"/tmp/{mark} 61", "timeout": 120})

        t = threading.Thread(target=run)
        t.start()
        wait_for(lambda: len(host_pids_matching(mark)) >= 3, timeout=10, what="the command started")
        pids = descendants(srv.proc.pid)
        # two sessions' inits, the command's init, its shell and two sleeps
        assert len(pids) >= 6 and {p for p, _ in host_pids_matching(mark)} <= pids, pids
        t0 = time.monotonic()
        srv.signal(signal.SIGTERM)
        assert srv.wait(30) == 0, srv.log_text()[-2000:]
        assert time.monotonic() - t0 < 10
        t.join(10)
        assert not t.is_alive()
        # cancelled after the grace period: its answer still went out
        assert box["r"].status == 200, box["r"]
        assert box["r"].json()["status"] == "terminated", box["r"]
        assert any(line.get("event") == "sessions closed" and line.get("count") == 2 for line in srv.lines()), \
            srv.log_text()[-2000:]
    finally:
        if srv.exit_code is None:
            srv.stop()
    wait_for(lambda: not [p for p in pids if alive(p)], timeout=5, what="every session process gone")
    assert not host_pids_matching(mark), host_pids_matching(mark)
    assert not cgroups_of(srv.proc.pid, srv.started), cgroups_of(srv.proc.pid, srv.started)


def test_metrics_count_sessions(server):
    before = server.request("GET", "/metrics", token=TOKEN)
    assert before.status == 200
    s = Session(server)
    text = server.request("GET", "/metrics", token=TOKEN).body.decode()
    s.close()
    assert "session" in text, text[:2000]


# ---- a dead session (its sandbox's init killed from outside, or by the memory limit) ----

def _session_inits(srv):
    """Host pids of the sandbox inits the server started: its direct children named fnbox-init (a command's
    init is a grandchild)."""
    out = set()
    for p in descendants(srv.proc.pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == srv.proc.pid and cmdline(p) == "fnbox-init":
            out.add(p)
    return out


def _open_with_init(srv, options=None):
    before = _session_inits(srv)
    s = Session(srv, options)
    new = _session_inits(srv) - before
    assert len(new) == 1, new
    return s, new.pop()


def _assert_dead(srv, s, cause):
    """s answers as a dead session: info state/reason, 410 SessionDead naming the cause on every route."""
    info = s.req("GET")
    assert info.status == 200 and info.json()["state"] == "dead" and info.json()["reason"] == cause, info
    assert info.json()["id"] == s.id, info
    for r in (s.req("POST", "/commands", {"command": "true"}), s.get("x"), s.put("x", "1"), s.ls("."),
              s.req("POST", "/kernels/python/execute", {"code": "1"})):
        msg = error_of(r, 410, "SessionDead")
        assert cause in msg and "open a new session" in msg, msg
    assert metric(srv, "fnbox_sessions_dead_total") >= 1
    assert metric(srv, "fnbox_sessions_open") == 0
    lines = [line for line in srv.lines() if line.get("event") == "session-dead"]
    assert lines and lines[-1]["session"] == s.id and lines[-1]["reason"] == cause, srv.log_text()[-2000:]
    # its resources are gone at once: no process, no cgroup (the server still runs)
    assert not _session_inits(srv), _session_inits(srv)
    wait_for(lambda: not cgroups_of(srv.proc.pid, srv.started), timeout=10, what="the session's cgroups removed")
    assert s.close().status == 204  # a dead session's id is forgotten on DELETE
    error_of(s.req("GET"), 404, "NotFound")


def test_session_killed_from_outside_is_dead():
    with Server() as srv:
        other = Session(srv)
        s, init = _open_with_init(srv)
        assert s.info["state"] == "running", s.info
        assert ok(s.cmd("echo hi")) == "hi\n"
        os.kill(init, signal.SIGKILL)
        # noticed at once (the reaper watches the init), not at the next request
        wait_for(lambda: any(line.get("event") == "session-dead" for line in srv.lines()), timeout=5,
                 what="the death logged")
        assert metric(srv, "fnbox_sessions_dead_total") == 1
        other.close()
        _assert_dead(srv, s, "killed by signal 9")
        r = other.req("GET")
        error_of(r, 404, "NotFound")  # a closed session is not dead


def _memory_cgroup_of(srv):
    dirs = [d for d in cgroups_of(srv.proc.pid, srv.started)
            if os.path.exists(os.path.join(d, "memory.max_usage_in_bytes")) or os.path.exists(os.path.join(d, "memory.peak"))]
    return dirs[0] if len(dirs) == 1 else None


def test_session_killed_by_its_memory_limit_is_dead():
    """A session's init dies with its memory limit where the OOM killer may take it (cgroup v2 without the
    right to exempt init: memory.oom.group takes it with the rest). As root fnbox exempts init, and on cgroup
    v1 init is outside the session's memory cgroup; so the test puts init there, first in the OOM killer's
    line (oom_score_adj 1000, once the command's processes exist: they would inherit it), as such a host
    has it, and the command's filling of the session's memory then kills it."""
    if os.geteuid() != 0:
        pytest.skip("moves the session's init between cgroups: needs root")
    with Server() as srv:
        s, init = _open_with_init(srv, {"limits": {"memoryBytes": 96 << 20, "fileSizeBytes": 512 << 20,
                                                   "tmpBytes": 512 << 20}})
        cg = _memory_cgroup_of(srv)
        if not cg:
            pytest.skip("no memory cgroup for the session (fnbox doctor says why)")
        box = {}
        # the memory goes into the session's /tmp (tmpfs, charged to the session, in no process's RSS), so that
        # init, with the highest score, is the OOM killer's choice rather than the writer
        command = "while [ ! -e /tmp/go ]; do sleep 0.05; done; head -c 419430400 /dev/zero > /tmp/fill"
        t = threading.Thread(target=lambda: box.setdefault("r", s.req("POST", "/commands", {"command": command})))
        t.start()
        wait_for(lambda: any(cmdline(p).startswith("sleep") for p in descendants(init)), timeout=10,
                 what="the command waiting")
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(init))
        with open(f"/proc/{init}/oom_score_adj", "w") as f:
            f.write("1000")
        assert s.put("/tmp/go", "").status == 204
        t.join(30)
        # the request the death ended says so too
        msg = error_of(box["r"], 410, "SessionDead")
        assert "memory limit" in msg, msg
        _assert_dead(srv, s, "memory limit")


def test_command_killed_by_the_memory_limit_leaves_the_session_running():
    if cgroup_refused():
        pytest.skip(cgroup_refused())
    with Server() as srv:
        s = Session(srv, {"limits": {"memoryBytes": 96 << 20}})
        r = s.cmd("python3 -c 'x = bytearray(400 << 20)'")
        assert r["exitCode"] == 137, r
        assert s.req("GET").json()["state"] == "running"
        assert ok(s.cmd("echo alive")) == "alive\n"
        assert metric(srv, "fnbox_sessions_dead_total") == 0
        s.close()


def test_command_usage_is_measured(sess):
    burn = sess.cmd("python3 -c 'import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass'")
    assert burn["usage"]["cpuMs"] > 100, burn
    if cgroup_refused():  # the CPU time above is measured all the same
        pytest.skip(cgroup_refused())
    # 60 MB in the session's /tmp (tmpfs: pages the program's own maxrss never counts)
    r = sess.cmd("head -c 62914560 /dev/zero > /tmp/big && ls -l /tmp/big")
    assert r["exitCode"] == 0, r
    assert r["usage"]["peakMemoryBytes"] > 50 << 20, r
    sess.rm("/tmp/big")
