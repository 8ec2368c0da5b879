"""
The incremental decoders of requestx._decoders: content codings, chunkers, text and
lines. Most tests cut their input at random places (seeded) and check that the pieces
decode to the same result as the whole.

The content codings are decoded in C (`_core.Decoder`, csrc/decode.c); the brotli and
zstd Python packages are used here only to compress test bodies. What C decoding adds to
check: every read stays within the room it was given, a piece must be used up before the
next is fed, and damaged input of any kind is an error, never a crash (the same checks
run under AddressSanitizer with scripts/test_asan.sh).
"""

from __future__ import annotations

import contextlib
import gzip
import random
import subprocess
import sys
import typing
import zlib

import pytest

import requestx
from requestx import _core
from requestx._decoders import (
    MAX_PIECE,
    SUPPORTED_ENCODINGS,
    BrotliDecoder,
    ByteChunker,
    ContentDecoder,
    DeflateDecoder,
    GzipDecoder,
    IdentityDecoder,
    LineDecoder,
    MultiDecoder,
    TextChunker,
    TextDecoder,
    ZstdDecoder,
    accept_encoding_header,
    decode_all,
    decoder_for,
)
from requestx._exceptions import DecodingError
from tests.support.bombs import bomb, zstd_module
from tests.support.paths import ROOT

T = typing.TypeVar("T", bytes, str)

SEEDS = range(40)


