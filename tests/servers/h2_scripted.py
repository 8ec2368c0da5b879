"""A scripted HTTP/2 server (h2c, prior knowledge) that misbehaves at chosen moments.

Built on the `h2` state machine, one thread per connection. The scenario is the request path;
`?token=...` makes a "-once" scenario misbehave only the first time it sees that token (so a
retried request succeeds on its second try):

    /ok                      200 "ok"
    /big?size=N              200 with N bytes of pattern_bytes, Content-Length set
    /refuse-once?token=T     RST_STREAM(REFUSED_STREAM) before any response, the first time
    /goaway-once?token=T     GOAWAY whose last-stream-id excludes this stream (so the server
                             did not process it), then close, the first time
    /goaway-processed        GOAWAY whose last-stream-id includes this stream (the server
                             took it), then close, without a response
    /pair?token=T            the first request with token T waits; when the second arrives on
                             the same connection, the first is answered, then GOAWAY with
                             the first's stream as the last (the second was not processed),
                             then close; later ones are answered
    /reset-mid-body          headers with Content-Length: 100000, 10000 bytes, then
                             RST_STREAM(INTERNAL_ERROR)
    /goaway-mid-body         headers with Content-Length: 100000, 10000 bytes, then GOAWAY that
                             includes this stream (it was started), then close
    /short-body              headers with Content-Length: 100, 50 bytes, then END_STREAM
    /answer-early            200 "early" as soon as the request's HEADERS arrive, then
                             RST_STREAM(NO_ERROR): "send no more of the body" (RFC 9113, 8.1);
                             nothing of the request body is read, so the client's flow-control
                             window is never reopened

`connection_count()` counts accepted connections; `requests_seen(path)` counts requests per
path, so a test can tell a transparent retry (seen twice) from a request never sent.
"""

from __future__ import annotations

import collections
import socket
import threading
from urllib.parse import parse_qsl, urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

from ._socket_server import SocketServer
from .app import pattern_bytes

IO_TIMEOUT = 10.0


class ScriptedH2Server(SocketServer):
    def __init__(self) -> None:
        super().__init__(name="h2-scripted-server", backlog=64)
        self._lock = threading.Lock()
        self._connections = 0
        self._tokens: set[str] = set()
        self._seen: collections.Counter[str] = collections.Counter()
        self._waiting: dict[str, int] = {}  # /pair: token -> stream of the request waiting

    def connection_count(self) -> int:
        with self._lock:
            return self._connections

    def requests_seen(self, path: str) -> int:
        with self._lock:
            return self._seen[path]

    def reset_stats(self) -> None:
        with self._lock:
            self._connections = 0
            self._seen.clear()

    def _first_time(self, token: str) -> bool:
        with self._lock:
            if token in self._tokens:
                return False
            self._tokens.add(token)
            return True

    # --- one connection -----------------------------------------------------------------------

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections += 1
        conn.settimeout(IO_TIMEOUT)
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        h2conn = h2.connection.H2Connection(config=config)
        h2conn.initiate_connection()
        try:
            with conn:
                conn.sendall(h2conn.data_to_send())
                while not self._stopping.is_set():
                    data = conn.recv(65536)
                    if not data:
                        return
                    for event in h2conn.receive_data(data):
                        if not isinstance(event, h2.events.RequestReceived):
                            continue
                        if not self._respond(h2conn, event):
                            conn.sendall(h2conn.data_to_send())
                            self._close_gracefully(conn)
                            return
                    conn.sendall(h2conn.data_to_send())
        except (OSError, h2.exceptions.ProtocolError):
            pass  # the client went away: that is what several scenarios provoke

    @staticmethod
    def _close_gracefully(conn: socket.socket) -> None:
        """End the connection with a FIN after everything sent, reading what the client still
        sends (a close with unread input would be a TCP reset, losing the GOAWAY)."""
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(1.0)
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass

    def _respond(
        self, h2conn: h2.connection.H2Connection, event: h2.events.RequestReceived
    ) -> bool:
        """Answer one request; False when the connection must close afterwards."""
        headers = dict(event.headers)
        target = urlsplit(headers.get(":path", "/"))
        path, query = target.path, dict(parse_qsl(target.query))
        stream = event.stream_id
        with self._lock:
            self._seen[path] += 1
        token = query.get("token", "")

        if path == "/refuse-once" and self._first_time("refuse:" + token):
            h2conn.reset_stream(stream, h2.errors.ErrorCodes.REFUSED_STREAM)
            return True
        if path == "/goaway-once" and self._first_time("goaway:" + token):
            last = max(stream - 2, 0)  # the stream before this one: this one was not processed
            h2conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=last)
            return False
        if path == "/pair":
            with self._lock:
                first = self._waiting.pop(token, None)
                if first is None and token not in self._tokens:
                    self._tokens.add(token)
                    self._waiting[token] = stream
                    return True  # no answer yet
            if first is not None:
                self._send_head(h2conn, first, 2)
                h2conn.send_data(first, b"ok", end_stream=True)
                h2conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=first)
                return False
        if path == "/goaway-processed":
            h2conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=stream)
            return False
        if path in ("/reset-mid-body", "/goaway-mid-body"):
            self._send_head(h2conn, stream, 100000)
            h2conn.send_data(stream, pattern_bytes(10000))
            if path == "/reset-mid-body":
                h2conn.reset_stream(stream, h2.errors.ErrorCodes.INTERNAL_ERROR)
                return True
            h2conn.close_connection(h2.errors.ErrorCodes.NO_ERROR, last_stream_id=stream)
            return False
        if path == "/answer-early":
            self._send_head(h2conn, stream, 5)
            h2conn.send_data(stream, b"early", end_stream=True)
            h2conn.reset_stream(stream, h2.errors.ErrorCodes.NO_ERROR)
            return True
        if path == "/short-body":
            self._send_head(h2conn, stream, 100)
            h2conn.send_data(stream, pattern_bytes(50), end_stream=True)
            return True
        if path == "/big":
            size = min(int(query.get("size", "1000")), 16 * 1024 * 1024)
            self._send_head(h2conn, stream, size)
            self._send_body(h2conn, stream, pattern_bytes(size))
            return True
        self._send_head(h2conn, stream, 2)
        h2conn.send_data(stream, b"ok", end_stream=True)
        return True

    @staticmethod
    def _send_head(h2conn: h2.connection.H2Connection, stream: int, length: int) -> None:
        h2conn.send_headers(
            stream,
            [
                (":status", "200"),
                ("content-type", "application/octet-stream"),
                ("content-length", str(length)),
            ],
        )

    @staticmethod
    def _send_body(h2conn: h2.connection.H2Connection, stream: int, body: bytes) -> None:
        # Within the flow-control window only: the scenarios use small bodies.
        size = h2conn.max_outbound_frame_size
        for start in range(0, len(body), size):
            last = start + size >= len(body)
            h2conn.send_data(stream, body[start : start + size], end_stream=last)
