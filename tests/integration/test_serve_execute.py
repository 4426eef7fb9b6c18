"""`fnbox serve`: POST /v1/execute, against the real server with real interpreters: the same result as
`fnbox exec` (every outcome 200), 400 naming the field, a call's `mount` (rules, sync), cancel on hang-up, the
metrics label."""
import json
import socket
import time

import pytest

from fnboxlib import assert_no_survivors, readable_by_all, unique_seconds
from servelib import Server


@pytest.fixture(scope="module")
def server():
    with Server("--max-concurrency", "2") as srv:
        yield srv


def execute(server, request):
    return server.request("POST", "/v1/execute", body=request)


def test_success(server):
    r = execute(server, {"command": "echo hi; echo err >&2"})
    assert r.status == 200 and r.header("Content-Type") == "application/json"
    res = r.json()
    assert (res["status"], res["exitCode"], res["stdout"], res["stderr"]) == ("success", 0, "hi\n", "err\n")


@pytest.mark.parametrize("request_,status,code", [
    ({"command": "exit 5"}, "error", 5),
    ({"command": "kill -9 $$"}, "crash", 137),
    ({"command": "no-such-command-xyz"}, "error", 127),
    ({"command": "sleep 20", "timeout": 0.3}, "timeout", 124),
    ({"code": "x", "language": "cobol"}, "error", 127),
])
def test_every_outcome_is_200(server, request_, status, code):
    r = execute(server, request_)
    assert r.status == 200, r
    assert (r.json()["status"], r.json()["exitCode"]) == (status, code)
    if status == "timeout":  # a command's, not a function's
        assert r.json()["error"]["message"] == "the command did not finish within the 0.3 s timeout", r.json()


def test_code_with_stdin_args_cwd_files(server):
    r = execute(server, {"code": "import sys, os\nprint(sys.argv[1], input(), os.getcwd(), open('../f.txt').read())",
                         "language": "python3", "args": ["A"], "stdin": "IN", "cwd": "sub",
                         "files": {"f.txt": "F"}})
    assert r.status == 200 and r.json()["stdout"] == "A IN /workspace/sub F\n", r


def test_c_program(server):
    r = execute(server, {"code": '#include <stdio.h>\nint main(void) { puts("c ok"); return 0; }', "language": "c"})
    assert r.status == 200 and r.json()["stdout"] == "c ok\n" and r.json()["compile"]["exitCode"] == 0


@pytest.mark.parametrize("request_,prefix", [
    ({"command": "x", "code": "y", "language": "sh"}, "command: "),
    ({"command": "x", "cwd": "/usr"}, "cwd: "),
    ({"command": "x", "env": {"A=B": "1"}}, "env.A=B: "),
    ({"command": "x", "timeout": -1}, "timeout: "),
    ({"command": "x", "extra": 1}, "extra: unknown field"),
    ({"command": "x", "mount": {"dirs": {"/data": "/nonexistent-xyz"}}}, "mount.dirs"),
    ({"command": "x", "mount": {"dirs": {"/data": "/tmp"}, "sync": {"mode": "sometimes"}}}, "mount.sync.mode"),
])
def test_invalid_is_400_naming_the_field(server, request_, prefix):
    r = execute(server, request_)
    assert r.status == 400, r
    err = r.json()["error"]
    assert err["type"] == "InvalidRequest" and err["message"].startswith(prefix), err


MOUNT_CODE = """import os
print(open('/data/in.txt').read(), end='')
open('/data/out/new.txt', 'w').write('made by python\\n')
with open('/data/mod.txt', 'a') as f:
    f.write('appended\\n')
for op, path in (('modify', '/data/in.txt'), ('create', '/data/top.txt')):
    try:
        open(path, 'w').write('no')
    except PermissionError as e:
        print('refused', op, e.errno)
try:
    os.remove('/data/mod.txt')
except PermissionError as e:
    print('refused delete', e.errno)
"""


def test_mount_with_batch_sync(server, tmp_path):
    """The body's `mount` as a call's: a host file read, a new one written and one modified reach the host
    after the run; what the rules refuse (modify, create outside out/, delete) fails with EACCES at the
    operation, is listed in files.denied and never reaches the host."""
    host = tmp_path / "data"
    (host / "out").mkdir(parents=True)
    (host / "in.txt").write_text("from the host\n")
    (host / "mod.txt").write_text("first\n")
    readable_by_all(host, tmp_path)
    mount = {"dirs": {"/data": str(host)}, "sync": {"mode": "batch"},
             "permissions": {"default": {"read": True, "list": True},
                             "rules": [{"pattern": "out/**", "allow": ["create"]},
                                       {"pattern": "mod.txt", "allow": ["modify"]}]}}
    r = execute(server, {"code": MOUNT_CODE, "language": "python3", "mount": mount})
    assert r.status == 200, r
    res = r.json()
    assert res["stdout"] == ("from the host\nrefused modify 13\nrefused create 13\nrefused delete 13\n"), res
    assert {p.name: p.read_text() for p in host.rglob("*") if p.is_file()} == {
        "in.txt": "from the host\n", "mod.txt": "first\nappended\n", "new.txt": "made by python\n"}
    assert [f["path"] for f in res["files"]["created"]] == ["/data/out/new.txt"]
    assert [(f["path"], f["content"]) for f in res["files"]["modified"]] == [("/data/mod.txt", "first\nappended\n")]
    assert {(d["path"], d["operation"]) for d in res["files"]["denied"]} == {
        ("/data/in.txt", "modify"), ("/data/top.txt", "create"), ("/data/mod.txt", "delete")}
    assert res["sync"]["success"] and res["sync"]["message"] == "2 of 2 changes written to the host", res["sync"]


def test_not_json_and_empty(server):
    r = server.request("POST", "/v1/execute", body=b"{nope", headers={"Content-Type": "application/json"})
    assert r.status == 400 and r.json()["error"]["message"].startswith("request: malformed JSON")
    r = server.request("POST", "/v1/execute", body=b"x", headers={"Content-Type": "text/plain"})
    assert r.status == 400 and "application/json" in r.json()["error"]["message"]
    r = server.request("GET", "/v1/execute")
    assert r.status == 405 and r.header("Allow") == "POST"


def test_hang_up_cancels(server):
    pause = f"sleep {unique_seconds(60)}"
    body = json.dumps({"command": f"{pause}; echo done", "timeout": 60}).encode()
    s = socket.create_connection((server.host, server.port), timeout=10)
    s.sendall(b"POST /v1/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    time.sleep(0.5)
    s.close()
    time.sleep(1)
    assert_no_survivors(pause)
    lines = [line for line in server.lines() if line.get("path") == "/v1/execute"]
    assert lines, server.log_text()


def test_metrics_label(server):
    execute(server, {"command": "true"})
    text = server.request("GET", "/metrics").body.decode()
    assert 'route="/v1/execute"' in text
