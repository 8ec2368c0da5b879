"""The steps every request through the engine takes, compiled, and the client's and
transport's plans they read (declared in _hotpath.pxd): build (`plain_request`), engine
arguments (`engine_arguments`), the engine (`perform`), the response (`engine_response`), the
hand-off to the client (`needs_client`). Which calls may take them without the general path
(`only_url_and_body`, `plain_url`); the blocking client's trip after the build
(`send_plain`); and the rules the rest of the package asks too (`is_sendable`,
`jar_is_empty`, `is_redirect`, `through_stream`, `marks_content_encoding`), each stated
once, here.

Why compiled: a blocking GET spent about 27,000 instructions in the client layer above the
engine call, most of them in the interpreter's loop stepping through a dozen small
functions (docs/performance.md). The same steps compiled keep the same objects and the same
attribute reads and writes and skip the loop: about a third of that layer.

Objects are made as `cls.__new__(cls)` and given the attributes their `__init__` would
give them (a `Response` only those that differ from its class-level defaults);
tests/client/test_plain_path.py holds what the plain path builds to what the general path does.
"""

cimport cython
from cpython.object cimport PyObject, PyTypeObject

from . import _core
from ._default_headers cimport add_default_headers
from ._config import USE_CLIENT_DEFAULT as _USE_CLIENT_DEFAULT
from ._framing import FRAMING_FIELDS, METHODS_WITH_BODY as _METHODS_WITH_BODY
from ._models import _COMMON_METHODS, _REDIRECT_CODES, Headers, Request, Response
from ._urls import _RECENT_URLS, url_from_str

cdef object EngineError = _core.EngineError
cdef long MARK_CONTENT_ENCODING = _core.MARK_CONTENT_ENCODING
cdef long MARK_SET_COOKIE = _core.MARK_SET_COOKIE
# The client header fields that take a request off the plain path: the general path decides
# Host and framing.
cdef frozenset HOST_OR_FRAMING = FRAMING_FIELDS | {b"host"}
cdef frozenset METHODS_WITH_BODY = _METHODS_WITH_BODY
cdef frozenset COMMON_METHODS = _COMMON_METHODS
cdef frozenset REDIRECT_CODES = _REDIRECT_CODES
cdef dict RECENT_URLS = _RECENT_URLS
cdef tuple NO_ARGUMENTS = ()
cdef object USE_CLIENT_DEFAULT = _USE_CLIENT_DEFAULT


# --- The plans: what requests read from their client and transport -----------------------


cdef class EnginePlan:
    def __init__(self, engine, int http_version, tls, route, max_body_bytes):
        self.engine = engine
        self.http_version = http_version
        self.tls = tls
        self.route = route
        self.max_body_bytes = max_body_bytes


cdef class ClientPlan:
    pass


cpdef ClientPlan plan_for(client):
    """`client`'s plan as it is configured now. The plain path is open to a client that
    sends through its own engine transport with no mounts, auth or params, that is not
    closed, and whose class overrides none of the send steps; per request, `plain_url` also
    asks for no event hooks, an empty cookie jar and no client header that sets Host or
    framing (those can change in place)."""
    cdef ClientPlan plan = ClientPlan.__new__(ClientPlan)
    transport = client._direct
    plan.transport = transport
    plan.engine_plan = transport._plan if transport is not None else None
    plan.plain = bool(
        transport is not None
        and not client._mount_routes
        and client._auth is None
        and not client._params
        and client._plain_class
        and not client._closed
    )
    plan.timeout_ms = client._timeout_ms
    plan.timeout_dict = client._timeout_dict
    plan.headers = client._headers
    hooks = client._event_hooks
    plan.request_hooks = hooks["request"]
    plan.response_hooks = hooks["response"]
    plan.cookie_jar = client._cookies.jar
    plan.custom_encoding = client._default_encoding != "utf-8"
    return plan


# --- The rules, each stated once -----------------------------------------------------------


cdef inline bint only_url_and_body(files, params, headers, cookies, auth, timeout, extensions):
    """Whether a call gave nothing but a URL and perhaps a body (content, data or json): the
    only calls the plain path may take (`plain_request` asks)."""
    return (
        files is None
        and params is None
        and headers is None
        and cookies is None
        and auth is USE_CLIENT_DEFAULT
        and timeout is USE_CLIENT_DEFAULT
        and extensions is None
    )


cpdef bint is_sendable(url):
    """Whether the engine may be given `url`: http or https, with a host (never file://,
    ftp://, ...). `_transports._enforce_http_url` says why not, for the rest."""
    scheme = url._scheme
    return (scheme == "http" or scheme == "https") and bool(url._host)


