"""A raw-socket HTTP/1.1 server that writes down every request head it receives.

For tests that must show what reached a server, or that nothing did:

    with RecordingServer() as recorder:
        client.get(recorder.url + "/x", headers={"X-Secret": "s"})
        assert recorder.connections == 1
        assert recorder.heads[0].header("x-secret") == "s"

Every request gets `200 ok` on a kept-alive connection, whatever its Connection header says
(so only the client can close one), except `/server-closes`, answered with the server's own
`Connection: close` and then closed. Each head records which connection it came on
(`connections` counts them, first accepted first), and `closed_by_client` which connections
the client closed between requests. Request bodies are read by their
Content-Length (chunked bodies are not expected here). Socket operations time out, so a
confused client cannot keep a thread alive.
"""

from __future__ import annotations

import socket
import threading

from ._socket_server import SocketServer

IO_TIMEOUT = 5.0
MAX_HEAD = 64 * 1024
OK = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
# The answer to `/server-closes`: the server's own `Connection: close`, then the socket closed.
OK_THEN_CLOSE = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"


class RecordedHead:
    """One request head as it arrived: the request line and the header fields, in order."""

    def __init__(self, raw: bytes, connection: int = 0) -> None:
        self.raw = raw  # the head's bytes as received, without the blank line that ends it
        self.connection = connection  # which connection it came on: 1 for the first accepted
        lines = raw.decode("latin-1").split("\r\n")
        self.request_line = lines[0]
        self.fields = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:]]

    def header(self, name: str) -> str | None:
        """The first value of header `name` (any case), or None."""
        for field in self.fields:
            if field[0].lower() == name.lower():
                return field[1] if len(field) > 1 else ""
        return None

    @property
    def target(self) -> str:
        return self.request_line.split(" ")[1]


class RecordingServer(SocketServer):
    """`with RecordingServer() as recorder: ... recorder.heads, recorder.connections ...`"""

    def __init__(self) -> None:
        super().__init__(name="recorder", backlog=64)
        self._lock = threading.Lock()
        self.heads: list[RecordedHead] = []
        self.connections = 0
        self.closed_by_client: set[int] = set()  # connections whose client closed them

    def reset(self) -> None:
        with self._lock:
            self.heads = []
            self.connections = 0
            self.closed_by_client = set()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(IO_TIMEOUT)
        with self._lock:
            self.connections += 1
            connection = self.connections
        buffered = b""
        try:
            with conn:
                while True:
                    while b"\r\n\r\n" not in buffered:
                        data = conn.recv(65536)
                        if not data and not buffered:
                            with self._lock:
                                self.closed_by_client.add(connection)
                        if not data or len(buffered) > MAX_HEAD:
                            return
                        buffered += data
                    raw, buffered = buffered.split(b"\r\n\r\n", 1)
                    head = RecordedHead(raw, connection)
                    length = int(head.header("content-length") or 0)
                    while len(buffered) < length:
                        data = conn.recv(65536)
                        if not data:
                            return
                        buffered += data
                    buffered = buffered[length:]
                    with self._lock:
                        self.heads.append(head)
                    if head.target == "/server-closes":
                        conn.sendall(OK_THEN_CLOSE)
                        return
                    conn.sendall(OK)
        except OSError:  # the client went away, or a timeout: nothing more to record
            return
