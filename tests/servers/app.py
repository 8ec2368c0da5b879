"""The ASGI application behind the `server` fixture.

A plain ASGI callable with no framework, so that what goes on the wire is exactly what this file
writes. Routes (all methods unless noted):

    /                       200 text "Hello, world!"
    /json                   200 JSON {"Hello": "world!"}
    /echo[/anything]        JSON description of the request as received (see `_echo`)
    /upload-digest          length and SHA-256 of the request body, hashed as it arrives
    /api/items?page=N       a paginated API: Basic auth, a session cookie, Link rel="next"
    /status/{code}          that status; a short text body unless the status forbids one
    /headers/set?k=v&k=v    response headers from the query, in order, repeats kept
    /cookies/set?k=v        one Set-Cookie per pair (Path=/)
    /cookies                JSON {"cookie": <Cookie header or null>}
    /redirect/{code}[/absolute|/relative][?to=URL]
                            redirect with that status to /echo (path-absolute by default, an
                            absolute http URL, or a relative reference), or to `to` if given
    /redirect/chain/{n}     n hops of 302, then /echo
    /redirect/loop          302 to itself, forever
    /slow?delay=s           sleep, then 200 "slow"
    /drip?chunks=N&delay=s&size=n[&length=1]
                            N chunks of n bytes, `delay` seconds apart (before each chunk);
                            chunked unless length=1 (then Content-Length is sent up front)
    /bytes/{n}[?chunked=1]  `pattern_bytes(n)`, streamed in 64 KiB pieces
    /gzip /deflate /brotli /zstd
                            JSON `COMPRESSED_DOC` compressed with that coding (brotli and zstd
                            only when their module is importable, else 404); ?size=n instead sends
                            n bytes of b"a" compressed (for decompression-size tests)
    /bomb/{coding}          a decompression bomb (`tests/support/bombs.py`): about 1 MB or less of
                            gzip, deflate, br or zstd that decodes to 1 GiB of zeros
    /charset/{name}[?text=...&param=0]
                            text (default `CHARSET_TEXT`) encoded in that charset, with
                            `Content-Type: text/plain; charset={name}` (param=0 leaves the
                            charset parameter out)
    /large-headers?count=N[&size=n]
                            N response headers x-large-{i} with n-byte values

Every size, count and delay taken from the query is clamped, so a typo cannot make the test
server allocate gigabytes or sleep for an hour.

Connections are counted by the client address (host, port) in the ASGI scope: each TCP
connection has its own source port, and every HTTP/2 stream of one connection shares it. The
count is of connections that carried at least one request since the last reset.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import gzip
import hashlib
import json
import threading
import zlib
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl

from ..support import bombs
from ..support.bombs import zstd_module
from . import digest

try:  # optional: the /brotli and /zstd routes exist only when their codec does
    import brotli
except ImportError:  # pragma: no cover - depends on the environment
    brotli = None
try:  # our own helper is imported outside the try: a wrong path must fail, not hide /zstd
    zstd: Any = zstd_module()
except ImportError:  # pragma: no cover - depends on the environment
    zstd = None

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

HELLO = b"Hello, world!"
COMPRESSED_DOC = {"compressed": True, "text": "The quick brown fox jumps over the lazy dog. " * 20}
CHARSET_TEXT = "Hello, world! caf\u00e9 \u00fcber na\u00efve"

MAX_BYTES = 256 * 1024 * 1024
MAX_DELAY = 30.0
MAX_CHUNKS = 10_000
MAX_HEADERS = 100_000
PIECE = 64 * 1024


def pattern_bytes(n: int, offset: int = 0) -> bytes:
    """Deterministic content of /bytes/{n}: byte i is i % 251 (a prime, so the pattern does not
    line up with power-of-two buffer sizes and a misplaced chunk shows up in a comparison)."""
    block = bytes(range(251)) * (n // 251 + 2)
    start = offset % 251
    return block[start : start + n]


class ConnectionStats:
    """Counts distinct client connections; read by test fixtures from other threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._peers: set[tuple[str, int]] = set()
        self._requests = 0
        # (query string, the client's port) of each request, the last 10,000
        self._queries: collections.deque[tuple[str, int | None]] = collections.deque(maxlen=10_000)

    def record(self, client: tuple[str, int] | None, query: bytes = b"") -> None:
        with self._lock:
            self._requests += 1
            self._queries.append((query.decode("latin-1"), client and client[1]))
            if client is not None:
                self._peers.add((client[0], client[1]))

    def queries(self) -> list[str]:
        """The query strings of the requests since the last reset (the last 10,000), in the
        order they arrived."""
        with self._lock:
            return [query for query, _ in self._queries]

    def client_ports(self) -> dict[str, int | None]:
        """Each query string since the last reset (the last 10,000) and the client port of the
        connection that carried it (the last such request's, for a repeated query)."""
        with self._lock:
            return dict(self._queries)

    def connection_count(self) -> int:
        with self._lock:
            return len(self._peers)

    def request_count(self) -> int:
        with self._lock:
            return self._requests

    def reset(self) -> None:
        with self._lock:
            self._peers.clear()
            self._requests = 0
            self._queries.clear()


