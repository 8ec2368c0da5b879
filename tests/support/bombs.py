"""
Decompression bombs: for each content coding, a small body (at most ~1 MB) that decodes
to `BOMB_SIZE` bytes of zeros. Built once per process.

gzip and deflate are not compressed the slow way (3 s for 1 GiB): one MiB of zeros is
compressed once and ended with a full flush, which leaves the stream byte-aligned with
no back-references, so the same bytes can be repeated 1024 times; then the final block
and the checksum of the whole are appended.
"""

from __future__ import annotations

import functools
import importlib
import struct
import types
import zlib

BOMB_SIZE = 1 << 30
_BLOCK = bytes(1 << 20)


def _raw_deflate_bomb(blocks: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = compressor.compress(_BLOCK) + compressor.flush(zlib.Z_FULL_FLUSH)
    return block * blocks + compressor.flush(zlib.Z_FINISH)


def _crc32_of_zeros(blocks: int) -> int:
    crc = 0
    for _ in range(blocks):
        crc = zlib.crc32(_BLOCK, crc)
    return crc


def zstd_module() -> types.ModuleType:
    """compression.zstd (Python 3.14) or its backport, to compress zstd test bodies
    (requestx decodes zstd in C, csrc/decode.c)."""
    try:
        return importlib.import_module("compression.zstd")
    except ImportError:
        return importlib.import_module("backports.zstd")


@functools.cache
def bomb(coding: str, size: int = BOMB_SIZE) -> bytes:
    """The bomb for Content-Encoding `coding` (gzip, deflate, br or zstd): `size` zeros, a
    whole number of MiB."""
    blocks = size // len(_BLOCK)
    if coding == "gzip":
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
        trailer = struct.pack("<II", _crc32_of_zeros(blocks), size & 0xFFFFFFFF)
        return header + _raw_deflate_bomb(blocks) + trailer
    if coding == "deflate":  # the zlib format (RFC 1950): its Adler-32 of n zeros is n << 16
        adler = ((size % 65521) << 16) | 1
        return b"\x78\xda" + _raw_deflate_bomb(blocks) + struct.pack(">I", adler)
    if coding == "br":
        import brotli

        compressor = brotli.Compressor(quality=1)
        parts = [compressor.process(_BLOCK) for _ in range(blocks)]
        return b"".join(parts) + compressor.finish()
    if coding == "zstd":
        zstd = zstd_module()
        zcompressor = zstd.ZstdCompressor(level=1)
        parts = [zcompressor.compress(_BLOCK) for _ in range(blocks)]
        return b"".join(parts) + zcompressor.flush()
    raise ValueError(coding)
