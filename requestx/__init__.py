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
#: are compiled in. Read-only.
__libcurl__ = _MappingProxyType(_libcurl_info())

__title__ = "requestx"
__description__ = "An async-first, httpx-compatible HTTP client on a libcurl C engine."

__all__ = [
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
    "ConnectError",
    "ConnectTimeout",
    "CookieConflict",
    "Cookies",
    "DecodingError",
    "DigestAuth",
    "HTTPError",
    "HTTPStatusError",
    "HTTPTransport",
    "Headers",
    "InvalidURL",
    "Limits",
    "LocalProtocolError",
    "MockTransport",
    "NetRCAuth",
    "NetworkError",
    "PoolTimeout",
    "ProtocolError",
    "Proxy",
    "ProxyError",
    "QueryParams",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Request",
    "RequestError",
    "RequestNotRead",
    "Response",
    "ResponseNotRead",
    "ResponseTooLarge",
    "StreamClosed",
    "StreamConsumed",
    "StreamError",
    "SyncByteStream",
    "Timeout",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "URL",
    "WSGITransport",
    "USE_CLIENT_DEFAULT",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
    "codes",
    "delete",
    "get",
    "head",
    "options",
    "patch",
    "post",
    "put",
    "request",
    "stream",
    "__description__",
    "__title__",
    "__version__",
]
