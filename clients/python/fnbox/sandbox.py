"""A session: a sandbox that lives across commands, code runs, calls and file operations."""

import os
import threading
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._common import (CommandResult, Execution, FileEntry, LineDispatcher, OutputCallback, call_body,
                      check_kernel_options, check_timeout, code_body, command_body, command_outcome, encode_json,
                      file_path, find_binary, finish_stream, kernel_body, kernel_outcome, kernel_route,
                      list_entries, raise_for_answer, run_answer, session_body, to_bytes)
from ._http import Transport
from ._local import PrivateServer, wait_ready_blocking
from .errors import FileNotFound, FnboxError, SandboxNotFound

__all__ = ["Sandbox", "Commands", "Files"]


class _State:
    """What a finalizer needs to close a sandbox; holds no reference to the :class:`Sandbox`."""

    __slots__ = ("base_url", "token", "transport", "session_id", "server", "pid", "owned", "__weakref__")

    def __init__(self) -> None:
        self.pid = os.getpid()  # a forked child must not close its parent's session or server
        self.base_url: Optional[str] = None
        self.token: Optional[str] = None
        self.transport: Any = None
        self.session_id: Optional[str] = None
        self.server: Optional[PrivateServer] = None
        self.owned = True  # opened here: closing deletes it (a session attached with connect() is not)


def close_state(state: _State, delete: bool = True) -> None:
    """Delete the session (best effort), close the connections, stop the private server."""
    if state.pid != os.getpid():
        return
    try:
        if delete and state.owned and state.session_id and state.base_url is not None:
            quick = Transport(state.base_url, state.token, connect_timeout=5.0, read_timeout=10.0)
            try:
                quick.request("DELETE", "/v1/sessions/" + state.session_id, content_type=None)
            except Exception:
                pass  # gone already, or the server is: either way nothing is left to close
            finally:
                quick.close()
        state.session_id = None
    finally:
        transport, state.transport = state.transport, None
        if transport is not None and hasattr(transport, "close") and isinstance(transport, Transport):
            transport.close()
        server, state.server = state.server, None
        if server is not None:
            server.stop()


def _health_probe(base_url: str):
    def probe() -> bool:
        t = Transport(base_url, connect_timeout=1.0, read_timeout=5.0)
        try:
            return t.request("GET", "/v1/health", content_type=None).status == 200
        except FnboxError:
            return False
        finally:
            t.close()
    return probe


