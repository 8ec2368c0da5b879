"""Loopback sockets that stall a client at a chosen stage, for timeout and cancellation tests.

    silent_listener()   listens and never accepts: TCP connects (the kernel completes the
                        handshake into the backlog), then nothing is read or written
    full_backlog()      listens with its accept queue already full: Linux drops further SYNs,
                        so connect() itself hangs; yields None where the kernel never stalls
    SlowReader          accepts and reads each request slowly (`chunk` bytes every `interval`
                        seconds) into a small receive buffer, so a large upload is in progress
                        for a long time; records per connection what arrived and when the
                        client closed

Everything is bounded (socket timeouts, MAX_HOLD), so a misbehaving client cannot keep a thread
of the test process alive.
"""

from __future__ import annotations

import contextlib
import socket
import time
from typing import Iterator

from ._socket_server import LOOPBACK, SocketServer, loopback_listener

MAX_HOLD = 20.0  # longest a SlowReader keeps reading one connection


@contextlib.contextmanager
def silent_listener(backlog: int = 16) -> Iterator[socket.socket]:
    """The kernel completes up to `backlog` handshakes into the accept queue; a test may
    `accept()` them afterwards to count how many connections the client opened."""
    with loopback_listener(backlog) as listener:
        yield listener


@contextlib.contextmanager
def full_backlog() -> Iterator[int | None]:
    """Yield the port of a listener whose accept queue is full (a connect to it hangs), or None
    if this kernel completes every loopback handshake anyway."""
    listener = loopback_listener(0)
    fillers: list[socket.socket] = []
    try:
        port = listener.getsockname()[1]
        stalled = False
        for _ in range(16):
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            probe.settimeout(0.2)
            try:
                probe.connect((LOOPBACK, port))
            except TimeoutError:
                probe.close()
                stalled = True
                break
            fillers.append(probe)
        yield port if stalled else None
    finally:
        for probe in fillers:
            probe.close()
        listener.close()


class Reception:
    """What one SlowReader connection saw (read from the test thread while it changes)."""

    def __init__(self) -> None:
        self.received = 0  # body bytes (after the request head)
        self.head_done = False
        self.closed_at: float | None = None  # time.monotonic() when the client's EOF/RST came
        self.answered = False


class SlowReader(SocketServer):
    """`with SlowReader() as slow: await client.post(slow.url, content=big)`.

    Each connection: read the request head, then the Content-Length body `chunk` bytes at a
    time with `interval` seconds between reads; answer 200 with the byte count as the body, or
    record the client's close if it gives up first.
    """

    def __init__(self, chunk: int = 32 * 1024, interval: float = 0.005) -> None:
        # A small receive buffer: the client's upload then really waits for our slow reads.
        super().__init__(name="slow-reader", backlog=16, receive_buffer=64 * 1024)
        self.chunk = chunk
        self.interval = interval
        self.receptions: list[Reception] = []

    def _serve(self, conn: socket.socket) -> None:
        reception = Reception()
        self.receptions.append(reception)
        conn.settimeout(5.0)
        deadline = time.monotonic() + MAX_HOLD
        try:
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    data = conn.recv(4096)
                    if not data:
                        reception.closed_at = time.monotonic()
                        return
                    head += data
                head, _, body = head.partition(b"\r\n\r\n")
                reception.head_done = True
                reception.received = len(body)
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while reception.received < length:
                    if self._stopping.is_set() or time.monotonic() > deadline:
                        return
                    time.sleep(self.interval)
                    data = conn.recv(self.chunk)
                    if not data:
                        reception.closed_at = time.monotonic()
                        return
                    reception.received += len(data)
                answer = str(reception.received).encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
                    % (len(answer), answer)
                )
                reception.answered = True
        except OSError:  # reset by the client: it gave up
            reception.closed_at = time.monotonic()
