"""Loopback proxies that count what went through them, and an HTTP server on a Unix socket.

For tests that must prove a request went through a proxy, or that it did not:

    with RecordingServer() as origin, ForwardProxy() as proxy:
        with requestx.Client(proxy=proxy.url) as client:
            client.get(origin.url + "/x")
        assert proxy.forwarded == [origin.url + "/x"]   # absolute-form, forwarded
        assert origin.connections == 1

    with RecordingServer() as origin, ForwardProxy() as proxy:
        ...  # a request that must bypass the proxy (NO_PROXY, proxy=None, ...)
        assert proxy.connections == 0 and origin.connections == 1

The servers:

- ForwardProxy: an HTTP/1.1 proxy, "http://" or, with `tls=(certfile, keyfile)`, "https://".
  Absolute-form requests (`GET http://127.0.0.1:PORT/x HTTP/1.1`) are forwarded to the origin
  on a new connection each (sent with `Connection: close`); `CONNECT host:port` opens a tunnel.
  With `credentials=(user, password)` every request needs `Proxy-Authorization: Basic ...`,
  else it gets `407` (`Proxy-Authenticate: Basic realm="test"`).
- Socks5Proxy: a SOCKS5 server (RFC 1928), CONNECT only; no authentication, or with
  `credentials=` username/password (RFC 1929) and nothing else.
- UnixSocketHTTPServer: answers every request on a Unix domain socket with 200 and a JSON body
  `{"path": target, "host": Host header, "method": method}`.

Bodies through the ForwardProxy: a request body framed by Content-Length is streamed to the
origin unchanged; a chunked request body is de-chunked, buffered (at most MAX_BODY bytes, else
the connection is dropped) and sent on with a Content-Length, its trailers dropped, so a simple
origin such as RecordingServer can read it. Response bodies are relayed as the origin framed
them: Content-Length, or chunked passed through unchanged (chunk sizes and trailers included),
and the client's connection stays open; a body delimited by the origin's close is relayed with
`Connection: close` and the client's connection closed after it. HEAD, 1xx, 204 and 304
responses have no body; interim 1xx responses from the origin are not relayed (the proxy
answers `Expect: 100-continue` itself and does not forward that header).

Only loopback targets are allowed: 127.0.0.0/8, ::1 and "localhost". Others get 403 (SOCKS
reply 0x02) and no connection is made; a SOCKS domain name other than "localhost" or an IP
literal is refused the same way without being looked up, so nothing ever queries DNS. Every
socket operation times out (IO_TIMEOUT), waits for a next request or on an idle tunnel end
after IDLE_TIMEOUT, and every wait looks at stop() every POLL seconds.
"""

from __future__ import annotations

import base64
import hmac
import ipaddress
import json
import os
import select
import socket
import ssl
import stat
import struct
import threading
import time
from typing import Iterator, Sequence
from urllib.parse import urlsplit

from ._socket_server import LOOPBACK, SocketServer
from .recorder import RecordedHead

IO_TIMEOUT = 5.0  # one read or write inside a message, a connect, a TLS handshake
IDLE_TIMEOUT = 30.0  # waiting for the next request, or for the origin's answer; an idle tunnel
POLL = 0.1  # how often a waiting thread looks at stop()
PIECE = 64 * 1024
MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024  # a chunked request body is buffered to re-frame it
MAX_CHUNKS = 1_000_000
MAX_TRAILERS = 100
MAX_REQUESTS = 10_000  # per client connection
MAX_INTERIM = 16  # 1xx responses from an origin before its final one

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)

# SOCKS5 replies (RFC 1928, section 6)
SOCKS_SUCCEEDED = 0x00
SOCKS_FAILURE = 0x01
SOCKS_NOT_ALLOWED = 0x02
SOCKS_HOST_UNREACHABLE = 0x04
SOCKS_REFUSED = 0x05
SOCKS_COMMAND_NOT_SUPPORTED = 0x07
SOCKS_ADDRESS_TYPE_NOT_SUPPORTED = 0x08


class _Closed(Exception):
    """The peer closed, stalled or sent something unusable in the middle of a message."""


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _readable(sock: socket.socket, stopping: threading.Event, limit: float) -> bool:
    """Whether `sock` has something to read within `limit` seconds (False on stop())."""
    deadline = time.monotonic() + limit
    while not stopping.is_set():
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return True
        if select.select([sock], [], [], POLL)[0]:
            return True
        if time.monotonic() >= deadline:
            return False
    return False


