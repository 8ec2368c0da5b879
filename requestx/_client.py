"""
`Client`: the blocking client, with httpx's names and semantics.

One `client.get(url)` in full::

    Client.get -> Client.request -> Client.build_request   (merge URL, params, headers, cookies)
               -> Client.send -> Client._send_single        (this module)
                  -> Engine.perform                         (_core.pyx: submit + wait, no GIL)
                     -> rx_engine_submit / loop thread      (csrc/engine.c)
                  <- Response._from_engine                  (_models.py: body stays in C)

Configuration that does not change per request (engine limits, TLS, the timeout tuple, the
encoded default headers) is prepared once in `__init__`, so the per-request path only merges
what the caller passed.
"""

from __future__ import annotations

import contextlib
import time
import typing
import warnings

import anyio

from . import _aio, _core
from ._auth import Auth, BasicAuth, build_auth
from ._config import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_REDIRECTS,
    DEFAULT_TIMEOUT_CONFIG,
    Limits,
    Timeout,
)
from ._decoders import accept_encoding_header
from ._exceptions import (
    ConnectError,
    ConnectTimeout,
    RequestError,
    UnsupportedProtocol,
    exception_for_engine_error,
)
from ._framing import check_request_framing
from ._models import _METHODS_WITH_BODY, Cookies, Headers, Request, Response
from ._redirects import check_followable, check_redirect_count, next_request
from ._streams import (
    AsyncEngineResponseStream,
    EngineResponseStream,
    afeed_request_body,
    feed_request_body,
    upload_length,
)
from ._tls import tls_config
from ._transports import _EngineSettings
from ._types import (
    CookieTypes,
    HeaderTypes,
    QueryParamTypes,
    RequestContent,
    RequestData,
    RequestExtensions,
    RequestFiles,
    TimeoutTypes,
)
from ._urls import URL, QueryParams

__all__ = ["AsyncClient", "Client", "USE_CLIENT_DEFAULT", "UseClientDefault"]

__version__ = "0.1.0"


class UseClientDefault:
    """Marks an argument as "whatever the client was configured with" (httpx's sentinel)."""

    def __repr__(self) -> str:
        return "USE_CLIENT_DEFAULT"


USE_CLIENT_DEFAULT = UseClientDefault()

# What httpx sends by default, with our name. Accept-Encoding lists what Python can decode as
# well as libcurl (streamed bodies are decoded in Python): br and zstd only when their modules
# are installed, as in httpx.
DEFAULT_HEADERS: list[tuple[bytes, bytes]] = [
    (b"Accept", b"*/*"),
    (b"Accept-Encoding", accept_encoding_header()),
    (b"Connection", b"keep-alive"),
    (b"User-Agent", f"python-requestx/{__version__}".encode()),
]

_HTTP_VERSION_1_1 = 0  # the engine's RX_HTTP_* values
_HTTP_VERSION_2_TLS = 1  # h2 negotiated by ALPN on https, HTTP/1.1 otherwise
_HTTP_VERSION_2_PRIOR_KNOWLEDGE = 2  # h2c on http://, without an upgrade round trip
_NO_FED_BODY = -2  # Engine.open_stream's upload_length when the body is passed whole

# HTTPTransport(retries=N) retries only requests that never reached the server.
_RETRIED_ERRORS = (ConnectError, ConnectTimeout)


