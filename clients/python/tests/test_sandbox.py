"""fnbox.Sandbox (sync): commands, code, calls, files, streaming, timeouts, cancellation, life cycle."""

import gc
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import fnbox
from conftest import FNBOX_BIN, PKG_ROOT, pid_alive, processes_mentioning, wait_until


@pytest.fixture(params=["local", "tcp", "unix"])
def sb(request):
    if request.param == "local":
        kw = {}
    else:
        server = request.getfixturevalue(request.param + "_server")
        kw = {"base_url": server.base_url, "token": server.token}
    with fnbox.Sandbox(**kw) as box:
        yield box


def test_exit_codes(sb):
    r = sb.commands.run("echo hi")
    assert (r.exit_code, r.stdout, r.stderr, r.status, r.success) == (0, "hi\n", "", "success", True)
    r = sb.commands.run("echo out; echo err >&2; exit 3")
    assert (r.exit_code, r.stdout, r.stderr, r.status, r.success) == (3, "out\n", "err\n", "error", False)
    r = sb.commands.run("no_such_command_zq")
    assert r.exit_code == 127 and "not found" in r.stderr
    r = sb.commands.run("kill -9 $$")
    assert r.exit_code == 137 and r.status == "crash" and r.error["type"] == "Crash"
    assert r.raw["exitCode"] == 137 and r["status"] == "crash"


def test_cwd_env_stdin(sb):
    sb.commands.run("mkdir -p sub/dir")
    r = sb.commands.run('pwd; echo "$GREETING"; cat', cwd="sub/dir", env={"GREETING": "hello there"}, stdin="piped")
    assert r.stdout == "/workspace/sub/dir\nhello there\npiped"


def test_refused_names_before_anything_runs(sb):
    with pytest.raises(fnbox.InvalidRequest) as e:
        sb.commands.run("touch /workspace/never_zq", env={"BAD-NAME": "x"})
    assert "BAD-NAME" in e.value.message
    with pytest.raises(ValueError):
        sb.run_code("print(1)", language="py thon; rm -rf /")
    with pytest.raises(fnbox.InvalidRequest):
        sb.commands.run("true", timeout=-1)
    assert not sb.files.exists("never_zq")


def test_invalid_run_option_raises_with_the_field(sb):
    # a cwd that cannot be a directory (a read-only system path); a missing one is made, as fnbox exec does
    with pytest.raises(fnbox.InvalidRequest) as e:
        sb.commands.run("pwd", cwd="/usr/fnbox-no-such-dir")
    assert e.value.message.startswith("cwd")
    with pytest.raises(fnbox.InvalidRequest) as e:  # the streamed form says it in the result line
        sb.commands.run("pwd", cwd="/usr/fnbox-no-such-dir", on_stdout=lambda d: None)
    assert e.value.message.startswith("cwd")
    assert sb.commands.run("pwd", cwd="/workspace/missing/dir").stdout == "/workspace/missing/dir\n"


def test_streaming_order_and_content(sb):
    events = []
    r = sb.commands.run("echo a; sleep 0.15; echo b >&2; sleep 0.15; echo c; sleep 0.15; printf 'd\\303\\251' >&2",
                        on_stdout=lambda d: events.append(("out", d, time.monotonic())),
                        on_stderr=lambda d: events.append(("err", d, time.monotonic())))
    assert [(k, d) for k, d, _ in events] == [("out", "a\n"), ("err", "b\n"), ("out", "c\n"), ("err", "dé")]
    assert events[-1][2] - events[0][2] > 0.3  # they came as produced, not at the end
    assert r.stdout == "a\nc\n" and r.stderr == "b\ndé"


def test_streaming_big_output(sb):
    got = []
    r = sb.commands.run("head -c 300000 /dev/zero | tr '\\0' x; echo", on_stdout=got.append)
    assert "".join(got) == r.stdout and len(r.stdout) == 300001


def test_timeout_keeps_partial_output(sb):
    start = time.monotonic()
    with pytest.raises(fnbox.CommandTimeout) as e:
        sb.commands.run("echo before; echo warn >&2; sleep 5; echo after", timeout=0.4)
    assert time.monotonic() - start < 3
    assert e.value.stdout == "before\n" and e.value.stderr == "warn\n"
    assert str(e.value) == "Execution timed out after 0.4 seconds"
    assert isinstance(e.value, TimeoutError) and e.value.type == "TimeoutError" and e.value.exit_code == 124
    # streamed, too
    seen = []
    with pytest.raises(fnbox.CommandTimeout) as e:
        sb.commands.run("echo s1; sleep 5", timeout=1, on_stdout=seen.append)
    assert seen == ["s1\n"] and e.value.stdout == "s1\n" and str(e.value) == "Execution timed out after 1 seconds"
    assert e.value.timeout == 1


