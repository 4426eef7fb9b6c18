"""I/O-free pieces shared by the sync and asyncio clients: checks, URLs, results, NDJSON lines."""

import json
import os
import re
import shutil
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union
from urllib.parse import quote, urlsplit

from .errors import CommandTimeout, FnboxError, InvalidRequest, _from_answer


class Response:
    """One whole HTTP answer (both transports, sync and asyncio)."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


ENV_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
LANGUAGE_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
NDJSON = "application/x-ndjson"
DEFAULT_COMMAND_TIMEOUT = 30.0  # the server's default, for the timeout message

Json = Dict[str, Any]
OutputCallback = Callable[[str], Any]


def check_env(env: Optional[Mapping[str, Any]], field: str = "env") -> Optional[Dict[str, str]]:
    """Refuse environment names that are not shell identifiers, before anything runs."""
    if env is None:
        return None
    if not isinstance(env, Mapping):
        raise InvalidRequest("%s: expected a mapping of names to strings" % field, "InvalidRequest")
    out = {}
    for name, value in env.items():
        if not isinstance(name, str) or not ENV_NAME.match(name):
            raise InvalidRequest("%s: invalid variable name %r (must match ^[a-zA-Z_][a-zA-Z0-9_]*$)"
                                 % (field, name), "InvalidRequest")
        if not isinstance(value, str):
            raise InvalidRequest("%s.%s: expected a string, got %s" % (field, name, type(value).__name__),
                                 "InvalidRequest")
        out[name] = value
    return out


def check_language(language: Any, field: str = "language") -> str:
    if not isinstance(language, str) or not LANGUAGE_NAME.match(language):
        raise InvalidRequest("%s: language parameter contains unsafe characters: %r (must match "
                             "^[a-zA-Z0-9._-]+$)" % (field, language), "InvalidRequest")
    return language


def check_timeout(timeout: Any, field: str = "timeout") -> Optional[float]:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise InvalidRequest("%s: expected a number of seconds above 0, got %r" % (field, timeout),
                             "InvalidRequest")
    return timeout


def find_binary(binary: Optional[str] = None) -> str:
    """``binary``, else ``$FNBOX_BIN``, else ``fnbox`` on ``PATH``."""
    for candidate, origin in ((binary, "binary="), (os.environ.get("FNBOX_BIN") or None, "FNBOX_BIN")):
        if candidate:
            path = os.fspath(candidate)
            if os.sep not in path:
                found = shutil.which(path)
                if found:
                    return found
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
            raise FnboxError("the fnbox binary given by %s (%r) is not an executable file" % (origin, path),
                             "BinaryNotFound")
    found = shutil.which("fnbox")
    if found:
        return found
    raise FnboxError("no fnbox binary: pass binary='/path/to/fnbox', set FNBOX_BIN, or put fnbox on PATH "
                     "(or pass base_url= to use a running `fnbox serve`)", "BinaryNotFound")


class Endpoint:
    """A parsed ``base_url``: ``http://host:port[/prefix]``, ``https://...`` or ``unix:/path/to.sock``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.unix_path: Optional[str] = None
        self.host = "localhost"
        self.port = 80
        self.tls = False
        self.prefix = ""
        if base_url.startswith("unix:"):
            rest = base_url[len("unix:"):]
            if rest.startswith("//"):
                rest = rest[2:]
            if not rest:
                raise FnboxError("base_url %r: no socket path after 'unix:'" % base_url, "InvalidRequest")
            self.unix_path = rest
            return
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FnboxError("base_url %r: expected http://HOST:PORT, https://HOST:PORT or unix:/PATH"
                             % base_url, "InvalidRequest")
        self.tls = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.prefix = parts.path.rstrip("/")

    @property
    def host_header(self) -> str:
        if self.unix_path is not None:
            return "localhost"
        host = "[%s]" % self.host if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else "%s:%d" % (host, self.port)

    def __repr__(self) -> str:
        return "Endpoint(%r)" % self.base_url


def auth_headers(token: Optional[str]) -> Dict[str, str]:
    return {"Authorization": "Bearer " + token} if token else {}


