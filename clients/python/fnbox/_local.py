"""Local mode: ``fnbox call`` / ``fnbox sync`` as child processes, and the private ``fnbox serve``."""

import collections
import concurrent.futures
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Deque, List, Optional, Sequence, Tuple

from ._common import local_cli_outcome
from .errors import Cancelled, FnboxError

# -- one-shot CLI runs -------------------------------------------------------------------------


def run_cli(binary: str, argv: Sequence[str], payload: bytes, *, verb: str,
            on_line: Optional[Callable[[bytes], None]] = None,
            cancel: Optional[threading.Event] = None) -> Any:
    """Run ``fnbox <argv>`` with ``payload`` on stdin; its one JSON answer, or an error.

    With ``on_line`` (``--stream``) every stdout line is handed over as it arrives. ``cancel`` or a
    KeyboardInterrupt sends the child SIGTERM (the run ends ``terminated``) and raises.
    """
    proc = subprocess.Popen([binary] + list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    stderr_parts: List[bytes] = []
    threads = [threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True),
               threading.Thread(target=_drain, args=(proc.stderr, stderr_parts), daemon=True)]
    for t in threads:
        t.start()
    cancelled = threading.Event()
    done = threading.Event()
    watcher = None
    if cancel is not None:
        def watch() -> None:
            while not done.is_set():
                if cancel.wait(0.05):
                    if not done.is_set():
                        cancelled.set()
                        _signal(proc, signal.SIGTERM)
                    return
        watcher = threading.Thread(target=watch, name="fnbox-cancel-watch", daemon=True)
        watcher.start()
    last = b""
    try:
        assert proc.stdout is not None
        if on_line is not None:
            for line in iter(proc.stdout.readline, b""):
                if line.strip():
                    last = line
                    if cancelled.is_set():
                        continue
                    on_line(line)
        else:
            last = proc.stdout.read()
        proc.wait()
    except BaseException:
        _signal(proc, signal.SIGTERM)
        _reap(proc)
        raise
    finally:
        done.set()
        for t in threads:
            t.join(5)
        if proc.stdout:
            proc.stdout.close()
    if cancelled.is_set() or (cancel is not None and cancel.is_set() and proc.returncode != 0):
        raise Cancelled("cancelled: fnbox was stopped and killed the run", "Cancelled")
    return local_cli_outcome(verb, proc.returncode, last, b"".join(stderr_parts))


def _feed(pipe: Any, payload: bytes) -> None:
    try:
        pipe.write(payload)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _drain(pipe: Any, parts: List[bytes]) -> None:
    try:
        for chunk in iter(lambda: pipe.read(65536), b""):
            if sum(len(p) for p in parts) < 1 << 20:
                parts.append(chunk)
    finally:
        pipe.close()


def _signal(proc: subprocess.Popen, sig: int) -> None:
    try:
        if proc.poll() is None:
            proc.send_signal(sig)
    except OSError:
        pass


def _reap(proc: subprocess.Popen, grace: float = 10.0) -> None:
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- the private server ------------------------------------------------------------------------
# `fnbox serve --die-with-parent` asks the kernel for SIGTERM when its parent goes (PR_SET_PDEATHSIG),
# and "parent" there is the *thread* that forked it. A Sandbox opened in a short-lived thread (or
# asyncio.to_thread) must not lose its server when that thread ends, so servers are started either
# from the main thread or from one daemon thread that lives as long as the process.

_spawn_lock = threading.Lock()
_spawn_queue: "queue.SimpleQueue[Tuple[Callable[[], Any], concurrent.futures.Future]]" = queue.SimpleQueue()
_spawner: Optional[threading.Thread] = None


def _spawner_main() -> None:
    while True:
        fn, fut = _spawn_queue.get()
        if not fut.set_running_or_notify_cancel():
            continue
        try:
            fut.set_result(fn())
        except BaseException as exc:  # handed to the caller
            fut.set_exception(exc)


def spawn_future(fn: Callable[[], Any]) -> "concurrent.futures.Future":
    """Run ``fn`` (which starts a process) on a thread that lives as long as this process."""
    global _spawner
    fut: concurrent.futures.Future = concurrent.futures.Future()
    if threading.current_thread() is threading.main_thread():
        try:
            fut.set_result(fn())
        except BaseException as exc:
            fut.set_exception(exc)
        return fut
    with _spawn_lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_spawner_main, name="fnbox-spawner", daemon=True)
            _spawner.start()
    _spawn_queue.put((fn, fut))
    return fut