def test_sandbox_default_timeout(mode):
    with fnbox.Sandbox(timeout=0.3, **mode) as box:
        with pytest.raises(fnbox.CommandTimeout) as e:
            box.commands.run("sleep 3")
        assert str(e.value) == "Execution timed out after 0.3 seconds"
        with pytest.raises(fnbox.CommandTimeout):
            box.run_code("import time; time.sleep(3)")
        assert box.commands.run("sleep 0.4", timeout=2).exit_code == 0  # the call's own wins


def _marker_absent(sb, name):
    time.sleep(1.2)  # the command would have written it by now
    return not sb.files.exists(name)


def test_cancel_kills_the_run(sb):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(fnbox.Cancelled):
        sb.commands.run("sleep 1.2; echo late > /workspace/cancel_mark_a", cancel=cancel)
    assert time.monotonic() - start < 1
    cancel2 = threading.Event()
    threading.Timer(0.3, cancel2.set).start()
    with pytest.raises(fnbox.Cancelled):
        sb.commands.run("sleep 1.2; echo late > /workspace/cancel_mark_b", cancel=cancel2,
                            on_stdout=lambda d: None)
    assert _marker_absent(sb, "cancel_mark_a") and not sb.files.exists("cancel_mark_b")
    assert sb.commands.run("echo still usable").stdout == "still usable\n"


def test_keyboard_interrupt_hangs_up(unix_server):
    with fnbox.Sandbox(base_url=unix_server.base_url) as box:
        main = threading.main_thread().ident  # a real SIGINT to the main thread, as Ctrl-C gives
        timers = []

        def started(data):
            # once the command runs (not while the request is still being made: a loaded machine is slow)
            if "started" in data and not timers:
                timers.append(threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT)))
                timers[0].start()

        with pytest.raises(KeyboardInterrupt):
            box.commands.run("echo started; sleep 1; echo late > /workspace/kbd_mark", on_stdout=started)
        assert timers, "the command never started"
        assert _marker_absent(box, "kbd_mark")


def test_files(sb):
    blob = bytes(range(256)) * 64 + b"\x00\xff\xfe"
    sb.files.write("deep/er/blob.bin", blob)               # parents created
    assert sb.files.read("deep/er/blob.bin") == blob
    assert sb.files.read("/workspace/deep/er/blob.bin") == blob
    sb.files.write("deep/text.txt", "héllo\n")
    assert sb.files.read_text("deep/text.txt") == "héllo\n"
    assert sb.commands.run("cat deep/text.txt").stdout == "héllo\n"  # the commands see them
    entries = sb.files.list("deep")
    assert [(e.name, e.is_dir) for e in entries] == [("er", True), ("text.txt", False)]
    assert entries[1].size == len("héllo\n".encode()) and entries[1].path == "deep/text.txt"
    assert [e.name for e in sb.files.list("/workspace/deep/er")] == ["blob.bin"]
    sb.files.write("deep/text.txt", b"")                   # replaced
    assert sb.files.read("deep/text.txt") == b""
    sb.files.remove("deep/text.txt")
    with pytest.raises(FileNotFoundError):
        sb.files.read("deep/text.txt")
    assert sb.files.exists("deep") and sb.files.exists("deep/er/blob.bin") and not sb.files.exists("nope")
    with pytest.raises(fnbox.FileNotFound) as e:
        sb.files.remove("nope/none")
    assert e.value.status == 404 and e.value.type == "NotFound" and e.value.filename == "nope/none"
    with pytest.raises(FileNotFoundError):
        sb.files.list("nope")
    with pytest.raises(IsADirectoryError):
        sb.files.read("deep")
    with pytest.raises(PermissionError) as e:
        sb.files.write("/etc/hosts", b"x")
    assert e.value.status == 403 and e.value.type == "PermissionDenied"


def test_file_names_needing_quoting(sb):
    name = "we ird/na&me?=#%.txt"
    sb.files.write(name, b"q")
    assert sb.files.read(name) == b"q"
    assert [e.name for e in sb.files.list("we ird")] == ["na&me?=#%.txt"]


def test_run_code(sb):
    r = sb.run_code("import sys\nprint('py', sys.version_info[0])\nsys.exit(4)")
    assert (r.exit_code, r.stdout) == (4, "py 3\n")
    r = sb.run_code("console.log('js', 6 * 7)", language="javascript")
    assert (r.exit_code, r.stdout) == (0, "js 42\n")
    r = sb.run_code("raise ValueError('boom')", language="python")
    assert r.exit_code == 1 and "ValueError: boom" in r.stderr
    r = sb.run_code("print(1)", language="cobol")
    assert r.exit_code == 127 and "Language interpreter not found: cobol" in r.stderr
    out = []
    r = sb.run_code("import time\nprint('x', flush=True)\ntime.sleep(0.1)\nprint('y')", on_stdout=out.append)
    assert out == ["x\n", "y\n"]


