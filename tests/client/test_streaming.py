"""Streaming a response: `client.stream()`, `send(stream=True)` and the iter_*/aiter_* methods.

Against the suite's ASGI server (/bytes/{n} sends a deterministic pattern, /drip sends pieces
with pauses) and the raw server (/split-text splits a UTF-8 character and a CRLF across chunks,
/gzip-truncated and /gzip-invalid carry broken compressed bodies, /close-mid-body dies halfway).
Each behaviour runs on the blocking client and, through the anyio plugin, on asyncio, uvloop
and trio.
"""

from __future__ import annotations

import gzip
import json
import time

import pytest

import requestx
from tests.servers import HypercornServer, RawServer
from tests.servers.app import COMPRESSED_DOC, pattern_bytes
from tests.servers.raw_server import GZIP_TEXT, SPLIT_TEXT

BIG = 4 * 1024 * 1024  # several times the engine's 1 MiB high-water mark


# --- blocking client --------------------------------------------------------------------------


def test_stream_delivers_a_large_body_in_order(client: requestx.Client) -> None:
    with client.stream("GET", f"/bytes/{BIG}") as response:
        assert response.status_code == 200
        assert not response.is_stream_consumed and not response.is_closed
        with pytest.raises(requestx.ResponseNotRead):
            _ = response.content
        chunks = list(response.iter_bytes())
        assert response.is_stream_consumed and response.is_closed
    assert len(chunks) > 1, "the body should arrive in several pieces"
    assert b"".join(chunks) == pattern_bytes(BIG)
    assert response.num_bytes_downloaded == BIG
    assert response.elapsed.total_seconds() > 0


def test_iter_bytes_chunk_size_is_exact(client: requestx.Client) -> None:
    with client.stream("GET", "/bytes/100000") as response:
        sizes = [len(chunk) for chunk in response.iter_bytes(chunk_size=4096)]
    assert sizes[:-1] == [4096] * (len(sizes) - 1)
    assert sum(sizes) == 100000 and 0 < sizes[-1] <= 4096


def test_send_stream_true_then_read(client: requestx.Client) -> None:
    request = client.build_request("GET", "/bytes/70000")
    response = client.send(request, stream=True)
    try:
        assert response.read() == pattern_bytes(70000)
        assert response.content == pattern_bytes(70000)  # read() keeps it
    finally:
        response.close()


def test_iter_raw_gives_encoded_bytes_and_iter_bytes_decodes(client: requestx.Client) -> None:
    with client.stream("GET", "/gzip") as response:
        assert response.headers["content-encoding"] == "gzip"
        raw = b"".join(response.iter_raw())
    assert raw[:2] == b"\x1f\x8b", "iter_raw must give the gzip stream as sent"
    assert response.num_bytes_downloaded == len(raw)
    with client.stream("GET", "/gzip") as response:
        decoded = b"".join(response.iter_bytes(chunk_size=10))
    assert decoded == gzip.decompress(raw)
    with client.stream("GET", "/gzip") as response:
        response.read()
        assert response.json() == COMPRESSED_DOC


@pytest.mark.parametrize("coding", ["gzip", "deflate", "brotli", "zstd"])
def test_every_advertised_encoding_is_decoded_both_ways(
    client: requestx.Client, coding: str
) -> None:
    response = client.get(f"/{coding}")
    if response.status_code == 404:  # the test server compresses br and zstd with packages
        pytest.skip(response.text)
    assert response.headers["content-encoding"] == {"brotli": "br"}.get(coding, coding)
    assert response.json() == COMPRESSED_DOC
    with client.stream("GET", f"/{coding}") as response:
        assert json.loads(b"".join(response.iter_bytes(chunk_size=7))) == COMPRESSED_DOC
    with client.stream("GET", f"/{coding}") as response:
        raw = b"".join(response.iter_raw())
    assert b'"compressed"' not in raw  # iter_raw gives the bytes as sent: still compressed


def test_text_and_lines_across_chunk_boundaries(raw_server: RawServer) -> None:
    with requestx.Client(base_url=raw_server.url) as client:
        with client.stream("GET", "/split-text") as response:
            text = "".join(response.iter_text())
        with client.stream("GET", "/split-text") as response:
            lines = list(response.iter_lines())
        with client.stream("GET", "/split-text") as response:
            small = list(response.iter_text(chunk_size=3))
    assert text == SPLIT_TEXT.decode()
    assert lines == SPLIT_TEXT.decode().splitlines() == ["caf\u00e9", "na\u00efve", "end"]
    assert "".join(small) == text and all(len(piece) <= 3 for piece in small)


