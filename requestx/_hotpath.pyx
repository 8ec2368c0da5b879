"""The steps every request through the engine takes, compiled: its arguments for the
engine (`engine_arguments`), its response from the engine's result (`engine_response`), and
the plain path: which calls may take it (`only_url_and_body`), and the commonest call
(`client.get(url)`, `Client.get` itself being `client_get`) checked, built, sent and
answered in one call (`send_bodiless`).

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
from ._config import USE_CLIENT_DEFAULT as _USE_CLIENT_DEFAULT
from ._models import _METHODS_WITH_BODY, _REDIRECT_CODES, Headers, Request, Response
from ._urls import _RECENT_URLS, url_from_str

cdef object EngineError = _core.EngineError
cdef long MARK_CONTENT_ENCODING = _core.MARK_CONTENT_ENCODING
cdef long MARK_SET_COOKIE = _core.MARK_SET_COOKIE
# The client header fields that take a request off the plain path: the general path decides
# Host and framing.
cdef frozenset HOST_OR_FRAMING = frozenset({b"host", b"content-length", b"transfer-encoding"})
cdef frozenset METHODS_WITH_BODY = _METHODS_WITH_BODY
cdef frozenset REDIRECT_CODES = _REDIRECT_CODES
cdef dict RECENT_URLS = _RECENT_URLS
cdef tuple NO_ARGUMENTS = ()
cdef object USE_CLIENT_DEFAULT = _USE_CLIENT_DEFAULT


cpdef bint only_url_and_body(files, params, headers, cookies, auth, timeout, extensions):
    """Whether a call gave nothing but a URL and perhaps a body (content, data or json): the
    only calls the plain path may take. The one statement of that rule: both clients'
    `request`, `get` and `_open_stream` ask it."""
    return (
        files is None
        and params is None
        and headers is None
        and cookies is None
        and auth is USE_CLIENT_DEFAULT
        and timeout is USE_CLIENT_DEFAULT
        and extensions is None
    )


cpdef plain_url(client, url):
    """The URL of a request that nothing but `client`'s defaults shapes, or None: an
    absolute http(s) URL without credentials, given as a `str`, to a client with no params,
    auth, cookies, hooks or mounts, no headers that set Host or framing (a body's own framing
    headers are then consistent with it by construction), and whose send steps are not
    overridden. None: the caller takes the general path, which would build the same request
    (tests/client/test_plain_path.py)."""
    if type(url) is not str:
        return None
    hooks = client._event_hooks
    if (
        client._direct is None
        or client._mount_routes
        or client._auth is not None
        or client._params._items  # QueryParams.__bool__ without its call
        or hooks["request"]
        or hooks["response"]
        or not client._plain_class
    ):
        return None
    # Cookies._maybe_empty: a CookieJar keeps its cookies in `_cookies`; other jars: no.
    store = getattr(client._cookies.jar, "_cookies", None)
    if type(store) is not dict or store:
        return None
    for entry in _entries(client._headers):
        if (<tuple>entry)[1] in HOST_OR_FRAMING:
            return None
    merged_url = RECENT_URLS.get(url)  # url_from_str's cache, looked in without its call
    if merged_url is None:
        merged_url = url_from_str(url)
    scheme = merged_url._scheme
    if (scheme != "http" and scheme != "https") or not merged_url._host:
        return None  # relative (base_url), unsupported or host-less: the general path
    if merged_url._userinfo:
        return None  # credentials become the auth flow's header
    return merged_url


cpdef plain_request(client, str method, url):
    """`client.build_request(method, url)` for a bodiless method (one of `_PLAIN_METHODS`)
    and a URL `plain_url` takes, or None: what `Request(method, url, headers=client.headers,
    extensions=...)` would build, in one pass. Its headers are Host, then the client's
    header entries (checked once, when set on the client); its only extension the client's
    timeout."""
    merged_url = plain_url(client, url)
    if merged_url is None:
        return None
    return _bodiless_request(client, method, merged_url)


cpdef tuple engine_arguments(transport, request, tuple timeouts):
    """What `transport`'s engine needs for `request`, in Engine.perform/submit's argument
    order (`_EngineTransport._engine_arguments` checks a request first). A streamed body
    (`request._content` None) is not part of it: it is fed separately."""
    method = request.method
    body = request._content
    return (
        method.encode("ascii"),
        _engine_target(request.url),
        _entries(request.headers),
        body if body or method in METHODS_WITH_BODY else None,
        timeouts,
        transport._http_version,
        transport._tls,
        transport._route,
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
    cdef long seen = marks
    if seen & MARK_CONTENT_ENCODING:
        response._decode_engine_body(max_body_bytes)
    if seen & MARK_SET_COOKIE:
        response._sets_cookies = True
    return response


def send_bodiless(client, str method, url, follow_redirects):
    """`client.request(method, url, follow_redirects=follow_redirects)` for a bodiless
    method (one of `_PLAIN_METHODS`) and a URL `plain_url` takes, the whole trip in one
    call, or None: the caller takes the general path (a closed client's RuntimeError
    included). Failures, cookies, a client's own default encoding and redirects go on in
    the client's and transport's Python (`_perform_failed`, `_finish_plain`)."""
    if client._closed:
        return None
    merged_url = plain_url(client, url)
    if merged_url is None:
        return None
    request = _bodiless_request(client, method, merged_url)
    transport = client._direct
    # engine_arguments(transport, request, ...) from what is at hand: reading it back from
    # the request cost 1,300 instructions per request (callgrind).
    arguments = (
        method.encode("ascii"),
        _engine_target(merged_url),
        _entries(request.headers),
        None,
        client._timeout_ms,
        transport._http_version,
        transport._tls,
        transport._route,
    )
    try:
        result = transport._engine.perform(*arguments)
    except EngineError as exc:
        result = transport._perform_failed(exc, request, arguments)  # raises or retries
    response = engine_response(request, result, transport._max_body_bytes)
    if needs_client(client, response):
        return client._finish_plain(request, response, follow_redirects, False)
    return response


cpdef bint needs_client(client, response):
    """Whether a plain-path answer goes on in the client's Python (`_finish_plain`): it sets
    cookies, it may be a redirect, or the client has a default encoding of its own. Most
    answers need none of it and are returned as they are."""
    return (
        response._sets_cookies
        or response.status_code in REDIRECT_CODES
        or client._default_encoding != "utf-8"
    )


cdef _bodiless_request(client, str method, merged_url):
    """`plain_request`'s Request, for a URL `plain_url` took."""
    host = merged_url._host_entry_cache
    if host is None:
        host = merged_url._host_entry()
    entries = [host]
    entries.extend(_entries(client._headers))
    headers = _new(Headers)
    headers._block = None
    headers._list = entries
    headers._encoding = None
    request = _new(Request)
    request.method = method
    request.url = merged_url
    request.headers = headers
    request.extensions = {"timeout": client._timeout_dict}
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
    if only_url_and_body(None, params, headers, cookies, auth, timeout, extensions):
        response = send_bodiless(self, "GET", url, follow_redirects)
        if response is not None:
            return response
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

