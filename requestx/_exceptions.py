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
import typing

if typing.TYPE_CHECKING:  # pragma: no cover
    from ._models import Request, Response

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
    """A failure while sending a request or receiving its response."""

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
# Each entry: engine code -> (exception class, symbolic name, what went wrong).
# The code is a libcurl CURLcode (see curl/curl.h, libcurl 7.88) or one of
# requestx's own codes (1000 and up, defined by the engine). Codes for protocols
# requestx never enables (FTP, TFTP, LDAP, SSH, RTSP...) are left out on purpose:
# they fall back to TransportError.
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
    2: (TransportError, "CURLE_FAILED_INIT", "transfer setup failed"),
    3: (LocalProtocolError, "CURLE_URL_MALFORMAT", "malformed URL"),
    4: (TransportError, "CURLE_NOT_BUILT_IN", "feature not built into libcurl"),
    5: (ProxyError, "CURLE_COULDNT_RESOLVE_PROXY", "could not resolve proxy"),
    6: (ConnectError, "CURLE_COULDNT_RESOLVE_HOST", "could not resolve host"),
    7: (ConnectError, "CURLE_COULDNT_CONNECT", "could not connect to server"),
    8: (RemoteProtocolError, "CURLE_WEIRD_SERVER_REPLY", "malformed server reply"),
    16: (RemoteProtocolError, "CURLE_HTTP2", "HTTP/2 framing error"),
    18: (RemoteProtocolError, "CURLE_PARTIAL_FILE", "response body ended early"),
    22: (TransportError, "CURLE_HTTP_RETURNED_ERROR", "HTTP error status"),
    23: (TransportError, "CURLE_WRITE_ERROR", "could not store the response body"),
    25: (WriteError, "CURLE_UPLOAD_FAILED", "upload failed"),
    26: (TransportError, "CURLE_READ_ERROR", "could not read the request body"),
    27: (TransportError, "CURLE_OUT_OF_MEMORY", "out of memory"),
    28: (ConnectTimeout, "CURLE_OPERATION_TIMEDOUT", "connect timed out"),
    35: (ConnectError, "CURLE_SSL_CONNECT_ERROR", "TLS handshake failed"),
    42: (TransportError, "CURLE_ABORTED_BY_CALLBACK", "transfer aborted"),
    43: (TransportError, "CURLE_BAD_FUNCTION_ARGUMENT", "bad libcurl argument"),
    45: (ConnectError, "CURLE_INTERFACE_FAILED", "could not bind local interface"),
    47: (TransportError, "CURLE_TOO_MANY_REDIRECTS", "too many redirects"),
    52: (RemoteProtocolError, "CURLE_GOT_NOTHING", "server closed without a response"),
    53: (TransportError, "CURLE_SSL_ENGINE_NOTFOUND", "TLS crypto engine not found"),
    54: (TransportError, "CURLE_SSL_ENGINE_SETFAILED", "TLS crypto engine unusable"),
    55: (WriteError, "CURLE_SEND_ERROR", "failed sending data"),
    56: (ReadError, "CURLE_RECV_ERROR", "failed receiving data"),
    58: (ConnectError, "CURLE_SSL_CERTPROBLEM", "problem with the client certificate"),
    59: (ConnectError, "CURLE_SSL_CIPHER", "could not use the TLS cipher"),
    60: (ConnectError, "CURLE_PEER_FAILED_VERIFICATION", "TLS certificate verify failed"),
    61: (DecodingError, "CURLE_BAD_CONTENT_ENCODING", "bad Content-Encoding"),
    63: (RemoteProtocolError, "CURLE_FILESIZE_EXCEEDED", "response exceeds size limit"),
    64: (ConnectError, "CURLE_USE_SSL_FAILED", "TLS could not be used"),
    65: (TransportError, "CURLE_SEND_FAIL_REWIND", "request body cannot be resent"),
    66: (TransportError, "CURLE_SSL_ENGINE_INITFAILED", "TLS crypto engine init failed"),
    67: (TransportError, "CURLE_LOGIN_DENIED", "login denied"),
    77: (ConnectError, "CURLE_SSL_CACERT_BADFILE", "could not load CA certificates"),
    80: (CloseError, "CURLE_SSL_SHUTDOWN_FAILED", "TLS shutdown failed"),
    82: (ConnectError, "CURLE_SSL_CRL_BADFILE", "could not load the CRL file"),
    83: (ConnectError, "CURLE_SSL_ISSUER_ERROR", "TLS issuer check failed"),
    90: (ConnectError, "CURLE_SSL_PINNEDPUBKEYNOTMATCH", "pinned public key mismatch"),
    91: (ConnectError, "CURLE_SSL_INVALIDCERTSTATUS", "invalid certificate status"),
    92: (RemoteProtocolError, "CURLE_HTTP2_STREAM", "HTTP/2 stream error"),
    94: (TransportError, "CURLE_AUTH_ERROR", "authentication function failed"),
    95: (RemoteProtocolError, "CURLE_HTTP3", "HTTP/3 error"),
    96: (ConnectError, "CURLE_QUIC_CONNECT_ERROR", "QUIC connection failed"),
    97: (ProxyError, "CURLE_PROXY", "proxy handshake failed"),
    98: (ConnectError, "CURLE_SSL_CLIENTCERT", "server requires a client certificate"),
    99: (TransportError, "CURLE_UNRECOVERABLE_POLL", "unrecoverable poll error"),
    # Newer libcurl (bundled in wheels), not in 7.88.
    100: (RemoteProtocolError, "CURLE_TOO_LARGE", "response headers too large"),
    # requestx engine codes.
    1000: (TransportError, "CANCELLED", "request cancelled"),
    1001: (ReadTimeout, "READ_TIMEOUT", "read timed out"),
    1002: (WriteTimeout, "WRITE_TIMEOUT", "write timed out"),
    1003: (PoolTimeout, "POOL_TIMEOUT", "timed out waiting for a pooled connection"),
    1004: (TransportError, "NOMEM", "out of memory"),
    1005: (TransportError, "ENGINE_CLOSED", "client has been closed"),
    1006: (ConnectTimeout, "CONNECT_TIMEOUT", "connect timed out"),
    1007: (RemoteProtocolError, "INCOMPLETE_BODY", "response body ended early"),
    1008: (RemoteProtocolError, "HEADERS_TOO_LARGE", "response header block too large"),
    # The engine re-checks what the Python layer already validated (defence in depth): these
    # reach users only if a value slipped past the models.
    1009: (LocalProtocolError, "INVALID_HEADER", "CR, LF or NUL in a request header"),
    1010: (LocalProtocolError, "INVALID_URL", "control character or space in the URL"),
    1011: (LocalProtocolError, "INVALID_METHOD", "method is not an HTTP token"),
    1012: (RemoteProtocolError, "BAD_FRAMING", "conflicting Content-Length headers"),
    1013: (RemoteProtocolError, "NOT_RESENT", "connection lost before any response"),
    1014: (RemoteProtocolError, "BAD_STATUS_LINE", "malformed status line"),
    1015: (RemoteProtocolError, "INCOMPLETE_HEADERS", "response headers cut short"),
    1016: (RemoteProtocolError, "BAD_HEADER_LINE", "malformed header line"),
    1017: (ResponseTooLarge, "BODY_TOO_LARGE", "response body over max_body_bytes"),
    1018: (ConnectError, "SOCKET_OPTION", "a socket option was refused"),
}

