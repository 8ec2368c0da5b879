"""
Request and response body encoding.

In-memory bodies (bytes, str, forms, JSON) are encoded up front into `bytes` plus the
headers that describe them; the engine hands `bytes` to libcurl without a copy.

Iterators, async iterators, file objects and multipart uploads become streams
(`IteratorByteStream`, `AsyncIteratorByteStream`, `MultipartStream`) that the client
feeds to the engine piece by piece while the request runs, so a large upload never sits
in memory whole. Their length goes into Content-Length when it can be known without
reading (files), otherwise the body is sent with Transfer-Encoding: chunked; never both.
"""

from __future__ import annotations

import json as jsonlib
import re
import typing
import warnings
from collections.abc import AsyncIterable, Iterable, Mapping
from urllib.parse import quote_plus, urlencode

import orjson

from ._exceptions import StreamConsumed
from ._multipart import CHUNK_SIZE, MultipartStream, _file_length, _primitive_to_str, _tell
from ._types import RequestContent, RequestData, RequestFiles, ResponseContent

__all__ = [
    "AsyncByteStream",
    "AsyncIteratorByteStream",
    "ByteStream",
    "IteratorByteStream",
    "SyncByteStream",
    "encode_json",
    "encode_request",
    "encode_response",
]

RawHeaders = typing.List[typing.Tuple[bytes, bytes]]


class SyncByteStream:
    """The base of bodies read with `for chunk in stream` (httpx's class of that name)."""

    __slots__ = ()  # so that ByteStream's own __slots__ take effect

    def __iter__(self) -> typing.Iterator[bytes]:
        raise NotImplementedError("The '__iter__' method must be implemented.")  # pragma: no cover
        yield b""

    def close(self) -> None:
        """Release what the stream holds; nothing by default."""


class AsyncByteStream:
    """The base of bodies read with `async for chunk in stream` (httpx's class of that name)."""

    __slots__ = ()

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        raise NotImplementedError("The '__aiter__' method must be implemented.")  # pragma: no cover
        yield b""

    async def aclose(self) -> None:
        """Release what the stream holds; nothing by default."""


class ByteStream(SyncByteStream, AsyncByteStream):
    """An in-memory body that iterates as one chunk, sync or async (httpx's `.stream`)."""

    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        self._body = body

    def __iter__(self) -> typing.Iterator[bytes]:
        yield self._body

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        yield self._body

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


def _as_bytes(chunk: typing.Any) -> bytes:
    if isinstance(chunk, bytes):
        return chunk
    if isinstance(chunk, (bytearray, memoryview)):
        return bytes(chunk)
    raise TypeError(f"A request body iterator must yield bytes, not {type(chunk).__name__}")


class IteratorByteStream(SyncByteStream):
    """
    A request body from an iterable of bytes or a binary file object (read in 64 KiB
    pieces). A file object is rewound to where it started each time the body is sent
    again (a 307/308 redirect); a generator can be sent only once (`StreamConsumed`).
    """

    def __init__(self, source: typing.Any) -> None:
        self._source = source
        self._start = _tell(source) if hasattr(source, "read") else None
        self._iterated = False

    def content_length(self) -> int | None:
        """The length of a file object's remaining bytes, if it can be known unread."""
        if not hasattr(self._source, "read"):
            return None
        return _file_length(self._source, self._start)

    def __iter__(self) -> typing.Iterator[bytes]:
        source = self._source
        if self._iterated:
            if isinstance(source, typing.Generator):
                raise StreamConsumed()
            if self._start is not None:
                source.seek(self._start)
        self._iterated = True
        if hasattr(source, "read"):
            while chunk := source.read(CHUNK_SIZE):
                yield _as_bytes(chunk)
        else:
            for chunk in source:
                yield _as_bytes(chunk)


class AsyncIteratorByteStream(AsyncByteStream):
    """A request body from an async iterable of bytes (or an object with async `read`)."""

    def __init__(self, source: typing.Any) -> None:
        self._source = source
        self._iterated = False

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        source = self._source
        if self._iterated and isinstance(source, typing.AsyncGenerator):
            raise StreamConsumed()
        self._iterated = True
        if hasattr(source, "aread"):
            while chunk := await source.aread(CHUNK_SIZE):
                yield _as_bytes(chunk)
        else:
            async for chunk in source:
                yield _as_bytes(chunk)


def _length_header(body: bytes) -> tuple[bytes, bytes]:
    return (b"Content-Length", str(len(body)).encode("ascii"))


def encode_json(value: typing.Any) -> bytes:
    """
    Compact UTF-8 JSON, `{"a":1}` (the same bytes httpx sends for common data).

    orjson does the work. What it cannot encode (integers over 64 bits, non-str
    dict keys) goes through the stdlib encoder with httpx's settings, so those
    still behave as in httpx. Known differences from httpx: NaN and infinities
    become `null` (httpx raises ValueError), and float exponents are written
    `1e-7` rather than `1e-07`.
    """
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        text = jsonlib.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")


