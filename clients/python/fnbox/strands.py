"""A Strands Agents sandbox backed by a fnbox session: :class:`FnboxSandbox`.

It subclasses the real ``strands.sandbox.Sandbox`` (and yields the SDK's own ``StreamChunk``,
``ExecutionResult`` and ``FileInfo``) when the ``strands-agents`` package is importable; otherwise it
subclasses a stand-in with the same abstract methods, defined here, so ``import fnbox.strands`` works
without the SDK. The SDK's semantics, as its ``HostSandbox`` has them:

* a non-zero exit code is returned in the ``ExecutionResult``, not raised; a missing command is 127,
  and so is an unknown language (stderr ``Language interpreter not found: <language>``);
* a language name with characters outside ``[a-zA-Z0-9._-]`` raises :class:`ValueError`;
* a timeout raises :class:`asyncio.TimeoutError` (here :class:`fnbox.CommandTimeout`, a subclass,
  with the partial output);
* reading, removing or listing a missing path raises :class:`FileNotFoundError`;
* ``write_file`` creates parent directories.

::

    from fnbox.strands import FnboxSandbox
    sandbox = FnboxSandbox()                      # a private local fnbox server, or base_url=..., token=...
    agent = Agent(tools=[...], sandbox=sandbox)   # as the SDK takes sandboxes
"""

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Dict, List, Optional, Union

from . import aio
from ._common import CommandResult, check_env, check_language, code_body, command_body, command_outcome

