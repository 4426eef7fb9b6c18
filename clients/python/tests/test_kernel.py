"""Session kernels: run_code(..., kernel=True) and restart_kernel, sync and asyncio, on a real server."""

import asyncio
import threading
import time

import pytest

import fnbox
from fnbox import aio


@pytest.fixture(params=["local", "tcp"])
def kmode(request):
    if request.param == "local":
        return {}
    server = request.getfixturevalue("tcp_server")
    return {"base_url": server.base_url, "token": server.token}


def test_kernel_state_errors_and_isolation(kmode):
    with fnbox.Sandbox(**kmode) as a, fnbox.Sandbox(**kmode) as b:
        r = a.run_code("import math\nx = 41\nx + 1", kernel=True)
        assert isinstance(r, fnbox.Execution)
        assert (r.status, r.success, r.result, r.error, r.exit_code, r.kernel_restarted) == (
            "success", True, 42, None, 0, False)
        r = a.run_code("print('hi'); {'x': x, 'pi': round(math.pi, 2)}", language="py", kernel=True)
        assert r.result == {"x": 41, "pi": 3.14} and r.stdout == "hi\n" and r["result"] == r.result
        # another sandbox has its own kernel
        r = b.run_code("x", kernel=True)
        assert r.status == "error" and r.error["type"] == "NameError" and r.exit_code == 1
        # the code's exception is returned, the state stays
        r = a.run_code("raise ValueError('bad ' + str(x))", kernel=True)
        assert (r.status, r.success, r.error["type"], r.error["message"]) == ("error", False, "ValueError", "bad 41")
        assert "Traceback" in r.error["stack"] and r.result is None
        assert a.run_code("x", kernel=True).result == 41
        # JavaScript kernel, alongside
        assert a.run_code("let y = 20; y + 1", language="javascript", kernel=True).result == 21
        r = a.run_code("y * 2", language="node", kernel=True)
        assert r.result == 40
        r = a.run_code("throw new TypeError('nope')", language="js", kernel=True)
        assert r.error["type"] == "TypeError" and r.status == "error"
        # without kernel=True nothing is kept (a fresh process, as before)
        r = a.run_code("print(x)")
        assert isinstance(r, fnbox.CommandResult) and r.exit_code == 1 and "NameError" in r.stderr
        # refused before anything runs
        with pytest.raises(fnbox.InvalidRequest, match="no kernel"):
            a.run_code("1", language="c", kernel=True)
        with pytest.raises(fnbox.InvalidRequest, match="cwd"):
            a.run_code("1", kernel=True, cwd="/tmp")
        with pytest.raises(fnbox.InvalidRequest):
            a.restart_kernel("c")


def test_kernel_streaming_timeout_restart(kmode):
    with fnbox.Sandbox(**kmode) as sb:
        events = []
        r = sb.run_code("import sys, time\nprint('a', flush=True)\ntime.sleep(0.1)\n"
                        "print('b', file=sys.stderr, flush=True)\ntime.sleep(0.1)\nprint('c')\n7",
                        kernel=True, on_stdout=lambda d: events.append(("out", d)),
                        on_stderr=lambda d: events.append(("err", d)))
        assert events == [("out", "a\n"), ("err", "b\n"), ("out", "c\n")]
        assert (r.result, r.stdout, r.stderr) == (7, "a\nc\n", "b\n")
        sb.run_code("kept = 'yes'", kernel=True)
        # the timeout interrupts the code (KeyboardInterrupt) and keeps the state
        start = time.monotonic()
        with pytest.raises(fnbox.CommandTimeout) as e:
            sb.run_code("print('early', flush=True)\nwhile True: time.sleep(0.01)  # kernel_loop_marker_t1",
                        kernel=True, timeout=0.4)
        assert time.monotonic() - start < 3
        assert e.value.stdout == "early\n" and e.value.timeout == 0.4
        assert e.value.result["kernelRestarted"] is False
        assert str(e.value) == "Execution timed out after 0.4 seconds"
        assert sb.run_code("kept", kernel=True).result == "yes"
        # restart: the state is gone
        sb.restart_kernel("python")
        sb.restart_kernel("javascript")  # never started: nothing to do
        r = sb.run_code("kept", kernel=True)
        assert r.error["type"] == "NameError"


def test_kernel_cancel_event_interrupts(kmode):
    with fnbox.Sandbox(**kmode) as sb:
        sb.run_code("import time\nstate = 5", kernel=True)
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        start = time.monotonic()
        with pytest.raises(fnbox.Cancelled):
            sb.run_code("while True: time.sleep(0.01)  # kernel_loop_marker_c1", kernel=True, cancel=cancel)
        assert time.monotonic() - start < 2
        assert sb.run_code("state", kernel=True).result == 5


def test_aio_kernel(kmode):
    async def main():
        async with aio.Sandbox(**kmode) as sb, aio.Sandbox(**kmode) as other:
            r = await sb.run_code("import time\nn = 1\nn + 1", kernel=True)
            assert isinstance(r, fnbox.Execution) and r.result == 2
            assert (await other.run_code("n", kernel=True)).error["type"] == "NameError"
            got = []

            async def on_out(d):
                got.append(d)
            r = await sb.run_code("print('x'); n", kernel=True, on_stdout=on_out)
            assert got == ["x\n"] and r.result == 1
            r = await sb.run_code("1/0", kernel=True)
            assert r.error["type"] == "ZeroDivisionError"
            # cancelling the task hangs up: the server interrupts the code, the state stays
            task = asyncio.ensure_future(sb.run_code(
                "n = 2\nwhile True: time.sleep(0.01)  # kernel_loop_marker_a1", kernel=True))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            r = await sb.run_code("n", kernel=True)
            assert r.result == 2 and not r.kernel_restarted
            with pytest.raises(fnbox.CommandTimeout):
                await sb.run_code("while True: time.sleep(0.01)  # kernel_loop_marker_a2", kernel=True, timeout=0.3)
            assert (await sb.run_code("n", kernel=True)).result == 2
            await sb.restart_kernel("py")
            assert (await sb.run_code("n", kernel=True)).error["type"] == "NameError"
    asyncio.run(main())