def _encode_content(content: typing.Any) -> tuple[RawHeaders, typing.Any]:
    if isinstance(content, str):
        body = content.encode("utf-8")
    elif isinstance(content, bytes):
        body = content
    elif isinstance(content, (bytearray, memoryview)):
        body = bytes(content)
    elif isinstance(content, Iterable) and not isinstance(content, dict):
        # (A dict is iterable too, but is never meant as a body: httpx refuses it as well.)
        stream = IteratorByteStream(content)
        length = stream.content_length()
        if length is None:
            return [(b"Transfer-Encoding", b"chunked")], stream
        return [(b"Content-Length", str(length).encode("ascii"))], stream
    elif isinstance(content, AsyncIterable):
        return [(b"Transfer-Encoding", b"chunked")], AsyncIteratorByteStream(content)
    else:
        raise TypeError(f"Unexpected type for 'content', {type(content)!r}")
    # An empty body gets no Content-Length here; Request adds "0" for POST/PUT/PATCH.
    return ([_length_header(body)] if body else []), body


# What `quote_plus` leaves as it is: a text made only of these is its own form encoding.
_FORM_UNQUOTED = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch


def _form_field(name: typing.Any, value: str) -> str:
    """`urlencode([(name, value)])`, without its per-character work for the common field
    whose name and value need no quoting (tests/client/test_uploads.py compares the two)."""
    if type(name) is not str:
        return urlencode([(name, value)])  # bytes and other names, as urlencode treats them
    return (
        f"{name if _FORM_UNQUOTED(name) else quote_plus(name)}="
        f"{value if _FORM_UNQUOTED(value) else quote_plus(value)}"
    )


def _encode_form(data: RequestData) -> tuple[RawHeaders, bytes]:
    fields: list[str] = []
    for key, value in data.items():
        if isinstance(value, (list, tuple)):
            fields.extend(_form_field(key, _primitive_to_str(item)) for item in value)
        else:
            fields.append(_form_field(key, _primitive_to_str(value)))
    body = "&".join(fields).encode("ascii")
    return [
        _length_header(body),
        (b"Content-Type", b"application/x-www-form-urlencoded"),
    ], body


def encode_request(
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: typing.Any | None = None,
    boundary: bytes | None = None,
) -> tuple[RawHeaders, typing.Any]:
    """
    Encode a request body: `(headers, body)`, body None when there is none, bytes when
    it is in memory, else a stream (see the module docstring).

    At most one of the arguments is used, in httpx's order of precedence: content,
    files (with data as extra fields, `boundary` when the caller chose one), data, json.

        >>> encode_request(json={"a": 1})
        ([(b'Content-Length', b'7'), (b'Content-Type', b'application/json')], b'{"a":1}')
    """
    if data is not None and not isinstance(data, Mapping):
        # requests-style `data=b"..."`: accepted, as httpx does, with a warning.
        warnings.warn(
            "Use 'content=<...>' to upload raw bytes/text content.",
            DeprecationWarning,
            stacklevel=3,
        )
        return _encode_content(data)
    if content is not None:
        return _encode_content(content)
    if files:
        multipart = MultipartStream(data or {}, files, boundary)
        headers = [
            (k.encode("latin-1"), v.encode("latin-1")) for k, v in multipart.headers().items()
        ]
        return headers, multipart
    if data:
        return _encode_form(data)
    if json is not None:
        body = encode_json(json)
        return [_length_header(body), (b"Content-Type", b"application/json")], body
    return [], None


def encode_response(
    content: ResponseContent | None = None,
    text: str | None = None,
    html: str | None = None,
    json: typing.Any | None = None,
) -> tuple[RawHeaders, bytes | typing.Any]:
    """
    Encode the body of a hand-built Response: `(headers, body)`.

    `body` is bytes, or for an iterable `content` a stream over it (sent with
    Transfer-Encoding: chunked and read by `Response.read()`).
    """
    if content is not None:
        if isinstance(content, (str, bytes, bytearray, memoryview)):
            return _encode_content(content)
        if isinstance(content, (SyncByteStream, AsyncByteStream)):
            return [(b"Transfer-Encoding", b"chunked")], content
        # Wrapped as httpx wraps them: a generator iterated a second time raises
        # StreamConsumed instead of silently giving an empty body.
        if isinstance(content, Iterable):
            return [(b"Transfer-Encoding", b"chunked")], IteratorByteStream(content)
        if isinstance(content, AsyncIterable):
            return [(b"Transfer-Encoding", b"chunked")], AsyncIteratorByteStream(content)
        raise TypeError(f"Unexpected type for 'content', {type(content)!r}")
    if text is not None:
        body = text.encode("utf-8")
        return [_length_header(body), (b"Content-Type", b"text/plain; charset=utf-8")], body
    if html is not None:
        body = html.encode("utf-8")
        return [_length_header(body), (b"Content-Type", b"text/html; charset=utf-8")], body
    if json is not None:
        body = encode_json(json)
        return [_length_header(body), (b"Content-Type", b"application/json")], body
    return [], b""
