"""
`Client(max_body_bytes=N)`: a response body read whole is at most N
bytes, as received (the engine stops the transfer; with a Content-Length over N it stops
at the first body byte) and once decoded (tests/faults/test_decompression_bombs.py). Over it:
ResponseTooLarge, naming the limit, and the client goes on working. A streamed body read
piece by piece is not limited; reading a streamed response whole (read()) is.

Against hypercorn (Content-Length and chunked bodies) and nginx (a 1 MiB file).
"""

from __future__ import annotations

import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.app import pattern_bytes
from tests.servers.nginx import Nginx

LIMIT = 1 << 20
TOO_LARGE = r"larger than 1048576 bytes \(max_body_bytes\)"


@pytest.mark.parametrize("framing", ["", "?chunked=1"], ids=["content-length", "chunked"])
def test_a_body_over_the_limit_raises_and_the_client_goes_on(
    server: HypercornServer, framing: str
) -> None:
    with requestx.Client(max_body_bytes=LIMIT) as client:
        assert client.get(f"{server.url}/bytes/{LIMIT}{framing}").content == pattern_bytes(LIMIT)
        with pytest.raises(requestx.ResponseTooLarge, match=TOO_LARGE) as caught:
            client.get(f"{server.url}/bytes/{LIMIT + 1}{framing}")
        assert caught.value.request.url == f"{server.url}/bytes/{LIMIT + 1}{framing}"
        with pytest.raises(requestx.ResponseTooLarge, match=TOO_LARGE):
            client.get(f"{server.url}/bytes/{20 * LIMIT}{framing}")
        assert client.get(f"{server.url}/").text == "Hello, world!"


def test_the_limit_holds_against_nginx(nginx: Nginx) -> None:
    with requestx.Client(max_body_bytes=LIMIT - 1) as client:
        with pytest.raises(requestx.ResponseTooLarge, match="1048575 bytes"):
            client.get(nginx.url + "/big")  # 1 MiB with a Content-Length
        assert client.get(nginx.url + "/get").text == "Hello, world!"
    with requestx.Client(max_body_bytes=LIMIT) as client:
        assert len(client.get(nginx.url + "/big").content) == LIMIT


def test_streamed_bodies_are_limited_only_when_read_whole(server: HypercornServer) -> None:
    with requestx.Client(max_body_bytes=LIMIT) as client:
        with client.stream("GET", f"{server.url}/bytes/{4 * LIMIT}") as response:
            assert sum(len(chunk) for chunk in response.iter_bytes()) == 4 * LIMIT
        with client.stream("GET", f"{server.url}/bytes/{4 * LIMIT}") as response:
            with pytest.raises(requestx.ResponseTooLarge, match="max_body_bytes"):
                response.read()
            assert response.is_closed
        assert client.get(f"{server.url}/").status_code == 200


def test_no_limit_by_default(server: HypercornServer) -> None:
    with requestx.Client() as client:
        assert len(client.get(f"{server.url}/bytes/{8 * LIMIT}").content) == 8 * LIMIT


@pytest.mark.parametrize("value", [0, -1, 1 << 62])
def test_a_limit_that_is_no_size_is_refused(value: int) -> None:
    with pytest.raises(ValueError, match="max_body_bytes"):
        requestx.Client(max_body_bytes=value)


@pytest.mark.anyio
async def test_async_clients_keep_the_limit_too(server: HypercornServer) -> None:
    async with requestx.AsyncClient(max_body_bytes=LIMIT) as client:
        for framing in ("", "?chunked=1"):
            with pytest.raises(requestx.ResponseTooLarge, match=TOO_LARGE):
                await client.get(f"{server.url}/bytes/{LIMIT + 1}{framing}")
        async with client.stream("GET", f"{server.url}/bytes/{2 * LIMIT}") as response:
            with pytest.raises(requestx.ResponseTooLarge, match="max_body_bytes"):
                await response.aread()
        assert (await client.get(f"{server.url}/bytes/{LIMIT}")).content == pattern_bytes(LIMIT)