def test_consumed_and_closed_streams_refuse_a_second_read(client: requestx.Client) -> None:
    with client.stream("GET", "/bytes/1000") as response:
        list(response.iter_raw())
        with pytest.raises(requestx.StreamConsumed):
            list(response.iter_raw())
    with client.stream("GET", "/bytes/1000") as response:
        response.close()
        with pytest.raises(requestx.StreamClosed):
            list(response.iter_bytes())


def test_leaving_a_stream_early_keeps_the_pool_healthy(server: HypercornServer) -> None:
    limits = requestx.Limits(max_connections=2)
    with requestx.Client(base_url=server.url, limits=limits) as client:
        for _ in range(5):  # more than the pool holds: each early exit must give its slot back
            with client.stream("GET", f"/bytes/{BIG}") as response:
                first = next(response.iter_bytes())
                assert first == pattern_bytes(len(first))
        assert client.get("/json").json() == {"Hello": "world!"}
        assert client._engine.stats()["running"] == 0


def test_a_paused_stream_is_not_a_read_timeout(client: requestx.Client) -> None:
    # The server has sent everything long before the consumer asks; the transfer sits paused
    # past the read timeout, which must not fire: the wait is the consumer's, not the server's.
    with client.stream("GET", f"/bytes/{BIG}", timeout=requestx.Timeout(5, read=1)) as response:
        chunks = response.iter_bytes()
        total = len(next(chunks))
        time.sleep(1.5)
        total += sum(len(chunk) for chunk in chunks)
    assert total == BIG


def test_a_stalled_server_is_a_read_timeout_mid_stream(client: requestx.Client) -> None:
    timeout = requestx.Timeout(5, read=0.2)
    url = "/drip?chunks=3&size=10&delay=1"
    with (
        client.stream("GET", url, timeout=timeout) as response,
        pytest.raises(requestx.ReadTimeout),
    ):
        list(response.iter_bytes())
    assert client.get("/json").status_code == 200


def test_pool_timeout_while_every_connection_is_held_by_a_stream(
    server: HypercornServer,
) -> None:
    limits = requestx.Limits(max_connections=1)
    timeout = requestx.Timeout(5, pool=0.2)
    with requestx.Client(base_url=server.url, limits=limits, timeout=timeout) as client:
        with client.stream("GET", f"/bytes/{BIG}") as held:
            next(held.iter_bytes())
            started = time.monotonic()
            with pytest.raises(requestx.PoolTimeout):
                client.get("/json")
            assert time.monotonic() - started < 3
        assert client.get("/json").status_code == 200  # the slot came back


def test_a_small_stream_already_received_frees_its_connection(server: HypercornServer) -> None:
    # docs/differences.md: the engine holds the whole (small) body, so the connection is back
    # in the pool before the stream is read or closed; httpx would raise PoolTimeout here.
    limits = requestx.Limits(max_connections=1)
    timeout = requestx.Timeout(5, pool=0.5)
    with requestx.Client(base_url=server.url, limits=limits, timeout=timeout) as client:
        server.reset_stats()
        with client.stream("GET", "/json") as small:
            time.sleep(0.2)  # the engine has the whole response by now
            assert client.get("/json").status_code == 200  # no PoolTimeout
            assert small.read()  # and the held bytes are all there
        with client.stream("GET", "/json") as small:
            assert client.get("/json").status_code == 200
        assert server.connection_count() == 1  # every request on the one connection


def test_connection_lost_mid_body_raises_and_keeps_received_bytes(raw_server: RawServer) -> None:
    with requestx.Client(base_url=raw_server.url) as client:
        with client.stream("GET", "/close-mid-body") as response:
            received = b""
            with pytest.raises(requestx.RemoteProtocolError):
                for chunk in response.iter_raw():
                    received += chunk
        assert received == b"x" * 10
        assert client.get("/ok").text == "ok"


@pytest.mark.parametrize("stream", [False, True], ids=["read", "stream"])
def test_truncated_and_invalid_gzip_raise_decoding_error(
    raw_server: RawServer, stream: bool
) -> None:
    with requestx.Client(base_url=raw_server.url) as client:
        for path, words in (("/gzip-truncated", "truncated"), ("/gzip-invalid", "gzip")):
            with pytest.raises(requestx.DecodingError, match=words) as caught:
                if stream:
                    with client.stream("GET", path) as response:
                        response.read()
                else:
                    client.get(path)
            assert caught.value.request.url.path == path
        assert client.get("/ok").text == "ok"


def test_redirects_are_followed_and_the_final_response_streams(client: requestx.Client) -> None:
    url = "/redirect/302?to=/bytes/300000"
    with client.stream("GET", url, follow_redirects=True) as response:
        assert [hop.status_code for hop in response.history] == [302]
        assert response.history[0].is_closed
        assert b"".join(response.iter_bytes()) == pattern_bytes(300000)


