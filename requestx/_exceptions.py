"""
The exception classes raised by requestx. The names and the tree are httpx's:

* HTTPError
  x RequestError
    + TransportError
      - TimeoutException
        · ConnectTimeout
        · ReadTimeout
        · WriteTimeout
        · PoolTimeout
      - NetworkError
        · ConnectError
        · ReadError
        · WriteError
        · CloseError
      - ProtocolError
        · LocalProtocolError
        · RemoteProtocolError
      - ProxyError
      - UnsupportedProtocol
    + DecodingError
    + TooManyRedirects
    + ResponseTooLarge   (requestx's own: a body over the client's max_body_bytes)
  x HTTPStatusError
* InvalidURL
* CookieConflict
* StreamError
  x StreamConsumed
  x StreamClosed
  x ResponseNotRead
  x RequestNotRead

The C engine reports a failed transfer as a number: a libcurl ``CURLcode`` or one
of requestx's own codes (1000 and up). ``ENGINE_ERRORS`` maps each number to the
most specific class above, and ``exception_for_engine_error`` builds the
exception that the client raises.
"""

from __future__ import annotations

import contextlib
import os
import re
import typing

if typing.TYPE_CHECKING:  # pragma: no cover
    from ._models import Request, Response
    from ._urls import URL

__all__ = [
    "CloseError",
    "ConnectError",
    "ConnectTimeout",
    "CookieConflict",
    "DecodingError",
    "HTTPError",
    "HTTPStatusError",
    "InvalidURL",
    "LocalProtocolError",
    "NetworkError",
    "PoolTimeout",
    "ProtocolError",
    "ProxyError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "RequestError",
    "RequestNotRead",
    "ResponseNotRead",
    "ResponseTooLarge",
    "StreamClosed",
    "StreamConsumed",
    "StreamError",
    "TimeoutException",
    "TooManyRedirects",
    "TransportError",
    "UnsupportedProtocol",
    "WriteError",
    "WriteTimeout",
]


