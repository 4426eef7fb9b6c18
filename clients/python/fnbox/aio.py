"""The asyncio twin of :mod:`fnbox`: :class:`Sandbox`, :func:`call` and :class:`Executor` as coroutines.

Real asyncio all the way (``asyncio.open_connection`` / ``open_unix_connection`` and a small HTTP/1.1
client), so cancelling a task closes its connection: the server kills the run at once, and the
:class:`asyncio.CancelledError` is re-raised. ``on_stdout`` / ``on_stderr`` may be plain functions or
coroutine functions.
"""

import asyncio
import inspect
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._ahttp import AsyncTransport, with_timeout
from ._common import (CommandResult, Execution, FileEntry, LineDispatcher, OutputCallback, call_body,
                      check_kernel_options, check_result, check_timeout, code_body, command_body, command_outcome,
                      decode_json, encode_json, file_path, find_binary, kernel_body, kernel_outcome, kernel_route,
                      list_entries, local_cli_outcome, raise_for_answer, request_bytes, run_answer, session_body,
                      sync_body, to_bytes)
from ._local import PrivateServer
from .errors import FileNotFound, FnboxError, SandboxNotFound
from .sandbox import _State, close_state

__all__ = ["Sandbox", "Commands", "Files", "Executor", "call", "sync_files"]


async def _finish(lines: LineDispatcher) -> Dict[str, Any]:
    result = lines.finish()
    for callback, data in lines.leftovers():
        out = callback(data)
        if inspect.isawaitable(out):
            await out
    return result