def random_split(data: T, rng: random.Random) -> list[T]:
    """`data` cut at random places, with empty and one-element pieces now and then."""
    pieces: list[T] = []
    start = 0
    while start < len(data):
        kind = rng.random()
        if kind < 0.1:
            size = 0
        elif kind < 0.4:
            size = 1
        elif kind < 0.8:
            size = rng.randint(2, 16)
        else:
            size = rng.randint(17, max(17, len(data) // 2))
        pieces.append(data[start : start + size])
        start += size
    if rng.random() < 0.3:
        pieces.insert(rng.randint(0, len(pieces)), data[:0])
    return pieces


def run(decoder: ContentDecoder, pieces: typing.Iterable[bytes]) -> bytes:
    """Feed `pieces` to `decoder` one by one, then flush it."""
    output = [decoder.decode(piece) for piece in pieces]
    output.append(decoder.flush())
    return b"".join(output)


def payloads(rng: random.Random) -> list[bytes]:
    return [
        b"x",
        b"hello world " * 300,  # compresses well
        rng.randbytes(5000),  # does not compress at all
        bytes(rng.choice(b"ab\n") for _ in range(20000)),
    ]


def gzip_of(data: bytes) -> bytes:
    return gzip.compress(data)


def zlib_of(data: bytes) -> bytes:
    return zlib.compress(data)


def raw_deflate_of(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


COMPRESSORS: dict[str, tuple[str, typing.Callable[[bytes], bytes]]] = {
    "gzip": ("gzip", gzip_of),
    "x-gzip": ("x-gzip", gzip_of),
    "deflate-zlib": ("deflate", zlib_of),
    "deflate-raw": ("deflate", raw_deflate_of),
}


# --- Content decoders: round trips ---------------------------------------------------------


@pytest.mark.parametrize("kind", list(COMPRESSORS))
def test_round_trip_with_random_splits(kind: str) -> None:
    coding, compress = COMPRESSORS[kind]
    for seed in SEEDS:
        rng = random.Random(seed)
        for payload in payloads(rng):
            body = compress(payload)
            assert run(decoder_for([coding]), random_split(body, rng)) == payload
            assert decode_all(body, [coding]) == payload


@pytest.mark.parametrize("kind", list(COMPRESSORS))
def test_round_trip_one_byte_at_a_time(kind: str) -> None:
    coding, compress = COMPRESSORS[kind]
    payload = b"one byte at a time " * 40
    body = compress(payload)
    assert run(decoder_for([coding]), [body[i : i + 1] for i in range(len(body))]) == payload


@pytest.mark.parametrize("kind", ["deflate-zlib", "deflate-raw"])
def test_deflate_first_piece_of_every_length(kind: str) -> None:
    # The zlib-or-raw choice is made on the first bytes, whatever the first piece's size.
    _, compress = COMPRESSORS[kind]
    payload = b"deflate " * 100
    body = compress(payload)
    for cut in range(len(body) + 1):
        assert run(DeflateDecoder(), [body[:cut], body[cut:]]) == payload


def test_deflate_of_empty_payload() -> None:
    # Raw deflate of b"" is just two bytes, fewer than the zlib header check needs.
    for body in (zlib_of(b""), raw_deflate_of(b"")):
        assert run(DeflateDecoder(), [body]) == b""
        assert run(DeflateDecoder(), [body[:1], body[1:]]) == b""
    assert run(GzipDecoder(), [gzip_of(b"")]) == b""


STACKS = [
    (["gzip", "deflate"], [gzip_of, zlib_of]),
    (["deflate", "gzip"], [raw_deflate_of, gzip_of]),
    (["gzip", "gzip", "deflate"], [gzip_of, gzip_of, zlib_of]),
    (["x-gzip", "identity", "deflate"], [gzip_of, raw_deflate_of]),
]


@pytest.mark.parametrize(("codings", "compressors"), STACKS)
def test_stacked_codings_are_undone_last_first(
    codings: list[str], compressors: list[typing.Callable[[bytes], bytes]]
) -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        for payload in payloads(rng):
            body = payload
            for compress in compressors:  # applied in header order
                body = compress(body)
            decoder = decoder_for(codings)
            assert isinstance(decoder, MultiDecoder)
            assert run(decoder, random_split(body, rng)) == payload
            # The same list given as one header value.
            assert decode_all(body, [", ".join(codings)]) == payload


def test_multi_decoder_takes_decoders_in_header_order() -> None:
    payload = b"stacked " * 50
    body = zlib_of(gzip_of(payload))  # Content-Encoding: gzip, deflate
    assert run(MultiDecoder([GzipDecoder(), DeflateDecoder()]), [body]) == payload
    with pytest.raises(DecodingError):
        run(MultiDecoder([DeflateDecoder(), GzipDecoder()]), [body])


def test_concatenated_gzip_members() -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        parts = [rng.randbytes(rng.randint(0, 300)) * rng.randint(1, 5) for _ in range(4)]
        body = b"".join(gzip_of(part) for part in parts)
        assert gzip.decompress(body) == b"".join(parts)  # what the gzip module makes of it
        assert run(GzipDecoder(), random_split(body, rng)) == b"".join(parts)


def test_gzip_members_split_at_every_boundary() -> None:
    first, second = gzip_of(b"first member, "), gzip_of(b"second member")
    body = first + second
    for cut in range(len(body) + 1):
        assert run(GzipDecoder(), [body[:cut], body[cut:]]) == b"first member, second member"


def test_gzip_zero_padding_and_trailing_garbage_are_ignored() -> None:
    member = gzip_of(b"payload")
    for body in (
        member + b"\x00" * 10,
        member + b"\x00\x00" + gzip_of(b"-more"),
        member + b"trailing garbage",
        member + b"\x1f",  # half a gzip magic number
        member + b"\x00\x1f",
    ):
        expected = b"payload-more" if body.endswith(gzip_of(b"-more")) else b"payload"
        for cut in range(len(body) + 1):
            assert run(GzipDecoder(), [body[:cut], body[cut:]]) == expected
        # Garbage is not read as a new member even if a member follows it.
        assert run(GzipDecoder(), [body, b"x" + member]) == expected


def test_deflate_trailing_bytes_are_ignored() -> None:
    # zlib.decompress ignores them too, which is what requestx did before.
    for body in (zlib_of(b"payload") + b"garbage", raw_deflate_of(b"payload") + b"\x00\x00"):
        assert run(DeflateDecoder(), [body[:-3], body[-3:], b"more"]) == b"payload"


# --- Content decoders: errors --------------------------------------------------------------


@pytest.mark.parametrize(
    ("coding", "body", "detail"),
    [
        ("gzip", b"not gzip at all", "incorrect header check (zlib error -3)"),
        ("x-gzip", b"\x1f\x8b\x09" + b"\x00" * 20, "unknown compression method (zlib error -3)"),
        ("deflate", b"nope, not deflate either", "invalid block type (zlib error -3)"),
        ("br", b"\xff" * 20, "invalid data: "),
        ("zstd", b"not zstd data at all", "Unknown frame descriptor (zstd error 10)"),
    ],
)
def test_invalid_data_raises_decoding_error(coding: str, body: bytes, detail: str) -> None:
    for decode in (
        lambda: decode_all(body, [coding]),  # the whole body at once
        lambda: run(decoder_for([coding]), [body[:3], body[3:]]),  # in pieces
    ):
        with pytest.raises(DecodingError) as info:
            decode()
        message = str(info.value)
        assert message.startswith(f"Cannot decode {coding.replace('x-', '')!r} content: ")
        assert detail in message
        assert isinstance(info.value, requestx.DecodingError)
        assert isinstance(info.value, requestx.RequestError)
        assert info.value.__cause__ is None  # the codec's words are in the message


@pytest.mark.parametrize("kind", list(COMPRESSORS))
def test_corrupt_data_raises_decoding_error_in_pieces(kind: str) -> None:
    coding, compress = COMPRESSORS[kind]
    rng = random.Random(7)
    payload = rng.randbytes(2000)
    body = bytearray(compress(payload))
    if kind == "deflate-raw":
        body[0] |= 0b110  # the first block's type: 3 is reserved
    else:
        for i in range(len(body) - 4, len(body)):  # the checksum
            body[i] ^= 0xFF
    with pytest.raises(DecodingError, match="Cannot decode"):
        run(decoder_for([coding]), random_split(bytes(body), rng))


@pytest.mark.parametrize("kind", list(COMPRESSORS))
def test_truncated_body_raises_at_flush(kind: str) -> None:
    coding, compress = COMPRESSORS[kind]
    rng = random.Random(3)
    body = compress(b"truncated " * 200 + rng.randbytes(100))
    for end in range(1, len(body)):
        decoder = decoder_for([coding])
        for piece in random_split(body[:end], rng):
            decoder.decode(piece)  # no error yet: more could come
        with pytest.raises(DecodingError, match="truncated"):
            decoder.flush()
        with pytest.raises(DecodingError, match="truncated"):
            decode_all(body[:end], [coding])


def test_truncated_second_gzip_member_raises() -> None:
    body = gzip_of(b"first") + gzip_of(b"second")
    for end in range(len(gzip_of(b"first")) + 2, len(body)):
        with pytest.raises(DecodingError, match="truncated"):
            decode_all(body[:end], ["gzip"])


def test_truncated_stack_raises() -> None:
    body = zlib_of(gzip_of(b"stacked " * 100))
    with pytest.raises(DecodingError, match="truncated"):
        decode_all(body[:-1], ["gzip", "deflate"])
    inner_cut = zlib_of(gzip_of(b"stacked " * 100)[:-1])  # deflate fine, gzip truncated
    with pytest.raises(DecodingError, match="'gzip'.*truncated"):
        decode_all(inner_cut, ["gzip", "deflate"])


@pytest.mark.parametrize(
    "codings", [["gzip"], ["x-gzip"], ["deflate"], ["gzip", "deflate"], ["identity"], []]
)
def test_empty_body_is_not_an_error(codings: list[str]) -> None:
    assert decode_all(b"", codings) == b""
    decoder = decoder_for(codings)
    assert decoder.flush() == b""
    decoder = decoder_for(codings)
    assert decoder.decode(b"") == b""
    assert decoder.decode(b"") == b""
    assert decoder.flush() == b""


# --- Choosing a decoder --------------------------------------------------------------------


def test_supported_encodings() -> None:
    assert SUPPORTED_ENCODINGS["identity"] is IdentityDecoder
    assert SUPPORTED_ENCODINGS["gzip"] is GzipDecoder
    assert SUPPORTED_ENCODINGS["x-gzip"] is GzipDecoder
    assert SUPPORTED_ENCODINGS["deflate"] is DeflateDecoder
    assert SUPPORTED_ENCODINGS["br"] is BrotliDecoder
    assert SUPPORTED_ENCODINGS["zstd"] is ZstdDecoder
    # In C, with the libraries libcurl links: the same codings libcurl was built with.
    assert _core.decoder_codings() == ("gzip", "deflate", "br", "zstd")
    info = _core.libcurl_info()
    assert info["libz"] and info["brotli"] and info["zstd"]


def test_br_and_zstd_need_no_python_package() -> None:
    """Whatever codec packages are installed (here none: brotli, brotlicffi, zstandard and
    the zstd modules cannot be imported, and an old brotli without output limits is), the
    client offers and decodes all four codings."""
    script = f"""
import sys, types
for name in ("brotli", "brotlicffi", "zstandard", "compression.zstd", "backports.zstd"):
    sys.modules[name] = None
old = types.ModuleType("brotli")
old.Decompressor = object
sys.modules["brotli"] = old
import requestx
from requestx._decoders import SUPPORTED_ENCODINGS, accept_encoding_header, decode_all
assert set(SUPPORTED_ENCODINGS) >= {{"gzip", "deflate", "br", "zstd"}}, SUPPORTED_ENCODINGS
assert accept_encoding_header() == b"gzip, deflate, br, zstd"
assert requestx.Client().headers["accept-encoding"] == "gzip, deflate, br, zstd"
assert decode_all(bytes.fromhex("{brotli_of(b"br ok").hex()}"), ["br"]) == b"br ok"
assert decode_all(bytes.fromhex("{zstd_of(b"zstd ok").hex()}"), ["zstd"]) == b"zstd ok"
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_accept_encoding_header_lists_what_can_be_decoded() -> None:
    header = accept_encoding_header()
    assert header == b"gzip, deflate, br, zstd"
    offered = [name.strip() for name in header.decode("ascii").split(",")]
    assert set(offered) <= set(SUPPORTED_ENCODINGS)
    assert set(offered) == set(SUPPORTED_ENCODINGS) - {"identity", "x-gzip"}


@pytest.mark.parametrize(
    ("codings", "expected"),
    [
        ([" GZip "], GzipDecoder),
        (["X-GZIP"], GzipDecoder),
        (["\tDeflate"], DeflateDecoder),
        (["", " gzip", " "], GzipDecoder),
        (["identity", "gzip", "IDENTITY"], GzipDecoder),
        (["gzip,deflate"], MultiDecoder),
        (["Deflate ", " GZIP"], MultiDecoder),
        (["identity"], IdentityDecoder),
        ([], IdentityDecoder),
        ([" , "], IdentityDecoder),
    ],
)
def test_coding_names_ignore_case_and_spaces(
    codings: list[str], expected: type[ContentDecoder]
) -> None:
    assert type(decoder_for(codings)) is expected


def test_case_and_spaces_round_trip() -> None:
    payload = b"names " * 30
    assert decode_all(gzip_of(payload), [" X-Gzip"]) == payload
    assert decode_all(zlib_of(gzip_of(payload)), ["GZIP , DEFLATE"]) == payload
    assert decode_all(zlib_of(gzip_of(payload)), [" gZip", "deFLATE "]) == payload


@pytest.mark.parametrize(
    "codings", [["compress"], ["gzip", "unknown"], ["unknown", "gzip"], ["gzip, x-custom"]]
)
def test_unknown_coding_passes_the_whole_body_through(codings: list[str]) -> None:
    body = gzip_of(b"left alone")
    decoder = decoder_for(codings)
    assert isinstance(decoder, IdentityDecoder)
    assert run(decoder, random_split(body, random.Random(1))) == body
    assert decode_all(body, codings) == body
    assert decode_all(b"not compressed at all", codings) == b"not compressed at all"


def test_decode_all_matches_zlib() -> None:
    # What requestx's one-shot decoding did before, for complete bodies.
    payload = random.Random(5).randbytes(3000) + b"z" * 3000
    assert decode_all(gzip_of(payload), ["gzip"]) == zlib.decompress(gzip_of(payload), 31)
    assert decode_all(zlib_of(payload), ["deflate"]) == zlib.decompress(zlib_of(payload))
    raw = raw_deflate_of(payload)
    assert decode_all(raw, ["deflate"]) == zlib.decompress(raw, -zlib.MAX_WBITS) == payload
    assert decode_all(payload, ["identity"]) is payload


# --- br and zstd ---------------------------------------------------------------------------


def brotli_of(data: bytes) -> bytes:
    """`data` compressed with br: the brotli package, a test dependency, compresses."""
    brotli = pytest.importorskip("brotli", reason="compressing br test bodies needs brotli")
    return typing.cast(bytes, brotli.compress(data))


def zstd_of(data: bytes) -> bytes:
    try:
        zstd = zstd_module()
    except ImportError:
        pytest.skip("compressing zstd test bodies needs backports.zstd (or Python 3.14)")
    return typing.cast(bytes, zstd.compress(data))


def test_brotli_round_trip_and_errors() -> None:
    for seed in SEEDS[:10]:
        rng = random.Random(seed)
        for payload in payloads(rng):
            body = brotli_of(payload)
            assert run(decoder_for(["br"]), random_split(body, rng)) == payload
    body = brotli_of(b"brotli " * 200 + random.Random(1).randbytes(200))
    for end in range(1, len(body)):
        with pytest.raises(DecodingError, match="truncated"):
            decode_all(body[:end], ["BR"])
    with pytest.raises(DecodingError, match="'br'"):
        decode_all(b"\xff" * 20 + body, ["br"])
    # Bytes after the end of the stream are an error, at once or in a later piece.
    with pytest.raises(DecodingError, match="data after the end of the stream"):
        decode_all(body + b"x", ["br"])
    with pytest.raises(DecodingError, match="data after the end of the stream"):
        run(decoder_for(["br"]), [body, b"", b"x"])
    assert decode_all(b"", ["br"]) == b""
    assert decode_all(brotli_of(gzip_of(b"stacked")), ["gzip", "br"]) == b"stacked"
    assert b"br" in accept_encoding_header().split(b", ")


def test_zstd_round_trip_frames_and_errors() -> None:
    compress = zstd_of
    for seed in SEEDS[:10]:
        rng = random.Random(seed)
        for payload in payloads(rng):
            assert run(decoder_for(["zstd"]), random_split(compress(payload), rng)) == payload
        parts = [rng.randbytes(rng.randint(0, 200)) * 3 for _ in range(4)]
        frames = b"".join(compress(part) for part in parts)
        assert run(decoder_for(["zstd"]), random_split(frames, rng)) == b"".join(parts)
        assert decode_all(frames, ["zstd"]) == b"".join(parts)
    first, second = compress(b"first, "), compress(b"second")
    for cut in range(len(first + second) + 1):
        pieces = [(first + second)[:cut], (first + second)[cut:]]
        assert run(decoder_for(["zstd"]), pieces) == b"first, second"
    body = compress(b"zstd " * 200 + random.Random(1).randbytes(200))
    for end in range(1, len(body)):
        with pytest.raises(DecodingError, match="truncated"):
            decode_all(body[:end], ["zstd"])
    with pytest.raises(DecodingError, match="'zstd'"):
        decode_all(b"not zstd data at all", ["zstd"])
    with pytest.raises(DecodingError, match="'zstd'"):
        decode_all(body + b"not a frame", ["zstd"])
    assert decode_all(b"", ["zstd"]) == b""
    assert decode_all(compress(gzip_of(b"stacked")), ["gzip", "ZSTD"]) == b"stacked"
    assert b"zstd" in accept_encoding_header().split(b", ")


# 90 bytes declared in the frame header (single segment, a one-byte content size of 0x5a),
# then one last raw block of none: found by fuzz/python/decoders_fuzzer.py.
ZSTD_DECLARES_90_GIVES_NONE = bytes.fromhex("28b52ffd205a010000")


def test_a_zstd_frame_must_give_the_size_its_header_declares() -> None:
    """libzstd checks a frame's declared content size only when it writes the frame whole
    in one call; csrc/decode.c checks it however small the steps are (pieces of one byte, or
    a read limit of 0 or 1 byte), where it used to decode to b"". A frame that gives more
    than it declares fails too, and one that declares nothing is read as far as it goes."""
    body = ZSTD_DECLARES_90_GIVES_NONE
    for limit in (None, 0, 1, 89, 90, 1000):
        with pytest.raises(DecodingError, match="'zstd'"):
            decode_all(body, ["zstd"], max_size=limit)
    with pytest.raises(DecodingError, match="content size does not match"):
        run(decoder_for(["zstd"]), [body[i : i + 1] for i in range(len(body))])
    # Declares 2, gives 3 ("abc" as one raw block): refused, in one piece or byte by byte.
    gives_more = bytes.fromhex("28b52ffd2002") + bytes.fromhex("190000") + b"abc"
    with pytest.raises(DecodingError, match="'zstd'"):
        decode_all(gives_more, ["zstd"])
    with pytest.raises(DecodingError, match="'zstd'"):
        run(decoder_for(["zstd"]), [gives_more[i : i + 1] for i in range(len(gives_more))])
    # Declares 3 and gives it; then a frame without a declared size (FHD 0x00, a window
    # byte): both read byte by byte.
    sized = bytes.fromhex("28b52ffd2003") + bytes.fromhex("190000") + b"abc"
    unsized = bytes.fromhex("28b52ffd0000") + bytes.fromhex("110000") + b"de"
    two = sized + unsized
    assert run(decoder_for(["zstd"]), [two[i : i + 1] for i in range(len(two))]) == b"abcde"
    assert decode_all(two, ["zstd"], max_size=5) == b"abcde"


# --- The C decoder's bounds and its misuse -------------------------------------------------

ALL_CODINGS = ["gzip", "deflate", "br", "zstd"]


def compressed(coding: str, data: bytes) -> bytes:
    return {"gzip": gzip_of, "deflate": zlib_of, "br": brotli_of, "zstd": zstd_of}[coding](data)


@pytest.mark.parametrize("coding", ALL_CODINGS)
def test_a_read_never_writes_more_than_its_limit(coding: str) -> None:
    """A bomb (8 MiB of zeros in a few kB or less) read with several limits: every read is
    at most its limit, one read per limit's worth, and the whole comes out."""
    body = bomb(coding, 8 << 20)
    assert len(body) < 64 * 1024
    for limit in (1, 1000, 65536, MAX_PIECE):
        decoder = _core.Decoder(coding)
        decoder.feed(body)
        total = reads = 0
        while not decoder.needs_input:
            piece = decoder.read(limit)
            assert len(piece) <= limit
            total += len(piece)
            reads += 1
            if limit == 1 and total == 100_000:
                break  # (one byte at a time: enough)
        else:
            decoder.finish()
            assert total == 8 << 20
        assert reads <= total // limit + 2


@pytest.mark.parametrize("coding", ALL_CODINGS)
def test_a_piece_is_used_up_before_the_next(coding: str) -> None:
    decoder = _core.Decoder(coding)
    assert decoder.needs_input
    decoder.feed(compressed(coding, b"z" * 100_000 + random.Random(2).randbytes(100_000)))
    assert not decoder.needs_input
    first = decoder.read(10)
    assert len(first) == 10 and not decoder.needs_input
    with pytest.raises(RuntimeError, match="not decoded yet"):
        decoder.feed(b"more")
    rest = decoder.read(1 << 30)
    assert decoder.needs_input and len(first + rest) == 200_000
    assert decoder.read(10) == b""  # nothing fed: nothing to read
    decoder.finish()
    with pytest.raises(ValueError):
        decoder.read(0)


def test_the_decoder_takes_any_buffer_and_refuses_unknown_codings() -> None:
    payload = b"buffers " * 100
    for wrap in (bytes, bytearray, memoryview):
        decoder = _core.Decoder("gzip")
        decoder.feed(wrap(gzip_of(payload)))
        assert decoder.read(1 << 20) == payload
        decoder.finish()
    with pytest.raises(ValueError, match="cannot decode 'compress'"):
        _core.Decoder("compress")
    with pytest.raises(TypeError):
        _core.Decoder("gzip").feed("text")  # type: ignore[arg-type]


@pytest.mark.parametrize("coding", ALL_CODINGS)
def test_damaged_input_is_an_error_or_decodes_never_a_crash(coding: str) -> None:
    """Compressed bodies with bytes flipped, cut, repeated or inserted at random: each one
    decodes or raises DecodingError, the same whole or in pieces (and the C code survives
    any input)."""
    rng = random.Random(coding)
    good = compressed(
        coding,
        b"".join(
            rng.choice([b"abc", b"\n", b"0123456789"]) * rng.randint(1, 50) for _ in range(300)
        ),
    )
    for _ in range(300):
        body = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            where = rng.randrange(len(body))
            action = rng.random()
            if action < 0.5:
                body[where] ^= 1 << rng.randrange(8)
            elif action < 0.7:
                body[where:] = body[where:][: rng.randint(0, 20)]
            elif action < 0.85:
                body[where:where] = body[where : where + rng.randint(1, 30)]
            else:
                body[where:where] = rng.randbytes(rng.randint(1, 10))
        outcomes = []
        for pieces in ([bytes(body)], random_split(bytes(body), rng)):
            try:
                outcomes.append(run(decoder_for([coding]), pieces))
            except DecodingError:
                outcomes.append(None)
        # The same verdict whole and in pieces.
        assert outcomes[0] == outcomes[1]
        with contextlib.suppress(DecodingError):
            assert decode_all(bytes(body), [coding]) == outcomes[0]


@pytest.mark.parametrize("coding", ["gzip", "zstd"])
def test_a_wrong_size_hint_changes_nothing(coding: str) -> None:
    """decode_all sizes its buffer from the size a gzip or zstd body announces (gzip's ISIZE
    of its last member, zstd's content size of its first frame); a body that announces a
    wrong size, or none, decodes the same."""
    payload = random.Random(4).randbytes(5000) * 20
    if coding == "gzip":
        honest = gzip_of(payload)
        others = [gzip_of(payload) + gzip_of(b"tiny last member")]
        wanted = [payload + b"tiny last member"]
        # A member whose ISIZE is wrong is invalid (zlib checks it at the member's end).
        for size in (0, 1, 99, 1 << 31, (1 << 32) - 1):
            with pytest.raises(DecodingError, match="incorrect length check"):
                decode_all(honest[:-4] + size.to_bytes(4, "little"), ["gzip"])
    else:
        honest = zstd_of(payload)
        compressor = zstd_module().ZstdCompressor()  # a streamed frame announces no size
        others = [compressor.compress(payload) + compressor.flush()]
        others.append(zstd_of(b"small first frame") + honest)
        wanted = [payload, b"small first frame" + payload]
    assert decode_all(honest, [coding]) == payload
    for body, expected in zip(others, wanted):
        assert decode_all(body, [coding]) == expected
        assert decode_all(body, [coding], max_size=len(expected)) == expected
        with pytest.raises(requestx.ResponseTooLarge):
            decode_all(body, [coding], max_size=len(expected) - 1)


# --- Chunkers ------------------------------------------------------------------------------


def test_chunkers_without_size_pass_pieces_through() -> None:
    bytes_chunker = ByteChunker()
    assert bytes_chunker.decode(b"abc") == [b"abc"]
    assert bytes_chunker.decode(b"") == []
    assert bytes_chunker.decode(b"d" * 10000) == [b"d" * 10000]
    assert bytes_chunker.flush() == []
    text_chunker = TextChunker(None)
    assert text_chunker.decode("abc") == ["abc"]
    assert text_chunker.decode("") == []
    assert text_chunker.flush() == []


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1000])
def test_byte_chunker_sizes(size: int) -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        data = rng.randbytes(rng.randint(0, 3000))
        chunker = ByteChunker(size)
        chunks = [chunk for piece in random_split(data, rng) for chunk in chunker.decode(piece)]
        assert all(len(chunk) == size for chunk in chunks)
        rest = chunker.flush()
        assert rest == ([data[len(data) - len(data) % size :]] if len(data) % size else [])
        assert b"".join(chunks + rest) == data
        assert all(type(chunk) is bytes for chunk in chunks + rest)
        assert chunker.flush() == []


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 1000])
def test_text_chunker_sizes(size: int) -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        text = "".join(rng.choice("aé€😀\n") for _ in range(rng.randint(0, 3000)))
        chunker = TextChunker(size)
        chunks = [chunk for piece in random_split(text, rng) for chunk in chunker.decode(piece)]
        assert all(len(chunk) == size for chunk in chunks)
        rest = chunker.flush()
        assert rest == ([text[len(text) - len(text) % size :]] if len(text) % size else [])
        assert "".join(chunks + rest) == text
        assert chunker.flush() == []