class HTTPError(Exception):
    """
    The common base of `RequestError` and `HTTPStatusError`, so that one
    `except` clause covers both a failed request and `raise_for_status()`:

        try:
            response = requestx.get("https://example.org")
            response.raise_for_status()
        except requestx.HTTPError as exc:
            print(f"{exc.request.url}: {exc}")
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self._request: Request | None = None

    @property
    def request(self) -> Request:
        """The request that failed; RuntimeError if none was attached."""
        if self._request is None:
            raise RuntimeError("No request has been attached to this exception.")
        return self._request

    @request.setter
    def request(self, request: Request) -> None:
        self._request = request


class RequestError(HTTPError):
    """
    A failure while sending a request or receiving its response.

    When the engine reported it, `engine_code` is libcurl's CURLcode or requestx's own code
    (1000 and up), `engine_name` its name (`CURLE_COULDNT_CONNECT`) and `engine_message`
    libcurl's or the engine's own text: for debugging; the message says it in plain words.
    """

    engine_code: int | None = None
    engine_name: str | None = None
    engine_message: str = ""

    def __init__(self, message: str, *, request: Request | None = None) -> None:
        super().__init__(message)
        # Low-level code often raises before it knows the request; the client
        # attaches it on the way out (see `request_context`).
        self._request = request


class TransportError(RequestError):
    """A failure in the transport: connecting, sending, receiving."""


class TimeoutException(TransportError):
    """An operation took longer than its configured timeout."""


class ConnectTimeout(TimeoutException):
    """Connecting to the host (DNS, TCP, TLS handshake) timed out."""


class ReadTimeout(TimeoutException):
    """No data arrived from the host within the read timeout."""


class WriteTimeout(TimeoutException):
    """The request body could not be sent within the write timeout."""


class PoolTimeout(TimeoutException):
    """No connection became free in the pool within the pool timeout."""


class NetworkError(TransportError):
    """A network-level failure."""


class ConnectError(NetworkError):
    """The connection could not be established (DNS, refused, TLS failure...)."""


class ReadError(NetworkError):
    """Receiving data from the network failed."""


class WriteError(NetworkError):
    """Sending data to the network failed."""


class CloseError(NetworkError):
    """Closing the connection failed."""


class ProxyError(TransportError):
    """The proxy could not be reached or refused to relay the request."""


class UnsupportedProtocol(TransportError):
    """The URL scheme is not one requestx can speak (only http and https)."""


class ProtocolError(TransportError):
    """The HTTP protocol was violated."""


class LocalProtocolError(ProtocolError):
    """
    The request itself cannot be sent as valid HTTP, e.g. a header value
    containing a line break.
    """


class RemoteProtocolError(ProtocolError):
    """The server broke the protocol, e.g. closed the connection mid-body."""


class DecodingError(RequestError):
    """The response body could not be decoded (bad gzip, deflate, ...)."""


class TooManyRedirects(RequestError):
    """The redirect chain was longer than `max_redirects`."""


class ResponseTooLarge(RequestError):
    """
    A response body read whole was larger than the client's `max_body_bytes` (httpx has
    no such limit): as it arrived (the engine stops the transfer) or once decoded (the
    decoding stops). A streamed body read piece by piece is never limited.
    """

    @classmethod
    def decoded(cls, limit: int, request: Request | None = None) -> ResponseTooLarge:
        return cls(
            f"The decoded response body is larger than max_body_bytes ({limit} bytes); "
            "iterate over a streamed response (client.stream(...)) to read a body of any "
            "size.",
            request=request,
        )


class HTTPStatusError(HTTPError):
    """A 4xx or 5xx response, raised by `Response.raise_for_status()`."""

    def __init__(self, message: str, *, request: Request, response: Response) -> None:
        super().__init__(message)
        self.request = request
        self.response = response


class InvalidURL(Exception):
    """The URL is malformed or unsafe to send."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class CookieConflict(Exception):
    """A cookie was looked up by name, but several cookies have that name."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class StreamError(RuntimeError):
    """A request or response body was accessed in an order that cannot work."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class StreamConsumed(StreamError):
    """The body was already streamed once and cannot be streamed again."""

    def __init__(self) -> None:
        super().__init__(
            "The content has already been streamed and cannot be read again. "
            "For requests this happens when a generator body meets a redirect or "
            "an authentication retry; for responses, when a body is streamed twice."
        )


class StreamClosed(StreamError):
    """The body was read after its stream had been closed."""

    def __init__(self) -> None:
        super().__init__("Cannot read the content: the stream has been closed.")


class ResponseNotRead(StreamError):
    """`.content` of a streaming response was used before `read()`."""

    def __init__(self) -> None:
        super().__init__("The response content has not been read yet; call `read()` first.")


class RequestNotRead(StreamError):
    """`.content` of a streaming request was used before `read()`."""

    def __init__(self) -> None:
        super().__init__("The request content has not been read yet; call `read()` first.")


@contextlib.contextmanager
def request_context(request: Request | None = None) -> typing.Iterator[None]:
    """Attach `request` to any `RequestError` raised inside the block."""
    try:
        yield
    except RequestError as exc:
        if request is not None:
            exc.request = request
        raise


# --- Engine error codes --------------------------------------------------------------
#
# Each entry: engine code -> (exception class, symbolic name, what went wrong in the user's
# words). The code is a libcurl CURLcode (see curl/curl.h) or one of requestx's own codes
# (1000 and up, defined by the engine). Codes for protocols requestx never enables (FTP,
# TFTP, LDAP, SSH, RTSP...) are left out on purpose: they fall back to TransportError.
# `{peer}` is the host:port the transfer talked to, `{host}` its host.
#
# Choices worth explaining:
# * CURLE_OPERATION_TIMEDOUT is a ConnectTimeout because the engine only lets curl
#   time out the connect phase; read/write/pool timeouts are the engine's own codes.
# * CURLE_URL_MALFORMAT is a LocalProtocolError: by the time curl sees a URL,
#   requestx's URL class has accepted it and the client has checked the scheme, so
#   a rejection by curl means the request could not be put on the wire as given, not
#   that the protocol is unsupported.
# * CURLE_BAD_CONTENT_ENCODING is a DecodingError, which (as in httpx) is a
#   RequestError but not a TransportError.

