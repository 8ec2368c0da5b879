"""The two child processes of the chaos soak (`run_chaos.py`): the origin, and a proxy that
injects faults between the client and it.

**Origin** (`origin_main`): hypercorn with `OriginApp`, on two loopback ports: plain (HTTP/1.1,
and h2c with prior knowledge) and TLS (ALPN h2 and http/1.1, a certificate from the soak's
throw-away CA). Routes, each with `?id=ID` (the driver's request id):

    /data?size=N     N bytes of PATTERN, Content-Length set, sent in 64 KiB pieces
    /post            reads the body, answers {"length": n, "crc": crc32 of the body}
    /slow?delay=S    sleeps S seconds (at most 5), answers "slow"

Every request is counted at its arrival (before its body is read) by id and method: a POST
whose id arrives twice was sent twice. `keep_alive_max_requests` is low (`ORIGIN_MAX_REQUESTS`),
so hypercorn itself ends busy connections now and then: `Connection: close` on HTTP/1.1, and on
HTTP/2 a GOAWAY of its own (the only GOAWAY the soak can put inside TLS).

**Proxy** (`proxy_main`): a TCP proxy on two loopback ports, one in front of each origin port.
For each connection it accepted it draws one fault (or none) and a point at which to play it,
and relays bytes until then:

    reset-before-request   a TCP reset (SO_LINGER 0) on the client's first bytes; nothing was
                           forwarded, so the origin never saw the request
    reset-before-response  after N client chunks were forwarded, the origin's next bytes are
                           dropped and the client gets a reset: the request reached the
                           origin, its answer never reaches the client
    reset-mid-body         at a random byte of the answers, part of a chunk, then a reset
    truncate               the same, but a clean close (FIN) instead of the reset
    stall                  at a random byte, nothing more in either direction for STALL_SECONDS
                           (past the client's read timeout), then a reset
    idle-close             after a random byte, the first pause of IDLE_GAP with no traffic
                           either way closes the connection (FIN): a keep-alive connection the
                           server closed while the client thought it idle
    goaway (h2c only)      the proxy parses the cleartext HTTP/2 frames both ways; at a frame
                           boundary of the origin's frames it sends the client a GOAWAY whose
                           last-stream-id is the highest stream whose HEADERS it forwarded,
                           stops forwarding, and closes (FIN). Streams above it never reached
                           the origin, so the client may send them again; streams at or below
                           it may have, and must not be.

Faults are counted when played (`stats`), per kind and per protocol ("h1", "h2c": the plain
port, told apart by the HTTP/2 preface; "h2": the TLS port). On h2c the proxy also counts the
GOAWAY frames the origin sent itself. `faults off` makes every new connection fault-free.

Both children are told what to do over a multiprocessing pipe: "stats", "faults off", "stop".
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import random
import socket
import struct
import threading
import typing
import zlib
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

if typing.TYPE_CHECKING:
    from multiprocessing.connection import Connection

PATTERN = random.Random(20260).randbytes(2 * 1024 * 1024)  # bodies, both ways
PIECE = 64 * 1024
ORIGIN_MAX_REQUESTS = 400  # per connection: hypercorn closes (h1) or GOAWAYs (h2) after it

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
LINGER_ZERO = struct.pack("ii", 1, 0)
READ_TIMEOUT = 3.0  # the soak's clients'
STALL_SECONDS = READ_TIMEOUT + 1.5
IDLE_GAP = (0.02, 0.2)  # seconds without traffic that an idle-close waits for
FRAME_HEADERS, FRAME_GOAWAY = 0x1, 0x7

FAULTS = (
    "reset-before-request",
    "reset-before-response",
    "reset-mid-body",
    "truncate",
    "stall",
    "idle-close",
    "goaway",
)
# Weights per protocol, "none" included. An HTTP/2 connection carries every request of its
# client, so it faults later (TRIGGER_BYTES) rather than less often.
WEIGHTS = {
    "h1": {"none": 30, "reset-before-request": 5, "reset-before-response": 15,
           "reset-mid-body": 15, "truncate": 15, "stall": 5, "idle-close": 15},
    "h2c": {"none": 20, "reset-before-request": 5, "reset-before-response": 10,
            "reset-mid-body": 10, "truncate": 10, "stall": 5, "idle-close": 10, "goaway": 30},
    "h2": {"none": 35, "reset-before-request": 5, "reset-before-response": 15,
           "reset-mid-body": 15, "truncate": 10, "stall": 5, "idle-close": 15},
}  # fmt: skip
TRIGGER_BYTES = {"h1": 1 << 20, "h2c": 8 << 20, "h2": 8 << 20}  # uniform in [0, this)
TRIGGER_CHUNKS = {"h1": 30, "h2c": 200, "h2": 200}  # reset-before-response: client chunks


# --- the origin ---------------------------------------------------------------------------------


class OriginApp:
    def __init__(self) -> None:
        self.seen: collections.Counter[str] = collections.Counter()
        self.methods: dict[str, str] = {}
        self.requests = 0

    def stats(self) -> dict[str, typing.Any]:
        twice = [rid for rid, n in self.seen.items() if n > 1]
        by_method: collections.Counter[str] = collections.Counter(self.methods.values())
        return {
            "requests": self.requests,
            "distinct_ids": len(self.seen),
            "by_method": dict(by_method),
            "seen_twice": {
                method: sum(1 for rid in twice if self.methods[rid] == method)
                for method in sorted({self.methods[rid] for rid in twice})
            },
            "posts_seen_twice": sorted(rid for rid in twice if self.methods[rid] == "POST"),
        }

    async def __call__(self, scope: dict[str, typing.Any], receive: typing.Any, send: typing.Any):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        query = dict(parse_qsl(scope["query_string"].decode()))
        rid = query.get("id")
        self.requests += 1
        if rid is not None:
            self.seen[rid] += 1
            self.methods[rid] = scope["method"]
        path = scope["path"]
        if path == "/data":
            size = max(0, min(int(query.get("size", "0")), len(PATTERN)))
            await self._head(send, 200, size, b"application/octet-stream")
            for start in range(0, size, PIECE):
                piece = PATTERN[start : min(start + PIECE, size)]
                more = start + PIECE < size
                await send({"type": "http.response.body", "body": piece, "more_body": more})
            if size == 0:
                await send({"type": "http.response.body", "body": b""})
        elif path == "/post":
            crc, length = 0, 0
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return  # the client went away
                body = message.get("body", b"")
                crc, length = zlib.crc32(body, crc), length + len(body)
                if not message.get("more_body", False):
                    break
            answer = json.dumps({"length": length, "crc": crc}).encode()
            await self._head(send, 200, len(answer), b"application/json")
            await send({"type": "http.response.body", "body": answer})
        elif path == "/slow":
            await asyncio.sleep(max(0.0, min(float(query.get("delay", "0.1")), 5.0)))
            await self._head(send, 200, 4, b"text/plain")
            await send({"type": "http.response.body", "body": b"slow"})
        else:
            await self._head(send, 404, 0, b"text/plain")
            await send({"type": "http.response.body", "body": b""})

    @staticmethod
    async def _head(send: typing.Any, status: int, length: int, content_type: bytes) -> None:
        headers = [(b"content-length", str(length).encode()), (b"content-type", content_type)]
        await send({"type": "http.response.start", "status": status, "headers": headers})


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    return sock


def _control(conn: Connection, loop: asyncio.AbstractEventLoop, handle: typing.Any) -> None:
    """Answer the parent's messages (on a thread of the child) until "stop"."""
    while True:
        try:
            message = conn.recv()
        except EOFError:
            message = "stop"
        future = asyncio.run_coroutine_threadsafe(handle(message), loop)
        conn.send(future.result(timeout=30))
        if message == "stop":
            os._exit(0)  # nothing to keep: no need to watch every connection end


