"""
Test vectors for tests/c/decode_test.c, the C content decoders (csrc/decode.c) without
Python: compressed bodies made here with Python's codecs (zlib, and the brotli and zstd test
dependencies), written as one stream of records that the program reads on its standard input
(so that it runs the same under valgrind, qemu and Wine).

Each record: a kind byte, a coding byte (decode.h's rx_coding), the input's length (u32, little
endian) and bytes, then the expected length (u64) and, for kind D only, the expected bytes.

    D  decodes to the expected bytes
    T  the body ends before the end of its stream: finish() says truncated
    I  invalid data: a read (or finish) says invalid
    B  a bomb: decodes to the expected length (no bytes given), a bounded read at a time
"""

from __future__ import annotations

import gzip
import random
import struct
import typing
import zlib

from tests.support.bombs import bomb, zstd_module

GZIP, DEFLATE, BR, ZSTD = 1, 2, 3, 4
BOMB_SIZE = 8 << 20  # small enough for valgrind


def _raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


def _compressors() -> dict[int, typing.Callable[[bytes], bytes]]:
    import brotli

    zstd = zstd_module()
    return {
        GZIP: gzip.compress,
        DEFLATE: zlib.compress,
        BR: lambda data: typing.cast(bytes, brotli.compress(data)),
        ZSTD: lambda data: typing.cast(bytes, zstd.compress(data)),
    }


def _record(kind: bytes, coding: int, data: bytes, expected: bytes | int = b"") -> bytes:
    head = kind + bytes([coding]) + struct.pack("<I", len(data)) + data
    if isinstance(expected, int):
        return head + struct.pack("<Q", expected)
    return head + struct.pack("<Q", len(expected)) + expected


def vectors() -> bytes:
    """Every record, concatenated."""
    rng = random.Random(37)
    payloads = [
        b"",
        b"x",
        b"hello world " * 300,
        rng.randbytes(3000),
        bytes(rng.choice(b"ab\n") for _ in range(20000)),
    ]
    big = b"".join(
        rng.choice([b"{'key': 1}, ", b"0123456789", rng.randbytes(8)]) for _ in range(30000)
    )
    out: list[bytes] = []
    compress = _compressors()
    for coding, make in compress.items():
        for payload in [*payloads, big]:
            body = make(payload)
            out.append(_record(b"D", coding, body, payload))
            # Cut short: at a few places, never at the end (a complete stream).
            for end in sorted({1, 2, len(body) // 2, len(body) - 1}):
                if 0 < end < len(body) and payload:
                    out.append(_record(b"T", coding, body[:end]))
        if coding in (GZIP, DEFLATE):  # with a checksum: damage anywhere is seen
            damaged = bytearray(make(b"corrupt me " * 500 + rng.randbytes(500)))
            for i in range(len(damaged) // 3, len(damaged) // 3 + 8):
                damaged[i] ^= 0x5A
            out.append(_record(b"I", coding, bytes(damaged)))
        out.append(_record(b"I", coding, b"\xff" * 40))
        out.append(_record(b"B", coding, bomb(_NAMES[coding], BOMB_SIZE), BOMB_SIZE))
    # What each coding accepts around its streams (decode.h).
    member = gzip.compress(b"payload")
    out.append(_record(b"D", GZIP, member + gzip.compress(b"-more"), b"payload-more"))
    out.append(_record(b"D", GZIP, member + b"\x00" * 9 + gzip.compress(b"-more"), b"payload-more"))
    out.append(_record(b"D", GZIP, member + b"trailing garbage" + member, b"payload"))
    out.append(_record(b"D", GZIP, member + b"\x1f", b"payload"))
    out.append(_record(b"T", GZIP, member + gzip.compress(b"-more")[:-3]))
    out.append(_record(b"D", DEFLATE, _raw_deflate(b"raw deflate " * 50), b"raw deflate " * 50))
    out.append(_record(b"D", DEFLATE, _raw_deflate(b""), b""))
    out.append(_record(b"D", DEFLATE, zlib.compress(b"payload") + b"garbage", b"payload"))
    out.append(_record(b"T", DEFLATE, b"\x78"))
    out.append(_record(b"I", BR, compress[BR](b"payload") + b"x"))
    frames = compress[ZSTD](b"first, ") + compress[ZSTD](b"second")
    out.append(_record(b"D", ZSTD, frames, b"first, second"))
    out.append(_record(b"I", ZSTD, frames + b"not a frame"))
    return b"".join(out)


_NAMES = {GZIP: "gzip", DEFLATE: "deflate", BR: "br", ZSTD: "zstd"}