class Sandbox:
    """A fnbox session (e2b-style names): commands, code, calls and files in one sandbox.

    ::

        with Sandbox() as sb:                                  # local: a private `fnbox serve`
            r = sb.commands.run("echo hi; exit 3")             # r.exit_code == 3, r.stdout == "hi\\n"
            sb.files.write("data/in.txt", b"x")                # parents created
            sb.run_code("print(open('data/in.txt').read())", language="python")

    ``base_url`` (``http://host:port`` or ``unix:/path.sock``) and ``token`` select a running server;
    without ``base_url`` a private ``fnbox serve`` is started on a unix socket in a 0700 temporary
    directory (``binary``, else ``$FNBOX_BIN``, else ``fnbox`` on ``PATH``) and stopped by
    :meth:`close`. ``timeout`` is the default timeout in seconds of every command, code run and call
    (the server's default is 30 s). The other keywords are the session's options: ``workdir``,
    ``files``, ``env`` (added to ``permissions.env``), ``permissions``, ``limits``, ``mount``,
    ``idle_timeout``, ``max_lifetime``, ``environment`` (one of the server's named environments,
    ``fnbox serve --environments FILE``, which a private server reads from ``$FNBOX_ENVIRONMENTS``;
    its commands, code, calls and kernels run there), ``dependencies`` (packages installed once for the
    session from the environment's configured index, ``{"python": ["six==1.16.0"], "javascript":
    ["left-pad@1.3.0"]}``: its commands, code, calls and kernels import them).
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
        body = session_body(workdir=workdir, files=files, env=env, permissions=permissions, limits=limits,
                            mount=mount, idle_timeout=idle_timeout, max_lifetime=max_lifetime,
                            environment=environment, dependencies=dependencies)
        self._state = state = _State()
        self._finalizer = weakref.finalize(self, close_state, state)
        try:
            if base_url is None:
                server = PrivateServer.spawn(find_binary(binary)).result()
                state.server = server
                wait_ready_blocking(server, _health_probe(server.base_url))
                base_url, token = server.base_url, None
            state.base_url, state.token = base_url, token
            state.transport = Transport(base_url, token)
            resp = state.transport.request("POST", "/v1/sessions", encode_json(body))
            self.info_at_start: Dict[str, Any] = raise_for_answer(resp.status, resp.body)
            state.session_id = self.info_at_start["id"]
        except BaseException:
            self._finalizer()
            raise
        self._attach()

    @classmethod
    def connect(cls, session_id: str, base_url: str, token: Optional[str] = None,
                timeout: Optional[float] = None) -> "Sandbox":
        """Attach to a session opened elsewhere on ``base_url``. :meth:`close` then only closes the
        connections (the session stays for its owner); :meth:`kill` deletes it."""
        self = cls.__new__(cls)
        self.timeout = check_timeout(timeout)
        self._state = state = _State()
        state.owned = False
        state.base_url, state.token, state.session_id = base_url, token, session_id
        state.transport = Transport(base_url, token)
        self._finalizer = weakref.finalize(self, close_state, state)
        try:
            self.info_at_start = self.get_info()
        except BaseException:
            self._finalizer.detach()
            state.transport.close()
            raise
        self._attach()
        return self

    def _attach(self) -> None:
        self.commands = Commands(self)
        self.files = Files(self)

    # -- identity and life --
    @property
    def id(self) -> str:
        if self._state.session_id is None:
            raise SandboxNotFound("the sandbox is closed", "NotFound")
        return self._state.session_id

    sandbox_id = id  # e2b's name

    @property
    def base_url(self) -> Optional[str]:
        return self._state.base_url

    @property
    def server_pid(self) -> Optional[int]:
        """The private server's pid in local mode, else ``None``."""
        return self._state.server.pid if self._state.server else None

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Delete the session (what runs in it is killed, its files are gone); stop a private server.
        Idempotent; also done when the object is garbage-collected or the interpreter exits."""
        self._finalizer()

    def kill(self) -> None:
        """e2b's name: delete the session, also one attached with :meth:`connect`."""
        self._state.owned = True
        self._finalizer()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Sandbox(id=%r, base_url=%r%s)" % (self._state.session_id, self._state.base_url,
                                                  ", closed" if self.closed else "")

    # -- plumbing --
    def _path(self, suffix: str = "") -> str:
        return "/v1/sessions/" + self.id + suffix

    def _request(self, method: str, suffix: str, body: Optional[bytes] = None, **kw: Any):
        if self.closed:
            raise SandboxNotFound("the sandbox is closed", "NotFound")
        return self._state.transport.request(method, self._path(suffix), body, **kw)

    def _run(self, route: str, body: Dict[str, Any], on_stdout: Optional[OutputCallback],
             on_stderr: Optional[OutputCallback], cancel: Optional[threading.Event]) -> Dict[str, Any]:
        if "timeout" not in body and self.timeout is not None:
            body["timeout"] = self.timeout
        stream = on_stdout is not None or on_stderr is not None
        lines = LineDispatcher(on_stdout, on_stderr) if stream else None
        resp = self._request("POST", route, encode_json(body), ndjson=stream,
                             on_line=lines.line if lines else None, cancel=cancel)
        if lines is not None and resp.status == 200 and not resp.body:
            return finish_stream(lines)
        return run_answer(resp.status, resp.body)

    # -- runs --
    def run_code(self, code: str, language: str = "python", *, kernel: bool = False,
                 on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
                 timeout: Optional[float] = None, cwd: Optional[str] = None,
                 env: Optional[Mapping[str, str]] = None, stdin: Optional[str] = None,
                 args: Optional[Sequence[str]] = None,
                 cancel: Optional[threading.Event] = None) -> Union[CommandResult, Execution]:
        """Run code in the session.

        ``kernel=False`` (the default): a program's code (``python``, ``javascript``/``node``, ``ruby``,
        ``php``, ``sh``, ``bash``, ``c``, ``cpp``) run as a fresh process; a :class:`CommandResult` for
        every exit code (127 and ``Language interpreter not found`` for an unknown language).

        ``kernel=True``: the code runs in the session's long-lived interpreter of that language
        (``python``/``py``/``python3``, ``javascript``/``js``/``node``, ``ruby``/``rb``, ``php``), whose
        variables and imports stay for the next execute; an :class:`Execution` whose ``result`` is the
        last expression's value and whose ``error`` is the code's exception (returned, not raised).
        ``cwd``, ``env``, ``stdin``, ``args`` are refused (:class:`~fnbox.InvalidRequest`). At the timeout
        the code is interrupted (``KeyboardInterrupt``) and the state kept; code that ignores it is killed
        and the kernel restarted (``CommandTimeout.result["kernelRestarted"]``).

        Both raise :class:`~fnbox.CommandTimeout` (with the partial output) at the timeout and
        :class:`~fnbox.Cancelled` when ``cancel`` is set (or on KeyboardInterrupt): the server stops
        the run (a kernel's code is interrupted, as at the timeout)."""
        if kernel:
            check_kernel_options(cwd=cwd, env=env, stdin=stdin, args=args)
            body = kernel_body(code, timeout)
            result = self._run(kernel_route(language) + "/execute", body, on_stdout, on_stderr, cancel)
            return kernel_outcome(result, body.get("timeout"))
        body = code_body(code, language, cwd=cwd, env=env, timeout=timeout, stdin=stdin,
                         args=list(args) if args is not None else None)
        result = self._run("/code", body, on_stdout, on_stderr, cancel)
        return command_outcome(result, body.get("timeout"))

    def restart_kernel(self, language: str = "python") -> None:
        """Kill the session's kernel of ``language`` (its state is lost); the next
        ``run_code(..., kernel=True)`` starts a fresh one. A kernel never started: nothing to do."""
        resp = self._request("DELETE", kernel_route(language), content_type=None)
        raise_for_answer(resp.status, resp.body)

    def call(self, code: str, function_name: Optional[str] = None, args: Any = None, kwargs: Any = None, *,
             language: str = "python", timeout: Optional[float] = None,
             on_stdout: Optional[OutputCallback] = None, on_stderr: Optional[OutputCallback] = None,
             cancel: Optional[threading.Event] = None, **request: Any) -> Dict[str, Any]:
        """Call one function of ``code`` with the session's files; the ``ExecutionResult`` dict for
        every outcome (``status``, ``result``, ``error`` with the language's exception type...).
        Other request fields (``schema``, ``resultOptions``...) may be given as keywords."""
        body = call_body(code, language=language, function_name=function_name, args=args, kwargs=kwargs,
                         timeout=timeout, extra=request)
        return self._run("/call", body, on_stdout, on_stderr, cancel)

    def sync(self, on_error: Optional[str] = None) -> Dict[str, Any]:
        """Write the session's mount changes so far to the host; the sync report."""
        body = {"onError": on_error} if on_error is not None else {}
        resp = self._request("POST", "/sync", encode_json(body))
        return raise_for_answer(resp.status, resp.body)

    def get_info(self) -> Dict[str, Any]:
        """``{id, createdAt, lastUsedAt, expiresAt, running, idleTimeout, maxLifetime, workdir}``."""
        resp = self._request("GET", "", content_type=None)
        return raise_for_answer(resp.status, resp.body)

    info = get_info


