"""
multipart/form-data request bodies (`files=`, optionally with `data=`).

`MultipartStream` produces the same bytes as httpx 0.28 for the same fields and
boundary. Text fields and bytes/str file contents are encoded once, up front;
file objects are read lazily, 64 KiB at a time, while the body is iterated, and
are rewound to their starting position at the start of every iteration so the
body can be sent again (307/308 redirects, auth retries).

The total length is known, and sent as Content-Length, when every part's size
can be found without reading it: in-memory contents, regular files (fstat) and
seekable file objects (seek to the end and back). Otherwise it is None and the
body goes out with Transfer-Encoding: chunked.
"""

from __future__ import annotations

import contextlib
import io
import mimetypes
import os
import stat
import typing
from collections.abc import Mapping
from pathlib import Path

from ._types import FileTypes, RequestFiles

__all__ = ["CHUNK_SIZE", "MultipartStream"]

#: Size of each read from a file object.
CHUNK_SIZE = 64 * 1024

# In-memory contents at least this large are yielded as their own chunk instead of
# being joined with the surrounding boundary and header bytes (which would copy them).
_JOIN_LIMIT = CHUNK_SIZE

# Quoting of form parameters (name="...", filename="..."), as browsers and httpx do
# it (WHATWG HTML "multipart/form-data encoding algorithm"): `"` becomes %22,
# a backslash is doubled, and control characters U+0000..U+001F other than ESC
# become %XX. Everything else, non-ASCII included, is sent as UTF-8.
_PARAM_ESCAPES = {ord('"'): "%22", ord("\\"): "\\\\"}
_PARAM_ESCAPES.update({code: f"%{code:02X}" for code in range(0x20) if code != 0x1B})


def _form_param(key: str, value: str) -> bytes:
    return f'{key}="{value.translate(_PARAM_ESCAPES)}"'.encode()


