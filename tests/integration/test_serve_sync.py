"""`POST /v1/sync` (what `fnbox sync` does, for remote clients: the seed's executor.syncFiles) and
`fnbox serve --die-with-parent` (a client's private server never outlives the client), against the real
server on loopback."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fnboxlib import FNBOX, call, req, run_cli
from servelib import TOKEN, Server, error_of, wait_for


@pytest.fixture(scope="module")
def server():
    with Server() as srv:
        yield srv


def manual_call(host):
    """A call in manual sync mode: its changes come back in the result, the host is untouched."""
    request = req("python",
                  "def gen():\n    open('/data/a.json', 'w').write('{}')\n    open('/data/b.tmp', 'w').write('x')\n"
                  "    return 1\n", "gen")
    request["mount"] = {"dirs": {"/data": str(host)},
                        "permissions": {"default": {"create": True, "modify": True}},
                        "sync": {"mode": "manual"}}
    request["resultOptions"] = {"includeContents": True}
    result = call(request).result
    assert result["status"] == "success", result
    assert sorted(os.listdir(host)) == [], "manual mode wrote to the host"
    return result


def test_sync_writes_what_the_cli_would(server, tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    result = manual_call(host)
    wanted = [c for c in result["files"]["created"] if c["path"].endswith(".json")]
    body = {"changes": wanted, "mount": {"dirs": {"/data": str(host)}}, "onError": "continue"}
    r = server.request("POST", "/v1/sync", body=body)
    assert r.status == 200 and r.header("Content-Type") == "application/json", r
    report = r.json()
    assert report["success"] is True and len(report["synced"]) == 1, report
    assert sorted(os.listdir(host)) == ["a.json"] and (host / "a.json").read_text() == "{}"
    # byte for byte what `fnbox sync` prints for the same input (on a fresh host dir)
    other = tmp_path / "other"
    other.mkdir()
    body["mount"]["dirs"]["/data"] = str(other)
    proc = run_cli(["sync", "-"], input=json.dumps(body))
    assert proc.returncode == 0, proc.stderr
    third = tmp_path / "third"
    third.mkdir()
    http_answer = server.request("POST", "/v1/sync", body=dict(body, mount={"dirs": {"/data": str(third)}}))
    assert http_answer.status == 200
    cli_report, http_report = json.loads(proc.stdout), http_answer.json()
    assert set(cli_report) == set(http_report)
    assert cli_report["message"] == http_report["message"] and len(cli_report["synced"]) == len(http_report["synced"])


def test_failed_changes_are_a_report_not_an_error(server, tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    result = manual_call(host)
    (host / "a.json").mkdir()  # a directory where the file must go, made after the call: that change fails
    body = {"changes": result["files"]["created"], "mount": {"dirs": {"/data": str(host)}}, "onError": "rollback"}
    r = server.request("POST", "/v1/sync", body=body)
    assert r.status == 200, r
    report = r.json()
    assert report["success"] is False and report["failed"], report
    assert not (host / "b.tmp").exists(), "rollback kept a change"


@pytest.mark.parametrize("body, field", [
    ({"mount": {"dirs": {"/data": "/tmp"}}}, "changes"),
    ({"changes": [], "mount": {"dirs": {"data": "/tmp"}}}, "mount.dirs"),
    ({"changes": "x", "mount": {"dirs": {"/data": "/tmp"}}}, "changes"),
    ({"changes": [], "mount": {"dirs": {"/data": "/tmp"}}, "onError": "later"}, "onError"),
])
def test_invalid_input_names_the_field(server, body, field):
    r = server.request("POST", "/v1/sync", body=body)
    assert r.status == 400, r
    doc = r.json()
    assert doc["error"]["type"] == "InvalidRequest" and field in doc["error"]["message"], doc


def test_malformed_and_refused_bodies(server):
    r = server.request("POST", "/v1/sync", body=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status == 400 and r.json()["error"]["type"] == "InvalidRequest", r
    error_of(server.request("POST", "/v1/sync", body=b"", headers={"Content-Type": "application/json"}), 400,
             "InvalidRequest")
    error_of(server.request("POST", "/v1/sync", body=b"{}", headers={"Content-Type": "text/plain"}), 400,
             "InvalidRequest")
    r = server.request("GET", "/v1/sync")
    assert r.status == 405 and r.header("Allow") == "POST", r


def test_sync_needs_the_token(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKEN + "\n")
    tokens.chmod(0o600)
    with Server("--token-file", str(tokens)) as srv:
        body = {"changes": [], "mount": {"dirs": {"/data": str(tmp_path)}}}
        error_of(srv.request("POST", "/v1/sync", body=body), 401, "Unauthorized")
        assert srv.request("POST", "/v1/sync", body=body, token=TOKEN).status == 200


def test_die_with_parent_stops_the_server_when_its_parent_is_killed(tmp_path):
    """The parent (a shell) starts the server and is SIGKILLed: the server drains and leaves no socket."""
    sock = tmp_path / "private.sock"
    parent = subprocess.Popen(
        ["sh", "-c", f'"$0" serve --listen unix:{sock} --die-with-parent 2>"$1" & echo $!; wait', FNBOX,
         str(tmp_path / "log")], stdout=subprocess.PIPE, start_new_session=True)
    pid = int(parent.stdout.readline())
    wait_for(lambda: sock.exists(), timeout=15, what="the private server's socket")
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
             open(f"/proc/{pid}/stat").read().split(")")[1].split()[0] == "Z",
             timeout=20, what="the server to exit with its parent")
    assert not sock.exists()
    log = (tmp_path / "log").read_text()
    assert '"event":"stopped"' in log, log


def test_without_die_with_parent_the_server_outlives_its_parent(tmp_path):
    """The control: the same without the flag, and the server is still serving after its parent died."""
    sock = tmp_path / "orphan.sock"
    parent = subprocess.Popen(
        ["sh", "-c", f'"$0" serve --listen unix:{sock} 2>/dev/null & echo $!; wait', FNBOX],
        stdout=subprocess.PIPE, start_new_session=True)
    pid = int(parent.stdout.readline())
    try:
        wait_for(lambda: sock.exists(), timeout=15, what="the server's socket")
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        time.sleep(0.5)
        assert os.path.exists(f"/proc/{pid}") and sock.exists()
    finally:
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not sock.exists(), timeout=20, what="the orphan to stop")


def test_help_lists_die_with_parent():
    out = subprocess.run([FNBOX, "serve", "--help"], capture_output=True, text=True).stdout
    assert "--die-with-parent" in out
