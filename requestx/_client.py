"""
`Client` and `AsyncClient`: the blocking and the async client, with httpx's names and semantics.

Every request takes the same four steps: build the Request, turn it into the engine's
arguments, make the Response from the engine's result, hand the Response to the client
(cookies, default encoding, redirects, hooks). A call that gives nothing but a URL and perhaps a
body, to a client whose plan allows it (`_hotpath.plan_for`, `_hotpath.plain_url`), takes them
compiled (the plain path)::

    Client.get = _hotpath.client_get        (_hotpath.pyx; AsyncClient.get is async_client_get)
      -> plain_request                      build: Host + the client's headers
      -> send_plain -> perform              engine_arguments, Engine.perform (_core.pyx: waits
                                            without the GIL), engine_response
                    -> needs_client         hand-off: most answers return here; cookies,
                                            redirects, an encoding of the client's go to
                                            Client._finish_plain

`client.request(...)`, the other methods and `client.stream(...)` take the same steps
(`plain_request`, then `send_plain`); `AsyncClient` awaits them (`_send_plain`: the transport's
`_send_plain` submits to the engine and awaits the event loop's completion queue, `_aio.py`).
Anything else (params, per-request headers, auth, cookies, mounts, hooks) takes httpx's chain:

    Client.request -> build_request -> send -> _send_handling_redirects -> _send_single
      -> HTTPTransport._send (checks) -> _send_plain -> perform, as above

The client's plan (`_plan`, declared in _hotpath.pxd) holds what the compiled steps read from
the client, rebuilt by every setter of what it holds (`_configured`). docs/architecture.md
follows one request through every layer.

Each request goes to a transport: the one a mount pattern picks (`mounts=`, `proxy=`, proxy
variables), else the client's own. The client's own is an `HTTPTransport` built from its
options unless `transport=` is given. Configuration that does not change per request (the
transport's TLS settings and route, the timeout tuple, the encoded default headers) is prepared
once in `__init__`, so the per-request path only merges what the caller passed.
"""

from __future__ import annotations

import time
import typing
import warnings

from . import _core, _hotpath
from ._auth import Auth, BasicAuth, build_auth
from ._config import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_REDIRECTS,
    DEFAULT_TIMEOUT_CONFIG,
    USE_CLIENT_DEFAULT,
    Limits,
    Timeout,
    UseClientDefault,
)
from ._decoders import accept_encoding_header
from ._models import Cookies, Headers, Request, Response
from ._redirects import check_followable, check_redirect_count, next_request
from ._routing import URLPattern, environment_proxies, normalize_proxy
from ._transports import (
    AsyncHTTPTransport,
    HTTPTransport,
    engine_transport,
    request_timeouts_ms,
    timeouts_ms,
)
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
from ._urls import URL, QueryParams, url_from_str

__all__ = ["AsyncClient", "Client", "USE_CLIENT_DEFAULT", "UseClientDefault"]

__version__ = "0.1.0"


# What httpx sends by default, with our name. Accept-Encoding lists the codings the engine's
# decoder (csrc/decode.c) was built with: gzip, deflate, br and zstd wherever a wheel is built,
# whatever Python packages are installed.
DEFAULT_HEADERS: list[tuple[bytes, bytes]] = [
    (b"Accept", b"*/*"),
    (b"Accept-Encoding", accept_encoding_header()),
    (b"Connection", b"keep-alive"),
    (b"User-Agent", f"python-requestx/{__version__}".encode()),
]


def _warn_per_request_cookies() -> None:
    warnings.warn(
        "Setting per-request cookies=<...> is being deprecated, because the expected "
        "behaviour on cookie persistence is ambiguous. Set cookies directly on the client "
        "instance instead.",
        DeprecationWarning,
        stacklevel=3,
    )


# Shared engine for the top-level functions (requestx.get(...)): starting a loop thread per
# call would cost more than the request. Created on first use.
_shared_engine: _core.Engine | None = None


