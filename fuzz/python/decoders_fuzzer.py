"""atheris target: the content decoders, through the API that stays whatever implements it
(`decoder_for`, `decode_all` in requestx/_decoders.py).

Input (FuzzedDataProvider): the Content-Encoding values, a size limit (or none), a mode, and
a payload. Mode 0 decodes the payload as it is (mostly not a valid stream); mode 1 first
encodes it with the chosen codings, so decoding goes deep; mode 2 encodes it, then cuts the
stream short or flips a byte. Properties:

* `decode_all` returns bytes or raises `DecodingError` or `ResponseTooLarge`, nothing else;
  its result is never longer than the limit;
* a stream the codings made decodes back to the payload (when within the limit);
* the incremental decoder (`decoder_for`: `pieces`, `flush_pieces`), fed the body in pieces
  split where the input says, yields pieces of at most MAX_PIECE bytes, raises nothing but
  `DecodingError`, and yields in all what `decode_all` returns.
"""

from __future__ import annotations

import gzip
import zlib

from _target import atheris, check, run

with atheris.instrument_imports(include=["requestx"]):
    from requestx import DecodingError, ResponseTooLarge
    from requestx._decoders import MAX_PIECE, SUPPORTED_ENCODINGS, decode_all, decoder_for

try:
    import brotli
except ImportError:  # br is then not decoded either (SUPPORTED_ENCODINGS)
    brotli = None
try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    try:
        from backports import zstd  # type: ignore[import-not-found,no-redef]
    except ImportError:
        zstd = None

NAMES = ["gzip", "deflate", "br", "zstd", "identity", "GZIP", " br ", "x-unknown", ""]


def _encode(name: str, data: bytes, raw_deflate: bool) -> bytes:
    name = name.strip().lower()
    if name == "gzip":
        return gzip.compress(data, mtime=0)
    if name == "deflate":  # zlib-wrapped, or raw deflate as some servers send it
        if raw_deflate:
            compressor = zlib.compressobj(wbits=-15)
            return compressor.compress(data) + compressor.flush()
        return zlib.compress(data)
    if name == "br" and brotli is not None:
        return brotli.compress(data)  # type: ignore[no-any-return]
    if name == "zstd" and zstd is not None:
        return zstd.compress(data)  # type: ignore[no-any-return]
    return data


def _decoded(body: bytes, encodings: list[str], cuts: list[int]) -> bytes | type:
    """What the incremental decoder yields for `body` fed in pieces cut at `cuts`."""
    decoder = decoder_for(encodings)
    output = []
    start = 0
    try:
        for cut in [*sorted(cuts), len(body)]:
            for piece in decoder.pieces(body[start:cut]):
                check(len(piece) <= MAX_PIECE, "a piece over MAX_PIECE", len(piece))
                output.append(piece)
            start = max(start, cut)
        for piece in decoder.flush_pieces():
            check(len(piece) <= MAX_PIECE, "a piece over MAX_PIECE", len(piece))
            output.append(piece)
    except DecodingError:
        return DecodingError
    return b"".join(output)


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    encodings = [fdp.PickValueInList(NAMES) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    if fdp.ConsumeBool():  # one header value listing them, or one value each
        encodings = [", ".join(encodings)]
    limit = fdp.PickValueInList([None, 0, 1, 100, 4096, MAX_PIECE])
    mode = fdp.ConsumeIntInRange(0, 2)
    raw_deflate = fdp.ConsumeBool()
    damage = fdp.ConsumeIntInRange(0, 1 << 16)
    cuts = [fdp.ConsumeIntInRange(0, 256) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    payload = fdp.ConsumeBytes(fdp.remaining_bytes())
    if mode == 2 and fdp.ConsumeBool():
        payload = payload * 1000  # compresses well: output far larger than the body

    body = payload
    names = [name for value in encodings for name in value.split(",")]
    if mode:
        for name in names:  # the first coding is applied first and undone last
            body = _encode(name, body, raw_deflate)
    if mode == 2 and body:
        if damage % 2:
            body = body[: damage % len(body)]
        else:
            at = damage % len(body)
            body = body[:at] + bytes([body[at] ^ 0x5A]) + body[at + 1 :]

    try:
        result: bytes | type = decode_all(body, encodings, max_size=limit)
    except DecodingError:
        result = DecodingError
    except ResponseTooLarge:
        result = ResponseTooLarge
    if isinstance(result, bytes):
        check(limit is None or len(result) <= limit, "decode_all passed its limit", limit)
    plain = ("", "identity")
    known = all(name.strip().lower() in (*SUPPORTED_ENCODINGS, *plain) for name in names)
    known = known and any(name.strip().lower() not in plain for name in names)
    if mode == 1 and known:
        fits = limit is None or len(payload) <= limit
        want = payload if fits else ResponseTooLarge
        check(result == want, "a stream made here does not decode back", encodings, limit)

    streamed = _decoded(body, encodings, cuts)
    if result is ResponseTooLarge:
        check(
            streamed is DecodingError or len(streamed) > (limit or 0),  # type: ignore[arg-type]
            "ResponseTooLarge for output within the limit",
            encodings,
            limit,
        )
    else:
        check(streamed == result, "decoded in pieces differs from decode_all", encodings, cuts)


if __name__ == "__main__":
    run(test_one_input)
