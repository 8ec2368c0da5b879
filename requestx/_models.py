"""
`Headers`, `Request`, `Response` and `Cookies`, with httpx's API.

Two paths matter for speed and are kept short:

* `Headers._from_raw_block` keeps the raw header block libcurl captured and parses
  it on first use; many responses are never asked for a header.
* `_hotpath.engine_response` (compiled) builds a response from what the engine hands
  over without running `__init__`: the body stays in the engine's buffer (exported
  through the buffer protocol) until `.content` copies it once or `.json()`
  parses it in place.

Header names and values given by the user are checked: CR, LF and NUL (and in
names also ":", space, tab) raise `LocalProtocolError`, because libcurl would put
them on the wire as-is and split one header into several (header injection).
"""

from __future__ import annotations

import codecs
import datetime
import email.message
import json as jsonlib
import re
import time
import typing
import urllib.request
from collections.abc import AsyncIterable, Iterable, Mapping
from http.cookiejar import Cookie, CookieJar

import orjson

from ._content import ByteStream, encode_request, encode_response
from ._decoders import (
    ByteChunker,
    ContentDecoder,
    IdentityDecoder,
    LimitedJoin,
    LineDecoder,
    TextChunker,
    TextDecoder,
    decode_all,
    decoder_for,
)
from ._default_headers import add_default_headers
from ._exceptions import (
    CookieConflict,
    DecodingError,
    HTTPStatusError,
    LocalProtocolError,
    RequestNotRead,
    ResponseNotRead,
    ResponseTooLarge,
    StreamClosed,
    StreamConsumed,
)
from ._framing import CONTENT_LENGTH, TRANSFER_ENCODING
from ._status_codes import codes
from ._types import (
    CookieTypes,
    HeaderTypes,
    QueryParamTypes,
    RequestContent,
    RequestData,
    RequestExtensions,
    RequestFiles,
    ResponseContent,
    ResponseExtensions,
)
from ._urls import URL

__all__ = ["Cookies", "Headers", "Request", "Response"]

# --- Headers -------------------------------------------------------------------------

# (name as given, lower-cased name, value)
_Entry = typing.Tuple[bytes, bytes, bytes]

_SENSITIVE_HEADERS = frozenset({"authorization", "proxy-authorization"})

# A header name must not contain anything that changes where a header line
# starts or ends, or where its name ends.
_BAD_NAME_CHAR = re.compile(rb"[\x00\r\n:\t ]").search
_BAD_VALUE_CHAR = re.compile(rb"[\x00\r\n]").search


