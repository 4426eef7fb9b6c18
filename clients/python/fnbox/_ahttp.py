"""A minimal asyncio HTTP/1.1 client: keep-alive, Content-Length and chunked bodies, NDJSON streams.

:class:`ResponseParser` is I/O-free (bytes in, events out), so it is tested with every split of the
input; :class:`AsyncTransport` feeds it what the socket gives.
"""

import asyncio
import inspect
import ssl
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._common import NDJSON, Endpoint, Response, auth_headers
from .errors import FnboxConnectionError, FnboxError

MAX_HEAD = 64 * 1024
MAX_CHUNK_LINE = 4096
READ_SIZE = 256 * 1024


async def with_timeout(aw: Any, seconds: float) -> Any:
    """``await aw`` for at most ``seconds``. ``asyncio.timeout`` where there is one (3.11+): before it,
    ``wait_for`` could swallow a cancellation that came as the awaited operation finished."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):  # type: ignore[attr-defined]
            return await aw
    return await asyncio.wait_for(aw, seconds)


class ProtocolError(FnboxError):
    def __init__(self, message: str) -> None:
        super().__init__(message, "ProtocolError")


class ResponseParser:
    """Parses one HTTP/1.1 response incrementally.

    :meth:`feed` returns a list of events: ``("head", status, headers)`` once (interim 1xx answers
    are skipped), ``("data", bytes)`` for body pieces (chunked framing removed), ``("end",)`` when
    the body is complete. ``extra`` holds bytes that came after the end.
    """

    def __init__(self, head_request: bool = False) -> None:
        self._head_request = head_request
        self._buf = bytearray()
        self._state = "head"
        self._remaining = 0
        self.status: Optional[int] = None
        self.headers: Dict[str, str] = {}
        self.done = False
        self.keep_alive = True
        self.extra = b""

    def feed(self, data: bytes) -> List[Tuple[Any, ...]]:
        if self.done:
            self.extra += data
            return []
        self._buf += data
        events: List[Tuple[Any, ...]] = []
        while not self.done:
            if not self._step(events):
                break
        if self.done and self._buf:
            self.extra += bytes(self._buf)
            self._buf.clear()
        return events

    def feed_eof(self) -> List[Tuple[Any, ...]]:
        """The connection was closed: ends a body read until close, else it is an error."""
        if self.done:
            return []
        if self._state == "until-close":
            self.done = True
            self.keep_alive = False
            return [("end",)]
        where = "before the answer" if self.status is None and not self._buf else "in the middle of the answer"
        raise FnboxConnectionError("the server closed the connection %s" % where, "ConnectionLost")

    @property
    def started(self) -> bool:
        return self.status is not None or bool(self._buf)

    def _line(self, limit: int) -> Optional[bytes]:
        i = self._buf.find(b"\n")
        if i < 0:
            if len(self._buf) > limit:
                raise ProtocolError("a line of the answer is longer than %d bytes" % limit)
            return None
        line = bytes(self._buf[:i + 1])
        del self._buf[:i + 1]
        return line.rstrip(b"\r\n")

    def _take_counted(self, events: List[Tuple]) -> bool:
        """Data of a counted part (a Content-Length body, a chunk) out of the buffer; True once it is all in."""
        take = min(self._remaining, len(self._buf))
        events.append(("data", bytes(self._buf[:take])))
        del self._buf[:take]
        self._remaining -= take
        return self._remaining == 0

    def _step(self, events: List[Tuple[Any, ...]]) -> bool:
        state = self._state
        if state == "head":
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEAD:
                    raise ProtocolError("the answer's headers are longer than %d bytes" % MAX_HEAD)
                return False
            head = bytes(self._buf[:end]).decode("latin-1")
            del self._buf[:end + 4]
            self._head(head, events)
            return True
        if state == "length":
            if not self._buf:
                return False
            if self._take_counted(events):
                self._end(events)
            return True
        if state == "until-close":
            if self._buf:
                events.append(("data", bytes(self._buf)))
                self._buf.clear()
            return False
        if state == "chunk-size":
            line = self._line(MAX_CHUNK_LINE)
            if line is None:
                return False
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
                if size < 0 or not size_text or size_text.startswith((b"+", b"-", b"0x", b"0X")):
                    raise ValueError
            except ValueError:
                raise ProtocolError("bad chunk size %r" % line[:40])
            if size == 0:
                self._state = "trailer"
            else:
                self._remaining = size
                self._state = "chunk-data"
            return True
        if state == "chunk-data":
            if not self._buf:
                return False
            if self._take_counted(events):
                self._state = "chunk-end"
            return True
        if state == "chunk-end":
            if len(self._buf) < 2:
                if self._buf[:1] not in (b"", b"\r"):
                    raise ProtocolError("a chunk is not followed by CRLF")
                return False
            if bytes(self._buf[:2]) != b"\r\n":
                raise ProtocolError("a chunk is not followed by CRLF")
            del self._buf[:2]
            self._state = "chunk-size"
            return True
        if state == "trailer":
            line = self._line(MAX_HEAD)
            if line is None:
                return False
            if line == b"":
                self._end(events)
            return True
        raise AssertionError(state)

    def _head(self, head: str, events: List[Tuple[Any, ...]]) -> None:
        lines = head.split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise ProtocolError("not an HTTP/1.x status line: %r" % lines[0][:80])
        status = int(parts[1])
        headers: Dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolError("bad header line %r" % line[:80])
            key = name.strip().lower()
            value = value.strip()
            headers[key] = (headers[key] + ", " + value) if key in headers else value
        if 100 <= status < 200:  # an interim answer: the real one follows
            return
        self.status = status
        self.headers = headers
        conn = headers.get("connection", "").lower()
        self.keep_alive = parts[0] != "HTTP/1.0" and "close" not in conn
        events.append(("head", status, headers))
        te = headers.get("transfer-encoding", "").lower()
        if self._head_request or status in (204, 304):
            self._end(events)
        elif "chunked" in te:
            self._state = "chunk-size"
        elif "content-length" in headers:
            try:
                self._remaining = int(headers["content-length"])
                if self._remaining < 0:
                    raise ValueError
            except ValueError:
                raise ProtocolError("bad Content-Length %r" % headers["content-length"])
            self._state = "length"
            if self._remaining == 0:
                self._end(events)
        else:
            self._state = "until-close"
            self.keep_alive = False

    def _end(self, events: List[Tuple[Any, ...]]) -> None:
        self._state = "done"
        self.done = True
        events.append(("end",))


class LineSplitter:
    """Bytes in any pieces → whole lines (without the newline)."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> List[bytes]:
        self._buf += data
        if b"\n" not in data:
            return []
        *lines, rest = bytes(self._buf).split(b"\n")
        self._buf = bytearray(rest)
        return lines

    def rest(self) -> bytes:
        out = bytes(self._buf)
        self._buf.clear()
        return out