def _clamp_int(value: str, low: int, high: int) -> int:
    return max(low, min(high, int(value)))


def _clamp_float(value: str, high: float = MAX_DELAY) -> float:
    return max(0.0, min(high, float(value)))


async def _read_body(receive: Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(parts)


async def _respond(
    send: Send,
    status: int,
    body: bytes = b"",
    content_type: bytes | None = b"text/plain; charset=utf-8",
    headers: Headers | None = None,
) -> None:
    out: Headers = []
    if content_type is not None:
        out.append((b"content-type", content_type))
    out += headers or []
    no_body = status in (204, 304) or 100 <= status < 200
    if not no_body:
        out.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": b"" if no_body else body})


async def _respond_json(send: Send, doc: Any, status: int = 200) -> None:
    await _respond(send, status, json.dumps(doc).encode(), b"application/json")


def _query(scope: Scope) -> list[tuple[str, str]]:
    return parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)


def _origin(scope: Scope) -> str:
    """This server's own origin as the client addressed it (for absolute redirects)."""
    for name, value in scope["headers"]:
        if name == b"host":
            return f"{scope['scheme']}://{value.decode('latin-1')}"
    host, port = scope["server"]
    return f"{scope['scheme']}://{host}:{port}"


# --- routes ---------------------------------------------------------------------------------


async def _echo(scope: Scope, receive: Receive, send: Send) -> None:
    """Describe the request exactly as the server saw it.

    Header names arrive lowercased (h11 and h2 normalise them); values, order and repeats are
    kept. `body` is the raw body decoded as latin-1, which maps every byte to one code point, so
    `body.encode("latin-1")` gives back the exact bytes sent; `body_base64` says the same thing in
    a form that is easier to compare for binary data.
    """
    body = await _read_body(receive)
    await _respond_json(
        send,
        {
            "method": scope["method"],
            "path": scope["path"],
            "raw_path": scope.get("raw_path", b"").decode("latin-1"),
            "query": scope["query_string"].decode("latin-1"),
            "http_version": scope["http_version"],
            "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in scope["headers"]],
            "body": body.decode("latin-1"),
            "body_base64": base64.b64encode(body).decode("ascii"),
        },
    )


async def _upload_digest(scope: Scope, receive: Receive, send: Send) -> None:
    """Hash the request body as it arrives (never holding it whole): length, SHA-256, the
    number of body messages it came in, and the framing headers."""
    digest_ = hashlib.sha256()
    length = pieces = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body = message.get("body", b"")
        digest_.update(body)
        length += len(body)
        pieces += 1
        if not message.get("more_body", False):
            break
    headers = dict(scope["headers"])
    await _respond_json(
        send,
        {
            "method": scope["method"],
            "length": length,
            "sha256": digest_.hexdigest(),
            "pieces": pieces,
            "content_length": headers.get(b"content-length", b"").decode() or None,
            "transfer_encoding": headers.get(b"transfer-encoding", b"").decode() or None,
            "content_type": headers.get(b"content-type", b"").decode() or None,
        },
    )


API_USER, API_PASSWORD = "reader", "letmein"
API_ITEMS = [{"id": n, "name": f"item-{n}"} for n in range(1, 24)]
API_PAGE_SIZE = 5