cpdef bint jar_is_empty(jar):
    """Whether a cookie jar is certainly empty, without iterating it: the standard library's
    CookieJar keeps its cookies in `_cookies` (domain -> path -> name). Other jars: not
    known, so False."""
    store = getattr(jar, "_cookies", None)
    return type(store) is dict and not store


cpdef bint is_redirect(response):
    """Whether `response` is a redirect a client can follow: a redirect status with a
    Location (`Response.has_redirect_location`)."""
    return response.status_code in REDIRECT_CODES and "location" in response.headers


cpdef bint through_stream(request, bint stream):
    """Whether `request` goes through the engine's stream interface rather than one
    perform/submit: its response is streamed, or its body is fed as it is read
    (`request._content` None)."""
    return stream or request._content is None


cpdef bint marks_content_encoding(response, long marks):
    """Give `response` what the engine's header marks say about it (it sets cookies); whether
    its body has a Content-Encoding to undo."""
    if marks & MARK_SET_COOKIE:
        response._sets_cookies = True
    return marks & MARK_CONTENT_ENCODING != 0


# --- The plain path: build, engine arguments, response, hand-off ---------------------------


cpdef plain_url(ClientPlan plan, url):
    """The URL of a request that nothing but its client's defaults shapes, or None: an
    absolute http(s) URL without credentials, given as a `str`, to a client its plan opens
    the plain path to, with no event hooks, no cookies and no header that sets Host or
    framing (a body's own framing headers are then consistent with it by construction).
    None: the caller takes the general path, which would build the same request
    (tests/client/test_plain_path.py)."""
    if type(url) is not str or not plan.plain or plan.request_hooks or plan.response_hooks:
        return None
    if not jar_is_empty(plan.cookie_jar):
        return None
    for entry in _entries(plan.headers):
        if (<tuple>entry)[1] in HOST_OR_FRAMING:
            return None
    merged_url = RECENT_URLS.get(url)  # url_from_str's cache, looked in without its call
    if merged_url is None:
        merged_url = url_from_str(url)
    if not is_sendable(merged_url):
        return None  # relative (base_url), unsupported or host-less: the general path
    if merged_url._userinfo:
        return None  # credentials become the auth flow's header
    return merged_url


cpdef plain_request(
    client,
    method,
    url,
    content=None,
    data=None,
    json=None,
    files=None,
    params=None,
    headers=None,
    cookies=None,
    auth=USE_CLIENT_DEFAULT,
    timeout=USE_CLIENT_DEFAULT,
    extensions=None,
):
    """The plain path's request: what `client.build_request(...)` would build with these
    arguments, when the call gave nothing but a URL and perhaps a body
    (`only_url_and_body`) and `plain_url` takes the URL; else None (the caller takes the
    general path). A bodiless request with a common method is made here, its headers by
    the rule every request follows (`add_default_headers`); the rest by `Request(...)`."""
    if not only_url_and_body(files, params, headers, cookies, auth, timeout, extensions):
        return None
    cdef ClientPlan plan = client._plan
    merged_url = plain_url(plan, url)
    if merged_url is None:
        return None
    if content is None and data is None and json is None and method in COMMON_METHODS:
        return _bodiless_request(plan, method, merged_url)
    return Request(
        method,
        merged_url,
        content=content,
        data=data,
        json=json,
        headers=plan.headers,
        extensions={"timeout": plan.timeout_dict},
    )


cpdef tuple engine_arguments(EnginePlan engine, request, tuple timeouts):
    """What the engine needs for `request`, in Engine.perform/submit's argument order
    (`_EngineTransport._engine_arguments` checks a request first). A streamed body
    (`request._content` None) is not part of it: it is fed separately."""
    method = request.method
    body = request._content
    return (
        method.encode("ascii"),
        _engine_target(request.url),
        _entries(request.headers),
        body if body or method in METHODS_WITH_BODY else None,
        timeouts,
        engine.http_version,
        engine.tls,
        engine.route,
    )


cpdef engine_response(request, tuple result, max_body_bytes):
    """The response for a finished transfer's `result` (Engine.perform's tuple), built
    without running `__init__`: the body stays in the engine's buffer (exported through
    the buffer protocol) unless it has a Content-Encoding to undo, to at most
    `max_body_bytes`. Decoding and cookies are skipped unless the engine saw their header
    fields arrive (most responses need neither)."""
    status, version, raw_headers, body, elapsed, marks = result
    response = _new(Response)
    response.status_code = status
    response._request = request
    response._http_version = version
    response._raw_headers = raw_headers
    response._body = body
    response._elapsed = elapsed
    if marks_content_encoding(response, marks):
        response._decode_engine_body(max_body_bytes)
    return response


