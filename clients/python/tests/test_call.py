"""fnbox.call / fnbox.Executor: local (`fnbox call`, `fnbox sync`) and remote (POST /v1/call, /v1/sync)."""

import os
import threading
import time

import pytest

import fnbox
from conftest import TOKEN, processes_mentioning, require_host_mounts, wait_until

DIV = {"language": "python", "code": "def div(a, b):\n    return a / b"}


def test_call_success(mode):
    r = fnbox.call(dict(DIV, args=[6, 3]), **mode)
    assert r["status"] == "success" and r["success"] is True
    assert r["result"] == 2
    assert r["meta"]["signatureSource"] == "inferred"


def test_call_function_error_is_a_result(mode):
    r = fnbox.call(dict(DIV, args=[1, 0]), **mode)
    assert r["status"] == "error" and r["success"] is False
    assert r["error"]["type"] == "ZeroDivisionError"
    assert "user_code.py" in r["error"]["stack"]


def test_call_javascript_error_type(mode):
    r = fnbox.call({"language": "javascript", "code": "function f() { throw new RangeError('nope') }"}, **mode)
    assert r["status"] == "error"
    assert r["error"]["type"] == "RangeError" and r["error"]["message"] == "nope"


def test_call_timeout_is_a_result(mode):
    r = fnbox.call({"language": "python", "code": "def f():\n    print('early', flush=True)\n    while True: pass",
                    "timeout": 0.5}, **mode)
    assert r["status"] == "timeout" and r["exitCode"] == 124
    assert r["error"]["type"] == "TimeoutError"
    assert r["stdout"] == "early\n"


def test_call_invalid_request_names_the_field(mode):
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.call(dict(DIV, argz=[1]), **mode)
    assert e.value.type == "InvalidRequest"
    assert e.value.message.startswith("argz")
    assert e.value.result["status"] == "error"
    if mode:
        assert e.value.status == 400
    assert isinstance(e.value, ValueError) and isinstance(e.value, fnbox.FnboxError)


def test_call_malformed_json_text(mode):
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.call("{not json", **mode)
    assert "malformed JSON" in e.value.message


def test_call_accepts_json_text(mode):
    assert fnbox.call('{"language": "python", "code": "def f(): return [1, None]"}', **mode)["result"] == [1, None]


def test_call_streams_output_in_order(mode):
    events = []
    code = ("import sys, time\n"
            "def f():\n"
            "    print('one', flush=True)\n"
            "    time.sleep(0.15)\n"
            "    print('two', file=sys.stderr, flush=True)\n"
            "    time.sleep(0.15)\n"
            "    print('three', flush=True)\n"
            "    return 'done'")
    r = fnbox.call({"language": "python", "code": code}, on_stdout=lambda d: events.append(("out", d)),
                   on_stderr=lambda d: events.append(("err", d)), **mode)
    assert r["result"] == "done"
    assert events == [("out", "one\n"), ("err", "two\n"), ("out", "three\n")]
    assert "".join(d for k, d in events if k == "out") == r["stdout"]


def test_call_unicode_roundtrip(mode):
    r = fnbox.call({"language": "python", "code": "def f(s):\n    print(s)\n    return s + '✓'", "args": ["héllo 🌍"]},
                   on_stdout=lambda d: None, **mode)
    assert r["result"] == "héllo 🌍✓" and r["stdout"] == "héllo 🌍\n"