def test_chunkers_exact_multiples_and_reuse() -> None:
    chunker = ByteChunker(4)
    assert chunker.decode(b"abcd") == [b"abcd"]
    assert chunker.decode(b"ab") == []
    assert chunker.decode(b"cdefghij") == [b"abcd", b"efgh"]
    assert chunker.decode(b"") == []
    assert chunker.flush() == [b"ij"]
    assert chunker.decode(b"klmn") == [b"klmn"]
    assert chunker.flush() == []
    text_chunker = TextChunker(3)
    assert text_chunker.decode("ab") == []
    assert text_chunker.decode("cdef") == ["abc", "def"]
    assert text_chunker.flush() == []


@pytest.mark.parametrize("size", [0, -1])
def test_chunk_size_must_be_positive(size: int) -> None:
    with pytest.raises(ValueError):
        ByteChunker(size)
    with pytest.raises(ValueError):
        TextChunker(size)


# --- TextDecoder ---------------------------------------------------------------------------

MULTIBYTE_TEXT = "aé€😀 ß中文 𝄞z"  # 1-, 2-, 3- and 4-byte UTF-8 sequences


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le", "utf-32", "shift_jis"])
def test_text_decoder_split_at_every_position(encoding: str) -> None:
    text = MULTIBYTE_TEXT if encoding != "shift_jis" else "aｶﾀｶﾅ日本語テキストz"
    data = text.encode(encoding)
    for cut in range(len(data) + 1):
        decoder = TextDecoder(encoding)
        assert decoder.decode(data[:cut]) + decoder.decode(data[cut:]) + decoder.flush() == text
    for first in range(len(data) + 1):
        for second in range(first, len(data) + 1):
            decoder = TextDecoder(encoding)
            pieces = [data[:first], data[first:second], data[second:]]
            assert "".join(decoder.decode(piece) for piece in pieces) + decoder.flush() == text


