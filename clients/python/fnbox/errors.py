"""Errors raised by the fnbox client.

Every error is a :class:`FnboxError` carrying the server's ``error.type`` as ``.type``, its message as
``.message`` and the HTTP status as ``.status`` (``None`` in local mode or when no answer came).
Some also subclass a builtin so that ordinary ``except`` clauses work:

* :class:`FileNotFound` is a :class:`FileNotFoundError` (404 on a file or a listing);
* :class:`CommandTimeout` is a :class:`TimeoutError` (and :class:`asyncio.TimeoutError`);
* :class:`InvalidRequest` is a :class:`ValueError`;
* :class:`FnboxConnectionError` is a :class:`ConnectionError`.
"""

import asyncio
from typing import Any, Dict, Optional

__all__ = [
    "FnboxError",
    "InvalidRequest",
    "Unauthorized",
    "Overloaded",
    "NotFound",
    "SandboxNotFound",
    "FileNotFound",
    "CommandTimeout",
    "Cancelled",
    "FnboxConnectionError",
    "PermissionDenied",
    "IsADirectory",
]


class FnboxError(Exception):
    """An error from fnbox: ``.type`` (the server's ``error.type``), ``.message``, ``.status``.

    ``.result`` is the answer's JSON body when there was one (for an ``InvalidRequest`` the
    result object the server sent), else ``None``.
    """

    def __init__(self, message: str, type: str = "FnboxError", status: Optional[int] = None,
                 result: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.message = message
        self.type = type
        self.status = status
        self.result = result

    def __str__(self) -> str:
        if self.status is not None:
            return "%s (HTTP %d): %s" % (self.type, self.status, self.message)
        return "%s: %s" % (self.type, self.message)

    def __repr__(self) -> str:
        return "%s(type=%r, message=%r, status=%r)" % (self.__class__.__name__, self.type, self.message,
                                                       self.status)

    def __reduce__(self):  # picklable despite the keyword arguments
        return (_rebuild, (self.__class__, self.message, self.type, self.status, self.result))


def _rebuild(cls, message, type, status, result):
    err = cls.__new__(cls)
    FnboxError.__init__(err, message, type, status, result)
    return err


class InvalidRequest(FnboxError, ValueError):
    """The request was refused before anything ran (HTTP 400, `fnbox call` exit 2, or refused here)."""


class Unauthorized(FnboxError):
    """HTTP 401: the bearer token is missing or not one the server accepts."""


class Overloaded(FnboxError):
    """HTTP 503: the server's queue is full, it is shutting down, or ``--max-sessions`` are open."""


class NotFound(FnboxError):
    """HTTP 404 on something that is neither a session nor a file (e.g. a route this server lacks)."""


class SandboxNotFound(NotFound):
    """HTTP 404 naming the session: closed, expired, never opened, or another token's."""


class FileNotFound(NotFound, FileNotFoundError):
    """HTTP 404 on a session file or directory; also a builtin :class:`FileNotFoundError`."""

    def __init__(self, message: str, type: str = "NotFound", status: Optional[int] = 404,
                 result: Optional[Dict[str, Any]] = None, path: Optional[str] = None) -> None:
        FnboxError.__init__(self, message, type, status, result)
        self.filename = path  # what FileNotFoundError users look at

    def __str__(self) -> str:
        return FnboxError.__str__(self)


class IsADirectory(InvalidRequest, IsADirectoryError):
    """HTTP 400 on a file route whose path is a directory (read it with ``list``)."""

    def __str__(self) -> str:
        return FnboxError.__str__(self)


class PermissionDenied(FnboxError, PermissionError):
    """HTTP 403 on a session file: a read-only system path or a file the sandbox's user may not touch."""

    def __str__(self) -> str:
        return FnboxError.__str__(self)


_TIMEOUT_BASES = (FnboxError, TimeoutError) if asyncio.TimeoutError is TimeoutError \
    else (FnboxError, asyncio.TimeoutError, TimeoutError)


class CommandTimeout(*_TIMEOUT_BASES):  # type: ignore[misc]
    """A command or code run reached its timeout: every process of it was killed.

    ``.stdout`` and ``.stderr`` hold the output produced before that, ``.timeout`` the seconds,
    ``.result`` the server's result object (status ``timeout``, exit code 124).
    """

    def __init__(self, message: str, type: str = "TimeoutError", status: Optional[int] = None,
                 result: Optional[Dict[str, Any]] = None, timeout: Optional[float] = None) -> None:
        FnboxError.__init__(self, message, type, status, result)
        self.timeout = timeout
        self.stdout = (result or {}).get("stdout", "")
        self.stderr = (result or {}).get("stderr", "")
        self.exit_code = (result or {}).get("exitCode", 124)

    def __str__(self) -> str:
        return self.message


class Cancelled(FnboxError):
    """The run was cancelled by the caller (``cancel`` event, KeyboardInterrupt): fnbox killed it."""


class FnboxConnectionError(FnboxError, ConnectionError):
    """The server could not be reached, or the connection broke before an answer came."""

    def __str__(self) -> str:
        return FnboxError.__str__(self)





def _from_answer(status: Optional[int], body: Any, *, kind: str = "", path: Optional[str] = None) -> FnboxError:
    """The error for a refused HTTP answer (or a local ``fnbox`` refusal).

    ``body`` is the decoded JSON (``{"error": {type, message}}`` or a result carrying ``error``),
    ``kind`` is ``"file"`` for the file routes, where a 404 on the path is :class:`FileNotFound`.
    """
    err: Dict[str, Any] = {}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
    etype = str(err.get("type") or _DEFAULT_TYPES.get(status or 0, "HTTPError"))
    message = str(err.get("message") or (("HTTP %d" % status) if status else "no answer"))
    result = body if isinstance(body, dict) else None
    if status == 400 and kind == "file" and "is a directory" in message.lower():
        return IsADirectory(message, etype, status, result)
    if etype == "InvalidRequest" or status == 400:
        return InvalidRequest(message, etype, status, result)
    if status == 401 or etype == "Unauthorized":
        return Unauthorized(message, etype, status, result)
    if status == 404:
        if message.startswith("session "):
            return SandboxNotFound(message, etype, status, result)
        if kind == "file":
            return FileNotFound(message, etype, status, result, path=path)
        return NotFound(message, etype, status, result)
    if status == 403 and kind == "file":
        return PermissionDenied(message, etype, status, result)
    if status == 503 and etype == "Overloaded":
        return Overloaded(message, etype, status, result)
    return FnboxError(message, etype, status, result)


_DEFAULT_TYPES = {400: "InvalidRequest", 401: "Unauthorized", 403: "PermissionDenied", 404: "NotFound",
                  405: "MethodNotAllowed", 413: "PayloadTooLarge", 503: "Overloaded", 500: "InternalError"}