def origin_main(conn: Connection, certfile: str) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    app = OriginApp()
    # the faults make the TLS layer complain of every connection cut short: expected here
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    plain, tls = _listener(), _listener()
    ports = {"plain": plain.getsockname()[1], "tls": tls.getsockname()[1]}
    config = Config()
    config.bind = [f"fd://{tls.detach()}"]
    config.insecure_bind = [f"fd://{plain.detach()}"]
    config.certfile = config.keyfile = certfile
    config.alpn_protocols = ["h2", "http/1.1"]
    config.accesslog = None
    config.errorlog = None
    config.loglevel = "ERROR"
    config.graceful_timeout = 1.0
    config.keep_alive_max_requests = ORIGIN_MAX_REQUESTS
    # Longer than the soak's idle pause (about 7 s): the fresh requests after it must not race
    # the origin closing their pooled connections (a POST that loses that race raises, as it
    # should). The proxy's idle-close plays that fault during the load instead.
    config.keep_alive_timeout = 20.0
    config.h2_max_concurrent_streams = 1000
    config.backlog = 1024

    async def main() -> None:
        loop = asyncio.get_running_loop()
        shutdown = asyncio.Event()

        async def handle(message: str) -> typing.Any:
            if message == "stop":
                shutdown.set()
                return "stopping"
            return app.stats()

        threading.Thread(target=_control, args=(conn, loop, handle), daemon=True).start()
        conn.send(ports)
        await serve(app, config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]

    _run_fast(main())


