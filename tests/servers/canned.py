"""A loopback server that answers every request with bytes the test chose, verbatim.

For answers that no well-behaved server would send (a corrupt gzip body, broken chunked
framing, conflicting lengths), so a test can check how the client copes:

    with CannedServer({"/bad-gzip": b"HTTP/1.1 200 OK\\r\\n..."}) as canned:
        client.get(canned.url + "/bad-gzip")

Each connection reads one request head, writes the canned bytes for its path (404 for an
unknown path) and closes. Every socket operation has a timeout, so a confused client cannot keep
a thread alive.
"""

from __future__ import annotations

import socket

from ._socket_server import SocketServer

IO_TIMEOUT = 5.0
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class CannedServer(SocketServer):
    """`with CannedServer({path: response_bytes}) as canned: ... canned.url ...`"""

    def __init__(self, answers: dict[str, bytes]) -> None:
        super().__init__(name="canned", backlog=32)
        self.answers = dict(answers)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(IO_TIMEOUT)
        try:
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = conn.recv(65536)
                    if not chunk or len(head) > 65536:
                        return
                    head += chunk
                target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode("latin-1")
                path = target.partition("?")[0]
                conn.sendall(self.answers.get(path, NOT_FOUND))
                conn.shutdown(socket.SHUT_WR)
                # Wait for the client to close first: closing with unread request bytes in our
                # receive buffer would send a RST and could destroy the response in flight.
                conn.settimeout(1.0)
                while conn.recv(65536):
                    pass
        except OSError:
            pass
