"""A raw-socket HTTP/1.1 server that misbehaves on purpose, one scenario per request.

The scenario is the request path (`GET /stall HTTP/1.1`), so one server serves every test and a
test can follow a failure with `/ok` on the same server to show the client recovered:

    /ok                  200 "ok", keep-alive (the connection serves further requests)
    /ok-then-close       200 "ok" without `Connection: close`, then the socket is closed, so a
                         pooled connection is dead when the client next uses it
    /stall               read the request, never answer; the socket is held until the test
                         ends (`release()`) or MAX_HOLD seconds pass
    /close-mid-body      headers with Content-Length: 1000, 10 body bytes, close
    /close-no-response   read the request, close without a byte
    /bad-status-line     a line that is not an HTTP status line, then close
    /huge-headers?kb=N   a response header block of N KiB (default 256), then "ok"
    /slow-headers?lines=N&delay=s
                         status line, then one header line every `delay` seconds (default 10
                         lines, 0.3 s; at most 30 lines, 1 s), then "ok": each read makes
                         progress but the whole response is slow (read timeout vs. total time)
    /byte-by-byte?delay=s
                         the whole response one byte every `delay` s (default 0.05): each read
                         makes progress, the response takes ~3.5 s
    /gzip-truncated      Content-Encoding: gzip, a complete HTTP body holding a gzip stream
                         cut short (the last 12 bytes missing)
    /gzip-invalid        Content-Encoding: gzip over bytes that are not gzip
    /split-text          a chunked UTF-8 text body sent in pieces that split a multi-byte
                         character and a CRLF line ending (see SPLIT_TEXT_PIECES)
    anything else        404, keep-alive

Every connection runs in its own daemon thread with socket timeouts, and every wait is bounded,
so a misbehaving client cannot keep the test run alive.
"""

from __future__ import annotations

import collections
import gzip
import socket
import threading
import time
from typing import Callable
from urllib.parse import parse_qsl

from ._socket_server import SocketServer

MAX_HOLD = 30.0  # longest a stalled connection is kept open
IO_TIMEOUT = 10.0  # per socket operation
MAX_REQUEST_HEAD = 64 * 1024


