"""
Transports: httpx's extension point for what sends a request.

requestx clients send through their engine directly (see `_client.py`); these classes exist
so code written for httpx keeps working:

* `BaseTransport` / `AsyncBaseTransport`: subclass them to answer requests yourself; a
  client given `transport=` hands every request to `handle_request` /
  `handle_async_request` instead of the engine (redirects, auth, cookies and hooks still
  run in the client).
* `MockTransport(handler)`: answers with `handler(request)` (a Response, or for async
  clients an awaitable of one): for tests that must not touch the network.
* `HTTPTransport` / `AsyncHTTPTransport`: the engine's settings in httpx's shape. A client
  given one adopts its settings (`verify`, `http1`, `http2`, `limits`, `retries`) and keeps
  the fast path; options the engine does not support raise `NotImplementedError`.
"""

from __future__ import annotations

import inspect
import typing

from ._config import DEFAULT_LIMITS, Limits
from ._models import Request, Response

if typing.TYPE_CHECKING:
    from ._client import AsyncClient, Client

__all__ = [
    "AsyncBaseTransport",
    "AsyncHTTPTransport",
    "BaseTransport",
    "HTTPTransport",
    "MockTransport",
]


class BaseTransport:
    """Sends one request and returns its response (the body may still be streaming)."""

    def __enter__(self) -> BaseTransport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def handle_request(self, request: Request) -> Response:
        raise NotImplementedError("The 'handle_request' method must be implemented.")

    def close(self) -> None:
        pass


class AsyncBaseTransport:
    """The async twin of `BaseTransport`."""

    async def __aenter__(self) -> AsyncBaseTransport:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def handle_async_request(self, request: Request) -> Response:
        raise NotImplementedError("The 'handle_async_request' method must be implemented.")

    async def aclose(self) -> None:
        pass


class MockTransport(BaseTransport, AsyncBaseTransport):
    """
    Answers every request with `handler(request)`, without any network.

        >>> def handler(request):
        ...     return Response(200, json={"path": request.url.path})
        >>> client = Client(transport=MockTransport(handler))
        >>> client.get("http://example.org/hello").json()
        {'path': '/hello'}
    """

    def __init__(self, handler: typing.Callable[[Request], typing.Any]) -> None:
        self.handler = handler

    def handle_request(self, request: Request) -> Response:
        request.read()
        response = self.handler(request)
        if not isinstance(response, Response):
            raise TypeError(
                f"MockTransport's handler must return a Response, not {type(response).__name__}"
            )
        return response

    async def handle_async_request(self, request: Request) -> Response:
        await request.aread()
        response = self.handler(request)
        if inspect.isawaitable(response):
            response = await response
        if not isinstance(response, Response):
            raise TypeError(
                f"MockTransport's handler must return a Response, not {type(response).__name__}"
            )
        return response


class _EngineSettings:
    """What HTTPTransport and AsyncHTTPTransport accept, checked once."""

    def __init__(
        self,
        verify: typing.Any = True,
        cert: typing.Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        proxy: typing.Any = None,
        uds: str | None = None,
        local_address: str | None = None,
        retries: int = 0,
        socket_options: typing.Any = None,
    ) -> None:
        for name, value in (
            ("proxy", proxy),
            ("uds", uds),
            ("local_address", local_address),
            ("socket_options", socket_options),
        ):
            if value is not None:
                raise NotImplementedError(f"requestx transports do not support {name}= yet")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.verify = verify
        self.cert = cert
        self.trust_env = trust_env
        self.http1 = http1
        self.http2 = http2
        self.limits = limits
        self.retries = retries


class HTTPTransport(_EngineSettings, BaseTransport):
    """The engine, configured the way httpx's `HTTPTransport` is (see the module docstring).
    `retries` retries requests that fail to connect, as httpx does."""

    _client: Client | None = None

    def handle_request(self, request: Request) -> Response:
        """Send one request as-is (no redirects, auth or cookies); the response streams."""
        if self._client is None:
            from ._client import Client

            self._client = Client(transport=self)
        return self._client._send_single_stream(request)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


class AsyncHTTPTransport(_EngineSettings, AsyncBaseTransport):
    """The async twin of `HTTPTransport`."""

    _client: AsyncClient | None = None

    async def handle_async_request(self, request: Request) -> Response:
        """Send one request as-is (no redirects, auth or cookies); the response streams."""
        if self._client is None:
            from ._client import AsyncClient

            self._client = AsyncClient(transport=self)
        return await self._client._send_single_stream(request)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