async def _wait_ready(server: PrivateServer, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    delay = 0.002
    while True:
        err = server.exited_error()
        if err is not None:
            raise err
        t = AsyncTransport(server.base_url, connect_timeout=1.0)
        try:
            if (await t.request("GET", "/v1/health", content_type=None)).status == 200:
                return
        except FnboxError:
            pass
        finally:
            t.close_nowait()
        if loop.time() - start > timeout:
            raise server.not_ready_error(timeout)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


async def _start_private_server(binary: str) -> PrivateServer:
    fut = PrivateServer.spawn(binary)
    try:
        server = await asyncio.wrap_future(fut)
    except asyncio.CancelledError:
        fut.add_done_callback(lambda f: not f.cancelled() and f.exception() is None and f.result().stop())
        raise
    try:
        await _wait_ready(server)
    except BaseException:
        await _stop_server(server)
        raise
    return server


async def _stop_server(server: PrivateServer, grace: float = 10.0) -> None:
    server.signal_stop()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while server.proc is not None and server.proc.poll() is None and loop.time() < deadline:
        await asyncio.sleep(0.01)
    server.finish_stop(wait=server.proc is None or server.proc.poll() is not None)


class Sandbox:
    """The asyncio :class:`fnbox.Sandbox`::

        async with fnbox.aio.Sandbox() as sb:
            r = await sb.commands.run("echo hi")
            await sb.files.write("a.txt", b"x")

    or ``sb = await fnbox.aio.Sandbox.create(...)`` ... ``await sb.close()``. Same arguments as
    :class:`fnbox.Sandbox`; the session is opened by ``async with`` / :meth:`create` / :meth:`open`.
    """

    def __init__(self, base_url: Optional[str] = None, token: Optional[str] = None,
                 binary: Optional[str] = None, timeout: Optional[float] = None, *,
                 workdir: Optional[str] = None, files: Optional[Mapping[str, Any]] = None,
                 env: Optional[Mapping[str, str]] = None, permissions: Any = None,
                 limits: Optional[Mapping[str, Any]] = None, mount: Optional[Mapping[str, Any]] = None,
                 idle_timeout: Optional[float] = None, max_lifetime: Optional[float] = None,
                 environment: Optional[str] = None,
                 dependencies: Optional[Mapping[str, Sequence[str]]] = None) -> None:
        self.timeout = check_timeout(timeout)
        self._body = session_body(workdir=workdir, files=files, env=env, permissions=permissions, limits=limits,
                                  mount=mount, idle_timeout=idle_timeout, max_lifetime=max_lifetime,
                                  environment=environment, dependencies=dependencies)
        self._base_url, self._token = base_url, token
        self._binary = find_binary(binary) if base_url is None else None
        self._state = _State()
        self._transport: Optional[AsyncTransport] = None
        self._finalizer: Optional[weakref.finalize] = None
        self._opened = False
        self._opening: Optional["asyncio.Future[None]"] = None
        self.commands = Commands(self)
        self.files = Files(self)

    @classmethod
    async def create(cls, *args: Any, **kwargs: Any) -> "Sandbox":
        sb = cls(*args, **kwargs)
        await sb._open_or_close()
        return sb

    async def _open_or_close(self) -> "Sandbox":
        """Open; if that is cancelled or fails, leave nothing open (the caller gets no object to close)."""
        try:
            return await self.open()
        except BaseException:
            await asyncio.shield(self.close())
            raise

    @classmethod
    async def connect(cls, session_id: str, base_url: str, token: Optional[str] = None,
                      timeout: Optional[float] = None) -> "Sandbox":
        """Attach to a session opened elsewhere on ``base_url``; :meth:`close` then leaves it open
        (only :meth:`kill` deletes it)."""
        sb = cls(base_url, token, timeout=timeout)
        sb._state.owned = False
        sb._state.base_url, sb._state.token = base_url, token
        sb._transport = AsyncTransport(base_url, token)
        sb._state.session_id = session_id
        sb._finalizer = weakref.finalize(sb, close_state, sb._state)
        sb._opened = True
        try:
            sb.info_at_start = await sb.get_info()
        except BaseException:
            sb._finalizer.detach()
            sb._transport.close_nowait()
            raise
        return sb

    async def open(self) -> "Sandbox":
        """Open the session (``async with`` and the first operation do it); concurrent callers share
        one opening, and a failed one may be tried again."""
        if self._opened and self._opening is None:
            return self
        if self._opening is None:
            self._opened = True
            self._opening = asyncio.ensure_future(self._open())
        opening = self._opening
        try:
            await asyncio.shield(opening)
        except asyncio.CancelledError:
            if not opening.done():  # our caller was cancelled: stop the opening too
                opening.cancel()
                try:
                    await opening
                except BaseException:
                    pass
            raise
        finally:
            if opening.done() and self._opening is opening:
                self._opening = None
        return self

    async def _open(self) -> None:
        state = self._state
        self._finalizer = weakref.finalize(self, close_state, state)
        try:
            base_url, token = self._base_url, self._token
            if base_url is None:
                assert self._binary is not None
                state.server = await _start_private_server(self._binary)
                base_url, token = state.server.base_url, None
            state.base_url, state.token = base_url, token
            self._transport = AsyncTransport(base_url, token)
            resp = await self._transport.request("POST", "/v1/sessions", encode_json(self._body))
            self.info_at_start: Dict[str, Any] = raise_for_answer(resp.status, resp.body)
            state.session_id = self.info_at_start["id"]
        except BaseException:
            await self._shutdown()
            self._state = _State()  # a later use may try again
            self._opened = False
            raise

    start = open

    async def _shutdown(self) -> None:
        state = self._state
        transport, self._transport = self._transport, None
        try:
            if state.owned and state.session_id and transport is not None:
                try:
                    await with_timeout(transport.request("DELETE", "/v1/sessions/" + state.session_id,
                                                         content_type=None), 10)
                except (FnboxError, asyncio.TimeoutError, OSError):
                    pass
            state.session_id = None
        finally:
            if transport is not None:
                await transport.close()
            server, state.server = state.server, None
            if server is not None:
                await _stop_server(server)
            if self._finalizer is not None:
                self._finalizer.detach()

    async def close(self) -> None:
        """Delete the session (what runs in it is killed); stop a private server. Idempotent."""
        if self._opening is not None:
            try:
                await self.open()
            except Exception:
                return  # it never opened: the failure cleaned up
        if self._opened and not self.closed:
            try:
                await self._shutdown()
            except asyncio.CancelledError:
                if self._finalizer is not None:
                    self._finalizer()
                raise

    aclose = close

    async def kill(self) -> None:
        """Delete the session, also one attached with :meth:`connect`."""
        self._state.owned = True
        await self.close()

    async def __aenter__(self) -> "Sandbox":
        return await self._open_or_close()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._opened and (self._finalizer is None or not self._finalizer.alive)

    @property
    def id(self) -> str:
        if self._state.session_id is None:
            raise SandboxNotFound("the sandbox is not open", "NotFound")
        return self._state.session_id

    sandbox_id = id

    @property
    def base_url(self) -> Optional[str]:
        return self._state.base_url

    @property
    def server_pid(self) -> Optional[int]:
        return self._state.server.pid if self._state.server else None

    def __repr__(self) -> str:
        return "aio.Sandbox(id=%r, base_url=%r)" % (self._state.session_id, self._state.base_url)

    # -- plumbing --
    async def _request(self, method: str, suffix: str, body: Optional[bytes] = None, **kw: Any):
        if not self._opened or self._opening is not None:
            await self.open()
        if self._transport is None or self._state.session_id is None:
            raise SandboxNotFound("the sandbox is closed", "NotFound")
        return await self._transport.request(method, "/v1/sessions/" + self._state.session_id + suffix, body, **kw)

    async def _run(self, route: str, body: Dict[str, Any], on_stdout: Optional[OutputCallback],
                   on_stderr: Optional[OutputCallback]) -> Dict[str, Any]:
        if "timeout" not in body and self.timeout is not None:
            body["timeout"] = self.timeout
        stream = on_stdout is not None or on_stderr is not None
        lines = LineDispatcher(on_stdout, on_stderr) if stream else None
        resp = await self._request("POST", route, encode_json(body), ndjson=stream,
                                   on_line=lines.line if lines else None)
        if lines is not None and resp.status == 200 and not resp.body:
            return await _finish(lines)
        return run_answer(resp.status, resp.body)

    # -- runs --
    async def run_code(self, code: str, language: str = "python", *, kernel: bool = False,
                       on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                       timeout: Optional[float] = None, cwd: Optional[str] = None,
                       env: Optional[Mapping[str, str]] = None, stdin: Optional[str] = None,
                       args: Optional[Sequence[str]] = None) -> Union[CommandResult, Execution]:
        """As :meth:`fnbox.Sandbox.run_code`; cancel the task to stop the run (a kernel's code is
        interrupted, its state kept)."""
        if kernel:
            check_kernel_options(cwd=cwd, env=env, stdin=stdin, args=args)
            body = kernel_body(code, timeout)
            result = await self._run(kernel_route(language) + "/execute", body, on_stdout, on_stderr)
            return kernel_outcome(result, body.get("timeout"))
        body = code_body(code, language, cwd=cwd, env=env, timeout=timeout, stdin=stdin,
                         args=list(args) if args is not None else None)
        result = await self._run("/code", body, on_stdout, on_stderr)
        return command_outcome(result, body.get("timeout"))

    async def restart_kernel(self, language: str = "python") -> None:
        """As :meth:`fnbox.Sandbox.restart_kernel`."""
        resp = await self._request("DELETE", kernel_route(language), content_type=None)
        raise_for_answer(resp.status, resp.body)

    async def call(self, code: str, function_name: Optional[str] = None, args: Any = None, kwargs: Any = None, *,
                   language: str = "python", timeout: Optional[float] = None,
                   on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                   **request: Any) -> Dict[str, Any]:
        """As :meth:`fnbox.Sandbox.call`."""
        body = call_body(code, language=language, function_name=function_name, args=args, kwargs=kwargs,
                         timeout=timeout, extra=request)
        return await self._run("/call", body, on_stdout, on_stderr)

    async def sync(self, on_error: Optional[str] = None) -> Dict[str, Any]:
        body = {"onError": on_error} if on_error is not None else {}
        resp = await self._request("POST", "/sync", encode_json(body))
        return raise_for_answer(resp.status, resp.body)

    async def get_info(self) -> Dict[str, Any]:
        resp = await self._request("GET", "", content_type=None)
        return raise_for_answer(resp.status, resp.body)

    info = get_info


class Commands:
    def __init__(self, sandbox: Sandbox) -> None:
        self._sb = sandbox

    async def run(self, cmd: str, cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                  timeout: Optional[float] = None, on_stdout: Optional[OutputCallback] = None,
                  on_stderr: Optional[OutputCallback] = None, *, stdin: Optional[str] = None) -> CommandResult:
        """As :meth:`fnbox.Commands.run`; cancel the task to kill the command."""
        body = command_body(cmd, cwd=cwd, env=env, timeout=timeout, stdin=stdin)
        result = await self._sb._run("/commands", body, on_stdout, on_stderr)
        return command_outcome(result, body.get("timeout", self._sb.timeout))


class Files:
    def __init__(self, sandbox: Sandbox) -> None:
        self._sb = sandbox

    async def read(self, path: str) -> bytes:
        resp = await self._sb._request("GET", file_path("/files", path), content_type=None)
        if resp.status == 200:
            return resp.body
        raise_for_answer(resp.status, resp.body, kind="file", path=path)
        raise AssertionError("unreachable")

    async def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return (await self.read(path)).decode(encoding)

    async def write(self, path: str, data: Union[bytes, bytearray, memoryview, str]) -> None:
        resp = await self._sb._request("PUT", file_path("/files", path), to_bytes(data),
                                       content_type="application/octet-stream")
        raise_for_answer(resp.status, resp.body, kind="file", path=path)

    async def list(self, path: str = ".") -> List[FileEntry]:
        resp = await self._sb._request("GET", file_path("/files/list", path), content_type=None)
        return list_entries(path, raise_for_answer(resp.status, resp.body, kind="file", path=path))

    async def remove(self, path: str) -> None:
        resp = await self._sb._request("DELETE", file_path("/files", path), content_type=None)
        raise_for_answer(resp.status, resp.body, kind="file", path=path)

    async def exists(self, path: str) -> bool:
        try:
            await self.list(path)
            return True
        except FileNotFound:
            pass
        resp = await self._sb._request("HEAD", file_path("/files", path), content_type=None)
        return resp.status == 200


# -- one-shot calls ----------------------------------------------------------------------------


async def _run_cli(binary: str, argv: List[str], payload: bytes, *, verb: str, lines: Optional[LineDispatcher]
                   ) -> Dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(binary, *argv, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                limit=1 << 20)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    async def feed() -> None:
        try:
            proc.stdin.write(payload)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            proc.stdin.close()

    async def read_out() -> bytes:
        last = b""
        if lines is None:
            return await proc.stdout.read()
        buf = bytearray()
        while True:
            piece = await proc.stdout.read(1 << 16)
            if not piece:
                break
            buf += piece
            while b"\n" in buf:
                i = buf.index(b"\n")
                line = bytes(buf[:i])
                del buf[:i + 1]
                if line.strip():
                    last = line
                    out = lines.line(line)
                    if asyncio.iscoroutine(out):
                        await out
        if buf.strip():
            last = bytes(buf)
        return last

    try:
        _, out, err = await asyncio.gather(feed(), read_out(), proc.stderr.read())
        await proc.wait()
    except BaseException:
        if proc.returncode is None:
            try:
                proc.terminate()  # SIGTERM: fnbox kills the run
            except ProcessLookupError:
                pass
            try:
                await asyncio.shield(proc.wait())
            except asyncio.CancelledError:
                pass
        raise
    return local_cli_outcome(verb, proc.returncode, out, err)


class Executor:
    """The asyncio :class:`fnbox.Executor`: ``await ex.execute(request)``, ``await ex.sync_files(...)``."""

    def __init__(self, *, base_url: Optional[str] = None, token: Optional[str] = None,
                 binary: Optional[str] = None) -> None:
        self.base_url = base_url
        self._transport = AsyncTransport(base_url, token) if base_url is not None else None
        self.binary = None if base_url is not None else find_binary(binary)

    async def execute(self, request: Union[Mapping[str, Any], str, bytes], *,
                      on_stdout: Optional[OutputCallback] = None,
                      on_stderr: Optional[OutputCallback] = None) -> Dict[str, Any]:
        payload = request_bytes(request)
        stream = on_stdout is not None or on_stderr is not None
        lines = LineDispatcher(on_stdout, on_stderr) if stream else None
        if self._transport is not None:
            resp = await self._transport.request("POST", "/v1/call", payload, ndjson=stream,
                                                 on_line=lines.line if lines else None)
            if lines is not None and resp.status == 200 and not resp.body:
                return await _finish(lines)
            return run_answer(resp.status, resp.body)
        assert self.binary is not None
        return await _run_cli(self.binary, ["call", "--stream"] if stream else ["call"], payload, verb="call",
                              lines=lines)

    async def sync_files(self, changes: Any, mount: Mapping[str, Any], *, on_error: Optional[str] = None
                         ) -> Dict[str, Any]:
        payload = encode_json(sync_body(changes, mount, on_error))
        if self._transport is not None:
            resp = await self._transport.request("POST", "/v1/sync", payload)
            decoded = decode_json(resp.body)
            if resp.status not in (400, 401, 404) and isinstance(decoded, dict) and "synced" in decoded:
                return check_result(decoded, resp.status)
            return raise_for_answer(resp.status if resp.status >= 300 else 502, resp.body)
        assert self.binary is not None
        return await _run_cli(self.binary, ["sync"], payload, verb="sync", lines=None)

    syncFiles = sync_files

    async def close(self) -> None:
        if self._transport is not None:
            await self._transport.close()

    async def __aenter__(self) -> "Executor":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


async def call(request: Union[Mapping[str, Any], str, bytes], *, base_url: Optional[str] = None,
               token: Optional[str] = None, binary: Optional[str] = None,
               on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None
               ) -> Dict[str, Any]:
    """The asyncio :func:`fnbox.call`; cancelling the task kills the run."""
    async with Executor(base_url=base_url, token=token, binary=binary) as ex:
        return await ex.execute(request, on_stdout=on_stdout, on_stderr=on_stderr)


async def sync_files(changes: Any, mount: Mapping[str, Any], *, on_error: Optional[str] = None,
                     base_url: Optional[str] = None, token: Optional[str] = None,
                     binary: Optional[str] = None) -> Dict[str, Any]:
    async with Executor(base_url=base_url, token=token, binary=binary) as ex:
        return await ex.sync_files(changes, mount, on_error=on_error)
