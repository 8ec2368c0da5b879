"""
Incremental decoders for a streamed response body.

A body goes through up to three stages, each fed one piece at a time and then
flushed once at the end of the body:

* a content decoder undoes the Content-Encoding (`decoder_for`, or `decode_all`
  for a body that is already in memory);
* `TextDecoder` turns the bytes into text, keeping a multi-byte character that
  is split across two pieces whole;
* `LineDecoder` splits the text into lines as `str.splitlines()` does, and
  `ByteChunker` / `TextChunker` cut bytes or text into pieces of a fixed size.

Every stage's `decode()` returns what can be produced so far and keeps the rest;
`flush()` returns whatever is left and is called once, after the last `decode()`.

Content decoders are the one stage whose output can be far larger than its input
(a decompression bomb: 1 MB of gzip can expand to 1 GiB), so they also decode
lazily: `pieces()` and `flush_pieces()` yield the output in pieces of at most
`MAX_PIECE` bytes and decode the next piece only when the caller asks for it. A
caller that stops early never holds more than one piece.

gzip, deflate, br and zstd are decoded in C (`_core.Decoder`, csrc/decode.c) with the
zlib, brotli and zstd the extension links for libcurl, whatever Python packages are
installed; each read writes at most the room it is given, which is what bounds a piece.
A build without brotli or zstd (the MinGW cross-build of the engine's C tests is the one)
neither offers nor decodes that coding (`accept_encoding_header`, `decoder_for`).
"""

from __future__ import annotations

import codecs
import itertools
import re
import sys
import typing

from . import _core
from ._exceptions import DecodingError, ResponseTooLarge

__all__ = [
    "MAX_PIECE",
    "SUPPORTED_ENCODINGS",
    "BrotliDecoder",
    "ByteChunker",
    "ContentDecoder",
    "DeflateDecoder",
    "GzipDecoder",
    "IdentityDecoder",
    "LimitedJoin",
    "LineDecoder",
    "MultiDecoder",
    "TextChunker",
    "TextDecoder",
    "ZstdDecoder",
    "accept_encoding_header",
    "decode_all",
    "decoder_for",
]

#: The largest piece of decoded output a content decoder yields at once.
MAX_PIECE = 1 << 20


def _truncated(coding: str) -> DecodingError:
    return DecodingError(
        f"Cannot decode {coding!r} content: the body was truncated "
        "(it ended before the end of the compressed stream)"
    )


def _invalid(coding: str, detail: str) -> DecodingError:
    return DecodingError(f"Cannot decode {coding!r} content: {detail}")


# --- Content decoders --------------------------------------------------------------------


class ContentDecoder:
    """
    The interface of every content decoder: `pieces()` for each piece of the body as it
    arrives, then `flush_pieces()` once at its end. Both yield decoded bytes in pieces of
    at most `MAX_PIECE` bytes, none empty, decoding only as far as the caller iterates
    (both are generators: nothing runs before the first piece is asked for); each must be
    iterated to its end before the next call. Both raise `DecodingError`
    for data that cannot be decoded; `flush_pieces()` also raises it when the body
    stopped before the end of the compressed stream.

    `decode()` and `flush()` are the same, joined: for input known to be small.
    """

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        raise NotImplementedError()  # pragma: no cover

    def flush_pieces(self) -> typing.Iterator[bytes]:
        raise NotImplementedError()  # pragma: no cover

    def decode(self, data: bytes) -> bytes:
        return b"".join(self.pieces(data))

    def flush(self) -> bytes:
        return b"".join(self.flush_pieces())


class IdentityDecoder(ContentDecoder):
    """No content coding (or one that is not undone): the bytes pass through."""

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        if data:
            yield data

    def flush_pieces(self) -> typing.Iterator[bytes]:
        yield from ()


class _CDecoder(ContentDecoder):
    """A coding undone in C by a `_core.Decoder`: each piece of input is fed once, then read
    `MAX_PIECE` bytes at a time until it is used up. The C side holds what a caller who
    stopped early left undecoded, and nothing more."""

    _CODING: typing.ClassVar[str]  # the coding's name, in _core.Decoder and in messages

    def __init__(self) -> None:
        self._core = _core.Decoder(self._CODING)

    def _error(self, exc: _core.DecoderError) -> DecodingError:
        return _truncated(self._CODING) if exc.truncated else _invalid(self._CODING, exc.detail)

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        if not data:
            return
        decoder = self._core
        try:
            decoder.feed(data)
            while True:
                piece = decoder.read(MAX_PIECE)
                if piece:
                    yield piece
                if decoder.needs_input:
                    return
        except _core.DecoderError as exc:
            raise self._error(exc) from None

    def flush_pieces(self) -> typing.Iterator[bytes]:
        try:
            self._core.finish()
        except _core.DecoderError as exc:
            raise self._error(exc) from None
        yield from ()

    def decode_whole(self, raw: bytes, max_size: int | None) -> bytes:
        """`raw`, a whole body, decoded into one bytes object, sized at once when the body
        announces its decoded size (gzip, zstd) and grown by doubling otherwise; at most
        `max_size` bytes, else ResponseTooLarge, with decoding stopped one byte past it."""
        decoder = self._core
        limit = sys.maxsize if max_size is None else min(max_size + 1, sys.maxsize)
        try:
            decoder.feed(raw)
            body = decoder.read(limit, decoder.size_hint())
            if max_size is not None and len(body) > max_size:
                raise ResponseTooLarge.decoded(max_size)
            decoder.finish()
        except _core.DecoderError as exc:
            raise self._error(exc) from None
        return body


