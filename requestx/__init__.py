"""requestx: an async-first, httpx-compatible HTTP client on a libcurl C engine.

>>> import requestx as httpx
>>> httpx.get("https://www.example.org/").status_code
200
"""

from types import MappingProxyType as _MappingProxyType

from ._api import delete, get, head, options, patch, post, put, request, stream
from ._asgi import ASGITransport
from ._auth import Auth, BasicAuth, DigestAuth, NetRCAuth
from ._client import USE_CLIENT_DEFAULT, AsyncClient, Client, __version__
from ._config import Limits, Proxy, Timeout
from ._content import AsyncByteStream, ByteStream, SyncByteStream
from ._core import libcurl_info as _libcurl_info
from ._core import platform_info as _platform_info
from ._exceptions import (
    CloseError,
    ConnectError,
    ConnectTimeout,
    CookieConflict,
    DecodingError,
    HTTPError,
    HTTPStatusError,
    InvalidURL,
    LocalProtocolError,
    NetworkError,
    PoolTimeout,
    ProtocolError,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    RequestError,
    RequestNotRead,
    ResponseNotRead,
    ResponseTooLarge,
    StreamClosed,
    StreamConsumed,
    StreamError,
    TimeoutException,
    TooManyRedirects,
    TransportError,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
)
from ._models import Cookies, Headers, Request, Response
from ._status_codes import codes
from ._tls import create_ssl_context
from ._transports import (
    AsyncBaseTransport,
    AsyncHTTPTransport,
    BaseTransport,
    HTTPTransport,
    MockTransport,
)
from ._urls import URL, QueryParams
from ._wsgi import WSGITransport

#: The libcurl the engine is linked with (the bundled, pinned build unless requestx was built
#: with REQUESTX_SYSTEM_LIBCURL=1): version, TLS library, and whether http2, brotli and zstd
#: are compiled in; "patches", the names of requestx's libcurl patches it carries
#: (scripts/libcurl-patches/; empty for stock libcurl: REQUESTX_LIBCURL_PATCHES=0, or a system
#: one), and "debug", whether it is libcurl's debug build (REQUESTX_LIBCURL_DEBUG=1). Read-only.
__libcurl__ = _MappingProxyType(_libcurl_info())

#: The C engine's platform layer: "platform" names the implementation in use ("linux": epoll
#: and eventfd; "posix": poll() and pipes, as on macOS and the BSDs, chosen on Linux with
#: REQUESTX_PLATFORM=posix; "windows"). Read-only.
__engine__ = _MappingProxyType(_platform_info())

__title__ = "requestx"
__description__ = "An async-first, httpx-compatible HTTP client on a libcurl C engine."

__all__ = [  # sorted as httpx sorts its own (its test_all_imports_are_exported checks)
    "__description__",
    "__title__",
    "__version__",
    "ASGITransport",
    "AsyncBaseTransport",
    "AsyncByteStream",
    "AsyncClient",
    "AsyncHTTPTransport",
    "Auth",
    "BaseTransport",
    "BasicAuth",
    "ByteStream",
    "Client",
    "CloseError",
    "codes",
    "ConnectError",
    "ConnectTimeout",
    "CookieConflict",
    "Cookies",
    "create_ssl_context",
    "DecodingError",
    "delete",
    "DigestAuth",
    "get",
    "head",
    "Headers",
    "HTTPError",
    "HTTPStatusError",
    "HTTPTransport",
    "InvalidURL",
    "Limits",
    "LocalProtocolError",
    "MockTransport",
    "NetRCAuth",
    "NetworkError",
    "options",
    "patch",
    "PoolTimeout",
    "post",
    "ProtocolError",
    "Proxy",
    "ProxyError",
    "put",
    "QueryParams",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "request",
    "Request",
    "RequestError",
    "RequestNotRead",
    "Response",
    "ResponseNotRead",
    "ResponseTooLarge",
    "stream",
    "StreamClosed",
    "StreamConsumed",
    "StreamError",
    "SyncByteStream",
    "Timeout",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "UnsupportedProtocol",
    "URL",
    "USE_CLIENT_DEFAULT",
    "WriteError",
    "WriteTimeout",
    "WSGITransport",
]


def _print_as_requestx() -> None:
    """Public classes and functions print as `requestx.X` in tracebacks, reprs and help(), as
    httpx's print as `httpx.X`, not under the private module that defines them."""
    namespace = globals()
    for name in __all__:
        public = namespace[name]
        if isinstance(public, type) or callable(public):
            public.__module__ = "requestx"


_print_as_requestx()
del _print_as_requestx
