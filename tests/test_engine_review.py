"""Fixes from a review of the C and Cython layers (issue 12), each shown from the outside.

* Credentials in a URL travel only where the auth flow puts them: given the URL's userinfo,
  libcurl sent its own `Authorization: Basic` header, even beside DigestAuth.
* A fed request body is taken in pieces no larger than the engine's buffer limit, with the GIL
  released for each copy: one huge chunk was copied whole, under a lock, GIL held. (The bound
  itself is asserted by the C engine test, fed_upload; here, that the pieces add up.)
"""

from __future__ import annotations

import hashlib
from typing import AsyncIterator, Iterator

import anyio
import pytest

import requestx
from tests.servers import HypercornServer


def _authorization_headers(response: requestx.Response) -> list[str]:
    return [value for name, value in response.json()["headers"] if name == "authorization"]


def test_url_credentials_are_not_sent_beside_another_auth(server: HypercornServer) -> None:
    host = server.url.split("//", 1)[1]
    with requestx.Client(timeout=5) as client:
        # /echo never challenges, so DigestAuth sends nothing; neither may anyone else.
        response = client.get(f"http://user:pass@{host}/echo", auth=requestx.DigestAuth("d", "e"))
        assert _authorization_headers(response) == []
        # With no auth given, httpx's rule: the URL's credentials become Basic auth, once.
        response = client.get(f"http://user:pass@{host}/echo")
        assert _authorization_headers(response) == ["Basic dXNlcjpwYXNz"]
        # An explicit header wins and is not joined by the URL's.
        response = client.get(
            f"http://user:pass@{host}/echo", auth=requestx.BasicAuth("other", "secret")
        )
        assert _authorization_headers(response) == ["Basic b3RoZXI6c2VjcmV0"]


@pytest.mark.anyio
async def test_url_credentials_async(server: HypercornServer) -> None:
    host = server.url.split("//", 1)[1]
    async with requestx.AsyncClient(timeout=5) as client:
        with anyio.fail_after(10):
            response = await client.get(
                f"http://user:pass@{host}/echo", auth=requestx.DigestAuth("d", "e")
            )
    assert _authorization_headers(response) == []


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
