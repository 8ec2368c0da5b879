"""HTTP/2: h2 over TLS by ALPN (with fallback), h2c with prior knowledge, multiplexing, bodies
both ways, streaming with pauses, timeouts and cancellation on a shared connection.

Servers: `tls_server` (hypercorn, trustme certificate, ALPN h2 + http/1.1), `tls_h1_server`
(ALPN http/1.1 only) and `server` (plain TCP; hypercorn accepts h2c prior knowledge there).
Each server counts the TCP connections that carried requests, which is how "one connection"
is checked. Async tests run on asyncio, uvloop and trio.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import typing

import anyio
import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.app import COMPRESSED_DOC, pattern_bytes
from tests.support.tls import TLSFiles

MODES = ["h2", "h2c"]


def _options(mode: str, tls: TLSFiles) -> dict[str, typing.Any]:
    if mode == "h2":
        return {"http2": True, "verify": tls.ca_file}
    return {"http1": False, "http2": True}


def _server(mode: str, tls_server: HypercornServer, server: HypercornServer) -> HypercornServer:
    return tls_server if mode == "h2" else server


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return typing.cast(str, request.param)


@pytest.fixture
def h2_server(mode: str, tls_server: HypercornServer, server: HypercornServer) -> HypercornServer:
    chosen = _server(mode, tls_server, server)
    chosen.reset_stats()
    return chosen


@pytest.fixture
def client(
    mode: str, tls: TLSFiles, h2_server: HypercornServer
) -> typing.Iterator[requestx.Client]:
    with requestx.Client(base_url=h2_server.url, **_options(mode, tls)) as client:
        yield client


# --- negotiation ---------------------------------------------------------------------------


def test_http2_is_used_and_reported(client: requestx.Client) -> None:
    response = client.get("/echo")
    assert response.http_version == "HTTP/2"
    assert response.json()["http_version"] == "2"  # what the server saw
    assert response.extensions["http_version"] == b"HTTP/2"


def test_alpn_falls_back_to_http11(tls: TLSFiles, tls_h1_server: HypercornServer) -> None:
    with requestx.Client(http2=True, verify=tls.ca_file) as client:
        response = client.get(tls_h1_server.url + "/echo")
    assert response.http_version == "HTTP/1.1"
    assert response.json()["http_version"] == "1.1"


def test_http1_stays_the_default(tls: TLSFiles, tls_server: HypercornServer) -> None:
    with requestx.Client(verify=tls.ca_file) as client:
        assert client.get(tls_server.url + "/echo").http_version == "HTTP/1.1"


# --- multiplexing ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("h2_mode", MODES)
async def test_200_concurrent_requests_share_one_connection(
    h2_mode: str, tls: TLSFiles, tls_server: HypercornServer, server: HypercornServer
) -> None:
    target = _server(h2_mode, tls_server, server)
    target.reset_stats()
    async with requestx.AsyncClient(base_url=target.url, **_options(h2_mode, tls)) as client:
        answers: list[requestx.Response] = []

        async def one(i: int) -> None:
            answers.append(await client.get(f"/echo?i={i}"))

        async with anyio.create_task_group() as group:
            for i in range(200):
                group.start_soon(one, i)
    assert len(answers) == 200
    assert {response.http_version for response in answers} == {"HTTP/2"}
    assert sorted(int(r.json()["query"][2:]) for r in answers) == list(range(200))
    assert target.connection_count() == 1


def test_threads_sharing_a_client_multiplex(
    client: requestx.Client, h2_server: HypercornServer
) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        try:
            barrier.wait()
            for _ in range(10):
                assert client.get("/json").http_version == "HTTP/2"
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    assert h2_server.request_count() == 80
    assert h2_server.connection_count() == 1


def test_sequential_requests_reuse_the_connection(
    client: requestx.Client, h2_server: HypercornServer
) -> None:
    # h2c with prior knowledge used to break on reuse in libcurl 7.88 (curl issue #10634).
    for _ in range(20):
        assert client.get("/json").json() == {"Hello": "world!"}
    assert h2_server.connection_count() == 1


# --- bodies, headers, cookies, redirects, encodings --------------------------------------------


def test_large_response_body(client: requestx.Client) -> None:
    response = client.get(f"/bytes/{3 * 1024 * 1024}")
    assert response.http_version == "HTTP/2"
    assert response.content == pattern_bytes(3 * 1024 * 1024)


def test_streamed_download_with_pauses(client: requestx.Client) -> None:
    size = 20 * 1024 * 1024
    digest = hashlib.sha256()
    received = 0
    with client.stream("GET", f"/bytes/{size}") as response:
        for index, chunk in enumerate(response.iter_bytes()):
            digest.update(chunk)
            received += len(chunk)
            if index == 0:
                time.sleep(0.3)  # let the engine's buffer fill: the stream must pause, not fail
    assert received == size
    assert digest.hexdigest() == hashlib.sha256(pattern_bytes(size)).hexdigest()
    assert client.get("/json").status_code == 200  # the connection survived the pauses


def test_large_uploads(client: requestx.Client) -> None:
    body = bytes(range(256)) * (8 * 1024 * 1024 // 256)
    seen = client.post("/upload-digest", content=body).json()
    assert seen["length"] == len(body) and seen["sha256"] == hashlib.sha256(body).hexdigest()

    def pieces() -> typing.Iterator[bytes]:
        for start in range(0, len(body), 256 * 1024):
            yield body[start : start + 256 * 1024]

    seen = client.put("/upload-digest", content=pieces()).json()
    assert seen["method"] == "PUT" and seen["sha256"] == hashlib.sha256(body).hexdigest()


def test_headers_cookies_redirects_and_gzip(client: requestx.Client) -> None:
    echo = client.get("/echo", headers={"X-Custom": "value"}).json()
    assert ["x-custom", "value"] in echo["headers"]
    client.get("/cookies/set?flavour=oat")
    assert client.get("/cookies").json()["cookie"] == "flavour=oat"
    followed = client.get("/redirect/302", follow_redirects=True)
    assert followed.status_code == 200 and len(followed.history) == 1
    assert followed.http_version == "HTTP/2"
    assert client.get("/gzip").json() == COMPRESSED_DOC


def test_read_timeout_on_one_stream(client: requestx.Client) -> None:
    with pytest.raises(requestx.ReadTimeout):
        client.get("/slow?delay=2", timeout=requestx.Timeout(5, read=0.2))
    assert client.get("/json").status_code == 200


@pytest.mark.anyio
@pytest.mark.parametrize("h2_mode", MODES)
async def test_cancelling_one_stream_leaves_the_others(
    h2_mode: str, tls: TLSFiles, tls_server: HypercornServer, server: HypercornServer
) -> None:
    target = _server(h2_mode, tls_server, server)
    target.reset_stats()
    async with requestx.AsyncClient(base_url=target.url, **_options(h2_mode, tls)) as client:
        await client.get("/json")  # the connection is up
        results: list[int] = []

        async def slow() -> None:
            results.append((await client.get("/slow?delay=0.3")).status_code)

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(slow)
            with anyio.move_on_after(0.05):
                await client.get("/slow?delay=5")  # cancelled mid-flight
        assert results == [200] * 5
        assert (await client.get("/json")).status_code == 200
    assert target.connection_count() == 1


@pytest.mark.anyio
async def test_async_stream_over_h2(tls: TLSFiles, tls_server: HypercornServer) -> None:
    async with requestx.AsyncClient(http2=True, verify=tls.ca_file) as client:
        async with client.stream("GET", f"{tls_server.url}/bytes/{5 * 1024 * 1024}") as response:
            total = 0
            async for chunk in response.aiter_bytes():
                total += len(chunk)
                if total == len(chunk):
                    await anyio.sleep(0.2)  # fill the buffer: pause and resume over h2
        assert total == 5 * 1024 * 1024
        assert response.http_version == "HTTP/2"


def test_asyncio_gather_also_multiplexes(tls: TLSFiles, tls_server: HypercornServer) -> None:
    tls_server.reset_stats()

    async def main() -> set[str]:
        async with requestx.AsyncClient(http2=True, verify=tls.ca_file) as client:
            answers = await asyncio.gather(
                *[client.get(tls_server.url + "/json") for _ in range(50)]
            )
        return {response.http_version for response in answers}

    assert asyncio.run(main()) == {"HTTP/2"}
    assert tls_server.connection_count() == 1


@pytest.mark.anyio
async def test_a_failed_first_connection_does_not_serialise_the_rest() -> None:
    # Requests parked behind an origin's first connection are released when it fails; they
    # then connect in parallel, not one failed attempt after another (8 x the timeout).
    from tests.servers.stalling import silent_listener

    with silent_listener() as listener:
        url = f"https://127.0.0.1:{listener.getsockname()[1]}/"
        timeout = requestx.Timeout(0.5, pool=30)
        async with requestx.AsyncClient(http2=True, timeout=timeout) as client:
            errors: list[BaseException] = []
            started = time.monotonic()

            async def one() -> None:
                try:
                    await client.get(url)
                except requestx.ConnectTimeout as exc:
                    errors.append(exc)

            async with anyio.create_task_group() as group:
                for _ in range(8):
                    group.start_soon(one)
            elapsed = time.monotonic() - started
    assert len(errors) == 8
    # in parallel: about 1 s; one after another: 4 s
    assert elapsed < 3.5, f"{elapsed:.1f} s: the attempts were made one after another"