class _Reader:
    """Buffered reads from a socket; `buffer` holds what was read but not yet consumed."""

    def __init__(self, sock: socket.socket, stopping: threading.Event) -> None:
        self.sock = sock
        self.stopping = stopping
        self.buffer = b""

    def _fill(self, wait: float = IO_TIMEOUT) -> bool:
        """Read more into the buffer; False at the end of the stream."""
        if not _readable(self.sock, self.stopping, wait):
            raise _Closed("timed out, or the server is stopping")
        data = self.sock.recv(PIECE)
        if not data:
            return False
        self.buffer += data
        return True

    def head(self, wait: float = IDLE_TIMEOUT) -> bytes | None:
        """The next message head without its blank line; None if the peer closed before it."""
        while b"\r\n\r\n" not in self.buffer:
            if len(self.buffer) > MAX_HEAD:
                raise _Closed("message head too long")
            if not self._fill(wait):
                if self.buffer:
                    raise _Closed("closed in the middle of a message head")
                return None
            wait = IO_TIMEOUT
        raw, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        return raw

    def requests(self) -> Iterator[RecordedHead]:
        """The request heads of a kept-alive connection, until the peer closes (at most
        MAX_REQUESTS); the caller reads each body before taking the next head."""
        for _ in range(MAX_REQUESTS):
            raw = self.head()
            if raw is None:
                return
            yield RecordedHead(raw)

    def line(self) -> bytes:
        """One line, its CRLF included."""
        while b"\r\n" not in self.buffer:
            if len(self.buffer) > MAX_HEAD or not self._fill():
                raise _Closed("no complete line")
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line + b"\r\n"

    def pieces(self, length: int) -> Iterator[bytes]:
        """Exactly `length` bytes, in pieces as they arrive."""
        remaining = length
        while remaining > 0:
            if not self.buffer and not self._fill():
                raise _Closed("closed in the middle of a body")
            piece, self.buffer = self.buffer[:remaining], self.buffer[remaining:]
            remaining -= len(piece)
            yield piece

    def exact(self, length: int) -> bytes:
        return b"".join(self.pieces(length))

    def until_close(self) -> Iterator[bytes]:
        """Everything up to the end of the stream, in pieces."""
        while True:  # ends at the end of the stream; each wait is bounded by _fill
            if self.buffer:
                piece, self.buffer = self.buffer, b""
                yield piece
            if not self._fill():
                return

    def chunked(self) -> Iterator[bytes]:
        """A chunked body exactly as it arrived (sizes, data, trailers), in pieces."""
        for _ in range(MAX_CHUNKS):
            line = self.line()
            yield line
            size = _chunk_size(line)
            if size == 0:
                break
            yield from self.pieces(size + 2)  # the data and its CRLF
        else:
            raise _Closed("too many chunks")
        for _ in range(MAX_TRAILERS):
            line = self.line()
            yield line
            if line == b"\r\n":
                return
        raise _Closed("too many trailer fields")

    def dechunked(self) -> bytes:
        """The data of a chunked body; its trailers are read and dropped."""
        body = bytearray()
        for _ in range(MAX_CHUNKS):
            size = _chunk_size(self.line())
            if size == 0:
                break
            if len(body) + size > MAX_BODY:
                raise _Closed("chunked body too large to buffer")
            body += self.exact(size)
            if self.exact(2) != b"\r\n":
                raise _Closed("chunk data not followed by CRLF")
        else:
            raise _Closed("too many chunks")
        for _ in range(MAX_TRAILERS):
            if self.line() == b"\r\n":
                return bytes(body)
        raise _Closed("too many trailer fields")


def _chunk_size(line: bytes) -> int:
    try:
        size = int(line.split(b";", 1)[0].strip(), 16)
    except ValueError:
        raise _Closed(f"bad chunk size line {line!r}") from None
    if size < 0:
        raise _Closed(f"bad chunk size line {line!r}")
    return size


def _fields(head: RecordedHead) -> list[tuple[str, str]]:
    """The header fields of `head` as (name, value) pairs, in order."""
    return [(field[0], field[1] if len(field) > 1 else "") for field in head.fields if field[0]]