def test_stream_response_sets_cookies(client: requestx.Client) -> None:
    with client.stream("GET", "/cookies/set?flavour=oat") as response:
        response.read()
    assert client.cookies["flavour"] == "oat"


def test_top_level_stream(server: HypercornServer) -> None:
    with requestx.stream("GET", f"{server.url}/bytes/5000") as response:
        assert b"".join(response.iter_bytes(chunk_size=1000)) == pattern_bytes(5000)


def test_unknown_encoding_is_passed_through(client: requestx.Client) -> None:
    url = "/headers/set?Content-Encoding=x-unknown"
    with client.stream("GET", url) as response:
        assert response.read() == b"headers set"
    assert client.get(url).content == b"headers set"


def test_hand_built_response_streams_too() -> None:
    body = gzip.compress(GZIP_TEXT)
    response = requestx.Response(200, content=body, headers={"Content-Encoding": "gzip"})
    assert response.content == GZIP_TEXT
    assert b"".join(response.iter_bytes(chunk_size=7)) == GZIP_TEXT


# --- async clients -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_stream_large_body(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        async with client.stream("GET", f"/bytes/{BIG}") as response:
            with pytest.raises(requestx.ResponseNotRead):
                _ = response.content
            chunks = [chunk async for chunk in response.aiter_bytes()]
        assert b"".join(chunks) == pattern_bytes(BIG)
        assert response.is_closed and response.num_bytes_downloaded == BIG


@pytest.mark.anyio
async def test_async_iterators_raw_text_lines(
    server: HypercornServer, raw_server: RawServer
) -> None:
    async with requestx.AsyncClient() as client:
        async with client.stream("GET", f"{server.url}/gzip") as response:
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
        assert gzip.decompress(raw) == (await client.get(f"{server.url}/gzip")).content
        async with client.stream("GET", f"{raw_server.url}/split-text") as response:
            lines = [line async for line in response.aiter_lines()]
        assert lines == ["caf\u00e9", "na\u00efve", "end"]
        async with client.stream("GET", f"{raw_server.url}/split-text") as response:
            text = "".join([piece async for piece in response.aiter_text(chunk_size=2)])
        assert text == SPLIT_TEXT.decode()
        async with client.stream("GET", f"{server.url}/bytes/9000") as response:
            sizes = [len(chunk) async for chunk in response.aiter_bytes(chunk_size=4000)]
        assert sizes == [4000, 4000, 1000]


@pytest.mark.anyio
async def test_async_drip_arrives_piece_by_piece(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        # 150 ms apart: far more than a busy loop's hiccup, so the pieces stay apart
        request = client.build_request("GET", "/drip?chunks=4&size=5&delay=0.15")
        response = await client.send(request, stream=True)
        try:
            pieces = [chunk async for chunk in response.aiter_raw()]
        finally:
            await response.aclose()
    assert pieces == [pattern_bytes(5, offset=5 * i) for i in range(4)]


@pytest.mark.anyio
async def test_async_early_exit_and_pool_timeout(server: HypercornServer) -> None:
    limits = requestx.Limits(max_connections=1)
    timeout = requestx.Timeout(5, pool=0.2)
    async with requestx.AsyncClient(base_url=server.url, limits=limits, timeout=timeout) as client:
        async with client.stream("GET", f"/bytes/{BIG}") as response:
            async for _ in response.aiter_bytes():
                break
            with pytest.raises(requestx.PoolTimeout):
                await client.get("/json")
        for _ in range(3):
            async with client.stream("GET", f"/bytes/{BIG}") as response:
                async for _ in response.aiter_raw():
                    break
        assert (await client.get("/json")).json() == {"Hello": "world!"}
        assert client._engine.stats()["running"] == 0


@pytest.mark.anyio
async def test_async_stream_errors(raw_server: RawServer) -> None:
    async with requestx.AsyncClient(base_url=raw_server.url) as client:
        async with client.stream("GET", "/close-mid-body") as response:
            with pytest.raises(requestx.RemoteProtocolError):
                await response.aread()
        async with client.stream("GET", "/gzip-truncated") as response:
            with pytest.raises(requestx.DecodingError, match="truncated"):
                await response.aread()
        with pytest.raises(requestx.ReadTimeout):
            timeout = requestx.Timeout(5, read=0.2)
            async with client.stream("GET", "/stall", timeout=timeout) as response:
                pass
        assert (await client.get("/ok")).text == "ok"


@pytest.mark.anyio
async def test_async_stream_sync_iteration_is_refused(server: HypercornServer) -> None:
    async with (
        requestx.AsyncClient(base_url=server.url) as client,
        client.stream("GET", "/bytes/10") as response,
    ):
        with pytest.raises(RuntimeError, match="async stream"):
            list(response.iter_raw())