class GzipDecoder(_CDecoder):
    """
    `Content-Encoding: gzip` (and `x-gzip`). A gzip body may hold several members
    one after the other (RFC 1952 2.2); each is decoded and their output joined.
    Zero bytes between or after members are skipped as padding, as the gzip module
    does; anything else after a complete member that does not start a new member
    is ignored, as `zlib.decompress` does.
    """

    _CODING = "gzip"


class DeflateDecoder(_CDecoder):
    """
    `Content-Encoding: deflate`. The standard says a zlib stream (RFC 1950), but
    some servers send raw deflate (RFC 1951) without the zlib header, so the first
    two bytes decide: a zlib header, else raw deflate. Bytes after the end of the
    stream are ignored.
    """

    _CODING = "deflate"


class BrotliDecoder(_CDecoder):
    """`Content-Encoding: br`. Bytes after the end of the stream are an error."""

    _CODING = "br"


class ZstdDecoder(_CDecoder):
    """
    `Content-Encoding: zstd`. A body may hold several zstd frames one after the other;
    each is decoded and their output joined. Bytes after a frame that do not start a
    frame are an error.
    """

    _CODING = "zstd"


class MultiDecoder(ContentDecoder):
    """
    Several content codings, given in the order the header lists them, which is
    the order the server applied them: `Content-Encoding: gzip, br` means gzip
    first, then br. Decoding runs in reverse: br is undone first, then gzip. Each
    piece one decoder yields goes through the next before the first goes on.
    """

    def __init__(self, decoders: typing.Sequence[ContentDecoder]) -> None:
        self._decoders = list(reversed(decoders))

    def _through(self, index: int, data: bytes) -> typing.Iterator[bytes]:
        """`data` decoded by the decoders from `index` on."""
        if index == len(self._decoders):
            yield data
            return
        for piece in self._decoders[index].pieces(data):
            yield from self._through(index + 1, piece)

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        return self._through(0, data)

    def flush_pieces(self) -> typing.Iterator[bytes]:
        # What each decoder still holds goes through the decoders after it, which are
        # flushed after it.
        for index, decoder in enumerate(self._decoders):
            for piece in decoder.flush_pieces():
                yield from self._through(index + 1, piece)


SUPPORTED_ENCODINGS: dict[str, type[ContentDecoder]] = {
    "identity": IdentityDecoder,
    "gzip": GzipDecoder,
    "x-gzip": GzipDecoder,
    "deflate": DeflateDecoder,
}
_C_DECODED = _core.decoder_codings()  # gzip and deflate always; br and zstd in every wheel
if "br" in _C_DECODED:
    SUPPORTED_ENCODINGS["br"] = BrotliDecoder
if "zstd" in _C_DECODED:
    SUPPORTED_ENCODINGS["zstd"] = ZstdDecoder


def decoder_for(content_encodings: typing.Sequence[str]) -> ContentDecoder:
    """
    The decoder for a response's Content-Encoding, given as the header's values
    split on commas (`["gzip", " BR"]`); names are matched without case or spaces,
    and empty names are skipped.

    If any coding is unknown, the whole body is passed through undecoded: the codings
    are undone last to first, so one applied after the unknown coding could still be
    undone, but one applied before it cannot, and half-decoded bytes are of no use to
    anyone. Leaving the body as the server sent it lets the caller handle it.
    """
    names = [name.strip().lower() for value in content_encodings for name in value.split(",")]
    names = [name for name in names if name and name != "identity"]
    if not names or any(name not in SUPPORTED_ENCODINGS for name in names):
        return IdentityDecoder()
    if len(names) == 1:
        return SUPPORTED_ENCODINGS[names[0]]()
    return MultiDecoder([SUPPORTED_ENCODINGS[name]() for name in names])


class LimitedJoin:
    """Bytes collected to be joined, at most `limit` of them (None: no limit): past it,
    `add()` raises ResponseTooLarge (naming `request`) and keeps nothing more."""

    def __init__(self, limit: int | None, request: typing.Any = None) -> None:
        self._limit = limit
        self._request = request
        self._chunks: list[bytes] = []
        self._size = 0

    def add(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._limit is not None and self._size > self._limit:
            raise ResponseTooLarge.decoded(self._limit, request=self._request)
        self._chunks.append(chunk)

    def join(self) -> bytes:
        return self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)