def test_call_in_session(sb):
    sb.files.write("data.txt", "41")
    code = ("def f(a, b=2, *, c=3):\n"
            "    print('called')\n"
            "    return [a, b, c, int(open('data.txt').read()) + 1]")
    r = sb.call(code, args=[1], kwargs={"c": 5})
    assert r["status"] == "success" and r["result"] == [1, 2, 5, 42] and r["stdout"] == "called\n"
    r = sb.call("def g(x):\n    return {'k': x}\ndef h(): pass", function_name="g", args=("v",))
    assert r["result"] == {"k": "v"}
    r = sb.call("function add(a, b) { return a + b }", language="javascript", args=[2], kwargs={"b": 3})
    assert r["result"] == 5
    r = sb.call("def f():\n    raise KeyError('missing')")
    assert r["status"] == "error" and r["error"]["type"] == "KeyError"
    with pytest.raises(fnbox.InvalidRequest) as e:
        sb.call("def f(): pass", files={"x": "y"})
    assert e.value.message.startswith("files")


def test_session_options(mode):
    with fnbox.Sandbox(files={"notes.txt": "from the start\n"}, env={"MY_VAR": "v1"}, workdir="/work",
                       idle_timeout=60, **mode) as box:
        assert box.get_info()["workdir"] == "/work"
        assert box.get_info()["idleTimeout"] == 60
        r = box.commands.run('pwd; cat notes.txt; echo "$MY_VAR"')
        assert r.stdout == "/work\nfrom the start\nv1\n"
    with pytest.raises(fnbox.InvalidRequest) as e:
        fnbox.Sandbox(limits={"memoryBytes": 1}, **mode)
    assert "memoryBytes" in e.value.message
    with pytest.raises(fnbox.InvalidRequest):
        fnbox.Sandbox(env={"1BAD": "x"}, **mode)


def test_closed_session(remote):
    box = fnbox.Sandbox(**remote)
    sid = box.id
    box.close()
    box.close()  # idempotent
    assert box.closed
    with pytest.raises(fnbox.SandboxNotFound):
        box.commands.run("true")
    with pytest.raises(fnbox.SandboxNotFound) as e:
        fnbox.Sandbox.connect(sid, **remote)
    assert e.value.status == 404 and e.value.type == "NotFound"


def test_connect_to_an_existing_session(remote):
    with fnbox.Sandbox(**remote) as first:
        first.files.write("shared.txt", "s")
        with fnbox.Sandbox.connect(first.sandbox_id, **remote) as second:
            assert second.files.read("shared.txt") == b"s"
        assert second.closed
        assert first.files.read("shared.txt") == b"s"  # closing an attached sandbox leaves the session
        third = fnbox.Sandbox.connect(first.sandbox_id, **remote)
        third.kill()                                      # kill() deletes it
        with pytest.raises(fnbox.SandboxNotFound):
            first.files.read("shared.txt")


def test_wrong_token(tcp_server):
    with pytest.raises(fnbox.Unauthorized) as e:
        fnbox.Sandbox(base_url=tcp_server.base_url, token="not-the-token-000000")
    assert e.value.status == 401 and e.value.type == "Unauthorized"


def test_threads_share_a_sandbox(unix_server):
    with fnbox.Sandbox(base_url=unix_server.base_url) as box:
        out = {}

        def work(i):
            out[i] = box.commands.run("echo %d" % i).stdout
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == {i: "%d\n" % i for i in range(4)}


# -- local mode: the private server's life ---------------------------------------------------------

def _server_gone(pid, tmpdir):
    return (wait_until(lambda: not pid_alive(pid), 10) and not os.path.exists(tmpdir)
            and not processes_mentioning(tmpdir))


def test_local_close_leaves_nothing():
    box = fnbox.Sandbox()
    pid, tmpdir = box.server_pid, box._state.server.tmpdir
    assert pid_alive(pid) and os.path.isdir(tmpdir)
    assert (os.stat(tmpdir).st_mode & 0o777) == 0o700
    assert box.base_url == "unix:" + os.path.join(tmpdir, "fnbox.sock")
    assert processes_mentioning(tmpdir) == [pid]
    box.close()
    assert not pid_alive(pid) and not os.path.exists(tmpdir) and not processes_mentioning(tmpdir)