def _tokens(head: RecordedHead, name: str) -> list[str]:
    """The comma-separated values of every `name` field, lowercased, in order."""
    return [
        token.strip().lower()
        for field, value in _fields(head)
        if field.lower() == name
        for token in value.split(",")
        if token.strip()
    ]


def _is_chunked(head: RecordedHead) -> bool:
    codings = _tokens(head, "transfer-encoding")
    return bool(codings) and codings[-1] == "chunked"


def _request_framing(head: RecordedHead) -> tuple[str, int]:
    """("chunked", 0), ("length", n), ("none", 0), or ("bad", 0) for a head with no valid one."""
    if _tokens(head, "transfer-encoding"):
        return ("chunked", 0) if _is_chunked(head) else ("bad", 0)
    value = head.header("content-length")
    if value is None:
        return "none", 0
    if not value.isdigit():
        return "bad", 0
    return "length", int(value)


def _wants_close(head: RecordedHead) -> bool:
    """Whether the client asked for its connection to be closed after this exchange."""
    tokens = _tokens(head, "connection") + _tokens(head, "proxy-connection")
    if "close" in tokens:
        return True
    return head.request_line.endswith("HTTP/1.0") and "keep-alive" not in tokens


def _answer(
    conn: socket.socket, status: str, extra: Sequence[str] = (), close: bool = False
) -> None:
    """An empty response of the proxy's own."""
    lines = [f"HTTP/1.1 {status}", *extra, "Content-Length: 0"]
    if close:
        lines.append("Connection: close")
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def _split_authority(authority: str) -> tuple[str, int] | None:
    """("host", port) from "host:port" or "[v6]:port"; None if it is not one."""
    host, sep, port = authority.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host, int(port)


def _relay(a: socket.socket, b: socket.socket, stopping: threading.Event) -> None:
    """Copy bytes both ways until either side closes, both are idle IDLE_TIMEOUT s, or stop()."""
    peer = {a: b, b: a}
    idle_since = time.monotonic()
    while not stopping.is_set() and time.monotonic() - idle_since < IDLE_TIMEOUT:
        # Data already decrypted by an SSLSocket does not make its file descriptor readable.
        ready: list[socket.socket] = [
            s for s in (a, b) if isinstance(s, ssl.SSLSocket) and s.pending()
        ]
        if not ready:
            ready = select.select([a, b], [], [], POLL)[0]
        for sock in ready:
            data = sock.recv(PIECE)
            if not data:
                return
            peer[sock].sendall(data)
        if ready:
            idle_since = time.monotonic()


