"""The blocking HTTP transport: ``http.client`` over TCP or a unix socket, keep-alive per thread."""

import http.client
import socket
import ssl
import threading
from typing import Callable, List, Optional, Tuple

from ._common import NDJSON, Endpoint, Response, auth_headers
from .errors import Cancelled, FnboxConnectionError

_RETRYABLE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


class _TCPConnection(http.client.HTTPConnection):
    """Connects with a bounded wait, then reads without a deadline (a run may be silent for long)."""

    def __init__(self, host: str, port: int, connect_timeout: float, read_timeout: Optional[float]) -> None:
        super().__init__(host, port, timeout=connect_timeout)
        self._read_timeout = read_timeout

    def connect(self) -> None:
        super().connect()
        self.sock.settimeout(self._read_timeout)


class _TLSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, connect_timeout: float, read_timeout: Optional[float]) -> None:
        super().__init__(host, port, timeout=connect_timeout, context=ssl.create_default_context())
        self._read_timeout = read_timeout

    def connect(self) -> None:
        super().connect()
        self.sock.settimeout(self._read_timeout)


class _UnixConnection(http.client.HTTPConnection):
    """``http.client`` over an ``AF_UNIX`` stream socket."""

    def __init__(self, path: str, connect_timeout: float, read_timeout: Optional[float]) -> None:
        super().__init__("localhost", timeout=connect_timeout)
        self._path = path
        self._read_timeout = read_timeout

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self._path)
            sock.settimeout(self._read_timeout)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class Transport:
    """One keep-alive connection per thread to one server; ``close()`` closes them all."""

    def __init__(self, base_url: str, token: Optional[str] = None, *, connect_timeout: float = 10.0,
                 read_timeout: Optional[float] = None) -> None:
        self.endpoint = Endpoint(base_url)
        self.token = token
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: List[http.client.HTTPConnection] = []
        self._closed = False

    # -- connections --
    def _new_connection(self) -> http.client.HTTPConnection:
        ep = self.endpoint
        if ep.unix_path is not None:
            return _UnixConnection(ep.unix_path, self.connect_timeout, self.read_timeout)
        cls = _TLSConnection if ep.tls else _TCPConnection
        return cls(ep.host, ep.port, self.connect_timeout, self.read_timeout)

    def _connection(self) -> Tuple[http.client.HTTPConnection, bool]:
        """This thread's connection and whether it was used before (then a failed send is retried)."""
        if self._closed:
            raise FnboxConnectionError("the client is closed", "Closed")
        conn = getattr(self._local, "conn", None)
        if conn is not None and conn.sock is not None:
            return conn, True
        if conn is not None:
            self._forget(conn)
        conn = self._new_connection()
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn, False

    def _forget(self, conn: http.client.HTTPConnection) -> None:
        conn.close()
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            try:
                conn.close()
            except Exception:
                pass

    # -- requests --
    def request(self, method: str, path: str, body: Optional[bytes] = None, *,
                content_type: Optional[str] = "application/json", ndjson: bool = False,
                on_line: Optional[Callable[[bytes], None]] = None,
                cancel: Optional[threading.Event] = None) -> Response:
        """Send one request and read its answer.

        With ``ndjson`` the request asks for a stream; a 200 NDJSON answer is handed line by line to
        ``on_line`` as it arrives (its body in the returned :class:`Response` is then empty).
        ``cancel`` (a :class:`threading.Event`) or a KeyboardInterrupt hangs up: the server kills the run.
        """
        headers = {"Host": self.endpoint.host_header, "Accept": NDJSON if ndjson else "application/json"}
        headers.update(auth_headers(self.token))
        if body is not None:
            if content_type:
                headers["Content-Type"] = content_type
            headers["Content-Length"] = str(len(body))
        url = self.endpoint.prefix + path
        for attempt in (0, 1):
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled before the request was sent", "Cancelled")
            conn, reused = self._connection()
            watcher = _CancelWatch(conn, cancel) if cancel is not None else None
            try:
                try:
                    if conn.sock is None:
                        conn.connect()
                    if watcher:
                        watcher.start()
                    conn.request(method, url, body=body, headers=headers)
                    resp = conn.getresponse()
                except _RETRYABLE:
                    if reused and attempt == 0 and not (cancel is not None and cancel.is_set()):
                        self._forget(conn)
                        continue  # the server closed the idle keep-alive connection: a fresh one
                    raise
                answer_headers = {k.lower(): v for k, v in resp.getheaders()}
                if ndjson and resp.status == 200 and answer_headers.get("content-type", "").startswith(NDJSON):
                    while True:
                        line = resp.readline()
                        if not line:
                            break
                        if on_line is not None:
                            on_line(line)
                    data = b""
                else:
                    data = resp.read()
                if watcher is not None and watcher.stop():
                    raise Cancelled("cancelled: the connection was closed and fnbox killed the run", "Cancelled")
                if resp.will_close:
                    self._forget(conn)
                return Response(resp.status, answer_headers, data)
            except BaseException as exc:
                self._forget(conn)  # hang up: a run still going on the server is killed
                if cancel is not None and cancel.is_set():
                    raise Cancelled("cancelled: the connection was closed and fnbox killed the run",
                                    "Cancelled") from None
                if isinstance(exc, (OSError, http.client.HTTPException)) and not isinstance(exc, TimeoutError):
                    raise FnboxConnectionError("%s: %s" % (self.endpoint.base_url, _describe(exc)),
                                               "ConnectionFailed") from exc
                raise
            finally:
                if watcher:
                    watcher.stop()
        raise AssertionError("unreachable")


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return "%s%s" % (type(exc).__name__, (": " + text) if text else "")


class _CancelWatch:
    """Shuts the socket down when ``cancel`` is set, so a blocked read returns at once."""

    def __init__(self, conn: http.client.HTTPConnection, cancel: threading.Event) -> None:
        self._conn = conn
        self._cancel = cancel
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self.fired = False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="fnbox-cancel-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.is_set():
            if self._cancel.wait(0.05):
                with self._lock:
                    sock = self._conn.sock
                    if not self._done.is_set() and sock is not None:
                        self.fired = True
                        try:
                            sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                return

    def stop(self) -> bool:
        """No more shutting down from now on; whether it did shut the socket down."""
        with self._lock:
            self._done.set()
            return self.fired