def _to_header_bytes(value: str | bytes, encoding: str | None, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode(encoding or "ascii")
    raise TypeError(f"Header {what} must be str or bytes, not {type(value)}")


def _checked_entry(name: bytes, value: bytes) -> _Entry:
    if not name or _BAD_NAME_CHAR(name):
        raise LocalProtocolError(f"Invalid header name {name!r}")
    if _BAD_VALUE_CHAR(value):
        raise LocalProtocolError(
            f"Invalid header value {value!r} for {name!r}: CR, LF and NUL are not allowed"
        )
    return (name, name.lower(), value)


def _parse_header_block(block: bytes) -> list[_Entry]:
    """
    Parse a raw header block as libcurl delivers it:

        b"HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nX-A:  1 \\r\\n\\r\\n"

    Status lines are skipped. If the block holds several responses (1xx interim
    responses, a proxy's CONNECT reply), only the last one's headers are kept.
    Lines after the final blank line (chunked trailers) are ignored, as httpx does.
    Continuation lines (obsolete folding) join the previous value with one space;
    whitespace around values is removed; names are kept exactly as sent. Lines
    end at LF (a CR before it is dropped); a lone CR does not end a line.
    """
    lines = block.split(b"\n")
    if lines[0].startswith(b"HTTP/"):
        del lines[0]
    entries: list[_Entry] = []
    ended = False  # seen the blank line that ends a response's headers
    for line in lines:
        name, colon, value = line.partition(b":")
        # The common case first and cheaply: a "Name: value" line.
        if colon and not ended and line[0] not in (32, 9):
            entries.append((name, name.lower(), value.strip(b" \t\r")))
            continue
        line = line.rstrip(b"\r")
        if not line:
            ended = True
        elif line.startswith(b"HTTP/"):
            entries = []  # the next response: what came before was an interim one
            ended = False
        elif ended:
            break
        elif line[0] in (32, 9) and entries:
            first_name, lower, first_value = entries[-1]
            folded = line.strip(b" \t\r")  # as a value's first line is stripped
            if folded:  # a line of whitespace adds nothing (not even a space)
                joined = first_value + b" " + folded if first_value else folded
                entries[-1] = (first_name, lower, joined)
        # Anything else (no colon) is not a header line: skipped.
    return entries


def _final_reason_phrase(block: bytes) -> bytes:
    """The reason phrase of the last status line in a raw header block (maybe b"")."""
    start = block.rfind(b"\nHTTP/") + 1  # 0 if the block's first line is the only one
    end = block.find(b"\n", start)
    line = block[start:] if end == -1 else block[start:end]
    if not line.startswith(b"HTTP/"):
        return b""
    parts = line.split(b" ", 2)
    return parts[2].strip() if len(parts) == 3 else b""


def _detect_encoding(entries: list[_Entry]) -> str:
    """ASCII if everything is, else UTF-8 if everything decodes, else Latin-1."""
    if all(name.isascii() and value.isascii() for name, _, value in entries):
        return "ascii"
    try:
        for name, _, value in entries:
            name.decode("utf-8")
            value.decode("utf-8")
    except UnicodeDecodeError:
        return "iso-8859-1"  # decodes any byte
    return "utf-8"


class Headers(typing.MutableMapping[str, str]):
    """
    HTTP headers: a case-insensitive, ordered multi-dict.

        >>> h = Headers([("Accept", "text/html"), ("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
        >>> h["accept"], h["Set-Cookie"], h.get_list("set-cookie")
        ('text/html', 'a=1, b=2', ['a=1', 'b=2'])
        >>> h.raw[0]
        (b'Accept', b'text/html')
        >>> h["X-A"] = "1\\r\\nX-Injected: 1"
        Traceback (most recent call last):
        ...
        requestx.LocalProtocolError: Invalid header value ...

    Keys are returned lower-cased; `raw` keeps the original case. Values of a
    repeated key are joined with ", " by `[]`, `get`, `values` and `items`.
    """

    __slots__ = ("_block", "_encoding", "_list")

    _list: list[_Entry] | None  # None until the raw block is parsed
    _block: bytes | None
    _encoding: str | None

    def __init__(self, headers: HeaderTypes | None = None, encoding: str | None = None) -> None:
        self._block = None
        self._encoding = encoding
        if headers is None:
            self._list = []
        elif isinstance(headers, Headers):
            self._list = None if headers._list is None else list(headers._list)
            self._block = headers._block
        else:
            items: typing.Iterable[typing.Any]
            items = headers.items() if isinstance(headers, Mapping) else headers
            self._list = [
                _checked_entry(
                    _to_header_bytes(key, encoding, "name"),
                    _to_header_bytes(value, encoding, "value"),
                )
                for key, value in items
            ]

    @classmethod
    def _from_raw_block(cls, block: bytes) -> Headers:
        """Headers from a raw response header block, parsed on first use."""
        headers = cls.__new__(cls)
        headers._block = block
        headers._list = None
        headers._encoding = None
        return headers

    @classmethod
    def _from_trusted_list(cls, items: typing.Iterable[tuple[bytes, bytes]]) -> Headers:
        """Headers from (name, value) bytes pairs that are known to be valid."""
        headers = cls.__new__(cls)
        headers._block = None
        headers._list = [(name, name.lower(), value) for name, value in items]
        headers._encoding = None
        return headers

    @classmethod
    def _from_entries(cls, entries: list[_Entry]) -> Headers:
        """Headers that take `entries` (checked, lower-cased names beside) as they are."""
        headers = cls.__new__(cls)
        headers._block = None
        headers._list = entries
        headers._encoding = None
        return headers

    def _entries(self) -> list[_Entry]:
        entries = self._list
        if entries is None:
            entries = self._list = _parse_header_block(self._block or b"")
            self._block = None
        return entries

    def _lookup_key(self, key: str | bytes) -> bytes | None:
        """`key` lower-cased in our encoding; None if it cannot be encoded (no match)."""
        if isinstance(key, bytes):
            return key.lower()
        try:
            return key.lower().encode(self._encoding or self.encoding)
        except (UnicodeEncodeError, AttributeError):
            return None

    def _has(self, lower_name: bytes) -> bool:
        # A plain loop: on the request hot path it beats any() over a generator.
        for entry in self._entries():  # noqa: SIM110
            if entry[1] == lower_name:
                return True
        return False

    @property
    def encoding(self) -> str:
        """
        How names and values are decoded: "ascii", else "utf-8", else "iso-8859-1",
        whichever first decodes every header. Settable.
        """
        if self._encoding is None:
            if self._list is None and self._block is not None and self._block.isascii():
                self._encoding = "ascii"
            else:
                self._encoding = _detect_encoding(self._entries())
        return self._encoding

    @encoding.setter
    def encoding(self, value: str) -> None:
        self._encoding = value

    @property
    def raw(self) -> list[tuple[bytes, bytes]]:
        """All (name, value) pairs as bytes, names in their original case."""
        return [(name, value) for name, _, value in self._entries()]

    def keys(self) -> typing.KeysView[str]:
        encoding = self.encoding
        return {lower.decode(encoding): None for _, lower, _ in self._entries()}.keys()

    def values(self) -> typing.ValuesView[str]:
        return self._joined().values()

    def items(self) -> typing.ItemsView[str, str]:
        """(lower-cased name, value) pairs; repeated names have their values joined."""
        return self._joined().items()

    def _joined(self) -> dict[str, str]:
        encoding = self.encoding
        joined: dict[str, str] = {}
        for _, lower, value in self._entries():
            key, text = lower.decode(encoding), value.decode(encoding)
            joined[key] = f"{joined[key]}, {text}" if key in joined else text
        return joined

    def multi_items(self) -> list[tuple[str, str]]:
        """Every (lower-cased name, value) pair, repeated names included."""
        encoding = self.encoding
        return [
            (lower.decode(encoding), value.decode(encoding)) for _, lower, value in self._entries()
        ]

    def get(self, key: str, default: typing.Any = None) -> typing.Any:
        """The value of `key` (repeated values joined with ", "), or `default`."""
        lookup = self._lookup_key(key)
        values = [value for _, lower, value in self._entries() if lower == lookup]
        if not values:
            return default
        encoding = self._encoding or self.encoding
        if len(values) == 1:
            return values[0].decode(encoding)
        return ", ".join([value.decode(encoding) for value in values])

    def get_list(self, key: str, split_commas: bool = False) -> list[str]:
        """
        Every value of `key`, in order. With `split_commas=True`, comma-separated
        values are split and stripped too.
        """
        lookup = self._lookup_key(key)
        encoding = self.encoding
        values = [value.decode(encoding) for _, lower, value in self._entries() if lower == lookup]
        if not split_commas:
            return values
        return [part.strip() for value in values for part in value.split(",")]

    def update(self, headers: HeaderTypes | None = None) -> None:  # type: ignore[override]
        """Replace the values of every key in `headers` (all of their occurrences)."""
        other = Headers(headers)
        other_entries = other._entries()
        replaced = {lower for _, lower, _ in other_entries}
        entries = self._entries()
        entries[:] = [entry for entry in entries if entry[1] not in replaced]
        entries.extend(other_entries)

    def copy(self) -> Headers:
        return Headers(self, encoding=self._encoding)

    def __getitem__(self, key: str) -> str:
        value: str | None = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: str) -> None:
        """Set `key` to `value`: replaces the first occurrence, drops the others."""
        encoding = self._encoding or "utf-8"
        name, _, new_value = _checked_entry(
            _to_header_bytes(key, encoding, "name"), _to_header_bytes(value, encoding, "value")
        )
        lower = name.lower()
        entries = self._entries()
        new_entries: list[_Entry] = []
        placed = False
        for entry in entries:
            if entry[1] != lower:
                new_entries.append(entry)
            elif not placed:
                new_entries.append((name, lower, new_value))
                placed = True
        if not placed:
            new_entries.append((name, lower, new_value))
        entries[:] = new_entries

    def __delitem__(self, key: str) -> None:
        lookup = self._lookup_key(key)
        entries = self._entries()
        kept = [entry for entry in entries if entry[1] != lookup]
        if len(kept) == len(entries):
            raise KeyError(key)
        entries[:] = kept

    def __contains__(self, key: typing.Any) -> bool:
        lookup = self._lookup_key(key)
        return lookup is not None and self._has(lookup)

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        """The number of header lines (a repeated name counts each time)."""
        return len(self._entries())

    def __eq__(self, other: object) -> bool:
        try:
            other_headers = other if isinstance(other, Headers) else Headers(other)  # type: ignore[arg-type]
        except (TypeError, ValueError, LocalProtocolError, AttributeError):
            return False
        mine = sorted((lower, value) for _, lower, value in self._entries())
        theirs = sorted((lower, value) for _, lower, value in other_headers._entries())
        return mine == theirs

    def __repr__(self) -> str:
        items = [
            (key, "[secure]" if key in _SENSITIVE_HEADERS else value)
            for key, value in self.multi_items()
        ]
        encoding = "" if self.encoding == "ascii" else f", encoding={self.encoding!r}"
        as_dict = dict(items)
        shown: object = as_dict if len(as_dict) == len(items) else items
        return f"{self.__class__.__name__}({shown!r}{encoding})"