class _Conn:
    __slots__ = ("reader", "writer", "used")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.used = False

    def abort(self) -> None:
        try:
            self.writer.transport.abort()
        except Exception:
            pass


class AsyncTransport:
    """Keep-alive connections to one server, each used by one request at a time."""

    def __init__(self, base_url: str, token: Optional[str] = None, *, connect_timeout: float = 10.0,
                 max_idle: int = 8) -> None:
        self.endpoint = Endpoint(base_url)
        self.token = token
        self.connect_timeout = connect_timeout
        self.max_idle = max_idle
        self._idle: List[_Conn] = []
        self._busy: "set[_Conn]" = set()
        self._closed = False

    async def _open(self) -> _Conn:
        ep = self.endpoint
        try:
            if ep.unix_path is not None:
                coro = asyncio.open_unix_connection(ep.unix_path, limit=MAX_HEAD)
            else:
                ctx = ssl.create_default_context() if ep.tls else None
                coro = asyncio.open_connection(ep.host, ep.port, ssl=ctx, limit=MAX_HEAD)
            reader, writer = await with_timeout(coro, self.connect_timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            raise FnboxConnectionError("%s: %s: %s" % (ep.base_url, type(exc).__name__, exc),
                                       "ConnectionFailed") from exc
        return _Conn(reader, writer)

    async def _acquire(self) -> _Conn:
        if self._closed:
            raise FnboxConnectionError("the client is closed", "Closed")
        while self._idle:
            conn = self._idle.pop()
            if conn.reader.at_eof() or conn.writer.is_closing():
                conn.abort()
                continue
            self._busy.add(conn)
            return conn
        conn = await self._open()
        self._busy.add(conn)
        return conn

    def _release(self, conn: _Conn, reusable: bool) -> None:
        self._busy.discard(conn)
        if reusable and not self._closed and len(self._idle) < self.max_idle:
            conn.used = True
            self._idle.append(conn)
        else:
            conn.abort()

    async def close(self) -> None:
        self._closed = True
        conns = self._idle + list(self._busy)
        self._idle = []
        self._busy = set()
        for conn in conns:
            conn.abort()

    def close_nowait(self) -> None:
        self._closed = True
        for conn in self._idle + list(self._busy):
            conn.abort()
        self._idle, self._busy = [], set()

    async def request(self, method: str, path: str, body: Optional[bytes] = None, *,
                      content_type: Optional[str] = "application/json", ndjson: bool = False,
                      on_line: Optional[Callable[[bytes], Any]] = None) -> Response:
        """Send one request; a 200 NDJSON answer goes line by line to ``on_line`` (awaited when it
        returns an awaitable). Cancelling the task closes the connection (the server then kills the
        run) and re-raises :class:`asyncio.CancelledError`."""
        ep = self.endpoint
        head = ["%s %s HTTP/1.1" % (method, ep.prefix + path), "Host: " + ep.host_header,
                "Accept: " + (NDJSON if ndjson else "application/json")]
        for k, v in auth_headers(self.token).items():
            head.append("%s: %s" % (k, v))
        if body is not None:
            if content_type:
                head.append("Content-Type: " + content_type)
            head.append("Content-Length: %d" % len(body))
        elif method in ("POST", "PUT"):
            head.append("Content-Length: 0")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")
        for attempt in (0, 1):
            conn = await self._acquire()
            parser = ResponseParser(head_request=(method == "HEAD"))
            reusable = False
            try:
                try:
                    conn.writer.write(data)
                    await conn.writer.drain()
                    first = await conn.reader.read(READ_SIZE)
                    if not first:
                        parser.feed_eof()
                except (ConnectionError, FnboxConnectionError):
                    if conn.used and attempt == 0:
                        conn.abort()  # an idle keep-alive connection the server had closed
                        continue
                    raise
                response = await self._read(conn, parser, first, ndjson, on_line)
                reusable = parser.keep_alive and not parser.extra
                return response
            except FnboxError:
                raise
            except (OSError, asyncio.IncompleteReadError) as exc:
                raise FnboxConnectionError("%s: %s: %s" % (ep.base_url, type(exc).__name__, exc),
                                           "ConnectionLost") from exc
            finally:
                self._release(conn, reusable)
        raise AssertionError("unreachable")

    async def _read(self, conn: _Conn, parser: ResponseParser, first: bytes, ndjson: bool,
                    on_line: Optional[Callable[[bytes], Any]]) -> Response:
        body = bytearray()
        lines: Optional[LineSplitter] = None
        status = 0
        headers: Dict[str, str] = {}
        data = first
        while True:
            for event in parser.feed(data) if data else parser.feed_eof():
                kind = event[0]
                if kind == "head":
                    status, headers = event[1], event[2]
                    if ndjson and status == 200 and headers.get("content-type", "").startswith(NDJSON):
                        lines = LineSplitter()
                elif kind == "data":
                    if lines is None:
                        body += event[1]
                    else:
                        for line in lines.feed(event[1]):
                            await _deliver(on_line, line)
                elif kind == "end":
                    if lines is not None:
                        rest = lines.rest()
                        if rest.strip():
                            await _deliver(on_line, rest)
                    return Response(status, headers, bytes(body))
            data = await conn.reader.read(READ_SIZE)


async def _deliver(on_line: Optional[Callable[[bytes], Any]], line: bytes) -> None:
    if on_line is None:
        return
    out = on_line(line)
    if inspect.isawaitable(out):
        await out