class ForwardProxy(SocketServer):
    """`with ForwardProxy() as proxy: ... proxy.forwarded, proxy.tunnels, proxy.requests ...`

    Counters (read them after the exchange; they are written before the proxy answers):
    `connections` accepted client connections; `requests` every request head received, the
    rejected ones included (RecordedHead: `.request_line`, `.target`, `.header(name)`);
    `forwarded` the absolute-form URLs sent on to an origin; `tunnels` the "host:port" of every
    CONNECT tunnel established; `rejected_auth` the 407s sent. reset() clears them.
    """

    def __init__(
        self,
        *,
        credentials: tuple[str, str] | None = None,
        tls: tuple[str, str] | None = None,
    ) -> None:
        super().__init__(name="forward-proxy", backlog=64)
        self._token: bytes | None = None
        if credentials is not None:
            user, password = credentials
            self._token = base64.b64encode(f"{user}:{password}".encode())
        self._context: ssl.SSLContext | None = None
        if tls is not None:
            certfile, keyfile = tls
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(certfile, keyfile)
            context.set_alpn_protocols(["http/1.1"])
            self._context = context
        self._lock = threading.Lock()
        self.connections = 0
        self.requests: list[RecordedHead] = []
        self.tunnels: list[str] = []
        self.forwarded: list[str] = []
        self.rejected_auth = 0

    @property
    def url(self) -> str:
        scheme = "https" if self._context is not None else "http"
        return f"{scheme}://{LOOPBACK}:{self.port}"

    def reset(self) -> None:
        with self._lock:
            self.connections = 0
            self.requests = []
            self.tunnels = []
            self.forwarded = []
            self.rejected_auth = 0

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(IO_TIMEOUT)
        with self._lock:
            self.connections += 1
        try:
            if self._context is not None:
                # The handshake runs under the socket's timeout.
                conn = self._context.wrap_socket(
                    conn, server_side=True, do_handshake_on_connect=False
                )
                conn.do_handshake()
            self._session(conn)
        except (_Closed, OSError):  # ssl.SSLError is an OSError; the connection just ends
            pass
        finally:
            conn.close()

    def _authorized(self, head: RecordedHead) -> bool:
        if self._token is None:
            return True
        scheme, _, token = (head.header("proxy-authorization") or "").strip().partition(" ")
        given = token.strip().encode("latin-1")
        return scheme.lower() == "basic" and hmac.compare_digest(given, self._token)

    def _session(self, conn: socket.socket) -> None:
        reader = _Reader(conn, self._stopping)
        for head in reader.requests():
            with self._lock:
                self.requests.append(head)
            parts = head.request_line.split(" ")
            framing, length = _request_framing(head)
            if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or framing == "bad":
                _answer(conn, "400 Bad Request", close=True)
                return
            method, target, _ = parts
            # An answer that leaves a request body unread must close the connection.
            close = _wants_close(head) or framing == "chunked" or length > 0
            if not self._authorized(head):
                with self._lock:
                    self.rejected_auth += 1
                challenge = ['Proxy-Authenticate: Basic realm="test"']
                _answer(conn, "407 Proxy Authentication Required", challenge, close=close)
                if close:
                    return
                continue
            if method == "CONNECT":
                self._tunnel(conn, reader, target)
                return
            if not self._forward(conn, reader, head, method, target):
                return

    def _tunnel(self, conn: socket.socket, reader: _Reader, target: str) -> None:
        authority = _split_authority(target)
        if authority is None:
            _answer(conn, "400 Bad Request", close=True)
            return
        if not _is_loopback(authority[0]):
            _answer(conn, "403 Forbidden", close=True)
            return
        try:
            upstream = socket.create_connection(authority, timeout=IO_TIMEOUT)
        except OSError:
            _answer(conn, "502 Bad Gateway", close=True)
            return
        with upstream:
            with self._lock:
                self.tunnels.append(target)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if reader.buffer:  # sent right behind the CONNECT head (a TLS ClientHello, say)
                upstream.sendall(reader.buffer)
                reader.buffer = b""
            _relay(conn, upstream, self._stopping)

    def _forward(
        self, conn: socket.socket, reader: _Reader, head: RecordedHead, method: str, target: str
    ) -> bool:
        """Forward one absolute-form request; True if the client's connection stays open."""
        framing, length = _request_framing(head)
        has_body = framing == "chunked" or length > 0
        close = _wants_close(head)
        url = urlsplit(target)
        try:
            port = url.port or 80
        except ValueError:  # a port out of range
            port = 0
        if url.scheme != "http" or not url.hostname or not port:
            _answer(conn, "400 Bad Request", close=True)
            return False
        if not _is_loopback(url.hostname):
            _answer(conn, "403 Forbidden", close=close or has_body)
            return not (close or has_body)
        try:
            upstream = socket.create_connection((url.hostname, port), timeout=IO_TIMEOUT)
        except OSError:
            _answer(conn, "502 Bad Gateway", close=close or has_body)
            return not (close or has_body)
        with upstream:
            if has_body and "100-continue" in _tokens(head, "expect"):
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            fields = _fields(head)
            dropped = HOP_BY_HOP | set(_tokens(head, "connection")) | {"content-length", "expect"}
            lines = [f"{method} {path} HTTP/1.1"]
            if head.header("host") is None:
                lines.append(f"Host: {url.netloc.rpartition('@')[2]}")
            lines += [f"{name}: {value}" for name, value in fields if name.lower() not in dropped]
            body = b""
            if framing == "chunked":
                body = reader.dechunked()
                lines.append(f"Content-Length: {len(body)}")
            elif framing == "length":
                lines.append(f"Content-Length: {length}")
            lines.append("Connection: close")
            upstream.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            if framing == "length":
                for piece in reader.pieces(length):
                    upstream.sendall(piece)
            with self._lock:
                self.forwarded.append(target)
            return self._relay_response(conn, upstream, method, close)

    def _relay_response(
        self, conn: socket.socket, upstream: socket.socket, method: str, close: bool
    ) -> bool:
        """Relay the origin's response; True if the client's connection stays open."""
        origin = _Reader(upstream, self._stopping)
        for _ in range(MAX_INTERIM):
            try:
                raw = origin.head()
            except (_Closed, OSError):
                raw = None
            if raw is None:
                _answer(conn, "502 Bad Gateway", close=True)
                return False
            head = RecordedHead(raw)
            parts = head.request_line.split(" ", 2)
            if len(parts) < 2 or not parts[1].isdigit():
                _answer(conn, "502 Bad Gateway", close=True)
                return False
            status = int(parts[1])
            if not 100 <= status < 200 or status == 101:
                break
        else:
            raise _Closed("too many interim responses")
        no_body = method == "HEAD" or status in (204, 304) or status < 200
        chunked = not no_body and _is_chunked(head)
        length = head.header("content-length")
        if not no_body and not chunked and length is not None and not length.isdigit():
            _answer(conn, "502 Bad Gateway", close=True)
            return False
        delimited_by_close = not no_body and not chunked and length is None
        close = close or delimited_by_close or status == 101
        dropped = (HOP_BY_HOP - {"transfer-encoding"}) | set(_tokens(head, "connection"))
        if chunked:
            dropped |= {"content-length"}
        lines = ["HTTP/1.1 " + " ".join(parts[1:])]
        lines += [
            f"{name}: {value}" for name, value in _fields(head) if name.lower() not in dropped
        ]
        if close:
            lines.append("Connection: close")
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if no_body:
            pieces: Iterator[bytes] = iter(())
        elif chunked:
            pieces = origin.chunked()
        elif length is not None:
            pieces = origin.pieces(int(length))
        else:
            pieces = origin.until_close()
        for piece in pieces:
            conn.sendall(piece)
        return not close