def test_call_cancel(mode):
    cancel = threading.Event()
    threading.Timer(0.4, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(fnbox.Cancelled):
        fnbox.call({"language": "python", "code": "import time\ndef f():\n    time.sleep(5)\n    return 1",
                    "timeout": 10}, cancel=cancel, **mode)
    assert time.monotonic() - start < 3


def test_local_cancel_leaves_no_fnbox_call(fnbox_bin):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    marker = "cancel_marker_7f3a"
    with pytest.raises(fnbox.Cancelled):
        fnbox.call({"language": "python", "code": "import time\ndef f():\n    time.sleep(5)  # %s" % marker},
                   cancel=cancel)
    # the request went on stdin, so look for our `fnbox call` children instead
    assert wait_until(lambda: not [p for p in processes_mentioning(fnbox_bin + " call")
                                   if os.getppid() != p and _parent(p) == os.getpid()], 5)


def _parent(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().split(") ", 1)[1].split()[1])
    except OSError:
        return None


def test_wrong_token_is_unauthorized(tcp_server):
    with pytest.raises(fnbox.Unauthorized) as e:
        fnbox.call(DIV, base_url=tcp_server.base_url, token="wrong-token-0123456789")
    assert e.value.type == "Unauthorized" and e.value.status == 401
    with pytest.raises(fnbox.FnboxError) as e:
        fnbox.call(DIV, base_url=tcp_server.base_url)
    assert e.value.type == "Unauthorized"


def test_unreachable_server_is_a_connection_error(tmp_path):
    with pytest.raises(fnbox.FnboxConnectionError) as e:
        fnbox.call(DIV, base_url="unix:%s" % (tmp_path / "none.sock"))
    assert isinstance(e.value, ConnectionError) and e.value.type == "ConnectionFailed"


def test_missing_binary_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("FNBOX_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(fnbox.FnboxError) as e:
        fnbox.call(DIV)
    assert "FNBOX_BIN" in e.value.message and "binary=" in e.value.message
    with pytest.raises(fnbox.FnboxError) as e:
        fnbox.Executor(binary=str(tmp_path / "nope"))
    assert e.value.type == "BinaryNotFound"


def test_binary_argument_and_path_lookup(monkeypatch, fnbox_bin, tmp_path):
    monkeypatch.delenv("FNBOX_BIN")
    assert fnbox.call(dict(DIV, args=[4, 2]), binary=fnbox_bin)["result"] == 2
    link = tmp_path / "fnbox"
    link.symlink_to(fnbox_bin)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fnbox.Executor().binary == str(link)


WRITER = ("def work():\n"
          "    open('/data/new.txt', 'w').write('fresh')\n"
          "    open('/data/old.txt', 'w').write('changed')\n"
          "    open('/data/skip.txt', 'w').write('not chosen')\n"
          "    return 'ok'")


def _mounted_dir(tmp_path):
    require_host_mounts()
    host = tmp_path / "host"
    host.mkdir()
    (host / "old.txt").write_text("original")
    return host


def _execute_and_sync(ex, host):
    mount = {"dirs": {"/data": str(host)}}
    r = ex.execute({"language": "python", "code": WRITER, "mount": mount})
    assert r["status"] == "success", r
    created = {c["path"]: c for c in r["files"]["created"]}
    modified = {c["path"]: c for c in r["files"]["modified"]}
    assert set(created) == {"/data/new.txt", "/data/skip.txt"} and set(modified) == {"/data/old.txt"}
    # manual sync: the host is untouched until we apply a chosen subset
    assert sorted(p.name for p in host.iterdir()) == ["old.txt"]
    assert (host / "old.txt").read_text() == "original"
    report = ex.sync_files([created["/data/new.txt"], modified["/data/old.txt"]], mount)
    assert report["success"] is True
    assert sorted(report["synced"]) == ["/data/new.txt", "/data/old.txt"]
    assert (host / "new.txt").read_text() == "fresh"
    assert (host / "old.txt").read_text() == "changed"
    assert not (host / "skip.txt").exists()
    # a refused input is an InvalidRequest naming the field; nothing is written
    with pytest.raises(fnbox.InvalidRequest) as e:
        ex.sync_files([created["/data/skip.txt"]], {})
    assert e.value.message.startswith("mount")
    assert not (host / "skip.txt").exists()


def test_executor_execute_and_sync_files_local(tmp_path):
    with fnbox.Executor() as ex:
        assert ex.mode == "local"
        _execute_and_sync(ex, _mounted_dir(tmp_path))


def test_executor_keeps_the_connection(tcp_server):
    with fnbox.Executor(base_url=tcp_server.base_url, token=TOKEN) as ex:
        for i in range(5):
            assert ex.execute(dict(DIV, args=[i, 1]))["result"] == i
        assert len(ex._transport._all) == 1


def test_executor_from_several_threads(unix_server):
    results = {}
    with fnbox.Executor(base_url=unix_server.base_url) as ex:
        def work(i):
            results[i] = ex.execute(dict(DIV, args=[i, 2]))["result"]
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {i: i / 2 for i in range(4)}


def test_executor_sync_files_remote(tmp_path, remote):
    """Runs last in this file: POST /v1/sync is new on the server side."""
    with fnbox.Executor(**remote) as ex:
        try:
            ex.sync_files([], {"dirs": {"/data": str(tmp_path)}})
        except fnbox.NotFound as e:
            pytest.skip("this fnbox serve has no POST /v1/sync yet (%s)" % e.message)
        _execute_and_sync(ex, _mounted_dir(tmp_path))


def test_stream_leftovers_after_a_dropped_line():
    """A reader slower than the output gets a `dropped` line; the callbacks still add up to the result."""
    from fnbox._common import LineDispatcher, finish_stream
    out, err = [], []
    lines = LineDispatcher(out.append, err.append)
    for raw in (b'{"type":"stdout","data":"ab"}', b'{"type":"stderr","data":"E"}',
                b'{"type":"dropped","stdout":3,"stderr":0}',
                b'{"type":"result","status":"success","stdout":"abcde","stderr":"E","exitCode":0}'):
        lines.line(raw + b"\n")
    result = finish_stream(lines)
    assert "".join(out) == "abcde" and "".join(err) == "E" and result["exitCode"] == 0 and "type" not in result


# Three lines 0.8 s apart, never flushed: on_stdout gets each as it is written (the first at least 0.5 s
# before the last), not all of them at the end (a pipe's block buffer in the function's runtime).
SPACED = ("import time\n"
          "def f():\n"
          "    for i in range(3):\n"
          "        print('L%d' % i)\n"
          "        time.sleep(0.8)\n"
          "    return 3")


def spaced_arrivals():
    """(on_stdout, check): check(stdout) asserts L0 arrived well before L2."""
    seen = []

    def on_stdout(data):
        seen.append((time.monotonic(), data))

    def check(stdout):
        assert "".join(d for _, d in seen) == stdout == "L0\nL1\nL2\n", seen
        text, when = "", {}
        for t, d in seen:
            text += d
            for line in ("L0", "L2"):
                if line not in when and line + "\n" in text:
                    when[line] = t
        assert when["L2"] - when["L0"] >= 0.5, seen
    return on_stdout, check


def test_call_output_arrives_as_written(mode):
    on_stdout, check = spaced_arrivals()
    r = fnbox.call({"language": "python", "code": SPACED}, on_stdout=on_stdout, **mode)
    assert r["result"] == 3
    check(r["stdout"])