def file_path(route: str, path: str) -> str:
    if not isinstance(path, str) or not path:
        raise InvalidRequest("path: expected a non-empty string", "InvalidRequest")
    return route + "?path=" + quote(path, safe="/")


def decode_json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8")) if body else None
    except (UnicodeDecodeError, ValueError):
        return None


def encode_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def raise_for_answer(status: int, body: bytes, *, kind: str = "", path: Optional[str] = None) -> Any:
    """The decoded JSON of a 2xx answer; raises the matching :class:`FnboxError` for the rest."""
    decoded = decode_json(body)
    if 200 <= status < 300:
        return decoded
    if decoded is None and body:
        decoded = {"error": {"type": _status_type(status), "message": body.decode("utf-8", "replace")[:500]}}
    raise _from_answer(status, decoded, kind=kind, path=path)


def _status_type(status: int) -> str:
    return {400: "InvalidRequest", 401: "Unauthorized", 404: "NotFound", 431: "HeadersTooLarge",
            503: "Overloaded"}.get(status, "HTTPError")


def run_answer(status: int, body: bytes) -> Json:
    """A run's answer (call, command, code): the result object, 200 or result-shaped 503; else raise."""
    decoded = decode_json(body)
    if isinstance(decoded, dict) and "status" in decoded and status in (200, 503):
        check_result(decoded, status)
        return decoded
    return raise_for_answer(status, body) if status != 200 else _bad_body(body)


def _bad_body(body: bytes) -> Json:
    raise FnboxError("the server answered something that is not a result: %r" % body[:200], "ProtocolError")


def check_result(result: Json, status: Optional[int] = None) -> Json:
    """A result whose error is ``InvalidRequest`` raises it (nothing ran); any other is returned."""
    err = result.get("error")
    if isinstance(err, dict) and err.get("type") == "InvalidRequest":
        raise InvalidRequest(str(err.get("message", "")), "InvalidRequest", status, result)
    return result


class LineDispatcher:
    """Turns NDJSON lines into ``on_stdout`` / ``on_stderr`` calls and keeps the result line."""

    def __init__(self, on_stdout: Optional[OutputCallback], on_stderr: Optional[OutputCallback]) -> None:
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.result: Optional[Json] = None
        self.dropped: Optional[Json] = None

    streamed_out = 0
    streamed_err = 0

    def line(self, raw: bytes) -> Any:
        """Handle one line; returns what the callback returned (a coroutine for async callbacks)."""
        raw = raw.strip()
        if not raw:
            return None
        try:
            event = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise FnboxError("malformed NDJSON line from the server: %r" % raw[:200], "ProtocolError")
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "stdout":
            data = event.get("data", "")
            self.streamed_out += len(data)
            return self.on_stdout(data) if self.on_stdout and data else None
        if kind == "stderr":
            data = event.get("data", "")
            self.streamed_err += len(data)
            return self.on_stderr(data) if self.on_stderr and data else None
        if kind == "result":
            del event["type"]
            self.result = event
        elif kind == "dropped":
            self.dropped = event
        return None

    def finish(self) -> Json:
        if self.result is None:
            raise FnboxError("the stream ended without a result line", "ProtocolError")
        return check_result(self.result)

    def leftovers(self) -> List[Tuple[OutputCallback, str]]:
        """After a ``dropped`` line (a reader slower than the output), the output the stream left out,
        taken from the result, so that the callbacks always add up to ``stdout`` / ``stderr``."""
        out: List[Tuple[OutputCallback, str]] = []
        if self.result is None:
            return out
        for cb, text, sent in ((self.on_stdout, self.result.get("stdout"), self.streamed_out),
                               (self.on_stderr, self.result.get("stderr"), self.streamed_err)):
            if cb is not None and isinstance(text, str) and len(text) > sent:
                out.append((cb, text[sent:]))
        return out