class PrivateServer:
    """A ``fnbox serve`` on a unix socket in a private 0700 temporary directory.

    Created by :func:`PrivateServer.spawn`; :meth:`stop` (idempotent, also used by finalizers) sends
    SIGTERM, waits, and removes the directory.
    """

    STDERR_LINES = 50

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.tmpdir = _private_dir()
        self.socket_path = os.path.join(self.tmpdir, "fnbox.sock")
        self.base_url = "unix:" + self.socket_path
        self.proc: Optional[subprocess.Popen] = None
        self._tail: Deque[str] = collections.deque(maxlen=self.STDERR_LINES)
        self._drainer: Optional[threading.Thread] = None
        self._stop_lock = threading.Lock()
        self.stopped = False

    @classmethod
    def spawn(cls, binary: str) -> "concurrent.futures.Future":
        def start() -> "PrivateServer":
            server = cls(binary)
            try:
                server._start()
            except BaseException:
                server.stop()
                raise
            return server

        return spawn_future(start)

    def _start(self) -> None:
        # --warm none: a private server runs sessions, which pre-started sandboxes do not serve
        argv = [self.binary, "serve", "--listen", "unix:" + self.socket_path, "--die-with-parent",
                "--grace", "0", "--warm", "none"]
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise FnboxError("could not start %s: %s" % (" ".join(argv), exc), "ServerStartFailed") from exc
        self._drainer = threading.Thread(target=self._drain, name="fnbox-serve-stderr", daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stderr is not None
        try:
            for line in iter(proc.stderr.readline, b""):
                self._tail.append(line.decode("utf-8", "replace").rstrip("\n"))
        except (OSError, ValueError):
            pass
        finally:
            try:
                proc.stderr.close()
            except OSError:
                pass

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc else None

    def stderr_tail(self) -> str:
        return "\n".join(self._tail)

    def exited_error(self) -> Optional[FnboxError]:
        """An error naming the exit status and stderr if the server has exited, else ``None``."""
        if self.proc is None or self.proc.poll() is None:
            return None
        if self._drainer is not None:
            self._drainer.join(1)
        return FnboxError("the private `fnbox serve` exited with status %s before it was ready%s" % (
            self.proc.returncode, (":\n" + self.stderr_tail()) if self._tail else ""), "ServerStartFailed")

    def not_ready_error(self, waited: float) -> FnboxError:
        return FnboxError("the private `fnbox serve` did not answer /v1/health within %.0f s%s" % (
            waited, (":\n" + self.stderr_tail()) if self._tail else ""), "ServerStartFailed")

    def signal_stop(self) -> None:
        if self.proc is not None:
            _signal(self.proc, signal.SIGTERM)

    def finish_stop(self, wait: bool = True) -> None:
        """After :meth:`signal_stop` and the process's exit (or to force it): reap, remove the directory."""
        with self._stop_lock:
            if self.stopped:
                return
            if self.proc is not None:
                if wait:
                    _reap(self.proc)
                else:
                    self.proc.kill()
                    self.proc.wait()
            if self._drainer is not None and self._drainer is not threading.current_thread():
                self._drainer.join(2)
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.stopped = True

    def stop(self) -> None:
        """SIGTERM, wait for the exit (SIGKILL after 10 s), remove the directory. Idempotent."""
        if self.stopped:
            return
        self.signal_stop()
        self.finish_stop()


def _private_dir() -> str:
    base = tempfile.gettempdir()
    if len(base) > 60:  # a unix socket path must fit in 108 bytes
        base = "/tmp"
    path = tempfile.mkdtemp(prefix="fnbox-py-", dir=base)
    os.chmod(path, 0o700)
    return path


def wait_ready_blocking(server: PrivateServer, probe: Callable[[], bool], timeout: float = 15.0) -> None:
    start = time.monotonic()
    delay = 0.002
    while True:
        err = server.exited_error()
        if err is not None:
            raise err
        try:
            if probe():
                return
        except OSError:
            pass
        if time.monotonic() - start > timeout:
            raise server.not_ready_error(timeout)
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