def _primitive_to_str(value: typing.Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    return str(value)


def _check_name(name: typing.Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"Invalid type for name. Expected str, got {type(name)}: {name!r}")
    return name


def _guess_content_type(filename: str | None) -> str | None:
    # No filename (None or "") means no Content-Type either, as in httpx.
    if not filename:
        return None
    return mimetypes.guess_type(filename)[0] or "application/octet-stream"


class _Part:
    """One form part: its header block and its content (bytes or a file object)."""

    __slots__ = ("head", "content", "start")

    def __init__(self, head: bytes, content: typing.Any) -> None:
        # `head` is everything from "Content-Disposition" to the blank line.
        self.head = head
        # bytes, or an object with a read() method.
        self.content = content
        # For a file object: its position when the stream was built (the position to
        # rewind to before each iteration), or None when it cannot tell() it.
        self.start: int | None = None
        if not isinstance(content, bytes):
            self.start = _tell(content)

    def content_length(self) -> int | None:
        if isinstance(self.content, bytes):
            return len(self.content)
        return _file_length(self.content, self.start)

    def rewind(self) -> None:
        if self.start is not None:
            # io.UnsupportedOperation is an OSError.
            with contextlib.suppress(AttributeError, OSError):
                self.content.seek(self.start)

    def iter_file(self) -> typing.Iterator[bytes]:
        read = self.content.read
        while True:
            chunk = read(CHUNK_SIZE)
            if not chunk:
                return
            if isinstance(chunk, str):
                # A file-like object that returns text: sent as UTF-8, like httpx.
                yield chunk.encode("utf-8")
            else:
                yield chunk if isinstance(chunk, bytes) else bytes(chunk)


# Only for these exact types is os.fstat(fileobj.fileno()).st_size the stream's size.
_PLAIN_FILE_TYPES = (io.FileIO, io.BufferedReader)


def _tell(fileobj: typing.Any) -> int | None:
    try:
        position = fileobj.tell()
    except (AttributeError, OSError):
        return None
    return position if isinstance(position, int) else None


def _file_length(fileobj: typing.Any, start: int | None) -> int | None:
    """Bytes left from `start` to the end of `fileobj`, without reading it; or None."""
    if start is None:
        return None
    if type(fileobj) in _PLAIN_FILE_TYPES:
        # A file opened with open(..., "rb"): its bytes are those of the OS file, so
        # a regular file's st_size is its length (a pipe's or a socket's is not).
        try:
            st = os.fstat(fileobj.fileno())
        except (OSError, ValueError):
            pass
        else:
            if stat.S_ISREG(st.st_mode):
                return max(st.st_size - start, 0)
    # Anything else (BytesIO, temporary-file wrappers, gzip.GzipFile, ...) measures
    # its own byte stream: seek to the end and back. fstat is not used for these, as
    # the descriptor may hold other bytes than read() returns (compressed ones).
    try:
        position = fileobj.tell()
        end = fileobj.seek(0, os.SEEK_END)
        fileobj.seek(position)
    except (AttributeError, OSError, ValueError):
        return None
    if not isinstance(end, int):
        return None
    return max(end - start, 0)


def _data_part(name: typing.Any, value: typing.Any) -> _Part:
    name = _check_name(name)
    if value is not None and not isinstance(value, (str, bytes, int, float)):
        raise TypeError(
            f"Invalid type for value. Expected primitive type, got {type(value)}: {value!r}"
        )
    content = value if isinstance(value, bytes) else _primitive_to_str(value).encode("utf-8")
    head = b"Content-Disposition: form-data; " + _form_param("name", name) + b"\r\n\r\n"
    return _Part(head, content)


def _file_part(name: typing.Any, value: FileTypes) -> _Part:
    name = _check_name(name)
    filename: typing.Any
    content_type: typing.Any = None
    extra_headers: typing.Any = {}
    if isinstance(value, tuple):
        # Unpacking a tuple of the wrong size raises ValueError, as in httpx.
        if len(value) == 2:
            filename, fileobj = value
        elif len(value) == 3:
            filename, fileobj, content_type = value
        else:
            filename, fileobj, content_type, extra_headers = value
        if filename is not None and not isinstance(filename, str):
            raise TypeError(
                f"Invalid type for filename. Expected str or None, got {type(filename)}: "
                f"{filename!r}"
            )
    else:
        fileobj = value
        # A bare file object is named after its file (basename only); other
        # contents are named "upload".
        filename = Path(str(getattr(value, "name", "upload"))).name

    headers = dict(extra_headers)  # a copy: the caller's mapping is left as it is
    if content_type is None:
        content_type = _guess_content_type(filename)
    # httpx skips its own Content-Type when any given header name *contains*
    # "content-type" (case-insensitively); the same rule keeps the bytes identical.
    if content_type is not None and not any("content-type" in key.lower() for key in headers):
        headers["Content-Type"] = content_type

    if isinstance(fileobj, str):
        content: typing.Any = fileobj.encode("utf-8")
    elif isinstance(fileobj, bytes):
        content = fileobj
    elif isinstance(fileobj, io.StringIO):
        raise TypeError("Multipart file uploads require 'io.BytesIO', not 'io.StringIO'.")
    elif isinstance(fileobj, io.TextIOBase):
        raise TypeError("Multipart file uploads must be opened in binary mode, not text mode.")
    elif not hasattr(fileobj, "read"):
        # httpx fails with this same exception type, but only when the body is sent.
        raise AttributeError(
            f"Invalid file for {name!r}: expected bytes, str or a file object opened in "
            f"binary mode, got {type(fileobj)} (it has no 'read' method)."
        )
    else:
        content = fileobj

    pieces = [b"Content-Disposition: form-data; ", _form_param("name", name)]
    if filename:
        pieces += [b"; ", _form_param("filename", filename)]
    for key, header_value in headers.items():
        pieces += [f"\r\n{key}: ".encode(), header_value.encode()]
    pieces.append(b"\r\n\r\n")
    return _Part(b"".join(pieces), content)


class MultipartStream:
    """
    A multipart/form-data body, iterable sync or async (any number of times).

        >>> stream = MultipartStream({"a": "1"}, {"f": ("x.txt", b"hi")}, boundary=b"B")
        >>> stream.headers()
        {'Content-Type': 'multipart/form-data; boundary=B', 'Content-Length': '156'}
        >>> b"".join(stream)[:12]
        b'--B\\r\\nContent'

    `data` values may be str, bytes, int, float, bool or None, or a list/tuple of
    those (one part each). `files` is a mapping or a sequence of (name, value)
    pairs; a value is a binary file object, bytes or str content, or a tuple
    (filename, content[, content_type[, headers]]). Data fields come first, then
    files, each in the order given.
    """

    def __init__(
        self,
        data: Mapping[str, typing.Any],
        files: RequestFiles,
        boundary: bytes | None = None,
    ) -> None:
        if boundary is None:
            boundary = os.urandom(16).hex().encode("ascii")
        self.boundary = boundary
        parts: list[_Part] = []
        for name, value in data.items():
            if isinstance(value, (list, tuple)):
                parts.extend(_data_part(name, item) for item in value)
            else:
                parts.append(_data_part(name, value))
        file_items = files.items() if isinstance(files, Mapping) else files
        for name, file_value in file_items:
            parts.append(_file_part(name, file_value))
        self._parts = parts

    @property
    def content_type(self) -> str:
        """The Content-Type header value, `multipart/form-data; boundary=...`."""
        return "multipart/form-data; boundary=" + self.boundary.decode("ascii")

    def get_content_length(self) -> int | None:
        """The exact body length, or None when some file's size cannot be known."""
        delimiter = len(self.boundary) + 4  # b"--" boundary b"\r\n"
        total = delimiter + 2  # the closing b"--" boundary b"--\r\n"
        for part in self._parts:
            length = part.content_length()
            if length is None:
                return None
            total += delimiter + len(part.head) + length + 2  # content, then b"\r\n"
        return total

    def headers(self) -> dict[str, str]:
        """Content-Type, and Content-Length when known, else Transfer-Encoding: chunked."""
        length = self.get_content_length()
        if length is None:
            return {"Content-Type": self.content_type, "Transfer-Encoding": "chunked"}
        return {"Content-Type": self.content_type, "Content-Length": str(length)}

    def __iter__(self) -> typing.Iterator[bytes]:
        delimiter = b"--" + self.boundary + b"\r\n"
        # Boundaries, headers and small contents are gathered into one chunk; file
        # data and large contents go out as chunks of their own.
        pending: list[bytes] = []
        for part in self._parts:
            pending += [delimiter, part.head]
            content = part.content
            if isinstance(content, bytes):
                if len(content) < _JOIN_LIMIT:
                    pending.append(content)
                else:
                    yield b"".join(pending)
                    pending = []
                    yield content
            else:
                yield b"".join(pending)
                pending = []
                part.rewind()
                yield from part.iter_file()
            pending.append(b"\r\n")
        pending.append(b"--" + self.boundary + b"--\r\n")
        yield b"".join(pending)

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        # File objects are sync; reading them here blocks briefly, as in httpx.
        for chunk in self:
            yield chunk

    def close(self) -> None:
        """Nothing to release: the caller's file objects are left open."""

    async def aclose(self) -> None:
        """Nothing to release: the caller's file objects are left open."""
