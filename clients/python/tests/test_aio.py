"""fnbox.aio: the HTTP/1.1 parser (every split of the input), the asyncio transport against a raw
socket server, and aio.Sandbox / aio.call / aio.Executor against real fnbox servers."""

import asyncio
import glob
import json
import os
import tempfile
import random
import time

import pytest

import fnbox
import fnbox.aio as aio
from fnbox._ahttp import AsyncTransport, LineSplitter, ProtocolError, ResponseParser
from conftest import pid_alive, processes_mentioning, require_host_mounts, wait_until


def run(coro):
    return asyncio.run(coro)


# -- the parser ------------------------------------------------------------------------------------

def parse(pieces, head=False):
    p = ResponseParser(head_request=head)
    events = []
    for piece in pieces:
        events += p.feed(piece)
    return p, events


def body_of(events):
    return b"".join(e[1] for e in events if e[0] == "data")


CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n"
           b"X-Two: a\r\nX-Two: b\r\n\r\n"
           b"5\r\nhello\r\n1A;ext=1\r\n" + b"abcdefghijklmnopqrstuvwxyz" + b"\r\n"
           b"0\r\nTrailer: t\r\n\r\n")


def test_parser_chunked_every_split():
    for i in range(len(CHUNKED) + 1):
        for j in range(i, len(CHUNKED) + 1, 7):
            p, events = parse([CHUNKED[:i], CHUNKED[i:j], CHUNKED[j:]])
            assert p.done and p.status == 200 and p.keep_alive
            assert p.headers["x-two"] == "a, b" and p.headers["content-type"] == "application/x-ndjson"
            assert body_of(events) == b"hello" + b"abcdefghijklmnopqrstuvwxyz"
            assert [e[0] for e in events][0] == "head" and events[-1] == ("end",)


def test_parser_byte_by_byte_and_extra():
    data = CHUNKED + b"HTTP/1.1 200"
    p, events = parse([data[i:i + 1] for i in range(len(data))])
    assert p.done and body_of(events) == b"helloabcdefghijklmnopqrstuvwxyz" and p.extra == b"HTTP/1.1 200"


