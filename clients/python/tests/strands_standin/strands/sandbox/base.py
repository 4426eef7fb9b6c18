"""Stand-in for `strands.sandbox.base` of the Strands Agents Python SDK.

A faithful copy of the public shape of strands-agents/sdk-python's `src/strands/sandbox/base.py`
(branch feature/sandbox, commit c213ba7d "feat: add Sandbox abstraction — core only (1/N)"): the same
dataclasses and fields, the same six abstract methods with the same parameters, the same concrete
convenience methods. Docstrings shortened; `X | None` spelled `Optional[X]` for Python 3.9.
"""

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, List, Literal, Optional, Union

StreamType = Literal["stdout", "stderr"]


@dataclass
class StreamChunk:
    data: str
    stream_type: StreamType = "stdout"


@dataclass
class FileInfo:
    name: str
    is_dir: Optional[bool] = None
    size: Optional[int] = None


@dataclass
class OutputFile:
    name: str
    content: bytes
    mime_type: str = "application/octet-stream"


@dataclass
class ExecutionResult:
    exit_code: int
    stdout: str
    stderr: str
    output_files: List[OutputFile] = field(default_factory=list)


class Sandbox(ABC):
    """Abstract execution environment for agent tools."""

    @abstractmethod
    async def execute_streaming(
        self,
        command: str,
        timeout: Optional[int] = None,
        cwd: Optional[str] = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Union[StreamChunk, ExecutionResult], None]:
        """Execute a shell command, streaming output: StreamChunks, then a final ExecutionResult."""
        ...
        yield  # type: ignore[misc]  # pragma: no cover

    @abstractmethod
    async def execute_code_streaming(
        self,
        code: str,
        language: str,
        timeout: Optional[int] = None,
        cwd: Optional[str] = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Union[StreamChunk, ExecutionResult], None]:
        """Execute code in the sandbox, streaming output."""
        ...
        yield  # type: ignore[misc]  # pragma: no cover

    @abstractmethod
    async def read_file(self, path: str, **kwargs: Any) -> bytes:
        """Raises FileNotFoundError if the file does not exist or cannot be read."""
        ...

    @abstractmethod
    async def write_file(self, path: str, content: bytes, **kwargs: Any) -> None:
        """Implementations should create parent directories if they do not exist."""
        ...

    @abstractmethod
    async def remove_file(self, path: str, **kwargs: Any) -> None:
        """Raises FileNotFoundError if the file does not exist."""
        ...

    @abstractmethod
    async def list_files(self, path: str, **kwargs: Any) -> List[FileInfo]:
        """Raises FileNotFoundError if the directory does not exist."""
        ...

    async def execute(
        self,
        command: str,
        timeout: Optional[int] = None,
        cwd: Optional[str] = None,
        **kwargs: Any,
    ) -> ExecutionResult:
        result = None
        async for chunk in self.execute_streaming(command, timeout=timeout, cwd=cwd, **kwargs):
            if isinstance(chunk, ExecutionResult):
                result = chunk
        if result is None:
            raise RuntimeError("execute_streaming() did not yield an ExecutionResult")
        return result

    async def execute_code(
        self,
        code: str,
        language: str,
        timeout: Optional[int] = None,
        cwd: Optional[str] = None,
        **kwargs: Any,
    ) -> ExecutionResult:
        result = None
        async for chunk in self.execute_code_streaming(code, language=language, timeout=timeout, cwd=cwd, **kwargs):
            if isinstance(chunk, ExecutionResult):
                result = chunk
        if result is None:
            raise RuntimeError("execute_code_streaming() did not yield an ExecutionResult")
        return result

    async def read_text(self, path: str, encoding: str = "utf-8", **kwargs: Any) -> str:
        data = await self.read_file(path, **kwargs)
        return data.decode(encoding)

    async def write_text(self, path: str, content: str, encoding: str = "utf-8", **kwargs: Any) -> None:
        await self.write_file(path, content.encode(encoding), **kwargs)