def _warn_per_request_cookies() -> None:
    warnings.warn(
        "Setting per-request cookies=<...> is being deprecated, because the expected "
        "behaviour on cookie persistence is ambiguous. Set cookies directly on the client "
        "instance instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def _retry_delay(attempt: int) -> float:
    """0 s before the first retry, then 0.5, 1, 2, ... (httpx's backoff)."""
    return 0.0 if attempt == 0 else 0.5 * 2 ** (attempt - 1)


# Engine.perform / Engine.submit's leading arguments: method, URL, header entries, body,
# timeouts (ms), HTTP version, TLS settings.
_EngineArguments = typing.Tuple[
    bytes,
    bytes,
    typing.List[typing.Tuple[bytes, bytes, bytes]],
    typing.Optional[bytes],
    typing.Tuple[int, ...],
    int,
    typing.Optional[_core.TLSConfig],
]

# Shared engine for the top-level functions (requestx.get(...)): starting a loop thread per
# call would cost more than the request. Created on first use.
_shared_engine: _core.Engine | None = None


def _get_shared_engine() -> _core.Engine:
    global _shared_engine
    if _shared_engine is None:
        limits = DEFAULT_LIMITS
        _shared_engine = _core.Engine(
            limits.max_connections, limits.max_keepalive_connections, limits.keepalive_expiry
        )
    return _shared_engine


def _timeout_tuple(timeout: Timeout) -> tuple[int, ...]:
    return _core.timeouts_ms(
        timeout.connect, timeout.read, timeout.write, timeout.pool, timeout.total
    )


def _is_sendable(url: URL) -> bool:
    return (url.scheme == "http" or url.scheme == "https") and bool(url.host)


def _enforce_http_url(request: Request) -> None:
    """Only http and https go to the engine (redirects included): never file://, ftp://, ..."""
    url = request.url
    if _is_sendable(url):
        return
    scheme = url.scheme
    if scheme == "http" or scheme == "https":
        message = f"Request URL is missing a host: {str(url)!r}."
    elif not scheme:
        message = f"Request URL is missing an 'http://' or 'https://' protocol: {str(url)!r}."
    else:
        message = f"Request URL has an unsupported protocol '{scheme}://'."
    raise UnsupportedProtocol(message, request=request)


class _BaseClient:
    """What Client and AsyncClient share: configuration, request building, and the two ends
    of a trip through the engine (`_engine_arguments`, `_build_response`)."""

    def __init__(
        self,
        *,
        auth: typing.Any = None,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        verify: typing.Any = True,
        cert: typing.Any = None,
        http1: bool = True,
        http2: bool = False,
        proxy: typing.Any = None,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
        follow_redirects: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        event_hooks: typing.Any = None,
        base_url: URL | str = "",
        transport: typing.Any = None,
        mounts: typing.Any = None,
        trust_env: bool = True,
        default_encoding: str | typing.Callable[[bytes], str] = "utf-8",
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
        max_body_bytes: int | None = None,
    ) -> None:
        for name, value in (
            ("proxy", proxy),
            ("mounts", mounts),
        ):
            if value is not None:
                raise NotImplementedError(f"requestx.Client does not support {name}= yet")
        # transport=: our HTTPTransport is the engine's settings in httpx's shape (the client
        # adopts them and keeps its fast path); any other transport answers every request.
        self._transport: typing.Any = None
        self._retries = 0
        if isinstance(transport, _EngineSettings):
            verify, cert, http1, http2 = (
                transport.verify,
                transport.cert,
                transport.http1,
                transport.http2,
            )
            limits, trust_env = transport.limits, transport.trust_env
            self._retries = transport.retries
        elif transport is not None:
            self._transport = transport
        if not (http1 or http2):
            raise ValueError("At least one of http1 or http2 must be True.")

        self._base_url = self._enforce_trailing_slash(URL(base_url))
        self._params = QueryParams(params)
        self._headers = Headers._from_trusted_list(DEFAULT_HEADERS)
        if headers is not None:
            self._headers.update(headers)
        self._cookies = Cookies(cookies)
        self._auth = build_auth(auth)
        self.event_hooks = event_hooks  # the setter normalises it
        self._timeout = Timeout(timeout)
        self._timeout_ms = _timeout_tuple(self._timeout)
        self._timeout_dict = self._timeout.as_dict()
        self.follow_redirects = follow_redirects
        self.max_redirects = max_redirects
        self.trust_env = trust_env
        self._default_encoding = default_encoding

        self._tls = tls_config(verify, cert, trust_env)
        if http2 and not http1:
            self._http_version = _HTTP_VERSION_2_PRIOR_KNOWLEDGE
        elif http2:
            self._http_version = _HTTP_VERSION_2_TLS
        else:
            self._http_version = _HTTP_VERSION_1_1

        self._limits = limits
        self._engine = _core.Engine(
            limits.max_connections,
            limits.max_keepalive_connections,
            limits.keepalive_expiry,
            max_header_bytes,
            max_body_bytes,
        )
        # A body read whole is held to it twice: as received, by the engine, and decoded,
        # here (a few kilobytes of gzip can decode to gigabytes).
        self._max_body_bytes = max_body_bytes
        self._owns_engine = True
        self._closed = False

    # -- configuration, as httpx exposes it --

    @staticmethod
    def _enforce_trailing_slash(url: URL) -> URL:
        if url.raw_path.endswith(b"/"):
            return url
        return url.copy_with(raw_path=url.raw_path + b"/")

    @property
    def base_url(self) -> URL:
        return self._base_url

    @base_url.setter
    def base_url(self, url: URL | str) -> None:
        self._base_url = self._enforce_trailing_slash(URL(url))

    @property
    def headers(self) -> Headers:
        return self._headers

    @headers.setter
    def headers(self, headers: HeaderTypes) -> None:
        merged = Headers._from_trusted_list(DEFAULT_HEADERS)
        merged.update(headers)
        self._headers = merged

    @property
    def params(self) -> QueryParams:
        return self._params

    @params.setter
    def params(self, params: QueryParamTypes) -> None:
        self._params = QueryParams(params)

    @property
    def cookies(self) -> Cookies:
        return self._cookies

    @cookies.setter
    def cookies(self, cookies: CookieTypes) -> None:
        self._cookies = Cookies(cookies)

    @property
    def auth(self) -> Auth | None:
        return self._auth

    @auth.setter
    def auth(self, auth: typing.Any) -> None:
        self._auth = build_auth(auth)

    @property
    def event_hooks(self) -> dict[str, list[typing.Callable[..., typing.Any]]]:
        """`{"request": [...], "response": [...]}`: called for every request sent and every
        response received, redirect hops included. Exceptions propagate."""
        return self._event_hooks

    @event_hooks.setter
    def event_hooks(self, hooks: typing.Mapping[str, list[typing.Any]] | None) -> None:
        hooks = hooks or {}
        self._event_hooks = {
            "request": list(hooks.get("request", [])),
            "response": list(hooks.get("response", [])),
        }

    @property
    def timeout(self) -> Timeout:
        return self._timeout

    @timeout.setter
    def timeout(self, timeout: TimeoutTypes) -> None:
        self._timeout = Timeout(timeout)
        self._timeout_ms = _timeout_tuple(self._timeout)
        self._timeout_dict = self._timeout.as_dict()

    @property
    def is_closed(self) -> bool:
        """True once `close()` has been called."""
        return self._closed

    # -- building requests --

    def _merge_url(self, url: URL | str) -> URL:
        merge_url = url if isinstance(url, URL) else URL(url)
        if merge_url.is_relative_url and self._base_url:
            # base_url always ends in "/": a relative path is appended to it, like httpx.
            path = merge_url.raw_path.lstrip(b"/")
            return self._base_url.copy_with(raw_path=self._base_url.raw_path + path)
        return merge_url

    def _merge_headers(self, headers: HeaderTypes | None) -> Headers:
        merged = Headers._from_trusted_list(())
        merged._entries().extend(self._headers._entries())
        if headers is not None:
            merged.update(headers)
        return merged

    def build_request(
        self,
        method: str,
        url: URL | str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
        json: typing.Any | None = None,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Request:
        """Build a `Request` with the client's base URL, params, headers and cookies merged in."""
        merged_url = self._merge_url(url)
        if self._params or params is not None:
            merged_params = self._params.merge(params)
            if merged_params:
                merged_url = merged_url.copy_merge_params(merged_params)
        extensions = {} if extensions is None else dict(extensions)
        if isinstance(timeout, UseClientDefault):
            extensions.setdefault("timeout", self._timeout_dict)
        else:
            extensions["timeout"] = Timeout(timeout).as_dict()
        request_cookies: CookieTypes | None = None
        # Cookies only for URLs we would send: the cookie policy cannot judge other schemes,
        # and send() refuses those with UnsupportedProtocol.
        if (self._cookies or cookies) and _is_sendable(merged_url):
            jar = Cookies(self._cookies)
            jar.update(cookies)
            request_cookies = jar
        return Request(
            method,
            merged_url,
            content=content,
            data=data,
            files=files,
            json=json,
            headers=self._merge_headers(headers),
            cookies=request_cookies,
            extensions=extensions,
        )

    # -- sending --

    def _timeouts_for(self, request: Request) -> tuple[int, ...]:
        timeout = request.extensions.get("timeout")
        if timeout is None or timeout is self._timeout_dict:
            return self._timeout_ms
        return _timeout_tuple(Timeout(**timeout))

    def _engine_arguments(self, request: Request) -> _EngineArguments:
        """What the engine needs for `request`, in Engine.perform/submit's argument order.
        A streamed body (`request._content` None) is not part of it: it is fed separately."""
        _enforce_http_url(request)
        check_request_framing(request)
        method = request.method
        body = request._content
        url = request.url
        # Credentials in the URL travel only as the auth flow's header (build_request_auth):
        # given the userinfo, libcurl would send its own Basic header, even beside DigestAuth.
        target = url._build("") if url._userinfo else str(url)
        return (
            method.encode("ascii"),
            target.encode("ascii"),
            request.headers._entries(),
            body if body or method in _METHODS_WITH_BODY else None,
            self._timeouts_for(request),
            self._http_version,
            self._tls,
        )

    def _build_response(self, request: Request, result: tuple[typing.Any, ...]) -> Response:
        status, version, raw_headers, body, elapsed = result
        response = Response._from_engine(request, status, version, raw_headers, body, elapsed)
        # Cookies and content decoding are skipped unless the header block mentions them (a
        # cheap scan; most responses need neither).
        lowered = raw_headers.lower()
        if b"content-encoding:" in lowered:
            response._decode_engine_body(self._max_body_bytes)
        self._apply_client_defaults(response, b"set-cookie:" in lowered)
        return response

    def _build_stream_response(
        self, request: Request, head: tuple[int, str, bytes], stream: typing.Any
    ) -> Response:
        status, version, raw_headers = head
        response = Response._from_engine_stream(request, status, version, raw_headers, stream)
        response._max_body_bytes = self._max_body_bytes  # for read() / aread()
        self._apply_client_defaults(response, b"set-cookie:" in raw_headers.lower())
        return response

    def _apply_client_defaults(self, response: Response, has_cookies: bool = True) -> None:
        """The client's default encoding, and its cookie jar fed from the response."""
        if self._default_encoding != "utf-8":
            response.default_encoding = self._default_encoding
        if has_cookies:
            self._cookies.extract_cookies(response)

    def _adopt_transport_response(
        self, request: Request, response: Response, read_body: bool, started: float
    ) -> Response:
        """Give a transport's response what the engine path gives one: its request, cookies,
        the client's default encoding, the elapsed time (once read). `read_body` reads a
        sync body here (async callers read theirs first)."""
        response.request = request
        if read_body:
            response.read()
        response._started = started
        if response.is_closed:
            response._note_elapsed()
        self._apply_client_defaults(response)
        return response

    def _check_send_options(self, follow_redirects: bool | UseClientDefault) -> bool:
        """Validate send()'s options; returns whether to follow redirects."""
        if self._closed:
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        if isinstance(follow_redirects, UseClientDefault):
            return self.follow_redirects
        return follow_redirects

    def _auth_for(self, request: Request, auth: typing.Any) -> Auth | None:
        """The request's Auth: the argument, else the client's, else URL credentials."""
        chosen = self._auth if isinstance(auth, UseClientDefault) else build_auth(auth)
        if chosen is None and request.url._userinfo:  # not .userinfo: that encodes it
            return BasicAuth(request.url.username, request.url.password)
        return chosen

    def _after_response(
        self, request: Request, response: Response, history: list[Response], follow: bool
    ) -> Request | None:
        """The next request of a redirect chain, or None when `response` is the answer.

        Without following, a redirect response carries the next request as `next_request`."""
        if history:  # an empty history is the Response default: no list per response
            response.history = list(history)
        if not response.has_redirect_location:
            return None
        following = next_request(request, response, self._cookies)
        if not follow:
            response.next_request = following
            return None
        check_followable(request, following)
        history.append(response)
        return following


class Client(_BaseClient):
    """
    A blocking HTTP client with a connection pool, shared safely between threads.

        >>> with requestx.Client(base_url="https://api.example.org", timeout=10) as client:
        ...     response = client.get("/items", params={"page": 2})
        ...     response.raise_for_status()
        ...     items = response.json()

    Each client owns one engine: a background thread driving libcurl with its own connections.
    """

    def _send_single(self, request: Request) -> Response:
        """One request, one response: the hot path into the engine."""
        if self._transport is not None:
            return self._send_via_transport(request, stream=False)
        if request._content is None:
            return self._send_through_stream(request, stream_response=False)
        arguments = self._engine_arguments(request)
        try:
            result = self._engine.perform(*arguments)
        except _core.EngineError as exc:
            error = exception_for_engine_error(exc.code, exc.message, request)
            if not (self._retries and isinstance(error, _RETRIED_ERRORS)):
                raise error from exc
            result = self._retry(arguments, request, error)
        return self._build_response(request, result)

    def _retry(
        self, arguments: _EngineArguments, request: Request, error: RequestError
    ) -> tuple[typing.Any, ...]:
        """`retries` more attempts for a request that could not connect (HTTPTransport)."""
        for attempt in range(self._retries):
            time.sleep(_retry_delay(attempt))
            try:
                return self._engine.perform(*arguments)
            except _core.EngineError as exc:
                error = exception_for_engine_error(exc.code, exc.message, request)
                if not isinstance(error, _RETRIED_ERRORS):
                    break
        raise error

    def _send_via_transport(self, request: Request, stream: bool) -> Response:
        """A client built with a custom transport (MockTransport, ...): it answers."""
        started = time.perf_counter()
        response = self._transport.handle_request(request)
        return self._adopt_transport_response(request, response, not stream, started)

    def _send_single_stream(self, request: Request) -> Response:
        """One request whose response is returned once its headers are in (stream=True)."""
        if self._transport is not None:
            return self._send_via_transport(request, stream=True)
        return self._send_through_stream(request, stream_response=True)

    def _send_through_stream(self, request: Request, stream_response: bool) -> Response:
        """A request that is more than one perform(): its response streamed, and/or its body
        fed to the engine as it is read (iterators, files, multipart)."""
        arguments = self._engine_arguments(request)
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
            raise exception_for_engine_error(exc.code, exc.message, request) from exc
        if not stream_response:
            return self._build_response(request, result)
        assert head is not None  # a blocking wait returns the head or raises
        return self._build_stream_response(request, head, EngineResponseStream(pending, request))

    def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
    ) -> Response:
        """Send a built request: authentication flow, redirects if asked, event hooks.
        The response is read in full, unless `stream` (then close it when done with it)."""
        follow = self._check_send_options(follow_redirects)
        history: list[Response] = []
        flow_auth = self._auth_for(request, auth)
        if flow_auth is None:
            return self._send_handling_redirects(request, follow, history, stream)
        flow = flow_auth.sync_auth_flow(request)
        try:
            request = next(flow)
            while True:
                response = self._send_handling_redirects(request, follow, history, stream)
                try:
                    request = flow.send(response)
                except StopIteration:
                    return response
                except BaseException:
                    response.close()
                    raise
                response.close()  # superseded by the flow's next request
                response.history = list(history)
                history.append(response)
        finally:
            flow.close()

    def _send_handling_redirects(
        self, request: Request, follow: bool, history: list[Response], stream: bool = False
    ) -> Response:
        request_hooks = self._event_hooks["request"]
        response_hooks = self._event_hooks["response"]
        while True:
            if history:
                check_redirect_count(history, self.max_redirects, request)
            for hook in request_hooks:
                hook(request)
            send_single = self._send_single_stream if stream else self._send_single
            response = send_single(request)
            try:
                for hook in response_hooks:
                    hook(response)
                following = self._after_response(request, response, history, follow)
            except BaseException:
                response.close()
                raise
            if following is None:
                return response
            if stream:
                response.read()  # a redirect hop's (small) body: keeps its connection usable
            request = following

    @contextlib.contextmanager
    def stream(
        self,
        method: str,
        url: URL | str,
        *,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        **kwargs: typing.Any,
    ) -> typing.Iterator[Response]:
        """Send a request and give the response before its body is read; the body is then
        read with `iter_bytes()` and friends, or `read()`. Closed when the block ends.

        >>> with client.stream("GET", "/big-file") as response:
        ...     for chunk in response.iter_bytes():
        ...         sink.write(chunk)
        """
        request = self.build_request(method, url, **kwargs)
        response = self.send(request, stream=True, auth=auth, follow_redirects=follow_redirects)
        try:
            yield response
        finally:
            response.close()

    def request(
        self,
        method: str,
        url: URL | str,
        *,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
        json: typing.Any | None = None,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        """Build and send a request.

        >>> client.request("PATCH", "/items/1", json={"name": "new"}).status_code
        200
        """
        if cookies is not None:
            _warn_per_request_cookies()
        request = self.build_request(
            method,
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            timeout=timeout,
            extensions=extensions,
        )
        return self.send(request, auth=auth, follow_redirects=follow_redirects)

    def get(self, url: URL | str, **kwargs: typing.Any) -> Response:
        """`GET` a URL: `client.get("/items", params={"page": 2})`."""
        return self.request("GET", url, **kwargs)

    def options(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return self.request("OPTIONS", url, **kwargs)

    def head(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return self.request("HEAD", url, **kwargs)

    def post(self, url: URL | str, **kwargs: typing.Any) -> Response:
        """`POST` a body: `client.post("/items", json={"name": "x"})`."""
        return self.request("POST", url, **kwargs)

    def put(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return self.request("DELETE", url, **kwargs)

    # -- life cycle --

    def close(self) -> None:
        """Close every connection and stop the engine thread. Idempotent."""
        if not self._closed:
            self._closed = True
            if self._owns_engine:
                self._engine.close()
            if self._transport is not None:
                self._transport.close()

    def __enter__(self) -> Client:
        if self._closed:
            raise RuntimeError("Cannot open a client instance that has been closed.")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient(_BaseClient):
    """
    An async HTTP client for asyncio, uvloop and trio, with httpx's API.

        >>> async with requestx.AsyncClient(base_url="https://api.example.org") as client:
        ...     response = await client.get("/items", params={"page": 2})
        ...     items = response.json()

    Requests run on the client's engine thread; the awaiting task is woken through its event
    loop's completion queue (see `_aio.py`), so awaiting costs no thread of its own. One client
    may serve many tasks at once, and several event loops in turn.
    """

    async def _send_single(self, request: Request) -> Response:
        """One request, one response: submit to the engine, await the event loop's queue."""
        if self._transport is not None:
            return await self._send_via_transport(request, stream=False)
        if request._content is None:
            return await self._send_through_stream(request, stream_response=False)
        arguments = self._engine_arguments(request)
        bridge = _aio.current_bridge()
        # httpx awaits before anything goes out; so do we, or a request made in an already
        # cancelled scope could be sent (and even completed by the spin) before noticing.
        await bridge.checkpoint_if_cancelled()
        attempt = 0
        while True:
            try:
                pending = self._engine.submit(*arguments, bridge.queue)
                await bridge.wait(pending)
                result = pending.result()
                break
            except _core.EngineError as exc:
                error = exception_for_engine_error(exc.code, exc.message, request)
                if attempt >= self._retries or not isinstance(error, _RETRIED_ERRORS):
                    raise error from exc
            await anyio.sleep(_retry_delay(attempt))  # HTTPTransport(retries=...)
            attempt += 1
        return self._build_response(request, result)

    async def _send_via_transport(self, request: Request, stream: bool) -> Response:
        """A client built with a custom transport (MockTransport, ...): it answers."""
        started = time.perf_counter()
        response = await self._transport.handle_async_request(request)
        if not stream:
            await response.aread()
        return self._adopt_transport_response(request, response, False, started)

    async def _send_single_stream(self, request: Request) -> Response:
        """One request whose response is returned once its headers are in (stream=True)."""
        if self._transport is not None:
            return await self._send_via_transport(request, stream=True)
        return await self._send_through_stream(request, stream_response=True)

    async def _send_through_stream(self, request: Request, stream_response: bool) -> Response:
        """A request that is more than one submit(): its response streamed, and/or its body
        fed to the engine as it is read (async iterators, files, multipart)."""
        arguments = self._engine_arguments(request)
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
            raise exception_for_engine_error(exc.code, exc.message, request) from exc
        if not stream_response:
            return self._build_response(request, result)
        assert head is not None  # the loop above ends only with a head
        stream = AsyncEngineResponseStream(pending, request, bridge)
        return self._build_stream_response(request, head, stream)

    async def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
    ) -> Response:
        """Send a built request: authentication flow, redirects if asked, event hooks
        (awaited). The response is read in full, unless `stream` (then `aclose()` it)."""
        follow = self._check_send_options(follow_redirects)
        history: list[Response] = []
        flow_auth = self._auth_for(request, auth)
        if flow_auth is None:
            return await self._send_handling_redirects(request, follow, history, stream)
        flow = flow_auth.async_auth_flow(request)
        try:
            request = await flow.__anext__()
            while True:
                response = await self._send_handling_redirects(request, follow, history, stream)
                try:
                    request = await flow.asend(response)
                except StopAsyncIteration:
                    return response
                except BaseException:
                    await response.aclose()
                    raise
                await response.aclose()  # superseded by the flow's next request
                response.history = list(history)
                history.append(response)
        finally:
            await flow.aclose()

    async def _send_handling_redirects(
        self, request: Request, follow: bool, history: list[Response], stream: bool = False
    ) -> Response:
        request_hooks = self._event_hooks["request"]
        response_hooks = self._event_hooks["response"]
        while True:
            if history:
                check_redirect_count(history, self.max_redirects, request)
            for hook in request_hooks:
                await hook(request)
            if stream:
                response = await self._send_single_stream(request)
            else:
                response = await self._send_single(request)
            try:
                for hook in response_hooks:
                    await hook(response)
                following = self._after_response(request, response, history, follow)
            except BaseException:
                await response.aclose()
                raise
            if following is None:
                return response
            if stream:
                await response.aread()  # a redirect hop's (small) body, as in the sync client
            request = following

    @contextlib.asynccontextmanager
    async def stream(
        self,
        method: str,
        url: URL | str,
        *,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        **kwargs: typing.Any,
    ) -> typing.AsyncIterator[Response]:
        """Send a request and give the response before its body is read; the body is then
        read with `aiter_bytes()` and friends, or `aread()`. Closed when the block ends.

        >>> async with client.stream("GET", "/big-file") as response:
        ...     async for chunk in response.aiter_bytes():
        ...         sink.write(chunk)
        """
        request = self.build_request(method, url, **kwargs)
        response = await self.send(
            request, stream=True, auth=auth, follow_redirects=follow_redirects
        )
        try:
            yield response
        finally:
            await response.aclose()

    async def request(
        self,
        method: str,
        url: URL | str,
        *,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        **kwargs: typing.Any,
    ) -> Response:
        """Build and send a request; keyword arguments as for `build_request`.

        >>> (await client.request("PATCH", "/items/1", json={"name": "new"})).status_code
        200
        """
        if kwargs.get("cookies") is not None:
            _warn_per_request_cookies()
        request = self.build_request(method, url, **kwargs)
        return await self.send(request, auth=auth, follow_redirects=follow_redirects)

    async def get(self, url: URL | str, **kwargs: typing.Any) -> Response:
        """`GET` a URL: `await client.get("/items", params={"page": 2})`."""
        return await self.request("GET", url, **kwargs)

    async def options(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return await self.request("OPTIONS", url, **kwargs)

    async def head(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return await self.request("HEAD", url, **kwargs)

    async def post(self, url: URL | str, **kwargs: typing.Any) -> Response:
        """`POST` a body: `await client.post("/items", json={"name": "x"})`."""
        return await self.request("POST", url, **kwargs)

    async def put(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return await self.request("PUT", url, **kwargs)

    async def patch(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return await self.request("PATCH", url, **kwargs)

    async def delete(self, url: URL | str, **kwargs: typing.Any) -> Response:
        return await self.request("DELETE", url, **kwargs)

    # -- life cycle --

    async def aclose(self) -> None:
        """Close every connection and stop the engine thread; requests still running fail.
        Idempotent. (Stopping the loop thread takes microseconds, so this does not block.)"""
        if not self._closed:
            self._closed = True
            if self._owns_engine:
                self._engine.close()
            if self._transport is not None:
                await self._transport.aclose()

    async def __aenter__(self) -> AsyncClient:
        if self._closed:
            raise RuntimeError("Cannot open a client instance that has been closed.")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