class _SessionServer(SocketServer):
    """Counts each connection and runs `_session` on it; a connection that breaks just ends."""

    connections: int
    _lock: threading.Lock

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(IO_TIMEOUT)
        with self._lock:
            self.connections += 1
        try:
            with conn:
                self._session(conn)
        except (_Closed, OSError):
            return

    def _session(self, conn: socket.socket) -> None:
        raise NotImplementedError


class Socks5Proxy(_SessionServer):
    """`with Socks5Proxy() as proxy: ... proxy.targets, proxy.connections ...`

    Counters: `connections` accepted connections; `targets` every CONNECT request as
    (host as sent, port, "ipv4" | "domain" | "ipv6"), recorded before it is allowed or refused;
    `auth_failures` failed username/password checks; `method_refusals` greetings that offered
    no acceptable method (answered 0xFF). reset() clears them.
    """

    def __init__(self, *, credentials: tuple[str, str] | None = None) -> None:
        super().__init__(name="socks5-proxy", backlog=64)
        self._credentials: tuple[bytes, bytes] | None = None
        if credentials is not None:
            self._credentials = (credentials[0].encode(), credentials[1].encode())
        self._lock = threading.Lock()
        self.connections = 0
        self.targets: list[tuple[str, int, str]] = []
        self.auth_failures = 0
        self.method_refusals = 0

    @property
    def url(self) -> str:
        return f"socks5://{LOOPBACK}:{self.port}"

    def reset(self) -> None:
        with self._lock:
            self.connections = 0
            self.targets = []
            self.auth_failures = 0
            self.method_refusals = 0

    def _session(self, conn: socket.socket) -> None:
        reader = _Reader(conn, self._stopping)
        version, count = reader.exact(2)
        if version != 5:
            return
        methods = reader.exact(count)
        wanted = 0x00 if self._credentials is None else 0x02
        if wanted not in methods:
            with self._lock:
                self.method_refusals += 1
            conn.sendall(b"\x05\xff")
            return
        conn.sendall(bytes([5, wanted]))
        if self._credentials is not None:
            auth_version, user_length = reader.exact(2)
            user = reader.exact(user_length)
            password = reader.exact(reader.exact(1)[0])
            if auth_version != 1 or (user, password) != self._credentials:
                with self._lock:
                    self.auth_failures += 1
                conn.sendall(b"\x01\x01")
                return
            conn.sendall(b"\x01\x00")
        version, command, _, address_type = reader.exact(4)
        if version != 5:
            return
        if address_type == 0x01:
            host, kind = socket.inet_ntop(socket.AF_INET, reader.exact(4)), "ipv4"
        elif address_type == 0x03:
            host, kind = reader.exact(reader.exact(1)[0]).decode("utf-8", "replace"), "domain"
        elif address_type == 0x04:
            host, kind = socket.inet_ntop(socket.AF_INET6, reader.exact(16)), "ipv6"
        else:
            _socks_reply(conn, SOCKS_ADDRESS_TYPE_NOT_SUPPORTED)
            return
        (port,) = struct.unpack("!H", reader.exact(2))
        with self._lock:
            self.targets.append((host, port, kind))
        if command != 0x01:
            _socks_reply(conn, SOCKS_COMMAND_NOT_SUPPORTED)
            return
        upstream, reply = _connect_loopback(host, port)
        if upstream is None:
            _socks_reply(conn, reply)
            return
        with upstream:
            bound_host, bound_port = upstream.getsockname()[:2]
            _socks_reply(conn, SOCKS_SUCCEEDED, bound_host, bound_port)
            if reader.buffer:
                upstream.sendall(reader.buffer)
                reader.buffer = b""
            _relay(conn, upstream, self._stopping)