# --- Request -------------------------------------------------------------------------

_COMMON_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+").fullmatch


class _UnattachedStream:
    """The body of an unpickled streaming request or response: gone for good."""

    def __iter__(self) -> typing.Iterator[bytes]:
        raise StreamClosed()

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        raise StreamClosed()
        yield b""  # pragma: no cover  # makes this an async generator


def _multipart_boundary(headers: Headers) -> bytes | None:
    """The boundary the caller chose in a multipart/form-data Content-Type, if any."""
    content_type: str | None = headers.get("content-type")
    if content_type is None or not content_type.lower().startswith("multipart/form-data"):
        return None
    for param in content_type.split(";")[1:]:
        key, _, value = param.strip().partition("=")
        if key.lower() == "boundary" and value:
            return value.strip('"').encode("latin-1")
    return None


class Request:
    """
    An HTTP request.

        >>> request = Request("POST", "https://example.org/items", json={"a": 1})
        >>> request.headers
        Headers({'host': 'example.org', 'content-length': '7', 'content-type': 'application/json'})
        >>> request.content
        b'{"a":1}'

    `params` are added to the URL's query string (a key in both takes the value
    from `params`), as in `Client.build_request`. Host, Content-Length and
    Content-Type are filled in unless given; a method that is not an HTTP
    token raises `LocalProtocolError`.
    """

    method: str
    url: URL
    headers: Headers
    extensions: dict[str, typing.Any]
    _content: bytes | None
    _stream: typing.Any

    def __init__(
        self,
        method: str,
        url: URL | str,
        *,
        params: QueryParamTypes | None = None,
        headers: HeaderTypes | None = None,
        cookies: CookieTypes | None = None,
        content: RequestContent | None = None,
        data: RequestData | None = None,
        files: RequestFiles | None = None,
        json: typing.Any | None = None,
        stream: typing.Any = None,
        extensions: RequestExtensions | None = None,
    ) -> None:
        if method not in _COMMON_METHODS:
            if isinstance(method, bytes):
                method = method.decode("ascii")
            method = method.upper()
            if not _TOKEN(method):
                raise LocalProtocolError(f"Invalid HTTP method {method!r}")
        self.method = method
        if params is not None:
            # The one rule for params= everywhere (Client.build_request, every method): added
            # to the URL's query, never replacing it (docs/differences.md, "URL details").
            self.url = (url if isinstance(url, URL) else URL(url)).copy_merge_params(params)
        else:
            # URL is immutable, so a URL argument is shared rather than copied.
            self.url = url if isinstance(url, URL) else URL(url)
        self.headers = Headers(headers)
        self.extensions = {} if extensions is None else dict(extensions)
        if cookies:
            Cookies(cookies).set_cookie_header(self)
        if stream is not None:
            # An explicit stream (redirect copies, server side): no automatic headers.
            self._content = None
            self._stream = stream
            return
        self._stream = None
        if content is None and data is None and files is None and json is None:
            self._content = b""  # the common bodiless request: skip the encoder
            body_headers: typing.Iterable[tuple[bytes, bytes]] = ()
        else:
            boundary = _multipart_boundary(self.headers) if files else None
            body_headers, body = encode_request(
                content=content, data=data, files=files, json=json, boundary=boundary
            )
            if body is None or isinstance(body, bytes):
                self._content = b"" if body is None else body
            else:
                self._content = None  # a stream, fed to the engine as the request runs
                self._stream = body
        add_default_headers(self.headers._entries(), method, self.url, body_headers)

    @property
    def content(self) -> bytes:
        """The body; `RequestNotRead` for a stream not yet read."""
        if self._content is None:
            raise RequestNotRead()
        return self._content

    @property
    def stream(self) -> typing.Any:
        """The body as an iterable of bytes chunks (sync and async)."""
        if self._stream is None:
            self._stream = ByteStream(self._content or b"")
        return self._stream

    @stream.setter
    def stream(self, value: typing.Any) -> None:
        self._stream = value

    def read(self) -> bytes:
        """Read a streaming body into memory and return it."""
        if self._content is None:
            self._content = b"".join(self._stream)
            self._stream = None  # the bytes can be replayed; the iterator maybe not
        return self._content

    async def aread(self) -> bytes:
        """Read a streaming body into memory and return it."""
        if self._content is None:
            self._content = b"".join([chunk async for chunk in self._stream])
            self._stream = None
        return self._content

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}({self.method!r}, {str(self.url)!r})>"

    def __getstate__(self) -> dict[str, typing.Any]:
        # Extensions and streams belong to one process; httpx drops them too.
        return {k: v for k, v in self.__dict__.items() if k not in ("extensions", "_stream")}

    def __setstate__(self, state: dict[str, typing.Any]) -> None:
        self.__dict__.update(state)
        self.extensions = {}
        self._stream = None if self._content is not None else _UnattachedStream()