def test_text_decoder_holds_back_partial_characters() -> None:
    decoder = TextDecoder()
    assert decoder.decode("€".encode()[:2]) == ""
    assert decoder.decode("€".encode()[2:] + b"x") == "€x"
    assert decoder.decode(b"\xf0\x9f") == ""
    assert decoder.decode(b"\x98") == ""
    assert decoder.decode(b"\x80") == "😀"
    assert decoder.flush() == ""


def test_text_decoder_replaces_errors() -> None:
    decoder = TextDecoder("utf-8")
    assert decoder.decode(b"ab\xffcd") == "ab\ufffdcd"
    assert decoder.decode(b"\xc3") == ""
    assert decoder.decode(b"(") == "\ufffd("  # a lead byte without its continuation
    assert decoder.decode(b"end\xe2\x82") == "end"
    assert decoder.flush() == "\ufffd"  # the body stopped in the middle of a character
    assert TextDecoder("ascii").decode(b"caf\xc3\xa9") == "caf\ufffd\ufffd"
    assert TextDecoder("latin-1").decode(b"caf\xe9") == "café"
    with pytest.raises(LookupError):
        TextDecoder("no-such-encoding")


# --- LineDecoder ---------------------------------------------------------------------------

LINE_TOKENS = [
    "a",
    "bc",
    "line",
    " ",
    "é€😀",
    "\n",
    "\r",
    "\r\n",
    "\r\n",
    "\n\n",
    "\r\r",
    "\u2028",
    "\u2029",
    "\x85",
    "\x0b",
    "\x0c",
    "\x1c",
]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(LINE_TOKENS) for _ in range(rng.randint(0, 40)))


