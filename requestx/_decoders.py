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
caller that stops early never holds more than one piece. Only codec modules that
can bound their output this way are used:

* gzip and deflate: the standard library's zlib (`max_length`);
* br: `brotli` >= 1.2 or `brotlicffi` >= 1.2 (`output_buffer_limit`);
* zstd: `compression.zstd` (Python 3.14) or its backport `backports.zstd`
  (`max_length`). The `zstandard` package is not used: its streaming decompressor
  returns everything a piece of input expands to, however large.

br and zstd are optional: each is offered (`accept_encoding_header`) and decoded
only when a module above can be imported; a body in a coding that cannot be
decoded here is passed through as it came (see `decoder_for`).
"""

from __future__ import annotations

import codecs
import importlib
import itertools
import re
import types
import typing
import zlib

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


def _import_first(*names: str) -> types.ModuleType | None:
    """The first of the named modules that can be imported, or None."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def _bounded_brotli() -> types.ModuleType | None:
    """brotli or brotlicffi, if one new enough to bound its output is installed."""
    for name in ("brotli", "brotlicffi"):
        module = _import_first(name)
        if module is not None and hasattr(module.Decompressor(), "can_accept_more_data"):
            return module
    return None


# Typed as plain modules on purpose: neither codec is a dependency (nor installed for type
# checking), so their attributes are `Any` here.
_brotli = _bounded_brotli()
_zstd = _import_first("compression.zstd", "backports.zstd")


def _truncated(coding: str) -> DecodingError:
    return DecodingError(
        f"Cannot decode {coding!r} content: the body was truncated "
        "(it ended before the end of the compressed stream)"
    )


def _invalid(coding: str, exc: BaseException) -> DecodingError:
    return DecodingError(f"Cannot decode {coding!r} content: {exc}")


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


def _inflate(decompressor: typing.Any, data: bytes) -> typing.Iterator[bytes]:
    """
    Feed `data` to a zlib Decompress and yield all it produces, `MAX_PIECE` at a time.
    A full piece may leave output behind even when all input was taken, so decoding
    goes on until a call returns less than asked for with no input left over.
    Raises zlib.error.
    """
    while True:
        output: bytes = decompressor.decompress(data, MAX_PIECE)
        if output:
            yield output
        data = decompressor.unconsumed_tail
        if decompressor.eof or (not data and len(output) < MAX_PIECE):
            return


class DeflateDecoder(ContentDecoder):
    """
    `Content-Encoding: deflate`. The standard says a zlib stream (RFC 1950), but
    some servers send raw deflate (RFC 1951) without the zlib header, so the first
    bytes decide: the first two bytes are held back until both are there, then
    tried as a zlib stream, and if that fails right away, as raw deflate.
    Bytes after the end of the stream are ignored.
    """

    def __init__(self) -> None:
        self._decompressor: typing.Any = None  # zlib's Decompress, once the kind is known
        self._head = b""  # the first bytes, held back until the kind is known
        self._seen_data = False

    def _start(self, data: bytes) -> typing.Iterator[bytes]:
        decompressor = zlib.decompressobj()
        try:
            decompressor.decompress(data[:2])  # the zlib header, if it is one: no output
            data = data[2:]
        except zlib.error:
            decompressor = zlib.decompressobj(-zlib.MAX_WBITS)
        self._decompressor = decompressor
        yield from self._decompress(data)

    def _decompress(self, data: bytes) -> typing.Iterator[bytes]:
        try:
            yield from _inflate(self._decompressor, data)
        except zlib.error as exc:
            raise _invalid("deflate", exc) from exc

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        if not data:
            return
        self._seen_data = True
        if self._decompressor is None:
            data = self._head + data
            if len(data) < 2:
                self._head = data
                return
            self._head = b""
            yield from self._start(data)
            return
        if self._decompressor.eof:
            return  # trailing bytes after the end of the stream
        yield from self._decompress(data)

    def flush_pieces(self) -> typing.Iterator[bytes]:
        if not self._seen_data:
            return  # no body at all (HEAD, 204, 304...): nothing to decode
        if self._decompressor is None:  # fewer than two bytes ever came
            yield from self._start(self._head)
            self._head = b""
        try:
            tail: bytes = self._decompressor.flush()
        except zlib.error as exc:  # pragma: no cover - flush() of a Decompress hardly fails
            raise _invalid("deflate", exc) from exc
        if not self._decompressor.eof:
            raise _truncated("deflate")
        if tail:  # pragma: no cover - pieces() left nothing behind
            yield tail


_GZIP_MAGIC = b"\x1f\x8b"


