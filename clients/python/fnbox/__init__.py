"""Python client of fnbox, a secure multi-language function executor for Linux.

* :func:`call` / :class:`Executor`: one function call in a fresh sandbox (``fnbox call`` locally,
  ``POST /v1/call`` on a server), and :meth:`Executor.sync_files` for manual sync.
* :class:`Sandbox`: a session (commands, code, calls, files) on a server or a private local one.
* :mod:`fnbox.aio`: the same with ``asyncio``; :mod:`fnbox.strands`: a Strands Agents ``Sandbox``.

Standard library only.
"""

from ._common import CommandResult, Execution, FileEntry
from .client import Executor, call, sync_files
from .errors import (Cancelled, CommandTimeout, FileNotFound, FnboxConnectionError, FnboxError, InvalidRequest,
                     IsADirectory, NotFound, Overloaded, PermissionDenied, SandboxNotFound, Unauthorized)
from .sandbox import Commands, Files, Sandbox

__version__ = "0.1.0"

__all__ = [
    "call", "sync_files", "Executor", "Sandbox", "Commands", "Files", "CommandResult", "Execution", "FileEntry",
    "FnboxError", "InvalidRequest", "Unauthorized", "Overloaded", "NotFound", "SandboxNotFound",
    "FileNotFound", "IsADirectory", "PermissionDenied", "CommandTimeout", "Cancelled", "FnboxConnectionError",
]