cpdef send_plain(client, request, follow_redirects, bint stream):
    """A blocking client's plain request after its build step (`plain_request`): to the
    engine (`perform`; a streamed body or response through the transport's stream), then
    the hand-off (`needs_client`, `_finish_plain`)."""
    cdef ClientPlan plan = client._plan
    if through_stream(request, stream):
        response = plan.transport._send_plain(request, plan.timeout_ms, stream)
    else:
        response = perform(plan.engine_plan, plan.transport, request, plan.timeout_ms)
    if needs_client(plan, response):
        return client._finish_plain(request, response, follow_redirects, stream)
    return response


cpdef perform(EnginePlan engine, transport, request, tuple timeouts):
    """A blocking transport's trip through the engine for a request whose body is in memory:
    its arguments, `Engine.perform` (the GIL released while it waits), and the response.
    Failures go to `transport._perform_failed` (retries, or the exception raised)."""
    arguments = engine_arguments(engine, request, timeouts)
    try:
        result = engine.engine.perform(*arguments)
    except EngineError as exc:
        result = transport._perform_failed(exc, request, arguments)
    return engine_response(request, result, engine.max_body_bytes)


cpdef bint needs_client(ClientPlan plan, response):
    """Whether a plain-path answer goes on in the client's Python (`_finish_plain`): it sets
    cookies, it is a redirect, or the client has a default encoding of its own. Most
    answers need none of it and are returned as they are."""
    return response._sets_cookies or plan.custom_encoding or is_redirect(response)


cdef _bodiless_request(ClientPlan plan, method, merged_url):
    """`plain_request`'s Request without a body, for a URL `plain_url` took: what
    `Request.__init__` makes of the same arguments, without its Python code."""
    entries = list(_entries(plan.headers))
    add_default_headers(entries, method, merged_url, NO_ARGUMENTS)
    headers = _new(Headers)
    headers._block = None
    headers._list = entries
    headers._encoding = None
    request = _new(Request)
    request.method = method
    request.url = merged_url
    request.headers = headers
    request.extensions = {"timeout": plan.timeout_dict}
    request._content = b""
    request._stream = None
    return request


cdef bytes _engine_target(url):
    """`URL._engine_target()` without its call once the URL has made it."""
    target = url._engine_target_cache
    if target is None:
        target = url._engine_target()  # without credentials: see build_request_auth
    return target


cdef list _entries(headers):
    """`Headers._entries()` without its call when the entries are parsed already."""
    entries = headers._list
    if entries is None:
        entries = headers._entries()
    return entries


cdef inline _new(cls):
    """`cls.__new__(cls)` called in C: the object without its `__init__` (the classes made
    here take `object.__new__`, which ignores arguments)."""
    return (<PyTypeObject*>cls).tp_new(<type>cls, <PyObject*>NO_ARGUMENTS, NULL)


@cython.embedsignature(False)  # help() shows the signature itself; no second copy in the text
def client_get(
    self,
    url,
    *,
    params=None,
    headers=None,
    cookies=None,
    auth=_USE_CLIENT_DEFAULT,
    follow_redirects=_USE_CLIENT_DEFAULT,
    timeout=_USE_CLIENT_DEFAULT,
    extensions=None,
):
    """`GET` a URL: `client.get("/items", params={"page": 2})`.

    `Client.get` itself, compiled: its keyword-only defaults are filled in C, where a Python
    method looks each one up by name on every call (about 800 instructions for seven).
    """
    request = plain_request(self, "GET", url, None, None, None, None, params, headers, cookies, auth, timeout, extensions)
    if request is not None:
        return send_plain(self, request, follow_redirects, False)
    return self.request(
        "GET",
        url,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        follow_redirects=follow_redirects,
        timeout=timeout,
        extensions=extensions,
    )


@cython.embedsignature(False)
async def async_client_get(
    self,
    url,
    *,
    params=None,
    headers=None,
    cookies=None,
    auth=_USE_CLIENT_DEFAULT,
    follow_redirects=_USE_CLIENT_DEFAULT,
    timeout=_USE_CLIENT_DEFAULT,
    extensions=None,
):
    """`GET` a URL: `await client.get("/items", params={"page": 2})`.

    `AsyncClient.get` itself, compiled, as `client_get` is `Client.get`: a coroutine whose
    keyword-only defaults are filled in C (about 900 instructions per request on asyncio).
    The plain request's steps are `AsyncClient._send_plain`'s, inlined: a coroutine fewer.
    """
    request = plain_request(
        self, "GET", url, None, None, None, None, params, headers, cookies, auth, timeout, extensions
    )
    if request is not None:
        plan = self._plan
        response = await plan.transport._send_plain(request, plan.timeout_ms, False)
        if needs_client(plan, response):
            return await self._finish_plain(request, response, follow_redirects, False)
        return response
    return await self.request(
        "GET",
        url,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        follow_redirects=follow_redirects,
        timeout=timeout,
        extensions=extensions,
    )