def split_lines(pieces: typing.Iterable[str]) -> list[str]:
    decoder = LineDecoder()
    lines = [line for piece in pieces for line in decoder.decode(piece)]
    return lines + decoder.flush()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "\r\n",
        "\r",
        "\n\n\n",
        "\r\r\n\n",
        "one",
        "one\ntwo",
        "one\ntwo\n",
        "one\r\ntwo\r\n",
        "one\rtwo\r",
        "\none\n\ntwo\n\n",
        "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\x1dh\x1ei",
        "mixed\r\n\r\n\rend\r",
    ],
)
def test_line_decoder_every_two_and_three_piece_split(text: str) -> None:
    expected = text.splitlines()
    assert split_lines([text]) == expected
    for first in range(len(text) + 1):
        assert split_lines([text[:first], text[first:]]) == expected
        for second in range(first, len(text) + 1):
            assert split_lines([text[:first], text[first:second], text[second:]]) == expected
    assert split_lines(list(text)) == expected


def test_line_decoder_random_splits() -> None:
    for seed in range(2000):
        rng = random.Random(seed)
        text = random_text(rng)
        if rng.random() < 0.3:
            text += rng.choice(["\n", "\r", "\r\n", "no newline"])
        assert split_lines(random_split(text, rng)) == text.splitlines(), (seed, text)