ENGINE_ERRORS: dict[int, tuple[type[RequestError], str, str]] = {
    1: (UnsupportedProtocol, "CURLE_UNSUPPORTED_PROTOCOL", "unsupported protocol"),
    2: (TransportError, "CURLE_FAILED_INIT", "could not set up the transfer"),
    3: (LocalProtocolError, "CURLE_URL_MALFORMAT", "the URL cannot be sent as given"),
    4: (TransportError, "CURLE_NOT_BUILT_IN", "a feature it needs is not built in"),
    5: (ProxyError, "CURLE_COULDNT_RESOLVE_PROXY", "could not resolve host {host}"),
    6: (ConnectError, "CURLE_COULDNT_RESOLVE_HOST", "could not resolve host {host}"),
    7: (ConnectError, "CURLE_COULDNT_CONNECT", "could not connect to {peer}"),
    8: (RemoteProtocolError, "CURLE_WEIRD_SERVER_REPLY", "{peer} sent a malformed response"),
    16: (RemoteProtocolError, "CURLE_HTTP2", "HTTP/2 protocol error with {peer}"),
    18: (RemoteProtocolError, "CURLE_PARTIAL_FILE", "the response body from {peer} ended early"),
    22: (TransportError, "CURLE_HTTP_RETURNED_ERROR", "{peer} answered with an error status"),
    23: (TransportError, "CURLE_WRITE_ERROR", "could not store the response body"),
    25: (WriteError, "CURLE_UPLOAD_FAILED", "uploading the request body to {peer} failed"),
    26: (TransportError, "CURLE_READ_ERROR", "could not read the request body"),
    27: (TransportError, "CURLE_OUT_OF_MEMORY", "out of memory"),
    28: (ConnectTimeout, "CURLE_OPERATION_TIMEDOUT", "could not connect to {peer} in time"),
    35: (ConnectError, "CURLE_SSL_CONNECT_ERROR", "the TLS handshake with {peer} failed"),
    42: (TransportError, "CURLE_ABORTED_BY_CALLBACK", "the transfer was aborted"),
    43: (TransportError, "CURLE_BAD_FUNCTION_ARGUMENT", "libcurl refused a transfer option"),
    45: (ConnectError, "CURLE_INTERFACE_FAILED", "could not bind the local address"),
    47: (TransportError, "CURLE_TOO_MANY_REDIRECTS", "too many redirects"),
    52: (RemoteProtocolError, "CURLE_GOT_NOTHING", "{peer} closed without answering"),
    53: (TransportError, "CURLE_SSL_ENGINE_NOTFOUND", "TLS crypto engine not found"),
    54: (TransportError, "CURLE_SSL_ENGINE_SETFAILED", "TLS crypto engine unusable"),
    55: (WriteError, "CURLE_SEND_ERROR", "sending the request to {peer} failed"),
    56: (ReadError, "CURLE_RECV_ERROR", "receiving the response from {peer} failed"),
    58: (ConnectError, "CURLE_SSL_CERTPROBLEM", "the client certificate cannot be used"),
    59: (ConnectError, "CURLE_SSL_CIPHER", "no TLS cipher in common with {peer}"),
    60: (ConnectError, "CURLE_PEER_FAILED_VERIFICATION",
         "{peer}'s TLS certificate failed verification"),
    61: (DecodingError, "CURLE_BAD_CONTENT_ENCODING",
         "the body from {peer} fails its Content-Encoding"),
    63: (RemoteProtocolError, "CURLE_FILESIZE_EXCEEDED", "the response from {peer} is too large"),
    64: (ConnectError, "CURLE_USE_SSL_FAILED", "TLS could not be used with {peer}"),
    65: (TransportError, "CURLE_SEND_FAIL_REWIND", "the request body cannot be sent again"),
    66: (TransportError, "CURLE_SSL_ENGINE_INITFAILED", "TLS crypto engine failed to start"),
    67: (TransportError, "CURLE_LOGIN_DENIED", "{peer} denied the login"),
    77: (ConnectError, "CURLE_SSL_CACERT_BADFILE", "could not load the CA certificates"),
    80: (CloseError, "CURLE_SSL_SHUTDOWN_FAILED", "the TLS shutdown with {peer} failed"),
    82: (ConnectError, "CURLE_SSL_CRL_BADFILE", "could not load the CRL file"),
    83: (ConnectError, "CURLE_SSL_ISSUER_ERROR", "the TLS issuer check of {peer} failed"),
    90: (ConnectError, "CURLE_SSL_PINNEDPUBKEYNOTMATCH",
         "{peer}'s public key is not the pinned one"),
    91: (ConnectError, "CURLE_SSL_INVALIDCERTSTATUS", "{peer}'s certificate status is invalid"),
    92: (RemoteProtocolError, "CURLE_HTTP2_STREAM", "{peer} reset the HTTP/2 stream"),
    94: (TransportError, "CURLE_AUTH_ERROR", "an authentication function failed"),
    95: (RemoteProtocolError, "CURLE_HTTP3", "HTTP/3 error with {peer}"),
    96: (ConnectError, "CURLE_QUIC_CONNECT_ERROR", "the QUIC connection to {peer} failed"),
    97: (ProxyError, "CURLE_PROXY", "the proxy handshake failed"),
    98: (ConnectError, "CURLE_SSL_CLIENTCERT", "{peer} requires a client certificate"),
    99: (TransportError, "CURLE_UNRECOVERABLE_POLL", "polling the connection to {peer} failed"),
    # Newer libcurl (bundled in wheels), not in 7.88.
    100: (RemoteProtocolError, "CURLE_TOO_LARGE", "the headers from {peer} are too large"),
    # requestx engine codes. Those whose engine text says more (sizes, limits) use it.
    1000: (TransportError, "CANCELLED", "the request was cancelled"),
    1001: (ReadTimeout, "READ_TIMEOUT", "no response data from {peer} in time"),
    1002: (WriteTimeout, "WRITE_TIMEOUT", "could not send the body to {peer} in time"),
    1003: (PoolTimeout, "POOL_TIMEOUT", "no connection to {peer} became free in time"),
    1004: (TransportError, "NOMEM", "out of memory"),
    1005: (TransportError, "ENGINE_CLOSED", "the client has been closed"),
    1006: (ConnectTimeout, "CONNECT_TIMEOUT", "could not connect to {peer} in time"),
    1007: (RemoteProtocolError, "INCOMPLETE_BODY", "the response body from {peer} ended early"),
    1008: (RemoteProtocolError, "HEADERS_TOO_LARGE", "the headers from {peer} are too large"),
    # The engine re-checks what the Python layer already validated (defence in depth): these
    # reach users only if a value slipped past the models.
    1009: (LocalProtocolError, "INVALID_HEADER", "CR, LF or NUL in a request header"),
    1010: (LocalProtocolError, "INVALID_URL", "control character or space in the URL"),
    1011: (LocalProtocolError, "INVALID_METHOD", "the method is not an HTTP token"),
    1012: (RemoteProtocolError, "BAD_FRAMING", "conflicting Content-Length headers from {peer}"),
    1013: (RemoteProtocolError, "NOT_RESENT", "{peer} closed before any response"),
    1014: (RemoteProtocolError, "BAD_STATUS_LINE", "malformed status line from {peer}"),
    1015: (RemoteProtocolError, "INCOMPLETE_HEADERS", "the headers from {peer} were cut short"),
    1016: (RemoteProtocolError, "BAD_HEADER_LINE", "malformed header line from {peer}"),
    1017: (ResponseTooLarge, "BODY_TOO_LARGE", "the body from {peer} is over max_body_bytes"),
    1018: (ConnectError, "SOCKET_OPTION", "a socket option was refused"),
}  # fmt: skip