def _response(status: str, body: bytes, extra: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n".encode()
    return head + extra + b"\r\n" + body


OK = _response("200 OK", b"ok", b"Content-Type: text/plain\r\n")
NOT_FOUND = _response("404 Not Found", b"unknown scenario")


class Request:
    """The little of a request line and head that the scenarios need."""

    def __init__(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        target = parts[1] if len(parts) == 3 else "/"
        path, _, query = target.partition("?")
        self.scenario = path.strip("/")
        self.query = dict(parse_qsl(query))
        self.headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()

    def number(self, name: str, default: float, high: float) -> float:
        return max(0.0, min(high, float(self.query.get(name, default))))


class RawServer(SocketServer):
    """`with RawServer() as raw: ... raw.url + "/stall" ...`"""

    def __init__(self) -> None:
        super().__init__(name="raw-test-server", backlog=64)
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._connections = 0
        self._requests: collections.Counter[str] = collections.Counter()

    def requests_seen(self, scenario: str) -> int:
        """Requests for `scenario` (the path without its slash) read since the last reset."""
        with self._lock:
            return self._requests[scenario]

    def connection_count(self) -> int:
        """TCP connections accepted since the last reset."""
        with self._lock:
            return self._connections

    def reset_stats(self) -> None:
        with self._lock:
            self._connections = 0
            self._requests.clear()

    def release(self) -> None:
        """Close every stalled connection now (called when each test ends)."""
        with self._lock:
            held, self._release = self._release, threading.Event()
        held.set()

    def stop(self) -> None:
        self._stopping.set()
        self.release()  # before super().stop() joins the handlers, or stalled ones hold it up
        super().stop()

    # --- serving ----------------------------------------------------------------------------

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections += 1
        conn.settimeout(IO_TIMEOUT)
        buffered = b""
        try:
            with conn:
                while not self._stopping.is_set():
                    request, buffered = _read_request(conn, buffered)
                    if request is None:
                        return
                    keep_alive = self._dispatch(conn, request)
                    if not keep_alive or request.headers.get("connection") == "close":
                        return
        except OSError:
            pass  # the client gave up (reset, timeout): that is what many scenarios test

    def _dispatch(self, conn: socket.socket, request: Request) -> bool:
        """Play one scenario; return whether the connection may serve another request."""
        with self._lock:
            self._requests[request.scenario] += 1
        if request.scenario == "stall":
            self._stall()
            return False
        handler = SCENARIOS.get(request.scenario)
        if handler is None:
            conn.sendall(NOT_FOUND)
            return True
        return handler(conn, request)

    def _stall(self) -> None:
        with self._lock:
            release = self._release
        release.wait(MAX_HOLD)


def _read_request(conn: socket.socket, buffered: bytes) -> tuple[Request | None, bytes]:
    """Read one request head (and discard a Content-Length body); None on EOF."""
    data = buffered
    while b"\r\n\r\n" not in data:
        if len(data) > MAX_REQUEST_HEAD:
            return None, b""
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    request = Request(head)
    length = int(request.headers.get("content-length", "0") or 0)
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        rest += chunk
    return request, rest[length:]


# --- scenarios: each returns whether the connection may be reused -----------------------------


def _ok(conn: socket.socket, request: Request) -> bool:
    conn.sendall(OK)
    return True


def _ok_then_close(conn: socket.socket, request: Request) -> bool:
    conn.sendall(OK)
    return False


def _close_mid_body(conn: socket.socket, request: Request) -> bool:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b"x" * 10)
    return False


def _close_no_response(conn: socket.socket, request: Request) -> bool:
    return False


def _bad_status_line(conn: socket.socket, request: Request) -> bool:
    conn.sendall(b"this is not an HTTP status line\r\n\r\n")
    return False


def _huge_headers(conn: socket.socket, request: Request) -> bool:
    size = int(request.number("kb", 256, 16 * 1024) * 1024)
    line = b"X-Huge: " + b"h" * 100 + b"\r\n"
    conn.sendall(b"HTTP/1.1 200 OK\r\n" + line * (size // len(line) + 1))
    conn.sendall(b"Content-Length: 2\r\n\r\nok")
    return False


def _slow_headers(conn: socket.socket, request: Request) -> bool:
    lines = int(request.number("lines", 10, 30))
    delay = request.number("delay", 0.3, 1.0)  # at most 30 s in all
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for i in range(lines):
        time.sleep(delay)
        conn.sendall(f"X-Slow-{i}: {i}\r\n".encode())
    conn.sendall(b"Content-Length: 2\r\n\r\nok")
    return True


BYTE_BY_BYTE = b"HTTP/1.1 200 OK\r\nX-Trickle: one byte at a time\r\nContent-Length: 2\r\n\r\nok"


def _byte_by_byte(conn: socket.socket, request: Request) -> bool:
    delay = request.number("delay", 0.05, 0.2)  # at most ~14 s in all
    for i in range(len(BYTE_BY_BYTE)):
        time.sleep(delay)
        conn.sendall(BYTE_BY_BYTE[i : i + 1])
    return True


GZIP_TEXT = b"compressed text " * 200
# Piece boundaries fall inside "\u00e9" (two UTF-8 bytes) and between "\r" and "\n".
SPLIT_TEXT = "caf\u00e9\r\nna\u00efve\nend".encode()
SPLIT_TEXT_PIECES = [SPLIT_TEXT[:4], SPLIT_TEXT[4:6], SPLIT_TEXT[6:12], SPLIT_TEXT[12:]]


def _encoded_response(body: bytes, coding: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: " + coding
    return head + f"\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


def _gzip_truncated(conn: socket.socket, request: Request) -> bool:
    conn.sendall(_encoded_response(gzip.compress(GZIP_TEXT)[:-12], b"gzip"))
    return True


def _gzip_invalid(conn: socket.socket, request: Request) -> bool:
    conn.sendall(_encoded_response(b"this is not gzip at all", b"gzip"))
    return True


def _split_text(conn: socket.socket, request: Request) -> bool:
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    for piece in SPLIT_TEXT_PIECES:
        conn.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        time.sleep(0.02)  # separate reads on the client side
    conn.sendall(b"0\r\n\r\n")
    return True


SCENARIOS: dict[str, Callable[[socket.socket, Request], bool]] = {
    "ok": _ok,
    "ok-then-close": _ok_then_close,
    "close-mid-body": _close_mid_body,
    "close-no-response": _close_no_response,
    "bad-status-line": _bad_status_line,
    "huge-headers": _huge_headers,
    "slow-headers": _slow_headers,
    "byte-by-byte": _byte_by_byte,
    "gzip-truncated": _gzip_truncated,
    "gzip-invalid": _gzip_invalid,
    "split-text": _split_text,
}