async def _api_items(scope: Scope, send: Send) -> None:
    """A paginated JSON API like many real ones: Basic auth on every request, a session cookie
    set by the first page and required by the others, and a `Link: <...>; rel="next"` header."""
    headers = dict(scope["headers"])
    expected = base64.b64encode(f"{API_USER}:{API_PASSWORD}".encode()).decode()
    if headers.get(b"authorization", b"").decode() != f"Basic {expected}":
        auth = [(b"www-authenticate", b'Basic realm="api"')]
        await _respond(send, 401, b"authentication required", None, auth)
        return
    page = _clamp_int(dict(_query(scope)).get("page", "1"), 1, 1000)
    extra: Headers = []
    if page == 1:
        extra.append((b"set-cookie", b"session=s-42; Path=/api; HttpOnly"))
    elif b"session=s-42" not in headers.get(b"cookie", b""):
        await _respond_json(send, {"error": "no session"}, status=403)
        return
    start = (page - 1) * API_PAGE_SIZE
    items = API_ITEMS[start : start + API_PAGE_SIZE]
    if start + API_PAGE_SIZE < len(API_ITEMS):
        extra.append((b"link", f'</api/items?page={page + 1}>; rel="next"'.encode()))
    body = json.dumps({"page": page, "items": items}).encode()
    await _respond(send, 200, body, b"application/json", extra)


async def _status(send: Send, code: str) -> None:
    status = int(code)
    if not 200 <= status <= 599:
        await _respond(send, 400, b"status must be 200..599")
        return
    await _respond(send, status, f"status {status}".encode())


async def _redirect(scope: Scope, receive: Receive, send: Send, parts: list[str]) -> None:
    # Read the request body first: hypercorn closes a connection whose request body was left
    # unread, and a client that reuses it for the redirect's next hop would race that close
    # (seen as httpx's "Server disconnected without sending a response" under load).
    await _read_body(receive)
    if parts[:1] == ["loop"]:
        await _respond(send, 302, b"", None, [(b"location", scope["path"].encode())])
        return
    if parts[:1] == ["chain"] and len(parts) == 2:
        remaining = _clamp_int(parts[1], 0, 1000)
        target = "/echo" if remaining == 0 else f"/redirect/chain/{remaining - 1}"
        await _respond(send, 302, b"", None, [(b"location", target.encode())])
        return
    status = int(parts[0]) if parts and parts[0].isdigit() else 0
    if status not in (301, 302, 303, 307, 308):
        await _respond(send, 404, b"unknown redirect shape")
        return
    shape = parts[1] if len(parts) > 1 else ""
    location = {"": "/echo", "absolute": _origin(scope) + "/echo", "relative": "../../echo"}.get(
        shape
    )
    location = dict(_query(scope)).get("to", location)
    if location is None:
        await _respond(send, 404, b"unknown redirect shape")
        return
    await _respond(send, status, b"redirecting", headers=[(b"location", location.encode())])


async def _digest_auth(
    scope: Scope, receive: Receive, send: Send, qop: str, algorithm: str
) -> None:
    body = await _read_body(receive)
    authorization = next(
        (v.decode("latin-1") for n, v in scope["headers"] if n == b"authorization"), ""
    )
    if digest.verify(authorization, scope["method"], body, qop, algorithm):
        await _respond_json(send, {"authenticated": True, "authorization": authorization})
        return
    header = [(b"www-authenticate", digest.challenge(qop, algorithm))]
    await _respond(send, 401, b"digest required", headers=header)