# Codes whose engine text is requestx's own and says more than the table (sizes, limits,
# which method): the message is that text.
_ENGINE_TEXT_SAYS_IT = frozenset({1007, 1008, 1012, 1013, 1014, 1015, 1016, 1017, 1018})

# Codes where libcurl's text carries what the TLS library or the system found (an
# OpenSSL verify result, a file name), which the message keeps after the table's words.
_LIBRARY_DETAIL = frozenset({35, 58, 59, 60, 64, 77, 80, 82, 83, 90, 91, 98})

# Values libcurl's text carries that a person needs (which HTTP/2 error the server sent,
# what a proxy answered): code -> pattern; the message adds what the pattern captured.
_VALUES_IN_TEXT: dict[int, re.Pattern[str]] = {
    7: re.compile(r"CONNECT tunnel failed, (response \d{3})"),
    56: re.compile(r"CONNECT tunnel failed, (response \d{3})"),
    16: re.compile(r"error 0x[0-9a-fA-F]+ ([A-Z_]+)|with error \d+: (\w+)"),
    92: re.compile(r"error 0x[0-9a-fA-F]+ ([A-Z_]+)|with error \d+: (\w+)"),
}

# The timeouts, by code: the Timeout field that bounds that phase, and the phase in words
# (for the total timeout, which runs out in whichever phase the transfer is).
_TIMEOUTS: dict[int, tuple[str, str]] = {
    28: ("connect", "connecting to {peer}"),
    1006: ("connect", "connecting to {peer}"),
    1001: ("read", "waiting for response data from {peer}"),
    1002: ("write", "sending the request body to {peer}"),
    1003: ("pool", "waiting for a connection to {peer} from the pool"),
}
_TOTAL_TIMEOUT_TEXT = "the request's total timeout"  # how the engine says it was the total

