"""A fed request body is taken in pieces no larger than the engine's buffer limit, with the GIL
released for each copy, however large the caller's chunks: one huge chunk must not be copied
whole, under a lock, with the GIL held. (The bound itself is asserted by the C engine test,
fed_upload, in tests/c/engine_test.c; here, that the pieces add up to the body sent.)
"""

from __future__ import annotations

import hashlib
from typing import AsyncIterator, Iterator

import anyio
import pytest

import requestx
from tests.servers import HypercornServer

HUGE = 48 * 1024 * 1024  # one chunk, 192 times the engine's upload buffer


def _huge_chunk() -> bytes:
    return bytes(range(256)) * (HUGE // 256)


def test_one_huge_fed_chunk_arrives_whole(server: HypercornServer) -> None:
    chunk = _huge_chunk()

    def body() -> Iterator[bytes]:
        yield chunk

    with requestx.Client(timeout=30) as client:
        seen = client.post(server.url + "/upload-digest", content=body()).json()
    assert seen["length"] == HUGE
    assert seen["sha256"] == hashlib.sha256(chunk).hexdigest()
    assert seen["transfer_encoding"] == "chunked"


@pytest.mark.anyio
async def test_one_huge_fed_chunk_arrives_whole_async(server: HypercornServer) -> None:
    chunk = _huge_chunk()

    async def body() -> AsyncIterator[bytes]:
        yield chunk

    async with requestx.AsyncClient(timeout=30) as client:
        with anyio.fail_after(60):
            seen = (await client.post(server.url + "/upload-digest", content=body())).json()
    assert seen["length"] == HUGE
    assert seen["sha256"] == hashlib.sha256(chunk).hexdigest()
