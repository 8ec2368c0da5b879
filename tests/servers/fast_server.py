"""A minimal keep-alive HTTP/1.1 server in a subprocess, for load and leak tests.

The in-process hypercorn server answers ~3k requests/s and shares the GIL with the client under
test; this one runs in its own process (so its sockets are not in the test process's fd table
either) and answers every request with the same 200 response, as fast as asyncio allows.

    with FastServer() as fast:
        client.get(fast.url + "/anything")

Run directly (`python -m tests.servers.fast_server`), it prints its port on stdout and serves
until stdin is closed, so it never outlives the test process that started it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from ._lifecycle import Lifecycle
from ._socket_server import LOOPBACK


def _response(body_size: int) -> bytes:
    """The one response: `body_size` bytes of b"x" ("ok" when body_size is 2, the default)."""
    body = b"ok" if body_size == 2 else b"x" * body_size
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"Connection: keep-alive\r\n\r\n" + body


MAX_HEAD = 64 * 1024


class _Protocol(asyncio.Protocol):
    """Answers each complete request head (plus its Content-Length body) with the fixed response."""

    def __init__(self, response: bytes) -> None:
        self.response = response
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    self.transport.close()
                return
            head = self.buffer[:end].lower()
            length = 0
            marker = head.find(b"\r\ncontent-length:")
            if marker >= 0:
                line_end = head.find(b"\r\n", marker + 2)
                length = int(head[marker + 17 : line_end if line_end >= 0 else None].strip())
            total = end + 4 + length
            if len(self.buffer) < total:
                return
            self.buffer = self.buffer[total:]
            self.transport.write(self.response)


async def _serve(body_size: int) -> None:
    loop = asyncio.get_running_loop()
    response = _response(body_size)
    server = await loop.create_server(lambda: _Protocol(response), LOOPBACK, 0, backlog=128)
    port = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    stdin_closed = asyncio.Event()
    loop.add_reader(sys.stdin.fileno(), lambda: stdin_closed.set() if not os.read(0, 1) else None)
    await stdin_closed.wait()
    server.close()


class FastServer(Lifecycle):
    """The subprocess server; `.url`, `.port`, `.pid`. Every response body is `body_size` bytes."""

    def __init__(self, body_size: int = 2) -> None:
        self.body_size = body_size
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def start(self) -> None:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.servers.fast_server", str(self.body_size)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self.stop()
            raise RuntimeError("fast test server did not start")
        self.port = int(line)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()  # the server's signal to exit
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        process.stdout.close()


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1]) if len(sys.argv) > 1 else 2))
