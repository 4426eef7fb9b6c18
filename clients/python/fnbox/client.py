"""One-shot calls: :func:`call` and :class:`Executor` (the seed's ``createExecutor`` API)."""

import threading
from typing import Any, Dict, Mapping, Optional, Union

from ._common import (LineDispatcher, OutputCallback, check_result, decode_json, encode_json, find_binary,
                      finish_stream, raise_for_answer,
                      request_bytes, run_answer, sync_body)
from ._http import Transport
from ._local import run_cli

Request = Union[Mapping[str, Any], str, bytes]


class Executor:
    """Runs ``FunctionCallRequest`` s and applies manual-sync changes.

    Remote when ``base_url`` is given (``http://host:port`` or ``unix:/path.sock``; ``token`` is sent
    as ``Authorization: Bearer``), else local: ``fnbox call`` / ``fnbox sync`` of ``binary``, else
    ``$FNBOX_BIN``, else ``fnbox`` on ``PATH``. Remote executors keep one connection per thread
    alive; :meth:`close` (or ``with``) closes them.
    """

    def __init__(self, *, base_url: Optional[str] = None, token: Optional[str] = None,
                 binary: Optional[str] = None) -> None:
        self.base_url = base_url
        self.token = token
        self._transport: Optional[Transport] = None
        self.binary: Optional[str] = None
        if base_url is not None:
            self._transport = Transport(base_url, token)
        else:
            self.binary = find_binary(binary)

    @property
    def mode(self) -> str:
        return "remote" if self._transport is not None else "local"

    def execute(self, request: Request, *, on_stdout: Optional[OutputCallback] = None,
                on_stderr: Optional[OutputCallback] = None,
                cancel: Optional[threading.Event] = None) -> Dict[str, Any]:
        """Run one function; the ``ExecutionResult`` dict for every outcome of the function.

        Only a request refused before anything ran (``InvalidRequest``) and transport failures raise
        (:class:`~fnbox.FnboxError`). With ``on_stdout`` / ``on_stderr`` the output is streamed to
        them as it is produced. ``cancel`` (a :class:`threading.Event`) or KeyboardInterrupt kills
        the run and raises :class:`~fnbox.Cancelled`.
        """
        payload = request_bytes(request)
        stream = on_stdout is not None or on_stderr is not None
        lines = LineDispatcher(on_stdout, on_stderr) if stream else None
        if self._transport is not None:
            resp = self._transport.request("POST", "/v1/call", payload, ndjson=stream,
                                           on_line=lines.line if lines else None, cancel=cancel)
            if lines is not None and resp.status == 200 and not resp.body:
                return finish_stream(lines)
            return run_answer(resp.status, resp.body)
        assert self.binary is not None
        argv = ["call", "--stream"] if stream else ["call"]
        return run_cli(self.binary, argv, payload, verb="call", on_line=lines.line if lines else None,
                       cancel=cancel)

    def sync_files(self, changes: Any, mount: Mapping[str, Any], *, on_error: Optional[str] = None
                   ) -> Dict[str, Any]:
        """Write chosen changes of a manual-sync result to the mount's host directories.

        ``changes``: a list of changes as a result's ``files`` lists them (with ``content``), or the
        whole ``files`` object; ``mount``: ``{"dirs": {...}, "permissions"?: ...}``; ``on_error``:
        ``rollback`` (default), ``continue`` or ``abort``. Returns the report ``{success, synced,
        failed, skipped, ..., message}`` (a failed change is in the report, not an exception).
        """
        payload = encode_json(sync_body(changes, mount, on_error))
        if self._transport is not None:
            resp = self._transport.request("POST", "/v1/sync", payload)
            decoded = decode_json(resp.body)
            if resp.status not in (400, 401, 404) and isinstance(decoded, dict) and "synced" in decoded:
                return check_result(decoded, resp.status)  # a report, whether or not every change was written
            return raise_for_answer(resp.status if resp.status >= 300 else 502, resp.body)
        assert self.binary is not None
        return run_cli(self.binary, ["sync"], payload, verb="sync")

    # the seed's camelCase name
    syncFiles = sync_files

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.base_url if self.base_url is not None else self.binary
        return "Executor(%s %s)" % (self.mode, where)


def call(request: Request, *, base_url: Optional[str] = None, token: Optional[str] = None,
         binary: Optional[str] = None, on_stdout: Optional[OutputCallback] = None,
         on_stderr: Optional[OutputCallback] = None, cancel: Optional[threading.Event] = None
         ) -> Dict[str, Any]:
    """Run one ``FunctionCallRequest`` and return its ``ExecutionResult`` dict (see :class:`Executor`)."""
    with Executor(base_url=base_url, token=token, binary=binary) as ex:
        return ex.execute(request, on_stdout=on_stdout, on_stderr=on_stderr, cancel=cancel)


def sync_files(changes: Any, mount: Mapping[str, Any], *, on_error: Optional[str] = None,
               base_url: Optional[str] = None, token: Optional[str] = None,
               binary: Optional[str] = None) -> Dict[str, Any]:
    """:meth:`Executor.sync_files` without keeping an executor."""
    with Executor(base_url=base_url, token=token, binary=binary) as ex:
        return ex.sync_files(changes, mount, on_error=on_error)