def test_line_decoder_crlf_split_across_pieces() -> None:
    decoder = LineDecoder()
    assert decoder.decode("first\r") == ["first"]  # returned at once, not held back
    assert decoder.decode("") == []
    assert decoder.decode("\n") == []  # the rest of the same line break
    assert decoder.decode("\n") == [""]  # a new, empty line
    assert decoder.decode("second\r") == ["second"]
    assert decoder.decode("\r") == [""]  # "\r\r" is two line breaks
    assert decoder.decode("\nthird") == []
    assert decoder.flush() == ["third"]
    assert decoder.flush() == []


def test_line_decoder_long_line_in_many_pieces() -> None:
    decoder = LineDecoder()
    for _ in range(1000):
        assert decoder.decode("x" * 10) == []
    assert decoder.decode("y\rz") == ["x" * 10000 + "y"]
    assert decoder.flush() == ["z"]


def test_line_decoder_knows_every_line_break_of_splitlines() -> None:
    # Every code point, in one text, cut at random: whichever str.splitlines() breaks
    # on, LineDecoder must break on too.
    text = "".join(map(chr, range(0x110000)))
    rng = random.Random(11)
    pieces = []
    start = 0
    while start < len(text):
        size = rng.randint(1, 5000)
        pieces.append(text[start : start + size])
        start += size
    assert split_lines(pieces) == text.splitlines()


def test_gzip_text_lines_pipeline() -> None:
    # What iter_lines will do: decode the coding, then the text, then split the lines.
    text = "".join(random_text(random.Random(seed)) for seed in range(200)) + "last"
    body = gzip_of(text.encode("utf-16"))
    for seed in SEEDS[:10]:
        rng = random.Random(seed)
        content, texts, lines = decoder_for(["gzip"]), TextDecoder("utf-16"), LineDecoder()
        out: list[str] = []
        for piece in random_split(body, rng):
            out += lines.decode(texts.decode(content.decode(piece)))
        out += lines.decode(texts.decode(content.flush()))
        out += lines.decode(texts.flush())
        out += lines.flush()
        assert out == text.splitlines()