def _run_fast(coro: typing.Coroutine[typing.Any, typing.Any, None]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
    else:
        uvloop.run(coro)


# --- the proxy ----------------------------------------------------------------------------------


@dataclass
class Plan:
    protocol: str
    fault: str
    trigger_bytes: int = 0
    trigger_chunks: int = 0


@dataclass
class Link:
    """One proxied connection: what was relayed, and whether it is over."""

    plan: Plan
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter | None = None
    over: bool = False
    armed: bool = False  # reset-before-response: the origin's next bytes reset the client
    idle_armed: bool = False
    client_chunks: int = 0
    answer_bytes: int = 0
    last_activity: float = 0.0
    max_stream: int = 0  # h2c: highest stream whose HEADERS went to the origin
    c2s_buffer: bytearray = field(default_factory=bytearray)
    s2c_buffer: bytearray = field(default_factory=bytearray)
    preface_left: int = len(PREFACE)


class FaultProxy:
    def __init__(self, upstream: dict[str, int], seed: int) -> None:
        self.upstream = upstream
        self.rng = random.Random(seed)
        self.faults_on = True
        self.played: collections.Counter[str] = collections.Counter()
        self.connections: collections.Counter[str] = collections.Counter()
        self.server_goaways = 0  # GOAWAY frames the origin sent itself, seen on h2c
        self.links: set[asyncio.Task[None]] = set()  # asyncio keeps weak references only

    def stats(self) -> dict[str, typing.Any]:
        per_kind: collections.Counter[str] = collections.Counter()
        for key, n in self.played.items():
            per_kind[key.split(":", 1)[1]] += n
        return {
            "connections": dict(self.connections),
            "faults": {kind: per_kind.get(kind, 0) for kind in FAULTS},
            "faults_by_protocol": dict(sorted(self.played.items())),
            "origin_goaways_seen_h2c": self.server_goaways,
        }

    def plan(self, protocol: str) -> Plan:
        if not self.faults_on:
            return Plan(protocol, "none")
        weights = WEIGHTS[protocol]
        fault = self.rng.choices(list(weights), list(weights.values()))[0]
        return Plan(
            protocol,
            fault,
            trigger_bytes=self.rng.randrange(TRIGGER_BYTES[protocol]),
            trigger_chunks=self.rng.randrange(TRIGGER_CHUNKS[protocol]),
        )

    def play(self, link: Link, fault: str | None = None) -> None:
        self.played[f"{link.plan.protocol}:{fault or link.plan.fault}"] += 1

    # --- one connection --------------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tls: bool):
        upstream_writer: asyncio.StreamWriter | None = None
        task = asyncio.current_task()
        assert task is not None
        self.links.add(task)
        try:
            first = await asyncio.wait_for(reader.read(65536), 30)
            while first and not tls and len(first) < len(PREFACE) and PREFACE.startswith(first):
                more = await asyncio.wait_for(reader.read(65536), 30)
                if not more:
                    break
                first += more
            if not first:
                return
            protocol = "h2" if tls else ("h2c" if first.startswith(PREFACE) else "h1")
            self.connections[protocol] += 1
            link = Link(self.plan(protocol), writer)
            if link.plan.fault == "reset-before-request":
                self.play(link)
                _reset(writer)
                return
            port = self.upstream["tls" if tls else "plain"]
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", port)
            link.upstream = upstream_writer
            link.last_activity = asyncio.get_running_loop().time()
            # The link lasts as long as the origin-to-client side: it ends when the origin
            # closes (its FIN passed on) or when a fault ends it.
            helpers = [asyncio.create_task(_quiet(self._client_to_origin(link, reader, first)))]
            if link.plan.fault == "idle-close":
                helpers.append(asyncio.create_task(_quiet(self._idle_watch(link))))
            try:
                await _quiet(self._origin_to_client(link, upstream_reader))
            finally:
                for helper in helpers:
                    helper.cancel()
        except (OSError, RuntimeError, asyncio.TimeoutError, asyncio.IncompleteReadError):
            pass  # the client went away, or a fault ended the link
        finally:
            self.links.discard(task)
            for end in (writer, upstream_writer):
                if end is not None:
                    end.transport.abort()

    async def _client_to_origin(
        self, link: Link, reader: asyncio.StreamReader, first: bytes
    ) -> None:
        data = first
        while data:
            if link.over:
                return  # a fault ended the link: nothing more reaches the origin
            link.last_activity = asyncio.get_running_loop().time()
            link.client_chunks += 1
            if link.plan.protocol == "h2c":
                self._track_streams(link, data)
            assert link.upstream is not None
            link.upstream.write(data)
            if (
                link.plan.fault == "reset-before-response"
                and link.client_chunks > link.plan.trigger_chunks
            ):
                link.armed = True
            await link.upstream.drain()
            try:
                data = await reader.read(65536)
            except OSError:
                data = b""
        if not link.over and link.upstream is not None and link.upstream.can_write_eof():
            with contextlib.suppress(OSError):
                link.upstream.write_eof()

    async def _origin_to_client(self, link: Link, reader: asyncio.StreamReader) -> None:
        writer = link.client
        rng = self.rng
        while not link.over:
            try:
                data = await reader.read(65536)
            except OSError:
                data = b""
            if link.over:
                return
            if not data:
                link.over = True  # the origin closed: pass its FIN on
                with contextlib.suppress(OSError):
                    if writer.can_write_eof():
                        writer.write_eof()
                await asyncio.sleep(1.0)  # let the client read what is left and close
                return
            link.last_activity = asyncio.get_running_loop().time()
            if link.plan.protocol == "h2c":
                data = self._whole_frames(link, data)
                if not data:
                    continue
            if link.armed:
                self.play(link)
                link.over = True
                _reset(writer)
                return
            fault = link.plan.fault
            link.answer_bytes += len(data)
            if fault == "none" or link.answer_bytes < link.plan.trigger_bytes:
                writer.write(data)
                await writer.drain()
                continue
            if fault == "idle-close":
                link.idle_armed = True
                writer.write(data)
                await writer.drain()
                continue
            if fault == "reset-before-response":
                writer.write(data)
                await writer.drain()
                continue  # armed by the client's side
            self.play(link)
            link.over = True
            cut = rng.randrange(1, len(data)) if len(data) > 1 else 0
            if fault == "reset-mid-body":
                writer.write(data[:cut])
                await writer.drain()
                _reset(writer)
            elif fault == "truncate":
                writer.write(data[:cut])
                await _close_gently(writer)
            elif fault == "stall":
                writer.write(data[:cut])
                await writer.drain()
                await asyncio.sleep(STALL_SECONDS)
                _reset(writer)
            elif fault == "goaway":
                last = link.max_stream
                goaway = struct.pack(">I", 8)[1:] + bytes([FRAME_GOAWAY, 0]) + b"\0\0\0\0"
                goaway += struct.pack(">II", last, 0)  # NO_ERROR
                writer.write(data + goaway)
                await _close_gently(writer)
            return

    async def _idle_watch(self, link: Link) -> None:
        loop = asyncio.get_running_loop()
        gap = self.rng.uniform(*IDLE_GAP)
        while not link.over:
            await asyncio.sleep(gap / 4)
            if link.idle_armed and loop.time() - link.last_activity >= gap:
                self.play(link)
                link.over = True
                await _close_gently(link.client)
                return

    def _track_streams(self, link: Link, data: bytes) -> None:
        """Note the highest stream id whose HEADERS frame (even in part) went to the origin."""
        buffer = link.c2s_buffer
        if link.preface_left:
            skip = min(link.preface_left, len(data))
            link.preface_left -= skip
            data = data[skip:]
        buffer += data
        while len(buffer) >= 9:
            length = int.from_bytes(buffer[0:3], "big")
            if buffer[3] == FRAME_HEADERS:
                stream = int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
                link.max_stream = max(link.max_stream, stream)
            if len(buffer) < 9 + length:
                # the rest of this frame comes later; keep its header, mark it consumed
                buffer[3] = 0xFF  # seen: do not count its HEADERS twice (harmless anyway)
                break
            del buffer[: 9 + length]

    def _whole_frames(self, link: Link, data: bytes) -> bytes:
        """The origin's bytes up to the last complete frame; the rest waits for more."""
        buffer = link.s2c_buffer
        buffer += data
        end = 0
        while len(buffer) - end >= 9:
            length = int.from_bytes(buffer[end : end + 3], "big")
            if len(buffer) - end < 9 + length:
                break
            if buffer[end + 3] == FRAME_GOAWAY:
                self.server_goaways += 1
            end += 9 + length
        whole = bytes(buffer[:end])
        del buffer[:end]
        return whole


async def _quiet(coro: typing.Coroutine[typing.Any, typing.Any, None]) -> None:
    """Run one side of a link; a socket error there ends that side, nothing more."""
    # (uvloop raises RuntimeError, not OSError, for a write to a transport already closed)
    with contextlib.suppress(OSError, RuntimeError, asyncio.IncompleteReadError):
        await coro


def _reset(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_ZERO)
    writer.transport.abort()


async def _close_gently(writer: asyncio.StreamWriter) -> None:
    """Send what is buffered, then FIN; the caller's finally closes the socket after."""
    with contextlib.suppress(OSError, RuntimeError):
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    await asyncio.sleep(0.5)  # reading stops: the client has its FIN and closes


def proxy_main(conn: Connection, upstream: dict[str, int], seed: int) -> None:
    proxy = FaultProxy(upstream, seed)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        async def handle(message: str) -> typing.Any:
            if message == "faults off":
                proxy.faults_on = False
                return "off"
            if message == "stop":
                stop.set()
                return "stopping"
            return proxy.stats()

        plain = await asyncio.start_server(
            lambda r, w: proxy.serve(r, w, tls=False), sock=_listener(), backlog=1024
        )
        tls = await asyncio.start_server(
            lambda r, w: proxy.serve(r, w, tls=True), sock=_listener(), backlog=1024
        )
        threading.Thread(target=_control, args=(conn, loop, handle), daemon=True).start()
        conn.send(
            {
                "plain": plain.sockets[0].getsockname()[1],
                "tls": tls.sockets[0].getsockname()[1],
            }
        )
        await stop.wait()  # then the control thread ends the process

    _run_fast(main())