# libcurl reports some failures under a generic code (CURLE_RECV_ERROR) and only the message
# tells them apart. (code, message prefix) -> more specific class and words. The messages are
# libcurl 7.88's and 8.22's (lib/http_chunks.c, lib/http.c).
_ENGINE_ERRORS_BY_MESSAGE: tuple[tuple[int, str, type[RequestError], str], ...] = (
    (56, "Too large response headers", RemoteProtocolError,
     "the headers from {peer} are too large"),
    # Chunked framing errors are the server's, not the network's.
    (56, "Illegal or missing hexadecimal sequence", RemoteProtocolError,
     "malformed chunked encoding from {peer}"),
    (56, "Malformed encoding found in chunked", RemoteProtocolError,
     "malformed chunked encoding from {peer}"),
    (56, "chunk hex-length", RemoteProtocolError, "malformed chunked encoding from {peer}"),
    (56, "invalid chunk size", RemoteProtocolError, "malformed chunked encoding from {peer}"),
    # The client sends only http(s) URLs (checked before the engine sees them), so libcurl's
    # "unsupported protocol" can only describe the server's status line.
    (1, "Received HTTP/0.9", RemoteProtocolError, "{peer} answered in HTTP/0.9"),
    (1, "Unsupported HTTP version", RemoteProtocolError,
     "{peer} answered in an unsupported HTTP version"),
    (1, "Unsupported HTTP/1 subversion", RemoteProtocolError,
     "{peer} answered in an unsupported HTTP version"),
    (1, "Unsupported response code", RemoteProtocolError,
     "{peer} answered with an unsupported status code"),
    # A proxy that answers a CONNECT with anything but 2xx (libcurl 8.22 says so with
    # COULDNT_CONNECT; older releases with RECV_ERROR).
    (7, "CONNECT tunnel failed", ProxyError, "the proxy refused a tunnel to {peer}"),
    (56, "CONNECT tunnel failed", ProxyError, "the proxy refused a tunnel to {peer}"),
    (56, "Proxy CONNECT aborted", ProxyError, "the proxy closed the tunnel to {peer}"),
    (56, "CONNECT response too large", ProxyError, "the proxy's answer to CONNECT is too large"),
)  # fmt: skip

# The connection to a proxy: failing to reach it is a ProxyError naming the proxy.
_PROXY_CONNECT_CODES = frozenset({5, 6, 7, 28, 1006})


