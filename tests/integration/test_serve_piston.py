"""`fnbox serve`'s Piston v2 API, against the real server: GET /api/v2/runtimes (the versions the host's
runtimes report) and POST /api/v2/execute, spoken with http.client exactly as Piston's own clients do
(piston's cli/ sends {language, version, files: [{name, content}], args, stdin, compile_timeout,
run_timeout, run_memory_limit, ...} with Content-Type application/json); Piston's answer shapes and
messages. Also the npm piston-client, unchanged (tests/integration/piston: it posts its JSON as
text/plain;charset=UTF-8), and multi-file programs in every language, each file in the working directory
and the first run from there, as Piston does."""
import http.client
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fnboxlib import skip_unless_ci
from servelib import Server

PISTON_DIR = Path(__file__).resolve().parent / "piston"
CLIENT = PISTON_DIR / "node_modules" / "piston-client" / "package.json"


@pytest.fixture(scope="module")
def server():
    with Server("--max-concurrency", "2") as srv:
        yield srv


def piston(server, body, content_type="application/json"):
    """POST /api/v2/execute as piston's clients send it (a JSON body, nothing else)."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    try:
        conn.request("POST", "/api/v2/execute", body=json.dumps(body),
                     headers={"Content-Type": content_type} if content_type else {})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def host_version(argv):
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    return re.search(r"\d+(\.\d+)+", out).group(0)


def test_runtimes_are_real(server):
    r = server.request("GET", "/api/v2/runtimes")
    assert r.status == 200
    runtimes = {rt["language"]: rt for rt in r.json()}
    for rt in runtimes.values():
        assert set(rt) <= {"language", "version", "aliases", "runtime"} and isinstance(rt["aliases"], list)
    assert runtimes["python"]["version"] == host_version(["/usr/bin/python3", "--version"])
    assert runtimes["javascript"]["version"] == host_version(["node", "--version"])
    assert runtimes["javascript"]["runtime"] == "node"
    assert runtimes["c"]["version"] == host_version(["gcc", "-dumpfullversion"])
    assert runtimes["c++"]["version"] == host_version(["g++", "-dumpfullversion"])
    assert "sh" in runtimes["bash"]["aliases"] and "py" in runtimes["python"]["aliases"]
    assert server.request("HEAD", "/api/v2/runtimes").status == 200


def test_python_with_args_stdin_and_extra_file(server):
    status, res = piston(server, {
        "language": "python", "version": "3",
        "files": [{"name": "main.py", "content": "import sys\nprint(sys.argv[1:], input())\nprint(open('data.txt').read())"},
                  {"name": "data.txt", "content": "DATA"}],
        "stdin": "IN", "args": ["1", "2"], "compile_timeout": 10000, "run_timeout": 3000,
        "compile_memory_limit": -1, "run_memory_limit": -1})
    assert status == 200, res
    assert res["language"] == "python" and res["version"].startswith("3.")
    run = res["run"]
    assert run["stdout"] == "['1', '2'] IN\nDATA\n" and run["stderr"] == "" and run["output"] == run["stdout"]
    assert run["code"] == 0 and run["signal"] is None
    assert "compile" not in res


def test_output_is_interleaved_in_order(server):
    status, res = piston(server, {"language": "bash", "version": "*", "files": [
        {"content": "echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three"}]})
    assert status == 200
    assert res["run"]["output"] == "one\ntwo\nthree\n"
    assert (res["run"]["stdout"], res["run"]["stderr"]) == ("one\nthree\n", "two\n")


@pytest.mark.parametrize("language,code,out", [
    ("javascript", "console.log([1,2].map(x => x * 2).join(','))", "2,4\n"),
    ("node-js", "console.log('node')", "node\n"),
    ("ruby", "puts 6 * 7", "42\n"),
    ("rb", "puts 'rb'", "rb\n"),
    ("php", "<?php echo 'php', PHP_EOL;", "php\n"),
    ("sh", "echo sh", "sh\n"),
    ("py3", "print('py3')", "py3\n"),
])
def test_interpreted_languages(server, language, code, out):
    status, res = piston(server, {"language": language, "version": "*", "files": [{"content": code}]})
    assert status == 200, res
    assert res["run"]["stdout"] == out and res["run"]["code"] == 0


def test_cpp_has_compile_and_run(server):
    status, res = piston(server, {"language": "c++", "version": "*", "files": [
        {"name": "main.cpp", "content": "#include <iostream>\nint main(int c, char **v) { std::cout << v[1] << std::endl; return 4; }"}],
        "args": ["arg"]})
    assert status == 200, res
    assert res["language"] == "c++" and res["compile"]["code"] == 0
    assert res["run"]["stdout"] == "arg\n" and res["run"]["code"] == 4
    assert res["run"]["status"] == "RE"


def test_c_compile_error_is_compile_and_run(server):
    status, res = piston(server, {"language": "c", "version": "12", "files": [{"content": "int main(void) { return nope; }"}]})
    assert status == 200, res
    assert res["compile"]["code"] == 1 and "nope" in res["compile"]["stderr"]
    assert res["run"] == res["compile"]  # Piston: a run stage that never started is the compile stage


def test_timeout_and_signal(server):
    status, res = piston(server, {"language": "bash", "version": "*", "files": [{"content": "echo a; sleep 10"}],
                                  "run_timeout": 300})
    assert status == 200
    run = res["run"]
    assert (run["stdout"], run["code"], run["signal"], run["status"]) == ("a\n", None, "SIGKILL", "TO")
    status, res = piston(server, {"language": "bash", "version": "*", "files": [{"content": "kill -SEGV $$"}]})
    assert (res["run"]["code"], res["run"]["signal"]) == (None, "SIGSEGV")


def test_base64_and_hex_files(server):
    status, res = piston(server, {"language": "bash", "version": "*", "files": [
        {"content": "cat b.txt h.txt"},
        {"name": "b.txt", "content": "aGVsbG8K", "encoding": "base64"},
        {"name": "h.txt", "content": "776f726c640a", "encoding": "hex"}]})
    assert status == 200 and res["run"]["stdout"] == "hello\nworld\n", res


@pytest.mark.parametrize("body,message", [
    ({"version": "*", "files": []}, "language is required as a string"),
    ({"language": "python", "files": []}, "version is required as a string"),
    ({"language": "python", "version": "*"}, "files is required as an array"),
    ({"language": "python", "version": "*", "files": [{"name": "x"}]}, "files[0].content is required as a string"),
    ({"language": "cobol", "version": "*", "files": [{"content": "x"}]}, "cobol-* runtime is unknown"),
    ({"language": "python", "version": "2", "files": [{"content": "x"}]}, "python-2 runtime is unknown"),
    ({"language": "python", "version": "3.1", "files": [{"content": "x"}]}, "python-3.1 runtime is unknown"),
    ({"language": "python", "version": "*", "files": [{"content": "eA==", "encoding": "base64"}]},
     "files must include at least one utf8 encoded file"),
    ({"language": "python", "version": "*", "files": [{"content": "x"}], "run_timeout": "1"},
     "If specified, run_timeout must be a number"),
    ({"language": "python", "version": "*", "files": [{"content": "x"}], "run_timeout": -5},
     "run_timeout must be non-negative"),
])
def test_refusals_are_piston_messages(server, body, message):
    status, res = piston(server, body)
    assert status == 400 and res == {"message": message}, res


def test_fnbox_refusal_is_a_message(server):
    status, res = piston(server, {"language": "python", "version": "*", "files": [
        {"content": "x"}, {"name": "../escape", "content": "y"}]})
    assert status == 400 and res["message"].startswith("files[\"../escape\"]"), res


def test_exact_and_prefix_versions(server):
    versions = {rt["language"]: rt["version"] for rt in server.request("GET", "/api/v2/runtimes").json()}
    v = versions["python"]
    for want in (v, v.rsplit(".", 1)[0], v.split(".")[0], "*"):
        status, res = piston(server, {"language": "python", "version": want, "files": [{"content": "print(1)"}]})
        assert status == 200 and res["version"] == v, (want, res)


# ---- Piston's clients, unchanged ----

@pytest.mark.parametrize("content_type", ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                          "application/octet-stream", None])
def test_json_body_whatever_the_content_type(server, content_type):
    """Piston reads the body as JSON whatever its Content-Type says (fetch labels a string body text/plain)."""
    status, res = piston(server, {"language": "python", "version": "*", "files": [{"content": "print('any')"}]},
                         content_type)
    assert status == 200 and res["run"]["stdout"] == "any\n", res
    status, res = piston(server, {"language": "python", "files": []}, content_type)
    assert status == 400 and res == {"message": "version is required as a string"}, res


def test_other_routes_keep_their_content_type_check(server):
    for path, body in (("/v1/execute", {"command": "true"}),
                       ("/v1/call", {"language": "python", "code": "def f():\n    return 1\n"})):
        r = server.request("POST", path, body=json.dumps(body).encode(),
                           headers={"Content-Type": "text/plain;charset=UTF-8"})
        assert r.status == 400 and "is not application/json" in r.json()["error"]["message"], (path, r)


# A program in two files (three for C and C++: a header and a second unit) in every language the route
# has: the first file finds the others beside it, by the language's own relative lookup.
MULTI_FILE = {
    "python": ([{"name": "main.py", "content": "import sys, helper\nprint(helper.greet(sys.argv[1]))"},
                {"name": "helper.py", "content": "def greet(who):\n    return 'python ' + who"}], "python x\n"),
    "javascript": ([{"name": "main.js", "content": "console.log(require('./helper').greet(process.argv[2]))"},
                    {"name": "helper.js", "content": "exports.greet = who => 'javascript ' + who"}],
                   "javascript x\n"),
    "ruby": ([{"name": "main.rb", "content": "require_relative 'helper'\nputs greet(ARGV[0])"},
              {"name": "helper.rb", "content": "def greet(who) = \"ruby #{who}\""}], "ruby x\n"),
    "php": ([{"name": "main.php", "content": "<?php include __DIR__ . '/helper.php'; echo greet($argv[1]), PHP_EOL;"},
             {"name": "helper.php", "content": "<?php function greet($who) { return \"php $who\"; }"}], "php x\n"),
    "bash": ([{"name": "main.sh", "content": ". \"$(dirname \"$0\")/helper.sh\"; greet \"$1\""},
              {"name": "helper.sh", "content": "greet() { echo \"bash $1\"; }"}], "bash x\n"),
    "c": ([{"name": "main.c", "content": "#include <stdio.h>\n#include \"helper.h\"\n"
                                         "int main(int argc, char **argv) { printf(\"c %s %d\\n\", argv[1], twice(21)); "
                                         "return 0; }"},
           {"name": "helper.h", "content": "int twice(int x);"},
           {"name": "helper.c", "content": "#include \"helper.h\"\nint twice(int x) { return 2 * x; }"}],
          "c x 42\n"),
    "c++": ([{"name": "main.cpp", "content": "#include <iostream>\n#include \"helper.hpp\"\n"
                                             "int main(int, char **argv) { std::cout << \"c++ \" << argv[1] << ' ' "
                                             "<< twice(21) << std::endl; }"},
             {"name": "helper.hpp", "content": "#pragma once\nint twice(int x);"},
             {"name": "helper.cpp", "content": "#include \"helper.hpp\"\nint twice(int x) { return 2 * x; }"}],
            "c++ x 42\n"),
}


@pytest.mark.parametrize("language", sorted(MULTI_FILE))
def test_multi_file_program_runs_from_the_working_directory(server, language):
    files, out = MULTI_FILE[language]
    status, res = piston(server, {"language": language, "version": "*", "files": files, "args": ["x"]})
    assert status == 200, res
    assert (res["run"]["stdout"], res["run"]["stderr"], res["run"]["code"]) == (out, "", 0), res


def test_every_file_is_in_the_working_directory(server):
    """The first file too, under its name (file0.code when unnamed), beside the others, in the cwd."""
    status, res = piston(server, {"language": "python", "version": "*", "files": [
        {"content": "import os, sys\nprint(os.getcwd(), sorted(os.listdir('.')), os.path.abspath(sys.argv[0]))"},
        {"name": "data.txt", "content": "x"}, {"name": "/abs.txt", "content": "y"}]})
    assert status == 200, res
    assert res["run"]["stdout"] == "/workspace ['abs.txt', 'data.txt', 'file0.code'] /workspace/file0.code\n", res


def client_env(server):
    if not shutil.which("node") or not CLIENT.exists():
        skip_unless_ci(f"node and {CLIENT} (scripts/install-deps.sh runs npm ci there) are needed")
    return dict(os.environ, PISTON_URL=f"http://{server.host}:{server.port}")


def test_the_npm_piston_client_unchanged(server):
    """The real piston-client (its latest release, pinned in tests/integration/piston): runtimes, the
    readme's execute(language, code), and execute(config) with every multi-file program above."""
    jobs = [{"language": "python", "code": "import sys\nprint('Hello World!', sys.argv[1:])"},
            {"language": "javascript", "code": "console.log(require('fs').readFileSync(0, 'utf8'))",
             "config": {"stdin": "from stdin", "args": []}}]
    jobs += [{"config": {"language": language, "files": files, "args": ["x"]}}
             for language, (files, _) in sorted(MULTI_FILE.items())]
    proc = subprocess.run(["node", str(PISTON_DIR / "piston_client.mjs")], input=json.dumps(jobs),
                          capture_output=True, text=True, timeout=120, env=client_env(server))
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert {"python", "javascript", "ruby", "php", "bash", "c", "c++"} <= {rt["language"] for rt in got["runtimes"]}
    results = got["results"]
    for job, res in zip(jobs, results):
        assert "run" in res, (job, res)  # not {success: false, error} nor Piston's {message}
    assert results[0]["language"] == "python" and results[0]["run"]["stdout"] == "Hello World! ['1', '2', '3']\n"
    assert results[1]["run"]["stdout"] == "from stdin\n", results[1]
    for (language, (_, out)), res in zip(sorted(MULTI_FILE.items()), results[2:]):
        assert (res["language"], res["run"]["stdout"], res["run"]["code"]) == (language, out, 0), res
