"""A scripted loopback HTTP/1.1 server where each request path plays one socket-level fault.

One server serves a whole test module. Each accepted connection reads requests in a keep-alive
loop, and `log()` lists (connection, path) for every request read. The path picks the script
(`FAULTS`): the bytes to send and what to do with the socket afterwards:

    KEEP    keep the connection open and read the next request on it. After a malformed
            response this is the harsh case: a client that put the connection back in its
            pool would send its next request here, and `log()` would show it.
    CLOSE   shut down the write side (FIN), wait (bounded) for the client to close, close
    RESET   SO_LINGER with linger 0, then close: the kernel sends a TCP RST
    IDLE_CLOSE  like KEEP, but close the connection IDLE_CLOSE_AFTER seconds after the
            response if no further request arrived (an idle keep-alive connection closed by
            the server); `wait_idle_closed()` waits for it

`/ok` answers 200 "ok" and keeps the connection, so a test can follow a fault with a good
request and read from `log()` which connection served it. Unknown paths get a 404 (KEEP).

Every socket operation has a timeout, every loop is bounded, and the server listens on the
loopback interface only.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Callable, NamedTuple

from ._socket_server import SocketServer
from .raw_server import Request, _read_request

IO_TIMEOUT = 5.0  # per socket operation
DRAIN_TIMEOUT = 2.0  # how long CLOSE waits for the client to close its end
IDLE_CLOSE_AFTER = 0.2  # seconds of idleness after which IDLE_CLOSE closes the connection
LINGER_ZERO = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a RST
PAUSE = 0.15  # between the pieces of a two-part script (headers first, then the fault)

KEEP, CLOSE, RESET, IDLE_CLOSE = "keep", "close", "reset", "idle-close"


class Fault(NamedTuple):
    """What one path plays: `first` bytes, a PAUSE if `then` is set, `then`, and `after`."""

    first: bytes
    after: str
    then: bytes = b""


OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
HEAD_200 = b"HTTP/1.1 200 OK\r\n"
CL2 = b"Content-Length: 2\r\n\r\nok"
HEAD_1000 = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
BIG_HEADER_LINE = b"X-Big: " + b"b" * 1017 + b"\r\n"  # 1 KiB per line
CLOSE_DELIMITED_BODY = b"read me until the server closes " * 64

FAULTS: dict[str, Fault] = {
    "ok": Fault(OK, KEEP),
    # --- the connection ends early -----------------------------------------------------------
    "close-before-headers": Fault(b"", CLOSE),
    "close-mid-headers": Fault(b"HTTP/1.1 200 OK\r\nContent-Le", CLOSE),
    "close-after-headers": Fault(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", CLOSE),
    "short-body": Fault(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10, CLOSE),
    "chunked-close-mid-chunk": Fault(CHUNKED + b"a\r\nabc", CLOSE),
    "chunked-close-before-last-chunk": Fault(CHUNKED + b"3\r\nabc\r\n", CLOSE),
    "reset-before-response": Fault(b"", RESET),
    # Two parts: the head goes out, then after a PAUSE 10 of 1000 body bytes and the fault, so
    # the client has the head (a streamed response has begun) when the body breaks off.
    "reset-mid-body": Fault(HEAD_1000, RESET, then=b"x" * 10),
    "close-mid-body-streamed": Fault(HEAD_1000, CLOSE, then=b"x" * 10),
    # --- status lines ------------------------------------------------------------------------
    "status-garbage": Fault(b"\x16\x03\x01 not HTTP at all\r\n" + CL2, KEEP),
    "status-http2": Fault(b"HTTP/2.0 200 OK\r\n" + CL2, KEEP),
    "status-missing-code": Fault(b"HTTP/1.1 OK\r\n" + CL2, KEEP),
    "status-no-reason": Fault(b"HTTP/1.1 200\r\n" + CL2, KEEP),  # valid
    # --- header lines ------------------------------------------------------------------------
    "header-no-colon": Fault(HEAD_200 + b"X-No-Colon\r\n" + CL2, KEEP),
    "header-space-before-colon": Fault(HEAD_200 + b"X-Spaced : v\r\n" + CL2, KEEP),
    "header-obs-fold": Fault(HEAD_200 + b"X-Folded: one\r\n two\r\n" + CL2, KEEP),
    "header-bare-lf": Fault(b"HTTP/1.1 200 OK\nX-Lf: 1\nContent-Length: 2\n\nok", KEEP),
    "header-bare-cr": Fault(HEAD_200 + b"X-Cr: a\rb\r\n" + CL2, KEEP),
    "header-unterminated": Fault(HEAD_200 + b"X-Last: no line end", CLOSE),
    "header-nul-in-name": Fault(HEAD_200 + b"X-N\x00ul: v\r\n" + CL2, KEEP),
    "header-nul-in-value": Fault(HEAD_200 + b"X-Nul: a\x00b\r\n" + CL2, KEEP),
    "header-non-ascii-name": Fault(HEAD_200 + b"X-Caf\xc3\xa9: v\r\n" + CL2, KEEP),
    "header-non-ascii-value": Fault(HEAD_200 + b"X-Value: caf\xc3\xa9\r\n" + CL2, KEEP),  # valid
    # 200 KiB, over max_header_bytes (100 KiB). Not just over it: h11 (httpx) measures only an
    # incomplete head against its 100 KiB, so a head that completes within one 64 KiB read
    # past the limit passes there.
    "header-block-too-big": Fault(HEAD_200 + BIG_HEADER_LINE * 200 + CL2, CLOSE),
    # --- Content-Length ----------------------------------------------------------------------
    "length-two-values": Fault(
        HEAD_200 + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\nok!", KEEP
    ),
    "length-list": Fault(HEAD_200 + b"Content-Length: 2, 3\r\n\r\nok!", KEEP),
    "length-abc": Fault(HEAD_200 + b"Content-Length: abc\r\n\r\nok", CLOSE),
    "length-negative": Fault(HEAD_200 + b"Content-Length: -2\r\n\r\nok", CLOSE),
    "length-plus": Fault(HEAD_200 + b"Content-Length: +2\r\n\r\nok", CLOSE),
    "length-same-twice": Fault(
        HEAD_200 + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\nok", KEEP
    ),
    # --- chunk sizes -------------------------------------------------------------------------
    "chunk-non-hex": Fault(CHUNKED + b"xyz\r\nabc\r\n0\r\n\r\n", CLOSE),
    "chunk-negative": Fault(CHUNKED + b"-3\r\nabc\r\n0\r\n\r\n", CLOSE),
    "chunk-overflow": Fault(CHUNKED + b"ffffffffffffffffff\r\nabc\r\n0\r\n\r\n", CLOSE),
    "chunk-extension": Fault(CHUNKED + b"3;name=value\r\nabc\r\n0\r\n\r\n", KEEP),  # valid
    # --- valid, if unusual -------------------------------------------------------------------
    "close-delimited": Fault(
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + CLOSE_DELIMITED_BODY, CLOSE
    ),
    # HTTP/1.0 without keep-alive: the server keeps the socket open anyway, so a client that
    # reused it would show up in the log.
    "http10": Fault(b"HTTP/1.0 200 OK\r\n" + CL2, KEEP),
    "http10-keep-alive": Fault(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n" + CL2, KEEP),
    "interim-1xx": Fault(
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\nX-Interim: 1\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nX-Final: 1\r\n" + CL2,
        KEEP,
    ),
    "idle-close": Fault(OK, IDLE_CLOSE),
}


class FaultServer(SocketServer):
    """`with FaultServer() as faults: client.get(faults.url + "/short-body")`"""

    def __init__(self) -> None:
        super().__init__(name="fault-server", backlog=64)
        self._lock = threading.Lock()
        self._ids = 0
        self._log: list[tuple[int, str]] = []
        self._idle_closed = 0
        self._idle_closed_event = threading.Condition(self._lock)

    # --- what the server saw -----------------------------------------------------------------

    def log(self) -> list[tuple[int, str]]:
        """(connection, path) of every request read since the last reset, in order.

        Connections are numbered 1, 2, ... in the order of their first request, so a connection
        that carried none (one a client opened and abandoned, maybe during an earlier test)
        does not shift the numbers."""
        with self._lock:
            entries = list(self._log)
        numbers: dict[int, int] = {}
        return [(numbers.setdefault(conn, len(numbers) + 1), path) for conn, path in entries]

    def reset_stats(self) -> None:
        with self._lock:
            self._log.clear()
            self._idle_closed = 0

    def wait_idle_closed(self, count: int = 1, timeout: float = 5.0) -> bool:
        """Wait until IDLE_CLOSE has closed `count` idle connections since the last reset (sent
        its FIN); False if it had not within `timeout` seconds (0: just look)."""
        with self._lock:
            return self._idle_closed_event.wait_for(lambda: self._idle_closed >= count, timeout)

    # --- serving -----------------------------------------------------------------------------

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self._ids += 1
            number = self._ids  # never reset: a connection from before a reset keeps its own
        conn.settimeout(IO_TIMEOUT)
        buffered = b""
        idle_close = False
        try:
            with conn:
                for _ in range(1000):  # bounded: no test sends that many on one connection
                    if self._stopping.is_set():
                        return
                    if idle_close and not self._wait_readable(conn, IDLE_CLOSE_AFTER):
                        self._close_idle(conn)
                        return
                    request, buffered = _read_request(conn, buffered)
                    if request is None:
                        return
                    after = self._play(conn, number, request)
                    if after == CLOSE:
                        _close_gracefully(conn)
                        return
                    if after == RESET:
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_ZERO)
                        return  # `with conn` closes it: RST
                    idle_close = after == IDLE_CLOSE
        except OSError:
            pass  # the client gave up on the connection: many scenarios expect it to

    def _play(self, conn: socket.socket, number: int, request: Request) -> str:
        with self._lock:
            self._log.append((number, request.scenario))
        fault = FAULTS.get(request.scenario)
        if fault is None:
            conn.sendall(NOT_FOUND)
            return KEEP
        if fault.first:
            conn.sendall(fault.first)
        if fault.then:
            time.sleep(PAUSE)
            conn.sendall(fault.then)
            time.sleep(PAUSE)  # the client reads `then` before a RESET can overtake it
        return fault.after

    def _wait_readable(self, conn: socket.socket, seconds: float) -> bool:
        """Whether the client sent something (or closed) within `seconds`."""
        conn.settimeout(seconds)
        try:
            conn.recv(1, socket.MSG_PEEK)  # b"" (the client closed) counts too
            return True
        except TimeoutError:
            return False
        finally:
            conn.settimeout(IO_TIMEOUT)

    def _close_idle(self, conn: socket.socket) -> None:
        def mark_closed() -> None:
            with self._lock:
                self._idle_closed += 1
                self._idle_closed_event.notify_all()

        _close_gracefully(conn, on_fin=mark_closed)


def _close_gracefully(conn: socket.socket, on_fin: Callable[[], None] | None = None) -> None:
    """FIN, then wait (bounded) for the client to close: closing with unread bytes from the
    client in the receive buffer would send a RST instead."""
    try:
        conn.shutdown(socket.SHUT_WR)
        if on_fin is not None:
            on_fin()
        conn.settimeout(0.2)
        deadline = time.monotonic() + DRAIN_TIMEOUT
        while time.monotonic() < deadline:
            try:
                if not conn.recv(65536):
                    return
            except TimeoutError:
                continue
    except OSError:
        pass
