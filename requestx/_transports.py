"""
Transports: httpx's extension point for what sends a request.

A client routes each request to a transport (its own, or a mounted one: `_client.py`), as
httpx does:

* `BaseTransport` / `AsyncBaseTransport`: subclass them to answer requests yourself; a
  client given `transport=` hands every request to `handle_request` /
  `handle_async_request` instead of the engine (redirects, auth, cookies and hooks still
  run in the client).
* `MockTransport(handler)`: answers with `handler(request)` (a Response, or for async
  clients an awaitable of one): for tests that must not touch the network.
* `HTTPTransport` / `AsyncHTTPTransport`: the C engine, configured the way httpx's are
  (`verify`, `cert`, `http1`, `http2`, `limits`, `proxy`, `uds`, `local_address`,
  `socket_options`, `retries`). Each owns an engine (a loop thread, started on first use)
  unless the client that made it lends its own. A client calls their `_send` directly (the
  hot path: no `handle_request` indirection, no response re-wrapping); `handle_request` is
  the same path for code that calls a transport itself.
"""

from __future__ import annotations

import inspect
import time
import typing

import anyio

from . import _aio, _core
from ._config import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_TIMEOUT_CONFIG,
    Limits,
    Proxy,
    Timeout,
)
from ._exceptions import (
    ConnectError,
    ConnectTimeout,
    RequestError,
    UnsupportedProtocol,
    exception_for_engine_error,
)
from ._framing import check_request_framing
from ._hotpath import (
    EnginePlan,
    engine_arguments,
    engine_response,
    is_sendable,
    marks_content_encoding,
    perform,
    through_stream,
)
from ._models import Request, Response
from ._routing import engine_route, normalize_proxy
from ._streams import (
    AsyncEngineResponseStream,
    EngineResponseStream,
    afeed_request_body,
    feed_request_body,
    upload_length,
)
from ._tls import tls_config

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


_HTTP_VERSION_1_1 = 0  # the engine's RX_HTTP_* values
_HTTP_VERSION_2_TLS = 1  # h2 negotiated by ALPN on https, HTTP/1.1 otherwise
_HTTP_VERSION_2_PRIOR_KNOWLEDGE = 2  # h2c on http://, without an upgrade round trip
_NO_FED_BODY = -2  # Engine.open_stream's upload_length when the body is passed whole

# retries=N retries only requests that never reached the server.
_RETRIED_ERRORS = (ConnectError, ConnectTimeout)

# Engine.perform / submit / open_stream's leading arguments: method, URL, header entries,
# body, timeouts (ms), HTTP version, TLS settings, route.
EngineArguments = typing.Tuple[
    bytes,
    bytes,
    typing.List[typing.Tuple[bytes, bytes, bytes]],
    typing.Optional[bytes],
    typing.Tuple[int, ...],
    int,
    typing.Optional[_core.TLSConfig],
    typing.Optional[_core.RouteConfig],
]


def timeouts_ms(timeout: Timeout) -> tuple[int, ...]:
    """A Timeout as the engine's tuple of milliseconds."""
    return _core.timeouts_ms(
        timeout.connect, timeout.read, timeout.write, timeout.pool, timeout.total
    )


_DEFAULT_TIMEOUTS_MS = timeouts_ms(DEFAULT_TIMEOUT_CONFIG)


def request_timeouts_ms(
    request: Request,
    default: dict[str, typing.Any] | None = None,
    default_ms: tuple[int, ...] = _DEFAULT_TIMEOUTS_MS,
) -> tuple[int, ...]:
    """The engine's timeouts for `request`: its "timeout" extension (every client sets one).
    `default_ms` when it has none, or when it is the `default` dict itself (a client's own
    timeout, whose tuple the client keeps, so the common case converts nothing)."""
    timeout = request.extensions.get("timeout")
    if timeout is None or timeout is default:
        return default_ms
    return timeouts_ms(Timeout(**timeout))


def _enforce_http_url(request: Request) -> None:
    """Only http and https go to the engine (redirects included): never file://, ftp://, ..."""
    url = request.url
    if is_sendable(url):
        return
    scheme = url.scheme
    if scheme == "http" or scheme == "https":
        message = f"Request URL is missing a host: {str(url)!r}."
    elif not scheme:
        message = f"Request URL is missing an 'http://' or 'https://' protocol: {str(url)!r}."
    else:
        message = f"Request URL has an unsupported protocol '{scheme}://'."
    raise UnsupportedProtocol(message, request=request)


def _check_sendable(request: Request) -> None:
    """What every request is checked for before the engine gets it, unless the client's plain
    path built it (then both hold by construction): its URL, and its framing headers."""
    _enforce_http_url(request)
    check_request_framing(request)


def _retry_delay(attempt: int) -> float:
    """0 s before the first retry, then 0.5, 1, 2, ... (httpx's backoff)."""
    return 0.0 if attempt == 0 else 0.5 * 2 ** (attempt - 1)