def _get_shared_engine() -> _core.Engine:
    global _shared_engine
    if _shared_engine is None:
        limits = DEFAULT_LIMITS
        _shared_engine = _core.Engine(
            limits.max_connections,
            limits.max_keepalive_connections,
            limits.keepalive_expiry,
            blocking_lanes=True,
        )
    return _shared_engine


class _BaseClient:
    """What Client and AsyncClient share: configuration, request building, routing to
    transports, and the client's part of every response (cookies, default encoding)."""

    _engine_transport_class: typing.Any  # the transport made from the client's own options
    # What plain requests read from the client (_hotpath.pxd), rebuilt by _replan whenever
    # the configuration changes; made last in __init__.
    _plan: _hotpath.ClientPlan

    def __init__(
        self,
        *,
        auth: typing.Any = None,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        verify: typing.Any = True,
        cert: typing.Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        proxy: typing.Any = None,
        mounts: typing.Any = None,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
        follow_redirects: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        event_hooks: typing.Any = None,
        base_url: URL | str = "",
        transport: typing.Any = None,
        default_encoding: str | typing.Callable[[bytes], str] = "utf-8",
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
        max_body_bytes: int | None = None,
        _engine: _core.Engine | None = None,
    ) -> None:
        self._base_url = self._enforce_trailing_slash(URL(base_url))
        self._params = QueryParams(params)
        self._headers = Headers._from_trusted_list(DEFAULT_HEADERS)
        if headers is not None:
            self._headers.update(headers)
        self._cookies = Cookies(cookies)
        self._auth = build_auth(auth)
        self.event_hooks = event_hooks  # the setter normalises it
        self._timeout = Timeout(timeout)
        self._timeout_ms = timeouts_ms(self._timeout)
        self._timeout_dict = self._timeout.as_dict()
        self.follow_redirects = follow_redirects
        self.max_redirects = max_redirects
        self.trust_env = trust_env
        self._default_encoding = default_encoding

        # The transports, as httpx builds them: the client's own (from its options unless
        # `transport=` is given), one per proxy (`proxy=`, else with trust_env the proxy
        # variables, unless `transport=` is given), and `mounts=`, most specific pattern first.
        settings: dict[str, typing.Any] = {
            "verify": verify,
            "cert": cert,
            "trust_env": trust_env,
            "http1": http1,
            "http2": http2,
            "limits": limits,
            "max_header_bytes": max_header_bytes,
            "max_body_bytes": max_body_bytes,
        }
        proxies: dict[str, typing.Any]
        if proxy is not None:
            proxies = {"all://": normalize_proxy(proxy)}
        elif trust_env and transport is None:
            proxies = environment_proxies()
        else:
            proxies = {}
        if transport is None:
            transport = self._engine_transport_class(**settings, engine=_engine)
        self._transport = transport
        # Transports this client makes for proxies share its engine (libcurl keeps each
        # proxy's connections apart), so proxies cost no loop thread of their own.
        lent_engine = getattr(engine_transport(transport), "_engine", None)
        self._mounts: dict[URLPattern, typing.Any] = {
            URLPattern(key): None
            if url is None
            else self._engine_transport_class(**settings, proxy=url, engine=lent_engine)
            for key, url in proxies.items()
        }
        if mounts is not None:
            self._mounts.update({URLPattern(key): value for key, value in mounts.items()})
        self._mounts = dict(sorted(self._mounts.items()))
        for given in (transport, *self._mounts.values()):
            self._check_transport_kind(given)
        self._direct = engine_transport(transport)
        # (pattern, transport, the transport when its _send may be called directly); None
        # for "the client's own".
        self._mount_routes = [
            (pattern, mounted, engine_transport(mounted) if mounted is not None else None)
            for pattern, mounted in self._mounts.items()
        ]
        self._closed = False
        self._opened = False
        self._plain_class = _overrides_no_send_step(type(self))
        self._replan()

    def _replan(self) -> None:
        """Rebuild the plan (`_hotpath.plan_for`): every setter of what it holds calls this."""
        self._plan = _hotpath.plan_for(self)

    def _mark_closed(self) -> None:
        """No request may be sent from now on: the plan closes the plain path too."""
        self._closed = True
        self._replan()

    def _configured(self) -> None:
        """A setter changed the configuration: the plan follows (once __init__ made one)."""
        if "_plan" in self.__dict__:
            self._replan()

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
        self._configured()

    @property
    def headers(self) -> Headers:
        return self._headers

    @headers.setter
    def headers(self, headers: HeaderTypes) -> None:
        merged = Headers._from_trusted_list(DEFAULT_HEADERS)
        merged.update(headers)
        self._headers = merged
        self._configured()

    @property
    def params(self) -> QueryParams:
        return self._params

    @params.setter
    def params(self, params: QueryParamTypes) -> None:
        self._params = QueryParams(params)
        self._configured()

    @property
    def cookies(self) -> Cookies:
        return self._cookies

    @cookies.setter
    def cookies(self, cookies: CookieTypes) -> None:
        self._cookies = Cookies(cookies)
        self._configured()

    @property
    def auth(self) -> Auth | None:
        return self._auth

    @auth.setter
    def auth(self, auth: typing.Any) -> None:
        self._auth = build_auth(auth)
        self._configured()

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
        self._configured()

    @property
    def timeout(self) -> Timeout:
        return self._timeout

    @timeout.setter
    def timeout(self, timeout: TimeoutTypes) -> None:
        self._timeout = Timeout(timeout)
        self._timeout_ms = timeouts_ms(self._timeout)
        self._timeout_dict = self._timeout.as_dict()
        self._configured()

    @property
    def is_closed(self) -> bool:
        """True once `close()` has been called."""
        return self._closed

    # -- building requests --

    def _merge_url(self, url: URL | str) -> URL:
        if type(url) is str:
            merge_url = url_from_str(url)
        elif isinstance(url, URL):
            merge_url = url
        else:
            merge_url = URL(url)
        if merge_url.is_relative_url and self._base_url:
            if not self._base_url.host and (
                merge_url.scheme or not merge_url.raw_path.startswith(b"/")
            ):
                # No base URL to resolve against: "example.org/x" and "http:///x" stay as
                # typed, so the error they lead to shows what the user wrote (httpx shows
                # "/example.org/x" and "/x").
                return merge_url
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
        if (self._cookies or cookies) and _hotpath.is_sendable(merged_url):
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
        return request_timeouts_ms(request, self._timeout_dict, self._timeout_ms)

    def _transport_for_url(self, url: URL) -> typing.Any:
        """The transport a request to `url` goes to (httpx's name): the first mount whose
        pattern matches, else the client's own."""
        return self._route_for(url)[0]

    def _route_for(self, url: URL) -> tuple[typing.Any, typing.Any]:
        """(the transport for `url`, the same when its `_send` may be called directly, else
        None). Without mounts this is the client's own transport at once."""
        for pattern, transport, direct in self._mount_routes:
            if pattern.matches(url):
                if transport is None:
                    break
                return transport, direct
        return self._transport, self._direct

    @property
    def _engine(self) -> _core.Engine | None:
        """The engine of the client's own transport (None for other transports): for stats."""
        return getattr(self._direct, "_engine", None)

    def _apply_client_defaults(self, response: Response, has_cookies: bool = True) -> None:
        """The client's default encoding, and its cookie jar fed from the response."""
        if self._plan.custom_encoding:
            response.default_encoding = self._default_encoding
        if has_cookies:
            self._cookies.extract_cookies(response)

    def _adopt_plain_answer(self, response: Response) -> bool:
        """Give a plain-path answer the client's cookies and default encoding when it or the
        client needs them; whether it is final (no redirect for the redirect loop)."""
        self._apply_client_defaults(response, response._sets_cookies)
        return not _hotpath.is_redirect(response)

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

    def _check_transport_kind(self, transport: typing.Any) -> None:
        """Our engine transports come in a blocking and an async kind: the wrong one for this
        client would fail on the first request with an obscure error."""
        wrong = (
            AsyncHTTPTransport if self._engine_transport_class is HTTPTransport else HTTPTransport
        )
        if isinstance(transport, wrong):
            raise TypeError(
                f"{type(self).__name__} needs {self._engine_transport_class.__name__}, not "
                f"{type(transport).__name__}"
            )

    def _transports(self) -> list[typing.Any]:
        """The client's own transport and its mounted ones, each once."""
        found = [self._transport]
        for transport in self._mounts.values():
            if transport is not None and all(transport is not seen for seen in found):
                found.append(transport)
        return found

    def _check_opening(self) -> None:
        """`with client:` once, on a client not yet closed (httpx's rule)."""
        if self._closed:
            raise RuntimeError("Cannot reopen a client instance, once it has been closed.")
        if self._opened:
            raise RuntimeError("Cannot open a client instance more than once.")
        self._opened = True

    def _check_send_options(self, follow_redirects: bool | UseClientDefault) -> bool:
        """Validate send()'s options; returns whether to follow redirects."""
        if self._closed:
            raise RuntimeError(_CLOSED_FOR_SENDING)
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

    _engine_transport_class = HTTPTransport

    def _send_single(self, request: Request, stream: bool) -> Response:
        """One request, one response, from the transport its URL is routed to. Our own
        transports are called directly: the hot path into the engine."""
        transport, direct = self._route_for(request.url)
        if direct is not None:
            response: Response = direct._send(request, self._timeouts_for(request), stream)
            # The transport scanned the header block for Set-Cookie once already.
            self._apply_client_defaults(response, response._sets_cookies)
            return response
        started = time.perf_counter()
        response = transport.handle_request(request)
        try:
            return self._adopt_transport_response(request, response, not stream, started)
        except BaseException:
            response.close()  # a body that failed half-read (even by Ctrl-C) is let go of
            raise

    def _finish_plain(
        self,
        request: Request,
        response: Response,
        follow_redirects: bool | UseClientDefault,
        stream: bool,
    ) -> Response:
        """The plain path's answer, given what the client adds (`_adopt_plain_answer`), or
        handed to the redirect loop when it is a redirect."""
        if self._adopt_plain_answer(response):
            return response
        follow = self._check_send_options(follow_redirects)
        return self._send_handling_redirects(request, follow, [], stream, answer=response)

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
        self,
        request: Request,
        follow: bool,
        history: list[Response],
        stream: bool = False,
        answer: Response | None = None,
    ) -> Response:
        """Send `request` and follow its redirects if asked; `answer`: its response, already
        received (the plain path hands over a redirect this way)."""
        request_hooks = self._event_hooks["request"]
        response_hooks = self._event_hooks["response"]
        while True:
            if answer is None:
                if history:
                    check_redirect_count(history, self.max_redirects, request)
                for hook in request_hooks:
                    hook(request)
                response = self._send_single(request, stream)
            else:
                response, answer = answer, None
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

    def stream(
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
    ) -> _StreamContext:
        """Send a request and give the response before its body is read; the body is then
        read with `iter_bytes()` and friends, or `read()`. Closed when the block ends.

        >>> with client.stream("GET", "/big-file") as response:
        ...     for chunk in response.iter_bytes():
        ...         sink.write(chunk)
        """
        return _StreamContext(
            self,
            (
                method,
                url,
                content,
                data,
                files,
                json,
                params,
                headers,
                cookies,
                auth,
                follow_redirects,
                timeout,
                extensions,
            ),
        )

    def _open_stream(
        self,
        method: str,
        url: URL | str,
        content: RequestContent | None,
        data: RequestData | None,
        files: RequestFiles | None,
        json: typing.Any | None,
        params: QueryParamTypes | None,
        headers: HeaderTypes | None,
        cookies: CookieTypes | None,
        auth: typing.Any,
        follow_redirects: bool | UseClientDefault,
        timeout: TimeoutTypes | UseClientDefault,
        extensions: RequestExtensions | None,
    ) -> Response:
        """`send(build_request(...), stream=True, ...)`: by the plain path when the call gave
        nothing but a URL and perhaps a body (`_hotpath.plain_request` decides, as for
        `request`), else by the general one."""
        plain = _hotpath.plain_request(
            self,
            method,
            url,
            content,
            data,
            json,
            files,
            params,
            headers,
            cookies,
            auth,
            timeout,
            extensions,
        )
        if plain is not None:
            return _hotpath.send_plain(self, plain, follow_redirects, True)
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
        return self.send(request, stream=True, auth=auth, follow_redirects=follow_redirects)

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
        """Build and send a request. A call that gives nothing but a URL and perhaps a body
        goes the plain path; the rest is `build_request` and `send`.

        >>> client.request("PATCH", "/items/1", json={"name": "new"}).status_code
        200
        """
        plain = _hotpath.plain_request(
            self,
            method,
            url,
            content,
            data,
            json,
            files,
            params,
            headers,
            cookies,
            auth,
            timeout,
            extensions,
        )
        if plain is not None:
            return _hotpath.send_plain(self, plain, follow_redirects, False)
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

    # `GET`, the commonest call, compiled (`_hotpath.client_get`): httpx's parameters, the
    # plain path first, `request` for everything else.
    get = _hotpath.client_get

    def options(
        self,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        return self.request(
            "OPTIONS",
            url,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    def head(
        self,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        return self.request(
            "HEAD",
            url,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    def post(
        self,
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
        """`POST` a body: `client.post("/items", json={"name": "x"})`."""
        return self.request(
            "POST",
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    def put(
        self,
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
        return self.request(
            "PUT",
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    def patch(
        self,
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
        return self.request(
            "PATCH",
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    def delete(
        self,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        return self.request(
            "DELETE",
            url,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    # -- life cycle --

    def close(self) -> None:
        """Close every transport: connections and engine threads. Idempotent."""
        if not self._closed:
            self._mark_closed()
            for transport in self._transports():
                transport.close()

    def __enter__(self) -> Client:
        self._check_opening()
        for transport in self._transports():
            transport.__enter__()
        return self

    def __exit__(self, *exc_info: typing.Any) -> None:
        self._mark_closed()
        for transport in self._transports():
            transport.__exit__(*exc_info)


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

    _engine_transport_class = AsyncHTTPTransport

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
        mounts: typing.Any = None,
        timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
        follow_redirects: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        max_redirects: int = DEFAULT_MAX_REDIRECTS,
        event_hooks: typing.Any = None,
        base_url: URL | str = "",
        transport: typing.Any = None,
        trust_env: bool = True,
        default_encoding: str | typing.Callable[[bytes], str] = "utf-8",
        max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
        max_body_bytes: int | None = None,
        _engine: _core.Engine | None = None,
    ) -> None:
        # The same options as Client's, listed in the order httpx's AsyncClient lists them
        # (it puts trust_env later than Client does), so that help() and IDEs match httpx.
        super().__init__(
            auth=auth,
            params=params,
            headers=headers,
            cookies=cookies,
            verify=verify,
            cert=cert,
            trust_env=trust_env,
            http1=http1,
            http2=http2,
            proxy=proxy,
            mounts=mounts,
            timeout=timeout,
            follow_redirects=follow_redirects,
            limits=limits,
            max_redirects=max_redirects,
            event_hooks=event_hooks,
            base_url=base_url,
            transport=transport,
            default_encoding=default_encoding,
            max_header_bytes=max_header_bytes,
            max_body_bytes=max_body_bytes,
            _engine=_engine,
        )

    async def _send_single(self, request: Request, stream: bool) -> Response:
        """One request, one response, from the transport its URL is routed to. Our own
        transports are called directly: submit to the engine, await the event loop's queue."""
        transport, direct = self._route_for(request.url)
        if direct is not None:
            response: Response = await direct._send(request, self._timeouts_for(request), stream)
            # The transport scanned the header block for Set-Cookie once already.
            self._apply_client_defaults(response, response._sets_cookies)
            return response
        started = time.perf_counter()
        response = await transport.handle_async_request(request)
        try:
            if not stream:
                await response.aread()
        except BaseException:
            await response.aclose()  # a body that failed half-read (even cancelled) is let go of
            raise
        return self._adopt_transport_response(request, response, False, started)

    async def _send_plain(
        self, request: Request, follow_redirects: bool | UseClientDefault, stream: bool = False
    ) -> Response:
        """An async client's plain request after its build step (`_hotpath.plain_request`):
        to the engine (the transport's `_send_plain`, awaited), then the hand-off
        (`_hotpath.needs_client`, `_finish_plain`). `Client`'s is `_hotpath.send_plain`;
        `AsyncClient.get` (`_hotpath.async_client_get`) has these steps inline."""
        plan = self._plan
        response: Response = await plan.transport._send_plain(request, plan.timeout_ms, stream)
        if _hotpath.needs_client(plan, response):
            return await self._finish_plain(request, response, follow_redirects, stream)
        return response

    async def _finish_plain(
        self,
        request: Request,
        response: Response,
        follow_redirects: bool | UseClientDefault,
        stream: bool,
    ) -> Response:
        """The plain path's answer, given what the client adds (`_adopt_plain_answer`), or
        handed to the redirect loop when it is a redirect."""
        if self._adopt_plain_answer(response):
            return response
        follow = self._check_send_options(follow_redirects)
        return await self._send_handling_redirects(request, follow, [], stream, answer=response)

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
        self,
        request: Request,
        follow: bool,
        history: list[Response],
        stream: bool = False,
        answer: Response | None = None,
    ) -> Response:
        """Send `request` and follow its redirects if asked; `answer`: its response, already
        received (the plain path hands over a redirect this way)."""
        request_hooks = self._event_hooks["request"]
        response_hooks = self._event_hooks["response"]
        while True:
            if answer is None:
                if history:
                    check_redirect_count(history, self.max_redirects, request)
                for hook in request_hooks:
                    await hook(request)
                response = await self._send_single(request, stream)
            else:
                response, answer = answer, None
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

    def stream(
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
    ) -> _AsyncStreamContext:
        """Send a request and give the response before its body is read; the body is then
        read with `aiter_bytes()` and friends, or `aread()`. Closed when the block ends.

        >>> async with client.stream("GET", "/big-file") as response:
        ...     async for chunk in response.aiter_bytes():
        ...         sink.write(chunk)
        """
        return _AsyncStreamContext(
            self,
            (
                method,
                url,
                content,
                data,
                files,
                json,
                params,
                headers,
                cookies,
                auth,
                follow_redirects,
                timeout,
                extensions,
            ),
        )

    async def _open_stream(
        self,
        method: str,
        url: URL | str,
        content: RequestContent | None,
        data: RequestData | None,
        files: RequestFiles | None,
        json: typing.Any | None,
        params: QueryParamTypes | None,
        headers: HeaderTypes | None,
        cookies: CookieTypes | None,
        auth: typing.Any,
        follow_redirects: bool | UseClientDefault,
        timeout: TimeoutTypes | UseClientDefault,
        extensions: RequestExtensions | None,
    ) -> Response:
        """Client._open_stream, awaited."""
        plain = _hotpath.plain_request(
            self,
            method,
            url,
            content,
            data,
            json,
            files,
            params,
            headers,
            cookies,
            auth,
            timeout,
            extensions,
        )
        if plain is not None:
            return await self._send_plain(plain, follow_redirects, stream=True)
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
        return await self.send(request, stream=True, auth=auth, follow_redirects=follow_redirects)

    async def request(
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
        """Build and send a request, as `Client.request` does.

        >>> (await client.request("PATCH", "/items/1", json={"name": "new"})).status_code
        200
        """
        plain = _hotpath.plain_request(
            self,
            method,
            url,
            content,
            data,
            json,
            files,
            params,
            headers,
            cookies,
            auth,
            timeout,
            extensions,
        )
        if plain is not None:
            return await self._send_plain(plain, follow_redirects)
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
        return await self.send(request, auth=auth, follow_redirects=follow_redirects)

    # `GET`, compiled (`_hotpath.async_client_get`), as `Client.get` is.
    get = _hotpath.async_client_get

    async def options(
        self,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        return await self.request(
            "OPTIONS",
            url,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    async def head(
        self,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        return await self.request(
            "HEAD",
            url,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    async def post(
        self,
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
        """`POST` a body: `await client.post("/items", json={"name": "x"})`."""
        return await self.request(
            "POST",
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    async def put(
        self,
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
        return await self.request(
            "PUT",
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    async def patch(
        self,
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
        return await self.request(
            "PATCH",
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    async def delete(
        self,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        auth: typing.Any = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
        timeout: TimeoutTypes | UseClientDefault = USE_CLIENT_DEFAULT,
        extensions: RequestExtensions | None = None,
    ) -> Response:
        return await self.request(
            "DELETE",
            url,
            params=params,
            headers=headers,
            cookies=cookies,
            auth=auth,
            follow_redirects=follow_redirects,
            timeout=timeout,
            extensions=extensions,
        )

    # -- life cycle --

    async def aclose(self) -> None:
        """Close every transport: connections and engine threads; requests still running
        fail. Idempotent. (Stopping a loop thread takes microseconds: this does not block.)"""
        if not self._closed:
            self._mark_closed()
            for transport in self._transports():
                await transport.aclose()

    async def __aenter__(self) -> AsyncClient:
        self._check_opening()
        for transport in self._transports():
            await transport.__aenter__()
        return self

    async def __aexit__(self, *exc_info: typing.Any) -> None:
        self._mark_closed()
        for transport in self._transports():
            await transport.__aexit__(*exc_info)


# stream()'s arguments as _open_stream takes them, by position: method, url, then
# `request`'s keyword arguments in its order.
_StreamArguments = tuple[typing.Any, ...]


class _StreamContextBase:
    """What `stream()` returns: entering it sends the request and gives the response, leaving
    it closes the response. A class rather than contextlib's managers: their generator and
    wrapper cost a streamed request about a microsecond for nothing, and on asyncio each async
    generator is booked too (a hook, a WeakSet entry added and removed)."""

    __slots__ = ("_client", "_arguments", "_response")

    def __init__(self, client: typing.Any, arguments: _StreamArguments) -> None:
        self._client = client
        self._arguments = arguments
        self._response: Response | None = None

    def _check_not_entered(self) -> None:
        if self._response is not None:
            raise RuntimeError("a stream() context is entered once; call stream() again")


class _StreamContext(_StreamContextBase):
    """What `Client.stream()` returns."""

    __slots__ = ()
    _client: Client

    def __enter__(self) -> Response:
        self._check_not_entered()
        self._response = self._client._open_stream(*self._arguments)
        return self._response

    def __exit__(self, *exc_info: object) -> None:
        if self._response is not None:
            self._response.close()


class _AsyncStreamContext(_StreamContextBase):
    """What `AsyncClient.stream()` returns."""

    __slots__ = ()
    _client: AsyncClient

    async def __aenter__(self) -> Response:
        self._check_not_entered()
        self._response = await self._client._open_stream(*self._arguments)
        return self._response

    async def __aexit__(self, *exc_info: object) -> None:
        if self._response is not None:
            await self._response.aclose()


_CLOSED_FOR_SENDING = "Cannot send a request, as the client has been closed."  # httpx's words

# The request arguments the plain path takes beside the URL (AsyncClient.request's **kwargs).


def _present_as_methods(cls: type, names: tuple[str, ...]) -> None:
    """Compiled methods (`_hotpath.client_get`, ...) named as the methods they are, so that
    help(), reprs and tracebacks say `Client.get`."""
    for name in names:
        function = cls.__dict__[name]
        function.__name__ = name
        function.__qualname__ = f"{cls.__name__}.{name}"
        function.__module__ = "requestx"


_present_as_methods(Client, ("get",))
_present_as_methods(AsyncClient, ("get",))


# The steps of sending that a subclass may override (httpx's clients are subclassed): a client
# whose class overrides any of them never takes the plain path, which would skip them
# (`request` among them because `get` goes to the plain path without calling it).
_SEND_STEPS = ("build_request", "send", "_send_handling_redirects", "_send_single", "request")


def _overrides_no_send_step(cls: type) -> bool:
    base = Client if issubclass(cls, Client) else AsyncClient
    return all(getattr(cls, name) is getattr(base, name) for name in _SEND_STEPS)