def test_local_close_after_a_failed_test_and_on_gc():
    with pytest.raises(RuntimeError):
        with fnbox.Sandbox() as box:
            pid, tmpdir = box.server_pid, box._state.server.tmpdir
            raise RuntimeError("a test failing inside")
    assert _server_gone(pid, tmpdir)
    box = fnbox.Sandbox()
    pid, tmpdir = box.server_pid, box._state.server.tmpdir
    del box
    gc.collect()
    assert _server_gone(pid, tmpdir)


def test_local_session_refused_stops_the_server():
    before = set(processes_mentioning("fnbox-py-"))
    with pytest.raises(fnbox.InvalidRequest):
        fnbox.Sandbox(limits={"pids": 0})
    assert wait_until(lambda: set(processes_mentioning("fnbox-py-")) <= before, 5)


def test_local_server_that_cannot_start(tmp_path):
    fake = tmp_path / "fnbox"
    fake.write_text("#!/bin/sh\necho 'fnbox serve: cannot start here (test)' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(fnbox.FnboxError) as e:
        fnbox.Sandbox(binary=str(fake))
    assert e.value.type == "ServerStartFailed"
    assert "exited with status 1" in e.value.message and "cannot start here (test)" in e.value.message


def test_local_sandbox_opened_in_a_thread_outlives_the_thread():
    """--die-with-parent follows the thread that forked the server: the client forks from a
    thread that lives as long as the process, so a short-lived thread may open the sandbox."""
    holder = {}
    t = threading.Thread(target=lambda: holder.setdefault("sb", fnbox.Sandbox()))
    t.start()
    t.join()
    box = holder["sb"]
    try:
        time.sleep(0.3)
        assert pid_alive(box.server_pid)
        assert box.commands.run("echo alive").stdout == "alive\n"
    finally:
        box.close()


HELPER = """
import sys, time
sys.path.insert(0, {pkg!r})
import fnbox
sb = fnbox.Sandbox(binary={binary!r})
print(sb.server_pid, sb._state.server.tmpdir, flush=True)
time.sleep(60)  # fnbox_kill_helper_marker
"""


def test_local_server_dies_with_a_killed_client(tmp_path):
    script = tmp_path / "fnbox_kill_helper.py"
    script.write_text(HELPER.format(pkg=str(PKG_ROOT), binary=FNBOX_BIN))
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                             env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    try:
        pid_s, tmpdir = child.stdout.readline().decode().split()
        pid = int(pid_s)
        assert pid_alive(pid)
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert wait_until(lambda: not pid_alive(pid), 10), "the private server outlived its SIGKILLed client"
        assert not os.path.exists(os.path.join(tmpdir, "fnbox.sock"))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
    # the directory itself stays (nobody is left to remove it): clean it up here
    if os.path.isdir(tmpdir):
        os.rmdir(tmpdir)


def test_remote_session_deleted_on_gc(remote):
    box = fnbox.Sandbox(**remote)
    sid = box.id
    del box
    gc.collect()
    with pytest.raises(fnbox.SandboxNotFound):
        fnbox.Sandbox.connect(sid, **remote)


def test_overloaded(tmp_path):
    from conftest import Server
    server = Server("unix:%s" % (tmp_path / "s.sock"), extra=["--max-sessions", "1"])
    try:
        with fnbox.Sandbox(base_url=server.base_url):
            with pytest.raises(fnbox.Overloaded) as e:
                fnbox.Sandbox(base_url=server.base_url)
            assert e.value.status == 503 and e.value.type == "Overloaded"
    finally:
        server.stop()


def test_forked_child_leaves_the_parents_sandbox_alone():
    with fnbox.Sandbox() as box:
        pid = os.fork()
        if pid == 0:  # the child drops its copy, as a multiprocessing worker would
            try:
                box.close()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert pid_alive(box.server_pid)
        assert box.commands.run("echo parent").stdout == "parent\n"


SPACED_PROGRAM = "import time\nfor i in range(3):\n    print('L%d' % i)\n    time.sleep(0.8)\n"


@pytest.mark.parametrize("how", ["code", "kernel", "command"])
def test_output_arrives_as_written(sb, how):
    """Three lines 0.8 s apart, never flushed: on_stdout gets each as the program writes it (the first at
    least 0.5 s before the last), through a session's code, kernel and command runs."""
    from test_call import spaced_arrivals
    on_stdout, check = spaced_arrivals()
    if how == "command":
        r = sb.commands.run("python3 -c '%s'" % SPACED_PROGRAM.replace("'", '"'), on_stdout=on_stdout)
    else:
        r = sb.run_code(SPACED_PROGRAM, kernel=how == "kernel", on_stdout=on_stdout)
    check(r.stdout)