class GzipDecoder(ContentDecoder):
    """
    `Content-Encoding: gzip` (and `x-gzip`). A gzip body may hold several members
    one after the other (RFC 1952 2.2); each is decoded and their output joined.
    Zero bytes between or after members are skipped as padding, as the gzip module
    does; anything else after a complete member that does not start a new member
    is ignored, as `zlib.decompress` does.
    """

    def __init__(self) -> None:
        self._decompressor: typing.Any = None  # zlib's Decompress for the current member
        self._pending = b""  # bytes after a member, too few to tell whether a new one starts
        self._ignore_rest = False  # trailing bytes that are not a gzip member were seen
        self._seen_data = False

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        if not data or self._ignore_rest:
            return
        self._seen_data = True
        data = self._pending + data
        self._pending = b""
        while data:
            if self._decompressor is not None and self._decompressor.eof:
                # Between two members: skip padding, then look for the next member.
                data = data.lstrip(b"\x00")
                if data == _GZIP_MAGIC[:1]:
                    self._pending = data
                    return
                if data and not data.startswith(_GZIP_MAGIC):
                    self._ignore_rest = True
                    return
                if not data:
                    return
                self._decompressor = None
            if self._decompressor is None:
                self._decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
            try:
                yield from _inflate(self._decompressor, data)
            except zlib.error as exc:
                raise _invalid("gzip", exc) from exc
            data = self._decompressor.unused_data if self._decompressor.eof else b""

    def flush_pieces(self) -> typing.Iterator[bytes]:
        if not self._seen_data:
            return  # no body at all (HEAD, 204, 304...): nothing to decode
        try:
            tail: bytes = self._decompressor.flush()
        except zlib.error as exc:  # pragma: no cover - flush() of a Decompress hardly fails
            raise _invalid("gzip", exc) from exc
        if not self._decompressor.eof:
            raise _truncated("gzip")
        if tail:  # pragma: no cover - pieces() left nothing behind
            yield tail


def _split(output: bytes) -> typing.Iterator[bytes]:
    """`output` in pieces of at most MAX_PIECE bytes (none empty)."""
    if len(output) <= MAX_PIECE:
        if output:
            yield output
        return
    view = memoryview(output)
    for start in range(0, len(output), MAX_PIECE):
        yield bytes(view[start : start + MAX_PIECE])


class BrotliDecoder(ContentDecoder):
    """
    `Content-Encoding: br`, with `brotli` or `brotlicffi` (1.2 or later, whose
    `output_buffer_limit` bounds each call's output). Bytes after the end of the
    stream are an error, as brotli itself reports them.
    """

    # brotli's output limit is soft (its buffer stops growing once past it, so a call
    # returns up to about twice the limit); half a piece keeps calls near MAX_PIECE.
    _LIMIT = MAX_PIECE // 2

    def __init__(self) -> None:
        if _brotli is None:
            raise ImportError(
                "Decoding 'br' content needs the 'brotli' (or 'brotlicffi') package, 1.2 or later."
            )
        self._error: type[BaseException] = getattr(_brotli, "error", Exception)
        self._decompressor = _brotli.Decompressor()
        self._seen_data = False

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        if not data:
            return
        self._seen_data = True
        decompressor = self._decompressor
        try:
            output: bytes = decompressor.process(data, output_buffer_limit=self._LIMIT)
            yield from _split(output)
            # A call that reached the limit may have left output behind, and one that had
            # no room for all the input kept the rest (can_accept_more_data() is False):
            # drain both before new input.
            while len(output) >= self._LIMIT or not decompressor.can_accept_more_data():
                output = decompressor.process(b"", output_buffer_limit=self._LIMIT)
                yield from _split(output)
        except self._error as exc:
            raise _invalid("br", exc) from exc

    def flush_pieces(self) -> typing.Iterator[bytes]:
        if self._seen_data and not self._decompressor.is_finished():
            raise _truncated("br")
        yield from ()


class ZstdDecoder(ContentDecoder):
    """
    `Content-Encoding: zstd`, with `compression.zstd` or `backports.zstd`. A body may
    hold several zstd frames one after the other; each is decoded and their output
    joined.
    """

    def __init__(self) -> None:
        if _zstd is None:
            raise ImportError("Decoding 'zstd' content needs the 'backports.zstd' package.")
        self._error: type[BaseException] = _zstd.ZstdError
        self._decompressor: typing.Any = None  # the decompressor for the current frame
        self._seen_data = False

    def pieces(self, data: bytes) -> typing.Iterator[bytes]:
        if not data:
            return
        self._seen_data = True
        assert _zstd is not None
        try:
            while True:
                if self._decompressor is None or self._decompressor.eof:
                    # A decompressor decodes one frame; each frame gets a new one.
                    self._decompressor = _zstd.ZstdDecompressor()
                output: bytes = self._decompressor.decompress(data, MAX_PIECE)
                if output:
                    yield output
                if self._decompressor.eof:
                    data = self._decompressor.unused_data
                    if not data:
                        return
                elif self._decompressor.needs_input:
                    return
                else:
                    data = b""  # more output is waiting inside the decompressor
        except self._error as exc:
            raise _invalid("zstd", exc) from exc

    def flush_pieces(self) -> typing.Iterator[bytes]:
        if self._seen_data and not self._decompressor.eof:
            raise _truncated("zstd")
        yield from ()


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
if _brotli is not None:
    SUPPORTED_ENCODINGS["br"] = BrotliDecoder
if _zstd is not None:
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
    output = LimitedJoin(max_size)
    for piece in itertools.chain(decoder.pieces(raw), decoder.flush_pieces()):
        output.add(piece)
    return output.join()


def accept_encoding_header() -> bytes:
    """The Accept-Encoding value to send: the codings that can be decoded here."""
    value = b"gzip, deflate"
    if "br" in SUPPORTED_ENCODINGS:
        value += b", br"
    if "zstd" in SUPPORTED_ENCODINGS:
        value += b", zstd"
    return value


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