class _EngineTransport:
    """What HTTPTransport and AsyncHTTPTransport share: their settings, checked and turned
    into the engine's once; the two ends of a trip through the engine are compiled
    (`_hotpath.engine_arguments`, `_hotpath.engine_response`)."""

    _blocking = False  # whose callers wait in perform(): they get blocking lanes

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
        *,
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
        max_body_bytes: int | None = None,
        engine: _core.Engine | None = None,
    ) -> None:
        if not (http1 or http2):
            raise ValueError("At least one of http1 or http2 must be True.")
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self._proxy: Proxy | None = normalize_proxy(proxy)
        tls = tls_config(verify, cert, trust_env)
        route = engine_route(self._proxy, uds, local_address, socket_options, trust_env)
        if http2 and not http1:
            http_version = _HTTP_VERSION_2_PRIOR_KNOWLEDGE
        elif http2:
            http_version = _HTTP_VERSION_2_TLS
        else:
            http_version = _HTTP_VERSION_1_1
        self._retries = retries
        if engine is not None and socket_options:
            # libcurl does not compare socket options before reusing a connection (route.h).
            raise ValueError("a transport with socket_options needs an engine of its own")
        self._owns_engine = engine is None
        if engine is None:
            engine = _core.Engine(
                limits.max_connections,
                limits.max_keepalive_connections,
                limits.keepalive_expiry,
                max_header_bytes,
                max_body_bytes,
                # A blocking HTTP/1.1 client gives each calling thread an engine of its own
                # (Engine._reserve_lanes); HTTP/2 keeps one connection per origin instead.
                blocking_lanes=self._blocking and http_version == _HTTP_VERSION_1_1,
            )
        self._engine = engine
        # What every request reads (_hotpath.pxd). A body read whole is held to
        # max_body_bytes twice: as received, by the engine, and decoded, by the response (a few
        # kilobytes of gzip can decode to gigabytes).
        self._plan = EnginePlan(engine, http_version, tls, route, max_body_bytes)

    def _engine_arguments(self, request: Request, timeouts: tuple[int, ...]) -> EngineArguments:
        """What the engine needs for `request`, in Engine.perform/submit's argument order,
        once its URL and framing headers are checked. A streamed body (`request._content`
        None) is not part of it: it is fed separately."""
        _check_sendable(request)
        return engine_arguments(self._plan, request, timeouts)

    def _error(self, exc: _core.EngineError, request: Request) -> RequestError:
        """The exception for a failed transfer. Through a proxy, every connection is to the
        proxy: failing to make one is a ProxyError that names it."""
        proxy = self._proxy.url if self._proxy is not None else None
        return exception_for_engine_error(
            exc.code, exc.message, request, os_errno=exc.os_errno, proxy=proxy
        )

    def _build_stream_response(
        self, request: Request, head: tuple[int, str, bytes, int], stream: typing.Any
    ) -> Response:
        status, version, raw_headers, marks = head
        response = Response._from_engine_stream(request, status, version, raw_headers, stream)
        response._max_body_bytes = self._plan.max_body_bytes  # for read() / aread()
        if not marks_content_encoding(response, marks):
            response._unencoded = True
        return response

    def _close_engine(self) -> None:
        if self._owns_engine:
            self._engine.close()

    def __repr__(self) -> str:
        proxy = f" proxy={str(self._proxy.url)!r}" if self._proxy is not None else ""
        return f"<{type(self).__name__}{proxy}>"


class HTTPTransport(_EngineTransport, BaseTransport):
    """The engine, configured the way httpx's `HTTPTransport` is (see the module docstring).
    `retries` retries requests that fail to connect, as httpx does."""

    _blocking = True

    def handle_request(self, request: Request) -> Response:
        """Send one request as-is (no redirects, auth or cookies); the response streams."""
        return self._send(request, request_timeouts_ms(request), True)

    def _send(self, request: Request, timeouts: tuple[int, ...], stream: bool) -> Response:
        """One request, one response: the hot path into the engine."""
        _check_sendable(request)
        return self._send_plain(request, timeouts, stream)

    def _send_plain(
        self, request: Request, timeouts: tuple[int, ...], stream: bool = False
    ) -> Response:
        """`_send` without the checks: for a request they passed, or one the client's plain
        path built (`_hotpath.plain_url`), whose URL and framing are right by construction."""
        if through_stream(request, stream):
            arguments = engine_arguments(self._plan, request, timeouts)
            return self._send_through_stream(request, arguments, stream)
        return perform(self._plan, self, request, timeouts)

    def _perform_failed(
        self, exc: _core.EngineError, request: Request, arguments: EngineArguments
    ) -> tuple[typing.Any, ...]:
        """The result of `retries` more attempts for a request that could not connect, or
        the exception for its failure raised."""
        error = self._error(exc, request)
        if not (self._retries and isinstance(error, _RETRIED_ERRORS)):
            raise error from exc
        for attempt in range(self._retries):
            time.sleep(_retry_delay(attempt))
            try:
                return self._engine.perform(*arguments)
            except _core.EngineError as retry_exc:
                error = self._error(retry_exc, request)
                if not isinstance(error, _RETRIED_ERRORS):
                    break
        raise error

    def _send_through_stream(
        self, request: Request, arguments: EngineArguments, stream_response: bool
    ) -> Response:
        """A request that is more than one perform(): its response streamed, and/or its body
        fed to the engine as it is read (iterators, files, multipart)."""
        fed = request._content is None
        declared = upload_length(request) if fed else _NO_FED_BODY
        try:
            pending = self._engine.open_stream(*arguments, None, stream_response, declared)
            if fed:
                feed_request_body(pending, request, declared)
            if not stream_response:
                result = pending.finish()
            else:
                head = pending.response_head(True)
        except _core.EngineError as exc:
            raise self._error(exc, request) from exc
        if not stream_response:
            return engine_response(request, result, self._plan.max_body_bytes)
        assert head is not None  # a blocking wait returns the head or raises
        return self._build_stream_response(request, head, EngineResponseStream(pending, request))

    def close(self) -> None:
        self._close_engine()


