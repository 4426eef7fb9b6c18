"""Stand-in for `strands.sandbox` (strands-agents/sdk-python, src/strands/sandbox/__init__.py)."""

from .base import ExecutionResult, FileInfo, OutputFile, Sandbox, StreamChunk, StreamType

__all__ = ["ExecutionResult", "FileInfo", "OutputFile", "Sandbox", "StreamChunk", "StreamType"]
