"""HTTP/2 multiplexing against more than one server: many concurrent requests, one connection.

httpx opens one HTTP/2 connection per origin and lets requests beyond the server's stream limit
wait for a free stream. requestx must do the same against any HTTP/2 server, not only the one it
was tuned against: here hypercorn (Python, h2) with its default limit of 100 concurrent streams
and nginx with 128 (its own default), each over TLS (ALPN h2) and cleartext h2c, with 200
concurrent requests, more than either server allows at once. Connections are counted at the
server: hypercorn by the client addresses that carried requests, nginx by stub_status.
Async tests run on asyncio, uvloop and trio; 8 threads share one blocking client.
"""

from __future__ import annotations

import threading
import typing

import anyio
import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.support.tls import TLSFiles

CONCURRENT = 200
HYPERCORN_STREAMS = 100  # hypercorn's default h2_max_concurrent_streams
NGINX_STREAMS = 128  # nginx's default http2_max_concurrent_streams


class Target(typing.NamedTuple):
    """One HTTP/2 server endpoint, and how to count the connections it accepted."""

    url: str
    options: dict[str, typing.Any]
    connections: typing.Callable[[], int]
    get_path: str
    post_path: str


@pytest.fixture(scope="module")
def hypercorn_tls(tls: TLSFiles) -> typing.Iterator[HypercornServer]:
    server = HypercornServer(
        certfile=tls.cert_file, keyfile=tls.cert_file, max_streams=HYPERCORN_STREAMS
    )
    with server as running:
        yield running


@pytest.fixture(scope="module")
def hypercorn_h2c() -> typing.Iterator[HypercornServer]:
    with HypercornServer(max_streams=HYPERCORN_STREAMS) as running:
        yield running


@pytest.fixture(scope="module")
def nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(http2=True, max_streams=NGINX_STREAMS) as server:
        yield server


def _nginx_connections(server: Nginx) -> typing.Callable[[], int]:
    before = server.accepted_connections()
    return lambda: server.accepted_connections() - before


@pytest.fixture(params=["hypercorn-h2", "hypercorn-h2c", "nginx-h2", "nginx-h2c"])
def target(request: pytest.FixtureRequest, tls: TLSFiles) -> Target:
    name = typing.cast(str, request.param)
    if name.startswith("hypercorn"):
        server: HypercornServer = request.getfixturevalue(
            "hypercorn_tls" if name.endswith("-h2") else "hypercorn_h2c"
        )
        server.reset_stats()
        options = (
            {"http2": True, "verify": tls.ca_file}
            if name.endswith("-h2")
            else {"http1": False, "http2": True}
        )
        return Target(server.url, options, server.connection_count, "/echo", "/echo")
    ng: Nginx = request.getfixturevalue("nginx")
    if name.endswith("-h2"):
        url, options = ng.tls_url, {"http2": True, "verify": ng.ca_file}
    else:
        url, options = ng.h2c_url, {"http1": False, "http2": True}
    return Target(url, options, _nginx_connections(ng), "/json100", "/post")


def _check(response: requestx.Response, method: str, i: int, target: Target) -> None:
    assert response.status_code == 200, response.text
    assert response.http_version == "HTTP/2"
    if target.get_path == "/echo":  # hypercorn describes what it received
        seen = response.json()
        assert seen["method"] == method and seen["query"] == f"i={i}"
        if method == "POST":
            assert seen["body"] == f"body {i}"


@pytest.mark.anyio
@pytest.mark.timeout(60)
@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_concurrent_requests_share_one_connection(target: Target, method: str) -> None:
    path = target.get_path if method == "GET" else target.post_path
    done: list[int] = []
    async with requestx.AsyncClient(base_url=target.url, **target.options) as client:

        async def one(i: int) -> None:
            content = f"body {i}".encode() if method == "POST" else None
            response = await client.request(method, f"{path}?i={i}", content=content)
            _check(response, method, i, target)
            done.append(i)

        with anyio.fail_after(45):
            async with anyio.create_task_group() as group:
                for i in range(CONCURRENT):
                    group.start_soon(one, i)
    assert sorted(done) == list(range(CONCURRENT))
    assert target.connections() == 1


@pytest.mark.timeout(60)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_threads_on_one_client_share_one_connection(target: Target, method: str) -> None:
    threads, each = 8, 25
    path = target.get_path if method == "GET" else target.post_path
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)
    with requestx.Client(base_url=target.url, **target.options) as client:

        def worker(n: int) -> None:
            try:
                barrier.wait(10)
                for k in range(each):
                    i = n * each + k
                    content = f"body {i}".encode() if method == "POST" else None
                    _check(
                        client.request(method, f"{path}?i={i}", content=content), method, i, target
                    )
            except BaseException as exc:  # reported below
                errors.append(exc)

        workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join(45)
        assert not any(thread.is_alive() for thread in workers), "a worker hung"
    assert not errors, errors[:3]
    assert target.connections() == 1


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_an_origin_that_chose_http11_still_gets_parallel_connections(
    tls: TLSFiles, tls_h1_server: HypercornServer
) -> None:
    # http2=True, but the server offers only http/1.1 by ALPN: nothing multiplexes, so no
    # request may be held back waiting for a stream; 10 requests of 0.5 s run side by side.
    # (A first version of csrc/origin.c took such a connection for HTTP/2: one connection.)
    tls_h1_server.reset_stats()
    async with requestx.AsyncClient(http2=True, verify=tls.ca_file) as client:
        versions: list[str] = []

        async def one() -> None:
            response = await client.get(tls_h1_server.url + "/slow?delay=0.5")
            versions.append(response.http_version)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for _ in range(10):
                    group.start_soon(one)
    assert versions == ["HTTP/1.1"] * 10
    # Not all 10 need a connection of their own: a request that libcurl held back (PIPEWAIT)
    # until the first connection's ALPN answer may take a connection another has finished with.
    # Held back waiting for an HTTP/2 stream, they would share one.
    assert tls_h1_server.connection_count() >= 5