def exception_for_engine_error(
    code: int,
    message: str,
    request: Request,
    *,
    os_errno: int = 0,
    proxy: URL | None = None,
) -> RequestError:
    """
    Build the exception for a transfer that failed with engine error `code`.

    `message` is the engine's text (libcurl's error buffer or requestx's own, may be empty),
    `os_errno` the system's errno behind a failed socket call, `proxy` the proxy the request
    went through. The message says what failed and where, as the user would, with the
    request it was for:

        GET http://127.0.0.1:1/x: could not connect to 127.0.0.1:1: connection refused

    libcurl's code, name and text stay on the exception (`engine_code`, `engine_name`,
    `engine_message`). Unknown codes give a plain TransportError.
    """
    message = message.strip()
    entry = ENGINE_ERRORS.get(code)
    if entry is None:
        cls: type[RequestError] = TransportError
        name, words = "UNKNOWN", f"the transfer failed (engine error {code})"
    else:
        cls, name, words = entry
    refined = _refined_by_message(code, message)
    if refined is not None:
        cls, words = refined
    if code in _TIMEOUTS:
        words = _timeout_words(code, message, request)
    elif code in _ENGINE_TEXT_SAYS_IT and message:
        words = message
    elif code in _LIBRARY_DETAIL and message:
        words = f"{words}: {_library_detail(message)}"
    elif code in _VALUES_IN_TEXT and (found := _VALUES_IN_TEXT[code].search(message)):
        words = f"{words}: {next(value for value in found.groups() if value)}"
    if os_errno:
        words = f"{words}: {os.strerror(os_errno).lower()}"
    url = request.url
    peer = url
    if proxy is not None and code in _PROXY_CONNECT_CODES and refined is None:
        # The connection that failed was the one to the proxy: say so, and name it.
        peer = proxy
        words = words.replace("{peer}", "the proxy {peer}").replace("host {host}", "proxy {host}")
        if cls is ConnectError:  # a connect timeout stays a ConnectTimeout, as in httpx
            cls = ProxyError
    text = words.replace("{peer}", _host_and_port(peer)).replace("{host}", peer.host)
    error = cls(f"{request.method} {_shown_url(url)}: {text}", request=request)
    error.engine_code = code
    error.engine_name = name
    error.engine_message = message
    return error


def _refined_by_message(code: int, message: str) -> tuple[type[RequestError], str] | None:
    """The class and words for a generic code whose message tells the failure apart."""
    for special_code, prefix, cls, words in _ENGINE_ERRORS_BY_MESSAGE:
        if code == special_code and message.startswith(prefix):
            return cls, words
    return None


def _host_and_port(url: URL) -> str:
    host, port = url.host, url.port or _DEFAULT_PORTS.get(url.scheme)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _shown_url(url: URL) -> str:
    """The request's URL for a message: credentials left out."""
    return str(url.copy_with(username=None, password=None)) if url.userinfo else str(url)


def _timeout_words(code: int, message: str, request: Request) -> str:
    """Which timeout ran out, its value, and in which phase."""
    field, phase = _TIMEOUTS[code]
    timeout = request.extensions.get("timeout")
    settings = timeout if isinstance(timeout, dict) else {}
    if message.startswith(_TOTAL_TIMEOUT_TEXT):
        field = "total"
    value = settings.get(field)
    if isinstance(value, (int, float)):
        return f"the {field} timeout ({value:g} s) ran out {phase}"
    return f"the {field} timeout ran out {phase}"


def _library_detail(message: str) -> str:
    """What the TLS library or the system said, without libcurl's framing and OpenSSL's error
    code: "SSL certificate problem: self-signed certificate" -> "self-signed certificate",
    "OpenSSL/3.5.5: error:0A00010B:SSL routines::wrong version number" ->
    "wrong version number"."""
    detail = message
    while True:
        head, sep, rest = detail.partition(": ")
        if not sep or not _LIBCURL_FRAMING(head):
            return _OPENSSL_ERROR_CODE("", detail)
        detail = rest


_LIBCURL_FRAMING = re.compile(
    r"SSL certificate problem|SSL|TLS|OpenSSL/[\d.]+[a-z]?|schannel|SecureTransport|"
    r"TLS connect error"
).fullmatch
_OPENSSL_ERROR_CODE = re.compile(r"^error:[0-9A-Fa-f]+:[^:]*:[^:]*:").sub