class CommandResult:
    """The outcome of :meth:`Commands.run` / :meth:`Sandbox.run_code`, whatever the exit code.

    ``exit_code``, ``stdout``, ``stderr``, ``status`` (``success``, ``error``, ``crash``,
    ``terminated``), ``success``, ``error`` (the server's error object or ``None``) and ``raw``, the
    server's whole result dict (``usage``, ``truncated``, ``meta``, ``compile``...).
    """

    __slots__ = ("raw",)

    def __init__(self, raw: Json) -> None:
        self.raw = raw

    exit_code = property(lambda self: self.raw.get("exitCode"))
    stdout = property(lambda self: self.raw.get("stdout", ""))
    stderr = property(lambda self: self.raw.get("stderr", ""))
    status = property(lambda self: self.raw.get("status"))
    success = property(lambda self: bool(self.raw.get("success")))
    error = property(lambda self: self.raw.get("error"))
    usage = property(lambda self: self.raw.get("usage"))
    truncated = property(lambda self: self.raw.get("truncated"))

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CommandResult) and other.raw == self.raw

    def __repr__(self) -> str:
        return "CommandResult(exit_code=%r, status=%r, stdout=%r, stderr=%r)" % (
            self.exit_code, self.status, _clip(self.stdout), _clip(self.stderr))


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "..."


def command_outcome(result: Json, timeout: Optional[float]) -> CommandResult:
    """A command's result object, or :class:`CommandTimeout` when it ran out of time.

    A result with status ``error`` *and* an ``error`` object was refused before the program ran
    (``InvalidRequest`` naming the field, ``SandboxSetupFailed``...): that raises too. A program's own
    non-zero exit has no ``error`` object and is returned.
    """
    err = result.get("error")
    if result.get("status") == "error" and isinstance(err, dict):
        raise _from_answer(None, result)
    if result.get("status") == "timeout":
        seconds = timeout if timeout is not None else DEFAULT_COMMAND_TIMEOUT
        raise CommandTimeout("Execution timed out after %s seconds" % _fmt_seconds(seconds), "TimeoutError",
                             None, result, timeout=seconds)
    return CommandResult(result)


class Execution:
    """The outcome of a kernel execute (:meth:`Sandbox.run_code` with ``kernel=True``).

    ``result`` (the last expression's value, converted to JSON as a call's result), ``error`` (the
    code's exception: ``{type, message, stack}``, or ``None``), ``stdout``, ``stderr``, ``exit_code``
    (0, or 1 when the code raised), ``status`` (``success``, ``error``, ``crash``...), ``success``,
    ``kernel_restarted`` (the kernel was started afresh for this execute, or killed by it: the
    state is gone), ``usage``, ``truncated`` and ``raw``, the server's whole result dict.
    """

    __slots__ = ("raw",)

    def __init__(self, raw: Json) -> None:
        self.raw = raw

    result = property(lambda self: self.raw.get("result"))
    error = property(lambda self: self.raw.get("error"))
    exit_code = property(lambda self: self.raw.get("exitCode"))
    stdout = property(lambda self: self.raw.get("stdout", ""))
    stderr = property(lambda self: self.raw.get("stderr", ""))
    status = property(lambda self: self.raw.get("status"))
    success = property(lambda self: bool(self.raw.get("success")))
    kernel_restarted = property(lambda self: bool(self.raw.get("kernelRestarted")))
    usage = property(lambda self: self.raw.get("usage"))
    truncated = property(lambda self: self.raw.get("truncated"))

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Execution) and other.raw == self.raw

    def __repr__(self) -> str:
        err = self.error
        return "Execution(status=%r, result=%r, error=%r, stdout=%r, stderr=%r%s)" % (
            self.status, self.result, err.get("type") if isinstance(err, dict) else err, _clip(self.stdout),
            _clip(self.stderr), ", kernel_restarted=True" if self.kernel_restarted else "")


_NOT_RUN = ("SandboxSetupFailed", "KernelFeatureMissing", "Overloaded")


def kernel_outcome(result: Json, timeout: Optional[float]) -> Execution:
    """A kernel execute's result as an :class:`Execution`, the code's own errors included; raises
    :class:`CommandTimeout` (with the partial output, ``.result["kernelRestarted"]``) at the timeout,
    and the matching error when nothing ran (no sandbox, overloaded; ``InvalidRequest`` is raised
    by :func:`check_result` already)."""
    err = result.get("error")
    if result.get("status") == "timeout":
        seconds = timeout if timeout is not None else DEFAULT_COMMAND_TIMEOUT
        raise CommandTimeout("Execution timed out after %s seconds" % _fmt_seconds(seconds), "TimeoutError",
                             None, result, timeout=seconds)
    if isinstance(err, dict) and err.get("type") in _NOT_RUN:
        raise _from_answer(None, result)
    return Execution(result)