class Commands:
    """``sb.commands``: shell commands in the session (``/bin/sh -c``)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sb = sandbox

    def run(self, cmd: str, cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
            timeout: Optional[float] = None, on_stdout: Optional[OutputCallback] = None,
            on_stderr: Optional[OutputCallback] = None, *, stdin: Optional[str] = None,
            cancel: Optional[threading.Event] = None) -> CommandResult:
        """Run ``cmd``; a :class:`CommandResult` whatever its exit code (127 for a missing command,
        128+n when signal n killed it). ``on_stdout`` / ``on_stderr`` get the output as it comes.
        Raises :class:`~fnbox.CommandTimeout` (with the partial output) at the timeout, and
        :class:`~fnbox.Cancelled` when ``cancel`` is set or on KeyboardInterrupt (re-raised as is)."""
        body = command_body(cmd, cwd=cwd, env=env, timeout=timeout, stdin=stdin)
        result = self._sb._run("/commands", body, on_stdout, on_stderr, cancel)
        return command_outcome(result, body.get("timeout", self._sb.timeout))


class Files:
    """``sb.files``: the session's files (paths absolute, or relative to the workdir)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sb = sandbox

    def read(self, path: str) -> bytes:
        """The file's bytes; :class:`~fnbox.FileNotFound` (a ``FileNotFoundError``) when missing."""
        resp = self._sb._request("GET", file_path("/files", path), content_type=None)
        if resp.status == 200:
            return resp.body
        raise_for_answer(resp.status, resp.body, kind="file", path=path)
        raise AssertionError("unreachable")

    def read_text(self, path: str, encoding: str = "utf-8") -> str:
        return self.read(path).decode(encoding)

    def write(self, path: str, data: Union[bytes, bytearray, memoryview, str]) -> None:
        """Replace the file with ``data`` (``str`` is written as UTF-8); parent directories are created."""
        resp = self._sb._request("PUT", file_path("/files", path), to_bytes(data),
                                 content_type="application/octet-stream")
        raise_for_answer(resp.status, resp.body, kind="file", path=path)

    def list(self, path: str = ".") -> List[FileEntry]:
        """The directory's entries sorted by name; :class:`~fnbox.FileNotFound` when it is missing."""
        resp = self._sb._request("GET", file_path("/files/list", path), content_type=None)
        decoded = raise_for_answer(resp.status, resp.body, kind="file", path=path)
        return list_entries(path, decoded)

    def remove(self, path: str) -> None:
        """Remove the file (or an empty directory); :class:`~fnbox.FileNotFound` when missing."""
        resp = self._sb._request("DELETE", file_path("/files", path), content_type=None)
        raise_for_answer(resp.status, resp.body, kind="file", path=path)

    def exists(self, path: str) -> bool:
        try:
            self.list(path)
            return True
        except FileNotFound:
            pass
        resp = self._sb._request("HEAD", file_path("/files", path), content_type=None)
        return resp.status == 200