# --- Response ------------------------------------------------------------------------


def _is_async_only(stream: object) -> bool:
    """A body that only an `aclose()` can release (an async generator, an AsyncByteStream)."""
    return hasattr(stream, "aclose") and not hasattr(stream, "close")


def _is_sync_only(stream: object) -> bool:
    """A body that only a `close()` can release (a generator, a SyncByteStream)."""
    return hasattr(stream, "close") and not hasattr(stream, "aclose")


def _charset_from_content_type(content_type: str) -> str | None:
    """The lower-cased `charset` parameter of a Content-Type value, if any."""
    for param in content_type.split(";")[1:]:
        name, equals, value = param.partition("=")
        if equals and name.strip().lower() == "charset":
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            return value.lower()
    return None


def _is_known_encoding(encoding: str) -> bool:
    try:
        codecs.lookup(encoding)
    except LookupError:
        return False
    return True


def _parse_link_header(value: str) -> list[dict[str, str]]:
    """
    Parse a Link header into dicts with a "url" key plus the link's parameters:

        '<https://x/?page=2>; rel="next", <https://x/?page=9>; rel=last'
        -> [{"url": "https://x/?page=2", "rel": "next"},
            {"url": "https://x/?page=9", "rel": "last"}]
    """
    quotes = " '\""
    links: list[dict[str, str]] = []
    value = value.strip(quotes)
    if not value:
        return links
    for part in re.split(r",\s*(?=<)", value):
        target, _, params = part.partition(";")
        link = {"url": target.strip("<> '\"")}
        for param in params.split(";"):
            key, equals, param_value = param.partition("=")
            if equals:
                link[key.strip(quotes)] = param_value.strip(quotes)
        links.append(link)
    return links


_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})

_ERROR_KINDS = {
    1: "Informational response",
    3: "Redirect response",
    4: "Client error",
    5: "Server error",
}


