"""
`ASGITransport`: an async client that talks to an ASGI application in the same process,
without a network or the engine (how FastAPI and Starlette apps are tested):

    >>> transport = ASGITransport(app=app)
    >>> async with AsyncClient(transport=transport, base_url="http://testserver") as client:
    ...     response = await client.get("/")

httpx's semantics: one HTTP request per call, the request body handed to the app as
`http.request` messages, `http.disconnect` once the response is complete, and the response
body collected before the response is returned. An exception from the app propagates
(`raise_app_exceptions=True`, the default); otherwise a 500 is returned if the app had not
started its response. Works on asyncio (uvloop too) and trio, through anyio.
"""

from __future__ import annotations

import typing
import urllib.parse

import anyio

from ._models import Request, Response
from ._transports import AsyncBaseTransport

__all__ = ["ASGITransport"]

_Message = typing.MutableMapping[str, typing.Any]
_App = typing.Callable[..., typing.Awaitable[None]]


class _ASGIResponseStream:
    """The body the app sent, replayed for the client (async only, as httpx's)."""

    def __init__(self, body: list[bytes]) -> None:
        self._body = body

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        yield b"".join(self._body)

    async def aclose(self) -> None:
        pass


class _Exchange:
    """One request-response between the client and the app: the two channels of messages."""

    def __init__(self, request: Request) -> None:
        self._request_chunks = request.stream.__aiter__()
        self._request_done = False
        self.response_complete = anyio.Event()
        self.status: int | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []

    async def receive(self) -> _Message:
        """The app's `receive()`: the request body, then (once answered) a disconnect."""
        if self._request_done:
            await self.response_complete.wait()
            return {"type": "http.disconnect"}
        try:
            chunk = await self._request_chunks.__anext__()
        except StopAsyncIteration:
            self._request_done = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(self, message: _Message) -> None:
        """The app's `send()`: the response start, then its body."""
        if message["type"] == "http.response.start":
            if self.status is not None:
                raise RuntimeError("The ASGI app sent 'http.response.start' twice.")
            self.status = message["status"]
            self.headers = [
                (bytes(name), value.encode("latin-1") if isinstance(value, str) else bytes(value))
                for name, value in message.get("headers", [])
            ]
        elif message["type"] == "http.response.body":
            if self.status is None:
                raise RuntimeError("The ASGI app sent a body before 'http.response.start'.")
            if self.response_complete.is_set():
                return  # anything after the end of the response is ignored
            body = message.get("body", b"")
            if body:
                self.body.append(bytes(body))
            if not message.get("more_body", False):
                self.response_complete.set()


class ASGITransport(AsyncBaseTransport):
    """
    Send requests to the ASGI application `app` in this process.

    `root_path` is the scope's `root_path` (an app mounted under a prefix); `client` is the
    scope's `client`, the (host, port) the app sees the request coming from.
    """

    def __init__(
        self,
        app: _App,
        raise_app_exceptions: bool = True,
        root_path: str = "",
        client: tuple[str, int] = ("127.0.0.1", 123),
    ) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.root_path = root_path
        self.client = client

    def _scope(self, request: Request) -> dict[str, typing.Any]:
        url = request.url
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(name.lower(), value) for name, value in request.headers.raw],
            "scheme": url.scheme,
            "path": urllib.parse.unquote(url.path),
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "query_string": url.query,
            "server": (url.host, url._port_or_default()),
            "client": self.client,
            "root_path": self.root_path,
        }

    async def handle_async_request(self, request: Request) -> Response:
        exchange = _Exchange(request)
        try:
            await self.app(self._scope(request), exchange.receive, exchange.send)
        except Exception:
            if self.raise_app_exceptions:
                raise
            exchange.response_complete.set()
            if exchange.status is None:
                exchange.status = 500
                exchange.headers = []
        # An app that returns without finishing its response has finished it.
        exchange.response_complete.set()
        if exchange.status is None:
            raise RuntimeError("The ASGI app returned without sending 'http.response.start'.")
        return Response(
            exchange.status,
            headers=exchange.headers,
            stream=_ASGIResponseStream(exchange.body),
        )