def decode_all(
    raw: bytes, content_encodings: typing.Sequence[str], max_size: int | None = None
) -> bytes:
    """
    Undo the Content-Encoding of a whole body at once (see `decoder_for`); raises
    `DecodingError` for a body that cannot be decoded or that was truncated, and
    `ResponseTooLarge` as soon as the decoded body would pass `max_size` bytes
    (decoding stops there: no more than `max_size` + one piece is ever held).
    """
    decoder = decoder_for(content_encodings)
    if isinstance(decoder, _CDecoder):
        return decoder.decode_whole(raw, max_size)
    output = LimitedJoin(max_size)
    for piece in itertools.chain(decoder.pieces(raw), decoder.flush_pieces()):
        output.add(piece)
    return output.join()


def accept_encoding_header() -> bytes:
    """The Accept-Encoding value to send: the codings that can be decoded here, which is
    `gzip, deflate, br, zstd` in every wheel."""
    names = [name for name in ("gzip", "deflate", "br", "zstd") if name in SUPPORTED_ENCODINGS]
    return ", ".join(names).encode()


# --- Chunkers ----------------------------------------------------------------------------


def _check_chunk_size(chunk_size: int | None) -> None:
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer or None, not {chunk_size!r}")


class ByteChunker:
    """
    Cut bytes into chunks of exactly `chunk_size` bytes; `flush()` returns the
    shorter rest. With `chunk_size=None` each non-empty piece is one chunk as it
    came. No chunk is ever empty.
    """

    def __init__(self, chunk_size: int | None = None) -> None:
        _check_chunk_size(chunk_size)
        self._chunk_size = chunk_size
        self._buffer = bytearray()

    def decode(self, data: bytes) -> list[bytes]:
        size = self._chunk_size
        if size is None:
            return [data] if data else []
        if not self._buffer and len(data) == size:
            return [data]
        self._buffer += data
        end = len(self._buffer) - len(self._buffer) % size
        chunks = [bytes(self._buffer[start : start + size]) for start in range(0, end, size)]
        del self._buffer[:end]
        return chunks

    def flush(self) -> list[bytes]:
        rest = bytes(self._buffer)
        self._buffer.clear()
        return [rest] if rest else []


class TextChunker:
    """
    Cut text into chunks of exactly `chunk_size` characters; `flush()` returns the
    shorter rest. With `chunk_size=None` each non-empty piece is one chunk as it
    came. No chunk is ever empty.
    """

    def __init__(self, chunk_size: int | None = None) -> None:
        _check_chunk_size(chunk_size)
        self._chunk_size = chunk_size
        self._buffer = ""

    def decode(self, text: str) -> list[str]:
        size = self._chunk_size
        if size is None:
            return [text] if text else []
        text = self._buffer + text
        end = len(text) - len(text) % size
        self._buffer = text[end:]
        return [text[start : start + size] for start in range(0, end, size)]

    def flush(self) -> list[str]:
        rest, self._buffer = self._buffer, ""
        return [rest] if rest else []


# --- Text ---------------------------------------------------------------------------------


class TextDecoder:
    """
    Decode bytes to text piece by piece: a multi-byte character split between two
    pieces comes out whole with the second. Bytes that are not valid in `encoding`
    become U+FFFD. An unknown `encoding` raises LookupError.
    """

    def __init__(self, encoding: str = "utf-8") -> None:
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def decode(self, data: bytes) -> str:
        return self._decoder.decode(data)

    def flush(self) -> str:
        return self._decoder.decode(b"", True)


# Every line boundary of str.splitlines(); "\r\n" counts as one.
_LINE_BREAK = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class LineDecoder:
    """
    Split text into lines piece by piece, as `str.splitlines()` splits the whole:
    for any way of cutting a text into pieces, the lines of every `decode()` and the
    final `flush()` put together are `text.splitlines()`. Lines come without their
    line break; a "\\r\\n" split between two pieces is still one line break; the
    last line, if it has no line break, comes from `flush()`.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []  # the current line, not ended yet
        self._after_cr = False  # the last piece ended with "\r": a "\n" may follow

    def decode(self, text: str) -> list[str]:
        if not text:
            return []
        if self._after_cr:
            self._after_cr = False
            if text[0] == "\n":  # the second half of a "\r\n" whose line was returned
                text = text[1:]
                if not text:
                    return []
        if _LINE_BREAK.search(text) is None:
            self._parts.append(text)
            return []
        if self._parts:
            self._parts.append(text)
            text = "".join(self._parts)
            self._parts = []
        lines = text.splitlines(keepends=True)
        last = lines[-1]
        if _LINE_BREAK.match(last[-1]) is None:
            self._parts.append(lines.pop())
        self._after_cr = text[-1] == "\r"
        return [line[:-2] if line.endswith("\r\n") else line[:-1] for line in lines]

    def flush(self) -> list[str]:
        self._after_cr = False
        if not self._parts:
            return []
        line = "".join(self._parts)
        self._parts = []
        return [line]