try:  # the real SDK when it is installed
    from strands.sandbox import Sandbox as _SandboxBase  # type: ignore
    from strands.sandbox import ExecutionResult, FileInfo, StreamChunk  # type: ignore
    HAVE_STRANDS = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_STRANDS = False

    @dataclass
    class StreamChunk:  # type: ignore[no-redef]
        """Stand-in for ``strands.sandbox.StreamChunk``."""

        data: str
        stream_type: str = "stdout"

    @dataclass
    class FileInfo:  # type: ignore[no-redef]
        """Stand-in for ``strands.sandbox.FileInfo``."""

        name: str
        is_dir: Optional[bool] = None
        size: Optional[int] = None

    @dataclass
    class OutputFile:
        """Stand-in for ``strands.sandbox.OutputFile``."""

        name: str
        content: bytes
        mime_type: str = "application/octet-stream"

    @dataclass
    class ExecutionResult:  # type: ignore[no-redef]
        """Stand-in for ``strands.sandbox.ExecutionResult``."""

        exit_code: int
        stdout: str
        stderr: str
        output_files: List[Any] = field(default_factory=list)

    class _SandboxBase(ABC):  # type: ignore[no-redef]
        """Stand-in for ``strands.sandbox.Sandbox``: the same abstract methods and helpers."""

        @abstractmethod
        def execute_streaming(self, command: str, timeout: Optional[int] = None, cwd: Optional[str] = None,
                              **kwargs: Any) -> AsyncGenerator[Any, None]:
            ...

        @abstractmethod
        def execute_code_streaming(self, code: str, language: str, timeout: Optional[int] = None,
                                   cwd: Optional[str] = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
            ...

        @abstractmethod
        async def read_file(self, path: str, **kwargs: Any) -> bytes:
            ...

        @abstractmethod
        async def write_file(self, path: str, content: bytes, **kwargs: Any) -> None:
            ...

        @abstractmethod
        async def remove_file(self, path: str, **kwargs: Any) -> None:
            ...

        @abstractmethod
        async def list_files(self, path: str, **kwargs: Any) -> List[Any]:
            ...

        async def execute(self, command: str, timeout: Optional[int] = None, cwd: Optional[str] = None,
                          **kwargs: Any) -> Any:
            result = None
            async for chunk in self.execute_streaming(command, timeout=timeout, cwd=cwd, **kwargs):
                if isinstance(chunk, ExecutionResult):
                    result = chunk
            if result is None:
                raise RuntimeError("execute_streaming() did not yield an ExecutionResult")
            return result

        async def execute_code(self, code: str, language: str, timeout: Optional[int] = None,
                               cwd: Optional[str] = None, **kwargs: Any) -> Any:
            result = None
            async for chunk in self.execute_code_streaming(code, language=language, timeout=timeout, cwd=cwd,
                                                           **kwargs):
                if isinstance(chunk, ExecutionResult):
                    result = chunk
            if result is None:
                raise RuntimeError("execute_code_streaming() did not yield an ExecutionResult")
            return result

        async def read_text(self, path: str, encoding: str = "utf-8", **kwargs: Any) -> str:
            return (await self.read_file(path, **kwargs)).decode(encoding)

        async def write_text(self, path: str, content: str, encoding: str = "utf-8", **kwargs: Any) -> None:
            await self.write_file(path, content.encode(encoding), **kwargs)

__all__ = ["FnboxSandbox", "ExecutionResult", "FileInfo", "StreamChunk", "HAVE_STRANDS", "MAX_TIMEOUT_SECONDS"]

_DONE = object()

#: What "no timeout" (``timeout=None``, the SDK's default) runs with: fnbox's longest.
MAX_TIMEOUT_SECONDS = 3600

#: The languages fnbox's code route runs itself (the code in a file, run or compiled by that interpreter).
SERVER_LANGUAGES = frozenset(["python3", "python", "node", "javascript", "js", "ruby", "php", "sh", "bash", "c",
                              "cpp"])

#: Any other language is run as the SDK's sandboxes do, as a program of that name reading the code on its
#: stdin; a missing one answers as the server does for an unknown language (exit 127).
STDIN_INTERPRETER = ('command -v -- "$1" >/dev/null 2>&1 || { printf "Language interpreter not found: %s\\n" "$1" >&2; '
                     'exit 127; }; exec "$1"')


class FnboxSandbox(_SandboxBase):
    """A ``strands.sandbox.Sandbox`` whose commands, code and files live in one fnbox session.

    The arguments are :class:`fnbox.aio.Sandbox`'s (``base_url``, ``token``, ``binary``, ``timeout``,
    ``workdir``, ``files``, ``env``, ``permissions``, ``limits``, ``mount``, ``environment``,
    ``dependencies``...). The session opens on first use; :meth:`close` (or ``async with``) ends it, and a
    private local server with it.
    ``execute_streaming`` / ``execute_code_streaming`` also take ``env`` (a dict) and ``stdin``.
    """

    def __init__(self, base_url: Optional[str] = None, token: Optional[str] = None,
                 binary: Optional[str] = None, timeout: Optional[float] = None, **session_options: Any) -> None:
        super().__init__()
        self._session = aio.Sandbox(base_url, token, binary, timeout, **session_options)

    @property
    def session(self) -> aio.Sandbox:
        """The underlying :class:`fnbox.aio.Sandbox`."""
        return self._session

    async def _sb(self) -> aio.Sandbox:
        return await self._session.open()

    async def close(self) -> None:
        await self._session.close()

    aclose = close

    async def __aenter__(self) -> "FnboxSandbox":
        await self._sb()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- streaming primitives --
    async def execute_streaming(self, command: str, timeout: Optional[int] = None, cwd: Optional[str] = None,
                                **kwargs: Any) -> AsyncGenerator[Union[StreamChunk, ExecutionResult], None]:
        """Run a shell command, yielding ``StreamChunk`` s as output arrives, then an ``ExecutionResult``."""
        check_env(kwargs.get("env"))
        sb = await self._sb()
        body = command_body(command, cwd=cwd, env=kwargs.get("env"), stdin=kwargs.get("stdin"),
                            timeout=MAX_TIMEOUT_SECONDS if timeout is None else timeout)
        async for item in self._stream(sb, "/commands", body):
            yield item

    async def execute_code_streaming(self, code: str, language: str, timeout: Optional[int] = None,
                                     cwd: Optional[str] = None, **kwargs: Any
                                     ) -> AsyncGenerator[Union[StreamChunk, ExecutionResult], None]:
        """Run code with ``language``'s interpreter (``python``, ``python3``, ``node``, ``ruby``, ``php``,
        ``sh``, ``bash``, ``c``, ``cpp``...); an unknown one is exit code 127."""
        try:
            check_language(language)
        except ValueError:
            raise ValueError("language parameter contains unsafe characters: %s" % language) from None
        check_env(kwargs.get("env"))
        sb = await self._sb()
        timeout = MAX_TIMEOUT_SECONDS if timeout is None else timeout
        if language in SERVER_LANGUAGES:
            body = code_body(code, language, cwd=cwd, env=kwargs.get("env"), timeout=timeout, stdin=None)
            route = "/code"
        else:
            body = command_body(STDIN_INTERPRETER, cwd=cwd, env=kwargs.get("env"), timeout=timeout, stdin=code,
                                args=[language])
            route = "/commands"
        async for item in self._stream(sb, route, body):
            yield item

    async def _stream(self, sb: "aio.Sandbox", route: str, body: Dict[str, Any]
                      ) -> AsyncGenerator[Union[StreamChunk, ExecutionResult], None]:
        queue: "asyncio.Queue[Any]" = asyncio.Queue()

        async def start() -> CommandResult:
            result = await sb._run(route, body, lambda d: queue.put_nowait(StreamChunk(data=d, stream_type="stdout")),
                                   lambda d: queue.put_nowait(StreamChunk(data=d, stream_type="stderr")))
            return command_outcome(result, body.get("timeout"))

        run = asyncio.ensure_future(start())
        run.add_done_callback(lambda _t: queue.put_nowait(_DONE))
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                yield item
            result = run.result()  # raises CommandTimeout, FnboxError...
            yield ExecutionResult(exit_code=result.exit_code, stdout=result.stdout, stderr=result.stderr)
        finally:
            if not run.done():  # the consumer stopped early or was cancelled: kill the run
                run.cancel()
                try:
                    await run
                except BaseException:
                    pass

    # -- files --
    async def read_file(self, path: str, **kwargs: Any) -> bytes:
        return await (await self._sb()).files.read(path)

    async def write_file(self, path: str, content: bytes, **kwargs: Any) -> None:
        await (await self._sb()).files.write(path, content)

    async def remove_file(self, path: str, **kwargs: Any) -> None:
        await (await self._sb()).files.remove(path)

    async def list_files(self, path: str, **kwargs: Any) -> List[FileInfo]:
        entries = await (await self._sb()).files.list(path)
        return [FileInfo(name=e.name, is_dir=e.is_dir, size=e.size) for e in entries]
