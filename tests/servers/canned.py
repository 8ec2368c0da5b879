"""A loopback server that answers every request with bytes the test chose, verbatim.

For responses that no well-behaved server would send (a corrupt gzip body, broken chunked
framing, conflicting lengths), so a test can check how the client copes:

    with CannedServer({"/bad-gzip": b"HTTP/1.1 200 OK\\r\\n..."}) as canned:
        client.get(canned.url + "/bad-gzip")

Each connection reads one request head, writes the canned bytes for its path (404 for an
unknown path) and closes. Every socket operation has a timeout, so a confused client cannot keep
a thread alive.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType

LOOPBACK = "127.0.0.1"
IO_TIMEOUT = 5.0
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class CannedServer:
    """`with CannedServer({path: response_bytes}) as canned: ... canned.url ...`"""

    def __init__(self, responses: dict[str, bytes]) -> None:
        self.responses = dict(responses)
        self.port = 0
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind((LOOPBACK, 0))
        self._listener.listen(32)
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept_loop, name="canned", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._listener is not None:
            self._listener.close()

    def __enter__(self) -> CannedServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

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
                conn.sendall(self.responses.get(path, NOT_FOUND))
                conn.shutdown(socket.SHUT_WR)
                # Wait for the client to close first: closing with unread request bytes in our
                # receive buffer would send a RST and could destroy the response in flight.
                conn.settimeout(1.0)
                while conn.recv(65536):
                    pass
        except OSError:
            pass