def kernel_route(language: str) -> str:
    return "/kernels/" + quote(check_language(language), safe="")


def kernel_body(code: str, timeout: Optional[float]) -> Json:
    if not isinstance(code, str):
        raise InvalidRequest("code: expected a string", "InvalidRequest")
    body: Json = {"code": code}
    timeout = check_timeout(timeout)
    if timeout is not None:
        body["timeout"] = timeout
    return body


def check_kernel_options(**options: Any) -> None:
    """``cwd``, ``env``, ``stdin``, ``args`` belong to a program's run: a kernel takes none."""
    given = sorted(name for name, value in options.items() if value is not None)
    if given:
        raise InvalidRequest("%s: not accepted with kernel=True (a kernel keeps one process; set them "
                             "in the code, e.g. os.chdir / os.environ)" % ", ".join(given), "InvalidRequest")


def _fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


def command_body(command: str, *, cwd: Optional[str], env: Optional[Mapping[str, str]],
                 timeout: Optional[float], stdin: Optional[str], args: Optional[List[str]] = None) -> Json:
    if not isinstance(command, str):
        raise InvalidRequest("command: expected a string", "InvalidRequest")
    body: Json = {"command": command}
    return _run_options(body, cwd=cwd, env=env, timeout=timeout, stdin=stdin, args=args)


def code_body(code: str, language: str, *, cwd: Optional[str], env: Optional[Mapping[str, str]],
              timeout: Optional[float], stdin: Optional[str], args: Optional[List[str]] = None) -> Json:
    if not isinstance(code, str):
        raise InvalidRequest("code: expected a string", "InvalidRequest")
    body: Json = {"code": code, "language": check_language(language)}
    return _run_options(body, cwd=cwd, env=env, timeout=timeout, stdin=stdin, args=args)


def _run_options(body: Json, *, cwd, env, timeout, stdin, args) -> Json:
    env = check_env(env)
    timeout = check_timeout(timeout)
    if cwd is not None:
        body["cwd"] = cwd
    if env:
        body["env"] = env
    if timeout is not None:
        body["timeout"] = timeout
    if stdin is not None:
        body["stdin"] = stdin
    if args is not None:
        body["args"] = list(args)
    return body


def call_body(code: str, *, language: str, function_name: Optional[str], args: Any, kwargs: Any,
              timeout: Optional[float], extra: Mapping[str, Any]) -> Json:
    body: Json = {"language": language, "code": code}
    if function_name is not None:
        body["functionName"] = function_name
    if args is not None:
        body["args"] = list(args) if isinstance(args, tuple) else args
    if kwargs is not None:
        body["kwargs"] = dict(kwargs)
    timeout = check_timeout(timeout)
    if timeout is not None:
        body["timeout"] = timeout
    body.update(extra)
    return body


def session_body(*, workdir: Optional[str], files: Any, env: Optional[Mapping[str, str]], permissions: Any,
                 limits: Any, mount: Any, idle_timeout: Optional[float], max_lifetime: Optional[float],
                 environment: Optional[str] = None, dependencies: Any = None) -> Json:
    body: Json = {}
    if environment is not None:
        body["environment"] = environment
    if dependencies is not None:
        # fnbox validates the shape and each entry, naming it; tuples become the JSON lists it reads
        body["dependencies"] = ({k: list(v) if isinstance(v, tuple) else v for k, v in dependencies.items()}
                                if isinstance(dependencies, Mapping) else dependencies)
    env = check_env(env, "env")
    if workdir is not None:
        body["workdir"] = workdir
    if files is not None:
        body["files"] = files
    if permissions is not None:
        body["permissions"] = dict(permissions) if isinstance(permissions, Mapping) else permissions
    if env:
        perms = body.get("permissions")
        if perms is None:
            perms = body["permissions"] = {}
        if not isinstance(perms, dict):
            raise InvalidRequest("env: cannot be combined with permissions given as %r; put it in "
                                 "permissions={'env': ...}" % (perms,), "InvalidRequest")
        merged = dict(perms.get("env") or {})
        merged.update(env)
        perms["env"] = merged
    if limits is not None:
        body["limits"] = limits
    if mount is not None:
        body["mount"] = mount
    if idle_timeout is not None:
        body["idleTimeout"] = check_timeout(idle_timeout, "idle_timeout")
    if max_lifetime is not None:
        body["maxLifetime"] = check_timeout(max_lifetime, "max_lifetime")
    return body