# libcurl reports some failures under a generic code (CURLE_RECV_ERROR) and only the message
# tells them apart. (code, message prefix) -> more specific class. The messages are libcurl
# 7.88's and 8.22's (lib/http_chunks.c, lib/http.c).
_ENGINE_ERRORS_BY_MESSAGE: tuple[tuple[int, str, type[RequestError]], ...] = (
    (56, "Too large response headers", RemoteProtocolError),
    # Chunked framing errors are the server's, not the network's.
    (56, "Illegal or missing hexadecimal sequence", RemoteProtocolError),
    (56, "Malformed encoding found in chunked", RemoteProtocolError),
    (56, "chunk hex-length", RemoteProtocolError),
    (56, "invalid chunk size", RemoteProtocolError),
    # The client sends only http(s) URLs (checked before the engine sees them), so libcurl's
    # "unsupported protocol" can only describe the server's status line.
    (1, "Received HTTP/0.9", RemoteProtocolError),
    (1, "Unsupported HTTP version", RemoteProtocolError),
    (1, "Unsupported HTTP/1 subversion", RemoteProtocolError),
    (1, "Unsupported response code", RemoteProtocolError),
    # A proxy that answers a CONNECT with anything but 2xx (libcurl 8.22 says so with
    # COULDNT_CONNECT; older releases with RECV_ERROR).
    (7, "CONNECT tunnel failed", ProxyError),
    (56, "CONNECT tunnel failed", ProxyError),
    (56, "Proxy CONNECT aborted", ProxyError),
    (56, "CONNECT response too large", ProxyError),
)


def exception_for_engine_error(code: int, message: str, request: Request) -> RequestError:
    """
    Build the exception for a transfer that failed with engine error `code`.

    `message` is the engine's text (curl's error buffer, may be empty). The result
    names both, e.g.
    ``ConnectError("Failed to connect to 127.0.0.1 port 1: Connection refused
    [CURLE_COULDNT_CONNECT (7): could not connect to server]")``.
    Unknown codes give a plain TransportError.
    """
    entry = ENGINE_ERRORS.get(code)
    if entry is None:
        cls: type[RequestError] = TransportError
        name, summary = "unknown engine error", "transfer failed"
    else:
        cls, name, summary = entry
        for special_code, prefix, special_cls in _ENGINE_ERRORS_BY_MESSAGE:
            if code == special_code and message.startswith(prefix):
                cls = special_cls
                break
    message = message.strip()
    text = f"{message} [{name} ({code}): {summary}]" if message else f"{summary} [{name} ({code})]"
    return cls(text, request=request)