def test_parser_big_random_chunks():
    rng = random.Random(7)
    payload = bytes(rng.getrandbits(8) for _ in range(300_000))
    wire = bytearray(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
    pos = 0
    while pos < len(payload):
        n = rng.choice([1, 2, 15, 16, 17, 255, 4096, 65536, 100_000])
        piece = payload[pos:pos + n]
        wire += b"%x\r\n" % len(piece) + piece + b"\r\n"
        pos += n
    wire += b"0\r\n\r\n"
    pieces, pos = [], 0
    while pos < len(wire):
        n = rng.randint(1, 70_000)
        pieces.append(bytes(wire[pos:pos + n]))
        pos += n
    p, events = parse(pieces)
    assert p.done and body_of(events) == payload


def test_parser_content_length_and_close():
    msg = b"HTTP/1.1 404 Not Found\r\nContent-Length: 11\r\n\r\n{\"a\": true}"
    for i in range(len(msg) + 1):
        p, events = parse([msg[:i], msg[i:]])
        assert p.done and p.status == 404 and body_of(events) == b'{"a": true}'
    p, events = parse([b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nsome", b" more"])
    assert not p.done and not p.keep_alive
    events += p.feed_eof()
    assert p.done and body_of(events) == b"some more"


def test_parser_no_body_cases():
    p, events = parse([b"HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n"])
    assert p.done and body_of(events) == b""
    p, events = parse([b"HTTP/1.1 200 OK\r\nContent-Length: 93\r\n\r\n"], head=True)
    assert p.done and body_of(events) == b""
    p, events = parse([b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"])
    assert p.status == 201 and body_of(events) == b"ok" and len([e for e in events if e[0] == "head"]) == 1
    p, events = parse([b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"])
    assert p.done and not p.keep_alive


@pytest.mark.parametrize("bad", [
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY",
    b"SSH-2.0-OpenSSH\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nbad header\r\n\r\n",
])
def test_parser_refuses_garbage(bad):
    with pytest.raises(ProtocolError):
        parse([bad])


def test_parser_eof_in_the_middle():
    p, _ = parse([b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"])
    with pytest.raises(fnbox.FnboxConnectionError):
        p.feed_eof()


def test_line_splitter():
    text = b'{"a":1}\n{"b":"x\\ny"}\n\n{"c":3}'
    for i in range(len(text) + 1):
        s = LineSplitter()
        lines = s.feed(text[:i]) + s.feed(text[i:])
        assert lines == [b'{"a":1}', b'{"b":"x\\ny"}', b""] and s.rest() == b'{"c":3}'


# -- the transport against a raw server --------------------------------------------------------------

class RawServer:
    """Answers each request with the next scripted list of byte pieces (None: close the connection)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        self.connections = 0

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while self.script:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length) if length else b""
                self.requests.append((head, body))
                pieces = self.script.pop(0)
                for piece in pieces:
                    if piece is None:
                        writer.close()
                        return
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(0)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def _pieces(data, size):
    return [data[i:i + size] for i in range(0, len(data), size)]


def test_transport_ndjson_in_odd_pieces_and_keep_alive(tmp_path):
    lines = [json.dumps({"type": "stdout", "data": "x" * n}).encode() for n in (1, 70_000, 3)]
    lines.append(json.dumps({"type": "result", "status": "success", "stdout": "", "exitCode": 0}).encode())
    stream = b"\n".join(lines) + b"\n"
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in _pieces(stream, 999)) + b"0\r\n\r\n"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
    plain = b'{"status":"ok"}'
    script = [_pieces(head + chunked, 13), [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(plain), plain)]]
    server = RawServer(script)

    async def main():
        srv = await asyncio.start_unix_server(server.handle, path=str(tmp_path / "raw.sock"))
        t = AsyncTransport("unix:%s" % (tmp_path / "raw.sock"), token="tok-123")
        got = []

        async def on_line(line):  # an async consumer
            got.append(json.loads(line))
        r = await t.request("POST", "/v1/call", b"{}", ndjson=True, on_line=on_line)
        assert r.status == 200 and r.body == b""
        r2 = await t.request("GET", "/v1/health", content_type=None)
        await t.close()
        srv.close()
        await srv.wait_closed()
        return got, r2

    got, r2 = run(main())
    assert [len(e.get("data", "")) for e in got] == [1, 70_000, 3, 0] and got[-1]["type"] == "result"
    assert r2.body == b'{"status":"ok"}'
    assert server.connections == 1  # kept alive
    head0 = server.requests[0][0]
    assert b"Authorization: Bearer tok-123" in head0 and b"Accept: application/x-ndjson" in head0


def test_transport_retries_a_closed_idle_connection(tmp_path):
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    server = RawServer([[ok, None], [ok]])  # answers, then closes the kept-alive connection

    async def main():
        srv = await asyncio.start_unix_server(server.handle, path=str(tmp_path / "raw.sock"))
        t = AsyncTransport("unix:%s" % (tmp_path / "raw.sock"))
        a = await t.request("GET", "/x", content_type=None)
        await asyncio.sleep(0.05)
        b = await t.request("GET", "/y", content_type=None)
        await t.close()
        srv.close()
        return a.body, b.body

    assert run(main()) == (b"ok", b"ok")
    assert server.connections == 2


def test_transport_cut_in_the_middle(tmp_path):
    server = RawServer([[b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", None]])

    async def main():
        srv = await asyncio.start_unix_server(server.handle, path=str(tmp_path / "raw.sock"))
        t = AsyncTransport("unix:%s" % (tmp_path / "raw.sock"))
        try:
            with pytest.raises(fnbox.FnboxConnectionError):
                await t.request("GET", "/x", content_type=None)
        finally:
            await t.close()
            srv.close()

    run(main())


# -- aio.Sandbox against fnbox ----------------------------------------------------------------------

@pytest.fixture(params=["local", "tcp"])
def amode(request):
    if request.param == "local":
        return {}
    server = request.getfixturevalue("tcp_server")
    return {"base_url": server.base_url, "token": server.token}


def test_aio_sandbox_basics(amode):
    async def main():
        async with aio.Sandbox(**amode) as sb:
            r = await sb.commands.run("echo out; echo err >&2; exit 3")
            assert (r.exit_code, r.stdout, r.stderr) == (3, "out\n", "err\n")
            assert (await sb.commands.run("no_such_cmd_zq")).exit_code == 127
            assert (await sb.commands.run("kill -9 $$")).exit_code == 137
            events = []

            async def on_err(d):
                events.append(("err", d))
            r = await sb.commands.run("echo a; sleep 0.15; echo b >&2; sleep 0.15; echo c",
                                      on_stdout=lambda d: events.append(("out", d)), on_stderr=on_err)
            assert events == [("out", "a\n"), ("err", "b\n"), ("out", "c\n")] and r.stdout == "a\nc\n"
            with pytest.raises(fnbox.CommandTimeout) as e:
                await sb.commands.run("echo early; sleep 5", timeout=0.4)
            assert e.value.stdout == "early\n" and str(e.value) == "Execution timed out after 0.4 seconds"
            assert isinstance(e.value, asyncio.TimeoutError)
            blob = bytes(range(256)) * 300
            await sb.files.write("a/b/c.bin", blob)
            assert await sb.files.read("a/b/c.bin") == blob
            assert [(x.name, x.is_dir, x.size) for x in await sb.files.list("a/b")] == [("c.bin", False, len(blob))]
            await sb.files.remove("a/b/c.bin")
            with pytest.raises(FileNotFoundError):
                await sb.files.read("a/b/c.bin")
            with pytest.raises(FileNotFoundError):
                await sb.files.list("nope")
            assert await sb.files.exists("a/b") and not await sb.files.exists("a/b/c.bin")
            r = await sb.run_code("console.log([1, 2].map(x => x * 2).join())", language="javascript")
            assert r.stdout == "2,4\n"
            r = await sb.run_code("print('py')")
            assert r.stdout == "py\n"
            r = await sb.call("def f(a, b=1, *, c=0): return a * 100 + b * 10 + c", args=[1], kwargs={"c": 3})
            assert r["result"] == 113
            r = await sb.call("def f(): return 1 / 0")
            assert r["error"]["type"] == "ZeroDivisionError"
            with pytest.raises(fnbox.InvalidRequest):
                await sb.commands.run("true", env={"no-dash": "x"})
            # several coroutines at once on one sandbox
            outs = await asyncio.gather(*(sb.commands.run("echo %d" % i) for i in range(4)))
            assert [o.stdout for o in outs] == ["%d\n" % i for i in range(4)]
    run(main())


def test_aio_cancellation_kills_the_run(amode):
    async def main():
        async with aio.Sandbox(**amode) as sb:
            for i, stream in enumerate((False, True)):
                kw = {"on_stdout": lambda d: None} if stream else {}
                task = asyncio.ensure_future(sb.commands.run("sleep 1.2; echo x > /workspace/aio_mark_%d" % i, **kw))
                await asyncio.sleep(0.3)
                task.cancel()
                start = time.monotonic()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert time.monotonic() - start < 0.8
            with pytest.raises(asyncio.TimeoutError):  # wait_for cancels the same way
                await asyncio.wait_for(sb.commands.run("sleep 1.2; echo x > /workspace/aio_mark_2"), 0.3)
            await asyncio.sleep(1.2)
            for i in range(3):
                assert not await sb.files.exists("aio_mark_%d" % i)
            assert (await sb.commands.run("echo fine")).stdout == "fine\n"
    run(main())


def test_aio_local_life_cycle():
    async def main():
        sb = await aio.Sandbox.create()
        pid, tmpdir = sb.server_pid, sb._state.server.tmpdir
        assert pid_alive(pid) and os.path.isdir(tmpdir)
        await sb.close()
        await sb.close()
        assert not pid_alive(pid) and not os.path.exists(tmpdir) and not processes_mentioning(tmpdir)
        with pytest.raises(ValueError):
            async with aio.Sandbox() as sb2:
                pid2, tmpdir2 = sb2.server_pid, sb2._state.server.tmpdir
                raise ValueError("inside")
        assert not pid_alive(pid2) and not os.path.exists(tmpdir2)
        with pytest.raises(fnbox.InvalidRequest):
            await aio.Sandbox.create(limits={"pids": 0})
        # first use opens it, once, however many coroutines start at the same time
        sb3 = aio.Sandbox()
        outs = await asyncio.gather(*(sb3.commands.run("echo %d" % i) for i in range(3)))
        assert [o.stdout for o in outs] == ["0\n", "1\n", "2\n"]
        assert len(processes_mentioning(sb3._state.server.tmpdir)) == 1
        await sb3.close()
        # cancelled while opening, at various points: nothing is left
        for delay in (0, 0.002, 0.01, 0.03):
            task = asyncio.ensure_future(aio.Sandbox.create())
            await asyncio.sleep(delay)
            task.cancel()
            try:
                await (await task).close()  # it was already open
            except asyncio.CancelledError:
                pass
    before = set(processes_mentioning("fnbox-py-"))
    dirs_before = len(glob.glob(os.path.join(tempfile.gettempdir(), "fnbox-py-*")))
    run(main())
    assert wait_until(lambda: set(processes_mentioning("fnbox-py-")) <= before, 5)
    assert wait_until(lambda: len(glob.glob(os.path.join(tempfile.gettempdir(), "fnbox-py-*"))) <= dirs_before, 5)


def test_aio_wrong_token(tcp_server):
    async def main():
        with pytest.raises(fnbox.Unauthorized):
            await aio.Sandbox.create(base_url=tcp_server.base_url, token="wrong-token-0000000000")
    run(main())


def test_aio_executor_mount_and_sync(mode, tmp_path):
    require_host_mounts()

    async def main():
        async with aio.Executor(**mode) as ex:
            host = tmp_path / "h"
            host.mkdir()
            mount = {"dirs": {"/out": str(host)}}
            r = await ex.execute({"language": "python", "code": "def f():\n    open('/out/r.txt', 'w').write('R')",
                                  "mount": mount})
            assert not (host / "r.txt").exists()
            report = await ex.sync_files(r["files"]["created"], mount)
            assert report["success"] and (host / "r.txt").read_text() == "R"
    run(main())


def test_aio_call_and_executor(mode):
    async def main():
        r = await aio.call({"language": "python", "code": "def f(a): return a + 1", "args": [1]}, **mode)
        assert r["result"] == 2
        r = await aio.call({"language": "python", "code": "def f(): raise OSError('x')"}, **mode)
        assert r["error"]["type"] == "OSError"
        with pytest.raises(fnbox.InvalidRequest) as e:
            await aio.call({"language": "python", "code": "", "bogus": 1}, **mode)
        assert e.value.message.startswith("bogus")
        out = []
        r = await aio.call({"language": "python", "code": "import sys\ndef f():\n    print('o')\n    print('e', file=sys.stderr)"},
                           on_stdout=lambda d: out.append(("o", d)), on_stderr=lambda d: out.append(("e", d)), **mode)
        assert sorted(out) == [("e", "e\n"), ("o", "o\n")]
        async with aio.Executor(**mode) as ex:
            task = asyncio.ensure_future(ex.execute({"language": "python",
                                                     "code": "import time\ndef f():\n    time.sleep(5)"}))
            await asyncio.sleep(0.3)
            task.cancel()
            start = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - start < 2
    run(main())
