"""A call's batch sync never writes over a host entry the host changed while the call ran: each change is
based on the host entry the view first changed (docs/internals/sync.md, "host changed meanwhile"), and sync
compares that with the host at write time. The function tells (streamed stdout) when it has made its
change, the test then changes the host and lets the function finish (a file it waits for)."""
import json
import subprocess

import pytest

from fnboxlib import FNBOX, readable_by_all, req

WAIT = ("import os, time\n"
        "def wait_go():\n"
        "    for _ in range(2000):\n"
        "        if os.path.exists('/data/go'):\n"
        "            return\n"
        "        time.sleep(0.01)\n"
        "    raise TimeoutError('no go file')\n")


def run_racing(host, body, on_host):
    """Run body (after WAIT's helper) as f() with /data = host in batch sync; when it prints 'changed',
    call on_host(), then let it finish. Returns the result."""
    code = WAIT + "def f():\n" + "".join("    " + line + "\n" for line in body) + \
        "    print('changed', flush=True)\n    wait_go()\n    return 1\n"
    request = req("python", code, "f", mount={
        "dirs": {"/data": str(host)}, "loading": {"mode": "lazy"},
        "permissions": {"default": {"read": True, "list": True, "create": True, "modify": True, "delete": True}},
        "sync": {"mode": "batch", "onError": "continue"}})
    proc = subprocess.Popen([FNBOX, "call", "--stream", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdin.write(json.dumps(request).encode())
    proc.stdin.close()
    result = None
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "stdout" and "changed" in event["data"]:
                on_host()
                (host / "go").write_text("")
            elif event["type"] == "result":
                result = event
    finally:
        proc.wait(timeout=60)
    assert result and result["status"] == "success", result
    return result


@pytest.fixture
def host(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    (root / "c.txt").write_text("orig")
    (root / "d.txt").write_text("to delete")
    return readable_by_all(root, tmp_path)


def failed_paths(result):
    return sorted(f["path"] for f in result["sync"]["failed"])


def test_host_edit_during_the_call_is_kept(host):
    result = run_racing(host, ["open('/data/c.txt', 'w').write('sandbox')"],
                        lambda: (host / "c.txt").write_text("host edit, longer"))
    assert failed_paths(result) == ["/data/c.txt"], result["sync"]
    assert "conflict" in result["sync"]["failed"][0]["error"]
    assert (host / "c.txt").read_text() == "host edit, longer"


def test_host_creation_during_the_call_is_kept(host):
    result = run_racing(host, ["open('/data/new.txt', 'w').write('sandbox')"],
                        lambda: (host / "new.txt").write_text("host made it"))
    assert failed_paths(result) == ["/data/new.txt"], result["sync"]
    assert (host / "new.txt").read_text() == "host made it"


def test_host_replacement_before_a_deletion_is_kept(host):
    def replace():
        (host / "d.txt").unlink()
        (host / "d.txt").write_text("a new file")
    result = run_racing(host, ["os.remove('/data/d.txt')"], replace)
    assert failed_paths(result) == ["/data/d.txt"], result["sync"]
    assert (host / "d.txt").read_text() == "a new file"


def test_unrelated_host_change_does_not_block_the_sync(host):
    """The control: the host changes another file; the call's change is written."""
    result = run_racing(host, ["open('/data/c.txt', 'w').write('sandbox')"],
                        lambda: (host / "d.txt").write_text("host edit"))
    assert result["sync"]["success"] is True and failed_paths(result) == [], result["sync"]
    assert (host / "c.txt").read_text() == "sandbox"