async def _drip(scope: Scope, send: Send) -> None:
    query = dict(_query(scope))
    chunks = _clamp_int(query.get("chunks", "10"), 0, MAX_CHUNKS)
    size = _clamp_int(query.get("size", "1"), 0, 1024 * 1024)
    delay = _clamp_float(query.get("delay", "0.01"), high=10.0)
    headers: Headers = [(b"content-type", b"application/octet-stream")]
    if query.get("length") == "1":
        headers.append((b"content-length", str(chunks * size).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    for i in range(chunks):
        await asyncio.sleep(delay)
        chunk = pattern_bytes(size, offset=i * size)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _bytes(scope: Scope, send: Send, count: str) -> None:
    n = _clamp_int(count, 0, MAX_BYTES)
    headers: Headers = [(b"content-type", b"application/octet-stream")]
    if dict(_query(scope)).get("chunked") != "1":
        headers.append((b"content-length", str(n).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    for start in range(0, n, PIECE):
        piece = pattern_bytes(min(PIECE, n - start), offset=start)
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


def _compressor(coding: str) -> Callable[[bytes], bytes] | None:
    if coding == "gzip":
        return gzip.compress
    if coding == "deflate":  # RFC 9110 "deflate" is the zlib format, not raw deflate
        return zlib.compress
    if coding == "brotli" and brotli is not None:
        return brotli.compress  # type: ignore[no-any-return]
    if coding == "zstd" and zstd is not None:
        return zstd.compress  # type: ignore[no-any-return]
    return None


async def _compressed(scope: Scope, send: Send, coding: str) -> None:
    compress = _compressor(coding)
    if compress is None:
        await _respond(send, 404, f"{coding} is not installed on the server side".encode())
        return
    size = dict(_query(scope)).get("size")
    if size is None:
        raw, content_type = json.dumps(COMPRESSED_DOC).encode(), b"application/json"
    else:
        raw, content_type = b"a" * _clamp_int(size, 0, 64 * 1024 * 1024), b"text/plain"
    encoding = b"br" if coding == "brotli" else coding.encode()
    await _respond(send, 200, compress(raw), content_type, [(b"content-encoding", encoding)])


async def _charset(scope: Scope, send: Send, name: str) -> None:
    query = dict(_query(scope))
    try:
        body = query.get("text", CHARSET_TEXT).encode(name)
    except (LookupError, UnicodeEncodeError) as exc:
        await _respond(send, 400, str(exc).encode())
        return
    content_type = "text/plain" if query.get("param") == "0" else f"text/plain; charset={name}"
    await _respond(send, 200, body, content_type.encode("latin-1"))


async def _large_headers(scope: Scope, send: Send) -> None:
    query = dict(_query(scope))
    count = _clamp_int(query.get("count", "100"), 0, MAX_HEADERS)
    size = _clamp_int(query.get("size", "32"), 1, 64 * 1024)
    headers = [(f"x-large-{i}".encode(), b"v" * size) for i in range(count)]
    await _respond(send, 200, b"large headers", headers=headers)


class App:
    """The ASGI callable. One instance per server; `stats` counts its connections."""

    def __init__(self) -> None:
        self.stats = ConnectionStats()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":  # websockets are not part of requestx
            return
        self.stats.record(scope.get("client"), scope.get("query_string", b""))
        try:
            await self._route(scope, receive, send)
        except ValueError as exc:  # bad number in a path or query: the test's mistake
            await _respond(send, 400, str(exc).encode())

    @staticmethod
    async def _lifespan(receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        parts = [p for p in scope["path"].split("/") if p]
        head = parts[0] if parts else ""
        if not parts:
            await _respond(send, 200, HELLO)
        elif head == "json":
            await _respond_json(send, {"Hello": "world!"})
        elif head == "echo":
            await _echo(scope, receive, send)
        elif parts == ["api", "items"]:
            await _api_items(scope, send)
        elif head == "upload-digest":
            await _upload_digest(scope, receive, send)
        elif head == "status" and len(parts) == 2:
            await _status(send, parts[1])
        elif parts == ["headers", "set"]:
            headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in _query(scope)]
            await _respond(send, 200, b"headers set", headers=headers)
        elif parts == ["cookies", "set"]:
            cookies = [(b"set-cookie", f"{k}={v}; Path=/".encode()) for k, v in _query(scope)]
            await _respond(send, 200, b"cookies set", headers=cookies)
        elif parts == ["cookies"]:
            # HTTP/2 may split Cookie into several fields; RFC 9113 joins them with "; ".
            crumbs = [v.decode("latin-1") for n, v in scope["headers"] if n == b"cookie"]
            await _respond_json(send, {"cookie": "; ".join(crumbs) if crumbs else None})
        elif head == "redirect":
            await _redirect(scope, receive, send, parts[1:])
        elif head == "slow":
            await asyncio.sleep(_clamp_float(dict(_query(scope)).get("delay", "1")))
            await _respond(send, 200, b"slow")
        elif head == "drip":
            await _drip(scope, send)
        elif head == "bytes" and len(parts) == 2:
            await _bytes(scope, send, parts[1])
        elif head in ("gzip", "deflate", "brotli", "zstd") and len(parts) == 1:
            await _compressed(scope, send, head)
        elif head == "bomb" and len(parts) == 2:
            body = bombs.bomb(parts[1])
            encoding = [(b"content-encoding", parts[1].encode())]
            await _respond(send, 200, body, b"application/octet-stream", encoding)
        elif head == "charset" and len(parts) == 2:
            await _charset(scope, send, parts[1])
        elif head == "large-headers":
            await _large_headers(scope, send)
        elif head == "digest-auth" and len(parts) == 3:
            await _digest_auth(scope, receive, send, parts[1], parts[2])
        else:
            await _respond(send, 404, b"not found")