def sync_body(changes: Any, mount: Any, on_error: Optional[str]) -> Json:
    body: Json = {"changes": changes, "mount": mount}
    if on_error is not None:
        body["onError"] = on_error
    return body


def request_bytes(request: Union[Mapping[str, Any], str, bytes]) -> bytes:
    if isinstance(request, bytes):
        return request
    if isinstance(request, str):
        return request.encode("utf-8")
    if isinstance(request, Mapping):
        return encode_json(dict(request))
    raise InvalidRequest("request: expected a dict (or its JSON text), got %s" % type(request).__name__,
                         "InvalidRequest")


class FileEntry:
    """One entry of :meth:`Files.list`: ``name``, ``path``, ``is_dir``, ``size``."""

    __slots__ = ("name", "path", "is_dir", "size")

    def __init__(self, name: str, path: str, is_dir: Optional[bool], size: Optional[int]) -> None:
        self.name = name
        self.path = path
        self.is_dir = is_dir
        self.size = size

    @property
    def type(self) -> str:  # e2b's EntryInfo.type
        return "dir" if self.is_dir else "file"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FileEntry) and (self.name, self.path, self.is_dir, self.size) == (
            other.name, other.path, other.is_dir, other.size)

    def __repr__(self) -> str:
        return "FileEntry(name=%r, is_dir=%r, size=%r)" % (self.name, self.is_dir, self.size)


def list_entries(path: str, decoded: Any) -> List[FileEntry]:
    if not isinstance(decoded, list):
        raise FnboxError("the server's listing is not an array", "ProtocolError")
    base = path.rstrip("/") or "/"
    out = []
    for item in decoded:
        name = item.get("name", "")
        full = (base + "/" + name) if base != "/" else "/" + name
        out.append(FileEntry(name, full, item.get("isDir"), item.get("size")))
    return out


def to_bytes(data: Union[bytes, bytearray, memoryview, str]) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise InvalidRequest("data: expected bytes or str, got %s" % type(data).__name__, "InvalidRequest")


def local_cli_outcome(verb: str, rc: int, stdout: bytes, stderr: bytes) -> Json:
    """What ``fnbox call|sync`` printed and its exit status, as a result/report or an error."""
    text = stdout.strip().splitlines()[-1] if stdout.strip() else b""
    decoded = decode_json(text)
    if isinstance(decoded, dict) and decoded.get("type") == "result":
        del decoded["type"]  # a --stream result line
    tail = stderr.decode("utf-8", "replace").strip()[-2000:]
    if not isinstance(decoded, dict):
        raise FnboxError("`fnbox %s` exited with status %d without a result%s" % (
            verb, rc, (": " + tail) if tail else ""), "InternalError")
    err = decoded.get("error") if isinstance(decoded.get("error"), dict) else {}
    if rc == 2 or err.get("type") == "InvalidRequest":
        raise InvalidRequest(str(err.get("message", tail or "invalid request")), str(err.get("type") or
                             "InvalidRequest"), None, decoded)
    if verb == "sync" and rc == 3:
        raise FnboxError(str(err.get("message", tail)), str(err.get("type") or "KernelFeatureMissing"), None,
                         decoded)
    return decoded


def finish_stream(lines: LineDispatcher) -> Json:
    """The result of a stream, after handing the callbacks what a ``dropped`` line left out."""
    result = lines.finish()
    for callback, data in lines.leftovers():
        callback(data)
    return result
