"""fnbox.strands.FnboxSandbox against a local stand-in of `strands.sandbox.Sandbox` (PyPI, hence the
real strands-agents package, is unreachable here; tests/strands_standin copies the SDK's abstract
class), and without any `strands` at all."""

import asyncio
import importlib
import inspect
import os
import subprocess
import sys
import time

import pytest

import fnbox
from conftest import PKG_ROOT

STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "strands_standin")
ABSTRACT = {"execute_streaming", "execute_code_streaming", "read_file", "write_file", "remove_file", "list_files"}


def _strands_modules():
    return {k: v for k, v in sys.modules.items() if k == "strands" or k.startswith("strands.") or k == "fnbox.strands"}


@pytest.fixture
def sdk():
    """Imports fnbox.strands with the stand-in SDK on sys.path; restores everything afterwards."""
    saved = _strands_modules()
    saved_attr = getattr(fnbox, "strands", None)
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, STANDIN)
    try:
        sandbox_mod = importlib.import_module("strands.sandbox")
        adapter = importlib.import_module("fnbox.strands")
        yield sandbox_mod, adapter
    finally:
        sys.path.remove(STANDIN)
        for k in _strands_modules():
            del sys.modules[k]
        sys.modules.update(saved)
        if saved_attr is not None:
            fnbox.strands = saved_attr


def test_subclasses_the_sdk_class(sdk):
    mod, adapter = sdk
    assert adapter.HAVE_STRANDS is True
    assert issubclass(adapter.FnboxSandbox, mod.Sandbox)
    assert mod.Sandbox.__abstractmethods__ == frozenset(ABSTRACT)
    assert not adapter.FnboxSandbox.__abstractmethods__  # instantiable
    assert adapter.StreamChunk is mod.StreamChunk and adapter.ExecutionResult is mod.ExecutionResult
    for name in ABSTRACT:
        ours = inspect.signature(getattr(adapter.FnboxSandbox, name))
        theirs = inspect.signature(getattr(mod.Sandbox, name))
        assert list(ours.parameters)[:len(theirs.parameters) - 1] == list(theirs.parameters)[:-1], name
        assert inspect.isasyncgenfunction(getattr(adapter.FnboxSandbox, name)) == \
            inspect.isasyncgenfunction(getattr(mod.Sandbox, name)), name
        assert inspect.iscoroutinefunction(getattr(adapter.FnboxSandbox, name)) == \
            inspect.iscoroutinefunction(getattr(mod.Sandbox, name)), name


def test_semantics(sdk):
    mod, adapter = sdk

    async def main():
        async with adapter.FnboxSandbox() as box:
            # streaming: typed chunks as output arrives, then one ExecutionResult; non-zero exit returned
            items = [c async for c in box.execute_streaming("echo one; sleep 0.1; echo two >&2; exit 4")]
            assert items[:-1] == [mod.StreamChunk("one\n", "stdout"), mod.StreamChunk("two\n", "stderr")]
            assert items[-1] == mod.ExecutionResult(exit_code=4, stdout="one\n", stderr="two\n")
            r = await box.execute("no_such_command_zq")                     # the SDK's own helper
            assert isinstance(r, mod.ExecutionResult) and r.exit_code == 127
            r = await box.execute("kill -9 $$")
            assert r.exit_code == 137
            r = await box.execute('mkdir -p d && cd d && pwd; echo "$K"', env={"K": "v"})
            assert r.stdout == "/workspace/d\nv\n"
            assert (await box.execute("pwd", cwd="/workspace/d")).stdout == "/workspace/d\n"
            # code
            assert (await box.execute_code("print(6 * 7)", "python3")).stdout == "42\n"
            assert (await box.execute_code("print(1)", language="python")).stdout == "1\n"
            assert (await box.execute_code("console.log('n')", "node")).stdout == "n\n"
            r = await box.execute_code("print(1)", "nosuchlang_zq")
            assert r.exit_code == 127 and "Language interpreter not found: nosuchlang_zq" in r.stderr
            if os.path.exists("/usr/bin/perl"):  # any other interpreter reads the code on stdin
                assert (await box.execute_code('print "perl ok\\n";', "perl")).stdout == "perl ok\n"
            with pytest.raises(ValueError, match="unsafe characters"):
                await box.execute_code("print(1)", "python3; rm -rf /")
            with pytest.raises(ValueError):
                await box.execute("true", env={"BAD KEY": "x"})
            # timeout: the SDK raises asyncio.TimeoutError; ours is one, with the partial output
            start = time.monotonic()
            with pytest.raises(asyncio.TimeoutError) as e:
                await box.execute("echo part; sleep 5", timeout=1)
            assert time.monotonic() - start < 3
            assert e.value.stdout == "part\n" and str(e.value) == "Execution timed out after 1 seconds"
            # files
            await box.write_file("x/y/z.bin", b"\x00\x01\xff")               # parents created
            assert await box.read_file("x/y/z.bin") == b"\x00\x01\xff"
            await box.write_text("x/t.txt", "tëxt")
            assert await box.read_text("x/t.txt") == "tëxt"
            listing = await box.list_files("x")
            assert listing == [mod.FileInfo("t.txt", False, len("tëxt".encode())), mod.FileInfo("y", True, 0)]
            assert all(isinstance(i, mod.FileInfo) for i in listing)
            await box.remove_file("x/t.txt")
            for op in (box.read_file("x/t.txt"), box.remove_file("x/t.txt"), box.list_files("nope")):
                with pytest.raises(FileNotFoundError):
                    await op
            # leaving a stream early kills the run
            agen = box.execute_streaming("echo first; sleep 1.2; echo x > /workspace/strands_mark")
            first = await agen.__anext__()
            assert first == mod.StreamChunk("first\n", "stdout")
            await agen.aclose()
            await asyncio.sleep(1.4)
            assert (await box.execute("test -e strands_mark; echo $?")).stdout == "1\n"
            session = box.session
        assert session.closed
    asyncio.run(main())


def test_remote_and_cancellation(sdk, tcp_server):
    mod, adapter = sdk

    async def main():
        box = adapter.FnboxSandbox(base_url=tcp_server.base_url, token=tcp_server.token)
        try:
            task = asyncio.ensure_future(box.execute("sleep 1.2; echo x > /workspace/strands_mark2"))
            await asyncio.sleep(0.4)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(1.2)
            assert (await box.execute("test -e strands_mark2; echo $?")).stdout == "1\n"
        finally:
            await box.close()
        with pytest.raises(fnbox.FnboxError):
            await adapter.FnboxSandbox(base_url=tcp_server.base_url, token="bad-token-000000000").execute("true")
    asyncio.run(main())


def test_importable_without_strands():
    code = ("import importlib.util, inspect, asyncio\n"
            "assert importlib.util.find_spec('strands') is None\n"
            "import fnbox.strands as s\n"
            "assert s.HAVE_STRANDS is False\n"
            "assert s.FnboxSandbox.__mro__[1].__name__ == '_SandboxBase'\n"
            "assert set(s.FnboxSandbox.__mro__[1].__abstractmethods__) == %r\n"
            "async def main():\n"
            "    async with s.FnboxSandbox() as b:\n"
            "        r = await b.execute('echo ok')\n"
            "        assert isinstance(r, s.ExecutionResult) and r.stdout == 'ok\\n', r\n"
            "asyncio.run(main())\n"
            "print('fine')\n") % (ABSTRACT,)
    env = dict(os.environ, PYTHONPATH=str(PKG_ROOT), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "fine"
