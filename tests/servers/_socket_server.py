"""A threaded loopback socket server: the plumbing under CannedServer, RawServer and SlowReader.

A subclass implements `_serve(conn)`; every accepted connection runs it on its own daemon
thread. stop() waits for the accept thread and the handlers at most a few seconds, so a
handler stuck on a misbehaving client cannot keep the test run alive.
"""

from __future__ import annotations

import socket
import threading
import time

from ._lifecycle import Lifecycle

LOOPBACK = "127.0.0.1"
JOIN_TIMEOUT = 5.0  # how long stop() waits for the accept thread, then for all handlers


def loopback_listener(backlog: int, *, receive_buffer: int | None = None) -> socket.socket:
    """A TCP socket listening on LOOPBACK at a free port (`getsockname()[1]`)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if receive_buffer is not None:
            # Set before listen(): accepted sockets inherit it (and it disables autotuning).
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        listener.bind((LOOPBACK, 0))
        listener.listen(backlog)
    except BaseException:
        listener.close()
        raise
    return listener


class SocketServer(Lifecycle):
    """Accepts connections on a loopback port and serves each with `_serve` on its own thread."""

    def __init__(self, *, name: str, backlog: int, receive_buffer: int | None = None) -> None:
        self.port = 0
        self._name = name
        self._backlog = backlog
        self._receive_buffer = receive_buffer
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._handlers: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def _listen(self) -> socket.socket:
        """The listening socket (a subclass may listen elsewhere, e.g. on a Unix socket)."""
        listener = loopback_listener(self._backlog, receive_buffer=self._receive_buffer)
        self.port = listener.getsockname()[1]
        return listener

    def start(self) -> None:
        listener = self._listen()
        listener.settimeout(0.1)  # lets the accept loop notice stop()
        self._listener = listener
        self._accept_thread = threading.Thread(
            target=self._accept_loop, args=(listener,), name=self._name, daemon=True
        )
        self._accept_thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._accept_thread is not None:
            self._accept_thread.join(JOIN_TIMEOUT)
        if self._listener is not None:
            self._listener.close()
        deadline = time.monotonic() + JOIN_TIMEOUT
        for thread in list(self._handlers):
            thread.join(max(0.0, deadline - time.monotonic()))

    def _serve(self, conn: socket.socket) -> None:
        """Handle one accepted connection (on its own thread); the subclass closes `conn`."""
        raise NotImplementedError

    def _accept_loop(self, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # the listener was closed
                return
            # Drop finished handlers, so a session-long server does not collect them all.
            self._handlers = [t for t in self._handlers if t.is_alive()]
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._handlers.append(thread)
            thread.start()