class Response:
    """
    An HTTP response.

        >>> response = Response(200, json={"ok": True})
        >>> response.status_code, response.reason_phrase, response.json()
        (200, 'OK', {'ok': True})
        >>> response.headers["content-type"]
        'application/json'
        >>> Response(404, request=Request("GET", "https://x/")).raise_for_status()
        Traceback (most recent call last):
        ...
        requestx.HTTPStatusError: Client error '404 Not Found' for url 'https://x/'
        ...

    Responses from the client are built by `_hotpath.engine_response`; their body stays in the
    engine's buffer until `.content` (one copy) or `.json()` (parsed in place).
    """

    # Defaults at class level: `_hotpath.engine_response` then only sets what differs.
    status_code: int
    _request: Request | None = None
    next_request: Request | None = None
    is_closed: bool = True
    is_stream_consumed: bool = True
    default_encoding: str | typing.Callable[[bytes], str] = "utf-8"
    _headers: Headers | None = None
    _raw_headers: bytes | None = None  # engine: the raw header block
    _sets_cookies: bool = False  # engine: the block has a Set-Cookie field (the engine saw it)
    _unencoded: bool = False  # engine stream: the block has no Content-Encoding field
    _http_version: str | None = None  # engine: "HTTP/1.1", "HTTP/2"
    _extensions: dict[str, typing.Any] | None = None
    _body: typing.Any = None  # engine: a buffer-protocol object with the body
    _content: bytes | None = None
    _stream: typing.Any = None  # hand-built: a body still to read
    _text: str | None = None
    _encoding: str | None = None
    _elapsed: datetime.timedelta | float | None = None
    _history: list[Response] | None = None
    _cookies: Cookies | None = None
    _num_bytes_downloaded: int | None = None
    _started: float | None = None  # transports: perf_counter() when the request was sent
    _max_body_bytes: int | None = None  # the client's max_body_bytes, for read() / aread()

    def __init__(
        self,
        status_code: int,
        *,
        headers: HeaderTypes | None = None,
        content: ResponseContent | None = None,
        text: str | None = None,
        html: str | None = None,
        json: typing.Any = None,
        stream: typing.Any = None,
        request: Request | None = None,
        extensions: ResponseExtensions | None = None,
        history: list[Response] | None = None,
        default_encoding: str | typing.Callable[[bytes], str] = "utf-8",
    ) -> None:
        self.status_code = status_code
        self._headers = Headers(headers)
        self._request = request
        self._extensions = {} if extensions is None else dict(extensions)
        self._history = [] if history is None else list(history)
        self.default_encoding = default_encoding
        self.is_closed = False
        self.is_stream_consumed = False
        if stream is not None:
            self._stream = stream
            return
        body_headers, body = encode_response(content, text, html, json)
        headers = self._headers
        for name, value in body_headers:
            lower = name.lower()
            if lower == TRANSFER_ENCODING and headers._has(CONTENT_LENGTH):
                continue
            if not headers._has(lower):
                headers._entries().append((name, lower, value))
        self._stream = ByteStream(body) if isinstance(body, bytes) else body
        if isinstance(body, bytes):
            self.read()
            # As in httpx: nothing came over a network, so nothing was downloaded.
            self._num_bytes_downloaded = 0

    @classmethod
    def _from_engine_stream(
        cls,
        request: Request,
        status_code: int,
        http_version: str,
        raw_headers: bytes,
        stream: typing.Any,
    ) -> Response:
        """A response whose headers are in and whose body is still arriving through
        `stream` (see `_streams.py`), undecoded."""
        response = cls.__new__(cls)
        response.status_code = status_code
        response._request = request
        response._http_version = http_version
        response._raw_headers = raw_headers
        response._stream = stream
        response.is_closed = False
        response.is_stream_consumed = False
        return response

    def _decode_engine_body(self, max_size: int | None) -> None:
        """Undo Content-Encoding on an engine body (engine bodies arrive as sent). Invalid
        or truncated compressed data raises DecodingError here, while sending, as in httpx;
        a body that decodes to more than `max_size` bytes raises ResponseTooLarge."""
        raw = self._body
        encodings = self.headers.get_list("content-encoding")  # decode_all splits them
        try:
            self._body = decode_all(bytes(raw), encodings, max_size)
        except (DecodingError, ResponseTooLarge) as exc:
            exc._request = self._request
            raise
        self._num_bytes_downloaded = len(raw)

    # -- Metadata --

    @property
    def headers(self) -> Headers:
        headers = self._headers
        if headers is None:
            headers = self._headers = Headers._from_raw_block(self._raw_headers or b"")
        return headers

    @headers.setter
    def headers(self, value: Headers) -> None:
        self._headers = value

    @property
    def request(self) -> Request:
        """The request this responds to; RuntimeError if none was set."""
        if self._request is None:
            raise RuntimeError("The request instance has not been set on this response.")
        return self._request

    @request.setter
    def request(self, value: Request) -> None:
        self._request = value

    @property
    def url(self) -> URL:
        """The URL of the request."""
        return self.request.url

    @property
    def http_version(self) -> str:
        """ "HTTP/1.1", "HTTP/2", "HTTP/1.0"."""
        if self._http_version is not None:
            return self._http_version
        version = (self._extensions or {}).get("http_version")
        return "HTTP/1.1" if version is None else version.decode("ascii", errors="ignore")

    def _has_status_line(self) -> bool:
        """HTTP/1.x sends a reason phrase; HTTP/2 and 3 have no status line (libcurl writes
        one without a reason into the header block)."""
        version = self._http_version
        return version is None or not version.startswith(("HTTP/2", "HTTP/3"))

    @property
    def reason_phrase(self) -> str:
        """The status line's reason as the server sent it (maybe ""), or the standard phrase
        for HTTP/2, which has none (as httpx)."""
        if self._raw_headers is not None:
            if not self._has_status_line():
                return codes.get_reason_phrase(self.status_code)
            return _final_reason_phrase(self._raw_headers).decode("ascii", errors="ignore")
        given = (self._extensions or {}).get("reason_phrase")
        if given is None:
            return codes.get_reason_phrase(self.status_code)
        return str(given.decode("ascii", errors="ignore"))

    @property
    def extensions(self) -> dict[str, typing.Any]:
        """Transport details: "http_version" and "reason_phrase" as bytes."""
        if self._extensions is None:
            extensions: dict[str, typing.Any] = {}
            if self._http_version is not None:
                extensions["http_version"] = self._http_version.encode("ascii")
            if self._raw_headers is not None and self._has_status_line():
                extensions["reason_phrase"] = _final_reason_phrase(self._raw_headers)
            self._extensions = extensions
        return self._extensions

    @extensions.setter
    def extensions(self, value: dict[str, typing.Any]) -> None:
        self._extensions = value

    @property
    def elapsed(self) -> datetime.timedelta:
        """Time from sending the request to the end of the response."""
        elapsed = self._elapsed
        if elapsed is None:
            raise RuntimeError(
                "'.elapsed' may only be accessed after the response has been read or closed."
            )
        if not isinstance(elapsed, datetime.timedelta):
            elapsed = self._elapsed = datetime.timedelta(seconds=elapsed)
        return elapsed

    @elapsed.setter
    def elapsed(self, value: datetime.timedelta) -> None:
        self._elapsed = value

    @property
    def history(self) -> list[Response]:
        """The redirect responses that led here, oldest first."""
        if self._history is None:
            self._history = []
        return self._history

    @history.setter
    def history(self, value: list[Response]) -> None:
        self._history = value

    @property
    def stream(self) -> typing.Any:
        if self._stream is None:
            return ByteStream(self.content)
        return self._stream

    @stream.setter
    def stream(self, value: typing.Any) -> None:
        self._stream = value

    # -- Status --

    @property
    def is_informational(self) -> bool:
        """1xx."""
        return 100 <= self.status_code <= 199

    @property
    def is_success(self) -> bool:
        """2xx."""
        return 200 <= self.status_code <= 299

    @property
    def is_redirect(self) -> bool:
        """3xx (see `has_redirect_location` for redirects that can be followed)."""
        return 300 <= self.status_code <= 399

    @property
    def is_client_error(self) -> bool:
        """4xx."""
        return 400 <= self.status_code <= 499

    @property
    def is_server_error(self) -> bool:
        """5xx."""
        return 500 <= self.status_code <= 599

    @property
    def is_error(self) -> bool:
        """4xx or 5xx."""
        return 400 <= self.status_code <= 599

    @property
    def has_redirect_location(self) -> bool:
        """A 301/302/303/307/308 with a Location header."""
        return _hotpath.is_redirect(self)

    def raise_for_status(self) -> Response:
        """
        Raise `HTTPStatusError` unless the status is 2xx; return the response.
        RuntimeError if the response has no request.
        """
        request = self._request
        if request is None:
            raise RuntimeError(
                "Cannot call `raise_for_status` as the request "
                "instance has not been set on this response."
            )
        if self.is_success:
            return self
        kind = _ERROR_KINDS.get(self.status_code // 100, "Invalid status code")
        lines = [f"{kind} '{self.status_code} {self.reason_phrase}' for url '{request.url}'"]
        if self.has_redirect_location:
            lines.append(f"Redirect location: '{self.headers['location']}'")
        lines.append(
            "For more information check: "
            f"https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/{self.status_code}"
        )
        raise HTTPStatusError("\n".join(lines), request=request, response=self)

    # -- Body --

    @property
    def content(self) -> bytes:
        """The body as bytes; `ResponseNotRead` for a stream not yet read."""
        content = self._content
        if content is None:
            body = self._body
            if body is None:
                raise ResponseNotRead()
            # bytes(body): the engine's Body copies itself in one call (its __bytes__),
            # half the time of going through a memoryview.
            content = body if type(body) is bytes else bytes(body)
            self._content = content
            # The engine's buffer is no longer needed: json() can read the bytes.
            self._body = content
        return content

    @property
    def text(self) -> str:
        """The body decoded with `encoding`; undecodable bytes become U+FFFD."""
        text = self._text
        if text is None:
            content = self.content
            text = content.decode(self.encoding or "utf-8", errors="replace") if content else ""
            self._text = text
        return text

    @property
    def encoding(self) -> str | None:
        """
        The text encoding: the one set explicitly, else the Content-Type charset if
        Python knows it, else `default_encoding` (a name, or a callable given the
        body).
        """
        encoding = self._encoding
        if encoding is None:
            encoding = self.charset_encoding
            if encoding is None or not _is_known_encoding(encoding):
                if isinstance(self.default_encoding, str):
                    encoding = self.default_encoding
                elif self._content is not None or self._body is not None:
                    encoding = self.default_encoding(self.content)
            encoding = self._encoding = encoding or "utf-8"
        return encoding

    @encoding.setter
    def encoding(self, value: str) -> None:
        if self._text is not None:
            raise ValueError("Setting encoding after `text` has been accessed is not allowed.")
        self._encoding = value

    @property
    def charset_encoding(self) -> str | None:
        """The charset parameter of the Content-Type header, if any."""
        content_type = self.headers.get("content-type")
        if content_type is None:
            return None
        return _charset_from_content_type(content_type)

    def json(self, **kwargs: typing.Any) -> typing.Any:
        """
        The body parsed as JSON. Without arguments orjson parses the engine's buffer
        in place; with arguments (or for what orjson rejects but the stdlib accepts,
        such as NaN or UTF-16) the stdlib `json.loads` is used, as in httpx.
        """
        if not kwargs:
            body = self._body if self._content is None else self._content
            if body is not None:
                try:
                    return orjson.loads(body if type(body) is bytes else memoryview(body))
                except orjson.JSONDecodeError:
                    pass  # let the stdlib decide, and raise its usual error
        return jsonlib.loads(self.content, **kwargs)

    @property
    def cookies(self) -> Cookies:
        """The cookies this response sets."""
        if self._cookies is None:
            self._cookies = Cookies()
            self._cookies.extract_cookies(self)
        return self._cookies

    @property
    def links(self) -> dict[str | None, dict[str, str]]:
        """The Link header, keyed by each link's `rel` (or its URL if it has none)."""
        header = self.headers.get("link")
        if header is None:
            return {}
        return {(link.get("rel") or link.get("url")): link for link in _parse_link_header(header)}

    @property
    def num_bytes_downloaded(self) -> int:
        """Body bytes received (for engine responses: after libcurl's decoding)."""
        if self._num_bytes_downloaded is not None:
            return self._num_bytes_downloaded
        body = self._body
        return 0 if body is None else memoryview(body).nbytes

    def read(self) -> bytes:
        """Read the body into memory (if it is not already) and return it."""
        if self._content is None and self._body is None:
            body = LimitedJoin(self._max_body_bytes, self._request)
            try:
                if self._nothing_to_decode():
                    self._read_unencoded(body)
                else:
                    for chunk in self.iter_bytes():
                        body.add(chunk)
            except ResponseTooLarge:
                self.close()  # stops the transfer
                raise
            self._content = body.join()
        return self.content

    def _read_unencoded(self, body: LimitedJoin) -> None:
        """read() of a stream with _nothing_to_decode(): the chunks as received are the
        body. What iter_raw() does, without the generators that iter_bytes() stacks on it (a
        third of a short streamed response's Python)."""
        stream = self._take_sync_stream()
        downloaded = 0
        for raw in stream:
            downloaded += len(raw)
            self._num_bytes_downloaded = downloaded
            body.add(raw)
        self.close()

    async def aread(self) -> bytes:
        """Read the body into memory (if it is not already) and return it."""
        if self._content is None and self._body is None:
            body = LimitedJoin(self._max_body_bytes, self._request)
            try:
                if self._nothing_to_decode():
                    await self._aread_unencoded(body)
                else:
                    async for chunk in self.aiter_bytes():
                        body.add(chunk)
            except ResponseTooLarge:
                await self.aclose()  # stops the transfer
                raise
            self._content = body.join()
        return self.content

    async def _aread_unencoded(self, body: LimitedJoin) -> None:
        """_read_unencoded() for async streams."""
        stream = self._take_async_stream()
        downloaded = 0
        async for raw in stream:
            downloaded += len(raw)
            self._num_bytes_downloaded = downloaded
            body.add(raw)
        await self.aclose()

    def _is_read(self) -> bool:
        return self._content is not None or self._body is not None

    def _take_stream(self) -> typing.Any:
        if self.is_stream_consumed:
            raise StreamConsumed()
        if self.is_closed:
            raise StreamClosed()
        self.is_stream_consumed = True
        self._num_bytes_downloaded = 0
        return self._stream

    def _nothing_to_decode(self) -> bool:
        """An engine stream whose head had no Content-Encoding field (the engine saw none
        arrive), with headers nobody has looked at (and perhaps changed) yet: known to need
        no decoding without parsing the header block."""
        return self._unencoded and self._headers is None

    def _take_sync_stream(self) -> typing.Iterable[bytes]:
        stream = self._take_stream()
        # collections.abc's class, not typing's alias of it: the alias adds a call.
        if not isinstance(stream, Iterable):
            raise RuntimeError("Attempted to call a sync iterator on an async stream.")
        return stream

    def _take_async_stream(self) -> typing.AsyncIterable[bytes]:
        stream = self._take_stream()
        if not isinstance(stream, AsyncIterable):
            raise RuntimeError("Attempted to call an async iterator on a sync stream.")
        return stream

    def _content_decoder(self) -> ContentDecoder:
        if self._nothing_to_decode():
            return IdentityDecoder()
        return decoder_for(self.headers.get_list("content-encoding"))  # it splits them

    def _text_decoder(self) -> TextDecoder:
        return TextDecoder(self.encoding or "utf-8")

    # Sync iteration. Each layer wraps the one below: raw bytes -> decoded bytes -> text ->
    # lines. A body already in memory is served from there in the requested chunk sizes.

    def iter_raw(self, chunk_size: int | None = None) -> typing.Iterator[bytes]:
        """The body as received, before content decoding (streaming responses only)."""
        if self._is_read():
            raise StreamConsumed()
        stream = self._take_sync_stream()
        chunker = ByteChunker(chunk_size)
        for raw in stream:
            self._num_bytes_downloaded = (self._num_bytes_downloaded or 0) + len(raw)
            yield from chunker.decode(raw)
        yield from chunker.flush()
        self.close()

    def iter_bytes(self, chunk_size: int | None = None) -> typing.Iterator[bytes]:
        """The decoded body in chunks of `chunk_size` bytes (as they arrive if None)."""
        chunker = ByteChunker(chunk_size)
        if self._is_read():
            yield from chunker.decode(self.content)
        else:
            # Decoded a piece at a time (at most MAX_PIECE bytes), so that a caller who
            # stops early never had more than one piece decoded (a decompression bomb).
            decoder = self._content_decoder()
            for raw in self.iter_raw():
                for piece in self._decoded(decoder.pieces(raw)):
                    yield from chunker.decode(piece)
            for piece in self._decoded(decoder.flush_pieces()):
                yield from chunker.decode(piece)
        yield from chunker.flush()

    def iter_text(self, chunk_size: int | None = None) -> typing.Iterator[str]:
        """The body as text in chunks of `chunk_size` characters (as they arrive if None)."""
        chunker = TextChunker(chunk_size)
        if self._is_read():
            yield from chunker.decode(self.text)
        else:
            decoder = self._text_decoder()
            for data in self.iter_bytes():
                yield from chunker.decode(decoder.decode(data))
            yield from chunker.decode(decoder.flush())
        yield from chunker.flush()

    def iter_lines(self) -> typing.Iterator[str]:
        """The text split into lines, as `str.splitlines()` would, without line endings."""
        lines = LineDecoder()
        for text in self.iter_text():
            yield from lines.decode(text)
        yield from lines.flush()

    # Async iteration: the same layers over an async stream.

    async def aiter_raw(self, chunk_size: int | None = None) -> typing.AsyncIterator[bytes]:
        """The body as received, before content decoding (streaming responses only)."""
        if self._is_read():
            raise StreamConsumed()
        stream = self._take_async_stream()
        chunker = ByteChunker(chunk_size)
        async for raw in stream:
            self._num_bytes_downloaded = (self._num_bytes_downloaded or 0) + len(raw)
            for chunk in chunker.decode(raw):
                yield chunk
        for chunk in chunker.flush():
            yield chunk
        await self.aclose()

    async def aiter_bytes(self, chunk_size: int | None = None) -> typing.AsyncIterator[bytes]:
        """The decoded body in chunks of `chunk_size` bytes (as they arrive if None)."""
        chunker = ByteChunker(chunk_size)
        if self._is_read():
            for chunk in chunker.decode(self.content):
                yield chunk
        else:
            decoder = self._content_decoder()  # a piece at a time, as in iter_bytes()
            async for raw in self.aiter_raw():
                for piece in self._decoded(decoder.pieces(raw)):
                    for chunk in chunker.decode(piece):
                        yield chunk
            for piece in self._decoded(decoder.flush_pieces()):
                for chunk in chunker.decode(piece):
                    yield chunk
        for chunk in chunker.flush():
            yield chunk

    async def aiter_text(self, chunk_size: int | None = None) -> typing.AsyncIterator[str]:
        """The body as text in chunks of `chunk_size` characters (as they arrive if None)."""
        chunker = TextChunker(chunk_size)
        if self._is_read():
            pieces = chunker.decode(self.text)
        else:
            decoder = self._text_decoder()
            async for data in self.aiter_bytes():
                for chunk in chunker.decode(decoder.decode(data)):
                    yield chunk
            pieces = chunker.decode(decoder.flush())
        for chunk in pieces + chunker.flush():
            yield chunk

    async def aiter_lines(self) -> typing.AsyncIterator[str]:
        """The text split into lines, as `str.splitlines()` would, without line endings."""
        lines = LineDecoder()
        async for text in self.aiter_text():
            for line in lines.decode(text):
                yield line
        for line in lines.flush():
            yield line

    def _decoded(self, pieces: typing.Iterator[bytes]) -> typing.Iterator[bytes]:
        """A content decoder's pieces; its DecodingError names this response's request."""
        try:
            yield from pieces
        except DecodingError as exc:
            if exc._request is None:
                exc._request = self._request
            self.close()
            raise

    def close(self) -> None:
        """Release the body's resources: a stream still running is stopped (its connection
        is closed rather than returned half-read). Idempotent."""
        if _is_async_only(self._stream):
            raise RuntimeError("Attempted to call a sync close on an async stream.")
        if not self.is_closed:
            self.is_closed = True
            self._note_elapsed()
            close = getattr(self._stream, "close", None)
            if close is not None:
                close()

    async def aclose(self) -> None:
        """`close()` for async streams."""
        if _is_sync_only(self._stream):
            raise RuntimeError("Attempted to call an async close on a sync stream.")
        if not self.is_closed:
            self.is_closed = True
            self._note_elapsed()
            aclose = getattr(self._stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def _note_elapsed(self) -> None:
        if self._elapsed is None:
            elapsed = getattr(self._stream, "elapsed", None)
            if elapsed is not None:
                self._elapsed = elapsed
            elif self._started is not None:
                self._elapsed = time.perf_counter() - self._started

    def __repr__(self) -> str:
        return f"<Response [{self.status_code} {self.reason_phrase}]>"

    def __getstate__(self) -> dict[str, typing.Any]:
        state = dict(self.__dict__)
        if self._content is None and self._body is not None:
            state["_content"] = self.content
        # The engine's buffer, streams and extensions do not survive pickling.
        for name in ("_body", "_stream", "_extensions", "_cookies"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, typing.Any]) -> None:
        self.__dict__.update(state)
        if self._content is not None:
            self._body = self._content
        else:
            self._stream = _UnattachedStream()
        self._extensions = {}
        self.is_closed = True


# --- Cookies -------------------------------------------------------------------------


class Cookies(typing.MutableMapping[str, str]):
    """
    A cookie jar (`http.cookiejar.CookieJar`) with a dict-like face.

        >>> cookies = Cookies({"session": "abc"})
        >>> cookies.set("theme", "dark", domain="example.org")
        >>> cookies["session"], len(cookies)
        ('abc', 2)

    `bool(cookies)` is cheap for an empty jar, so clients can skip the cookie
    machinery entirely when there is nothing to send.
    """

    def __init__(self, cookies: CookieTypes | None = None) -> None:
        if cookies is None or isinstance(cookies, (dict, list)):
            self.jar = CookieJar()
            pairs = cookies.items() if isinstance(cookies, dict) else cookies or []
            for name, value in pairs:
                self.set(name, value)
        elif isinstance(cookies, Cookies):
            self.jar = CookieJar()
            for cookie in cookies.jar:
                self.jar.set_cookie(cookie)
        else:
            self.jar = cookies

    def _maybe_empty(self) -> bool:
        """True when the jar is certainly empty, without iterating it."""
        return _hotpath.jar_is_empty(self.jar)

    def extract_cookies(self, response: Response) -> None:
        """Store the cookies that `response`'s Set-Cookie headers set."""
        headers = response.headers
        if "set-cookie" not in headers and "set-cookie2" not in headers:
            return  # the common case: skip building urllib adapter objects
        self.jar.extract_cookies(
            _CookieCompatResponse(response),  # type: ignore[arg-type]
            _CookieCompatRequest(response.request),
        )

    def set_cookie_header(self, request: Request) -> None:
        """Add a Cookie header with the jar's cookies that match `request`."""
        if self._maybe_empty():
            return
        self.jar.add_cookie_header(_CookieCompatRequest(request))

    def set(self, name: str, value: str, domain: str = "", path: str = "/") -> None:
        """Set a cookie; `domain` "" matches any host."""
        cookie = Cookie(
            version=0,
            name=name,
            value=value,
            port=None,
            port_specified=False,
            domain=domain,
            domain_specified=bool(domain),
            domain_initial_dot=domain.startswith("."),
            path=path,
            path_specified=bool(path),
            secure=False,
            expires=None,
            discard=True,
            comment=None,
            comment_url=None,
            rest={"HttpOnly": None},  # type: ignore[dict-item]
            rfc2109=False,
        )
        self.jar.set_cookie(cookie)

    def get(  # type: ignore[override]
        self,
        name: str,
        default: str | None = None,
        domain: str | None = None,
        path: str | None = None,
    ) -> str | None:
        """The value of cookie `name`; `CookieConflict` if several match."""
        value = None
        for cookie in self.jar:
            if (
                cookie.name == name
                and (domain is None or cookie.domain == domain)
                and (path is None or cookie.path == path)
            ):
                if value is not None:
                    raise CookieConflict(f"Multiple cookies exist with name={name}")
                value = cookie.value
        return default if value is None else value

    def delete(self, name: str, domain: str | None = None, path: str | None = None) -> None:
        """Delete the cookies called `name` (optionally only for a domain and path)."""
        if domain is not None and path is not None:
            self.jar.clear(domain, path, name)
            return
        matching = [
            cookie
            for cookie in self.jar
            if cookie.name == name
            and (domain is None or cookie.domain == domain)
            and (path is None or cookie.path == path)
        ]
        for cookie in matching:
            self.jar.clear(cookie.domain, cookie.path, cookie.name)

    def clear(self, domain: str | None = None, path: str | None = None) -> None:
        """Delete all cookies, or those of `domain` (and `path`)."""
        if path is not None and domain is None:
            raise ValueError("Cookies.clear(path=...) needs a domain too.")
        args = [arg for arg in (domain, path) if arg is not None]
        self.jar.clear(*args)

    def update(self, cookies: CookieTypes | None = None) -> None:  # type: ignore[override]
        for cookie in Cookies(cookies).jar:
            self.jar.set_cookie(cookie)

    def __setitem__(self, name: str, value: str) -> None:
        self.set(name, value)

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __delitem__(self, name: str) -> None:
        self.delete(name)

    def __len__(self) -> int:
        return 0 if self._maybe_empty() else len(self.jar)

    def __iter__(self) -> typing.Iterator[str]:
        return (cookie.name for cookie in self.jar)

    def __bool__(self) -> bool:
        if self._maybe_empty():
            return False
        return any(True for _ in self.jar)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"<Cookie {cookie.name}={cookie.value} for {cookie.domain} />" for cookie in self.jar
        )
        return f"<Cookies[{shown}]>"


class _CookieCompatRequest(urllib.request.Request):
    """A requestx Request seen through the urllib interface CookieJar expects."""

    def __init__(self, request: Request) -> None:
        super().__init__(url=str(request.url), headers=dict(request.headers), method=request.method)
        self.request = request

    def add_unredirected_header(self, key: str, value: str) -> None:
        super().add_unredirected_header(key, value)
        self.request.headers[key] = value


class _CookieCompatResponse:
    """A requestx Response seen through the urllib interface CookieJar expects."""

    def __init__(self, response: Response) -> None:
        self.response = response

    def info(self) -> email.message.Message:
        message = email.message.Message()
        for key, value in self.response.headers.multi_items():
            if key.startswith("set-cookie"):  # all that CookieJar reads
                message[key] = value  # appends; does not replace
        return message


# Rules the compiled hot path states once and the models ask (is_redirect, jar_is_empty).
# Imported last: _hotpath imports this module's classes.
from . import _hotpath  # noqa: E402