def _socks_reply(conn: socket.socket, reply: int, host: str = "0.0.0.0", port: int = 0) -> None:
    if ":" in host:
        address = b"\x04" + socket.inet_pton(socket.AF_INET6, host)
    else:
        address = b"\x01" + socket.inet_pton(socket.AF_INET, host)
    conn.sendall(bytes([5, reply, 0]) + address + struct.pack("!H", port))


def _connect_loopback(host: str, port: int) -> tuple[socket.socket | None, int]:
    """A connection to `host` (an IP literal or "localhost") if it is loopback, else a reply."""
    if not _is_loopback(host):
        return None, SOCKS_NOT_ALLOWED
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None, SOCKS_HOST_UNREACHABLE
    reply = SOCKS_NOT_ALLOWED  # if no address is loopback
    for family, kind, protocol, _, address in infos:
        if not _is_loopback(str(address[0])):
            continue
        sock = socket.socket(family, kind, protocol)
        sock.settimeout(IO_TIMEOUT)
        try:
            sock.connect(address)
        except OSError as error:
            sock.close()
            refused = isinstance(error, ConnectionRefusedError)
            if refused or reply != SOCKS_REFUSED:  # "refused" wins over other failures
                reply = SOCKS_REFUSED if refused else SOCKS_HOST_UNREACHABLE
            continue
        return sock, SOCKS_SUCCEEDED
    return None, reply


class UnixSocketHTTPServer(_SessionServer):
    """`with UnixSocketHTTPServer(path) as server: ... server.requests, server.connections ...`

    Every request gets 200 with `{"path": target, "host": Host or null, "method": method}` as
    JSON, on a kept-alive connection. Request bodies are read (Content-Length or chunked) and
    dropped. Counters: `connections`, `requests` (the request lines); reset() clears them.
    The socket file is replaced if it exists at start() and removed by stop(). Keep `path`
    short: a Unix socket path has at most 107 bytes.
    """

    def __init__(self, path: str) -> None:
        super().__init__(name="unix-http", backlog=64)
        self.path = path
        self._lock = threading.Lock()
        self.connections = 0
        self.requests: list[str] = []

    def reset(self) -> None:
        with self._lock:
            self.connections = 0
            self.requests = []

    def _listen(self) -> socket.socket:
        self._remove_socket_file()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)
            listener.listen(64)
        except BaseException:
            listener.close()
            raise
        return listener

    def stop(self) -> None:
        super().stop()
        self._remove_socket_file()

    def _remove_socket_file(self) -> None:
        try:
            if stat.S_ISSOCK(os.lstat(self.path).st_mode):
                os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _session(self, conn: socket.socket) -> None:
        reader = _Reader(conn, self._stopping)
        for head in reader.requests():
            parts = head.request_line.split(" ")
            framing, length = _request_framing(head)
            if len(parts) != 3 or framing == "bad":
                _answer(conn, "400 Bad Request", close=True)
                return
            method, target, _ = parts
            if framing == "chunked":
                reader.dechunked()
            for _piece in reader.pieces(length):
                pass
            with self._lock:
                self.requests.append(head.request_line)
            body = json.dumps({"path": target, "host": head.header("host"), "method": method})
            close = _wants_close(head)
            lines = [
                "HTTP/1.1 200 OK",
                "Content-Type: application/json",
                f"Content-Length: {len(body)}",
            ]
            if close:
                lines.append("Connection: close")
            response = "\r\n".join(lines) + "\r\n\r\n" + ("" if method == "HEAD" else body)
            conn.sendall(response.encode())
            if close:
                return