class AsyncHTTPTransport(_EngineTransport, AsyncBaseTransport):
    """The async twin of `HTTPTransport`: completions reach the awaiting task through its
    event loop's completion queue (`_aio.py`)."""

    async def handle_async_request(self, request: Request) -> Response:
        """Send one request as-is (no redirects, auth or cookies); the response streams."""
        return await self._send(request, request_timeouts_ms(request), True)

    async def _send(self, request: Request, timeouts: tuple[int, ...], stream: bool) -> Response:
        """One request, one response: submit to the engine, await the event loop's queue."""
        _check_sendable(request)
        return await self._send_plain(request, timeouts, stream)

    def _send_plain(
        self, request: Request, timeouts: tuple[int, ...], stream: bool = False
    ) -> typing.Coroutine[typing.Any, typing.Any, Response]:
        """`_send` without the checks (see HTTPTransport._send_plain)."""
        arguments = engine_arguments(self._plan, request, timeouts)
        if through_stream(request, stream):
            return self._send_through_stream(request, arguments, stream)
        return self._perform(request, arguments)

    async def _perform(self, request: Request, arguments: EngineArguments) -> Response:
        bridge = _aio.current_bridge()
        # httpx awaits before anything goes out; so do we, or a request made in an already
        # cancelled scope could be sent (and even completed by the spin) before noticing.
        await bridge.checkpoint_if_cancelled()
        attempt = 0
        while True:
            try:
                pending = bridge.submit(self._engine, arguments)
                # bridge.wait's await, spelled out here (as _AsyncioBridge.wait_for_news
                # does) so that a request makes no coroutine for it.
                waiter = bridge.waiter(pending)
                try:
                    await waiter
                except BaseException as exc:
                    bridge.waited(pending, waiter, exc)
                    raise
                bridge.waited(pending, waiter)
                result = pending.result()
                break
            except _core.EngineError as exc:
                error = self._error(exc, request)
                if attempt >= self._retries or not isinstance(error, _RETRIED_ERRORS):
                    raise error from exc
            await anyio.sleep(_retry_delay(attempt))  # retries=...
            attempt += 1
        return engine_response(request, result, self._plan.max_body_bytes)

    async def _send_through_stream(
        self, request: Request, arguments: EngineArguments, stream_response: bool
    ) -> Response:
        """A request that is more than one submit(): its response streamed, and/or its body
        fed to the engine as it is read (async iterators, files, multipart)."""
        fed = request._content is None
        declared = upload_length(request) if fed else _NO_FED_BODY
        bridge = _aio.current_bridge()
        await bridge.checkpoint_if_cancelled()
        try:
            pending = self._engine.open_stream(*arguments, bridge.queue, stream_response, declared)
            try:
                if fed:
                    await afeed_request_body(pending, request, declared, bridge)
                if not stream_response:
                    await bridge.wait(pending)
                    result = pending.result()
                else:
                    while (head := pending.response_head(False)) is None:
                        await bridge.wait_for_news(pending)
            except BaseException:
                pending.close_stream()
                raise
        except _core.EngineError as exc:
            raise self._error(exc, request) from exc
        if not stream_response:
            return engine_response(request, result, self._plan.max_body_bytes)
        assert head is not None  # the loop above ends only with a head
        stream = AsyncEngineResponseStream(pending, request, bridge)
        return self._build_stream_response(request, head, stream)

    async def aclose(self) -> None:
        self._close_engine()


def engine_transport(transport: typing.Any) -> typing.Any:
    """`transport` itself when a client may call its `_send` directly (one of ours, with its
    request handler not overridden), else None: the client then calls `handle_request`."""
    kind = type(transport)
    if isinstance(transport, HTTPTransport):
        direct = kind.handle_request is HTTPTransport.handle_request
    elif isinstance(transport, AsyncHTTPTransport):
        direct = kind.handle_async_request is AsyncHTTPTransport.handle_async_request
    else:
        direct = False
    return transport if direct else None
