"""An idle connection is found among busy ones, and a full pool is reused, not grown.

A new request looks through the pool for an idle connection to its origin. Stock libcurl walks
the connections to that origin in the order they were made; requestx's patch
(scripts/libcurl-patches/curl-0016-idle-connections-ahead.patch) keeps the idle ones ahead of
the busy ones and stops a request that cannot multiplex at the first busy one, so an idle
connection standing behind a busy one would be missed. These tests hold most of a pool busy
with unread streams (each stream keeps its connection until its body is read: the body is
larger than what a stream buffers before it pauses) and count, at nginx and at hypercorn, what
reached the server:

* a request finds the one idle connection among the busy ones. The pool is at its limit, so
  the only other outcome is waiting for a stream to end, which never comes: a hang, failed by
  the test's time limit;
* a burst of many times the pool's size waits its turn on that connection: every request is
  answered once, and no connection is opened;
* the same for a client that may multiplex (HTTP/2 allowed) against servers that speak only
  HTTP/1.1, where what libcurl noted about the connections it passed over decides whether a
  request waits for a multiplexed one.

Every async test runs on asyncio, uvloop and trio, each wait bounded by `fail_after`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import typing

import anyio
import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.nginx import Nginx
from tests.support.tls import TLSFiles

pytestmark = pytest.mark.anyio

BUSY = 12  # connections held by unread streams
BODY = 8 * 1024 * 1024  # a stream's body: beyond the 1 MiB a stream buffers before it pauses
BURST = 40  # requests at once through the one idle connection


@dataclasses.dataclass
class Origin:
    """A server and how to count what reached it."""

    url: str
    big: str  # a path answering BODY bytes
    small: str  # a path answering a few bytes
    connections: typing.Callable[[], int]  # connections accepted so far
    requests: typing.Callable[[], int]  # requests answered so far
    verify: typing.Any = True


def _nginx_origin(server: Nginx) -> Origin:
    return Origin(
        server.url, "/big8m", "/get", server.accepted_connections, server.handled_requests
    )


def _hypercorn_origin(server: HypercornServer, verify: typing.Any = True) -> Origin:
    server.reset_stats()
    return Origin(
        server.url,
        f"/bytes/{BODY}",
        "/json",
        server.connection_count,
        server.request_count,
        verify,
    )


@pytest.fixture(params=["nginx", "hypercorn"])
def origin(request: pytest.FixtureRequest) -> Origin:
    if request.param == "nginx":
        return _nginx_origin(request.getfixturevalue("nginx"))
    return _hypercorn_origin(request.getfixturevalue("server"))


@pytest.fixture(params=["nginx", "hypercorn-tls-http1"])
def http1_only_origin(request: pytest.FixtureRequest) -> Origin:
    """Servers that answer HTTP/1.1 only, for a client that would multiplex if it could: nginx
    without HTTP/2, and hypercorn over TLS offering only http/1.1 in ALPN."""
    if request.param == "nginx":
        return _nginx_origin(request.getfixturevalue("nginx"))
    tls: TLSFiles = request.getfixturevalue("tls")
    return _hypercorn_origin(request.getfixturevalue("tls_h1_server"), tls.ca_file)


async def _read_to_end(response: requestx.Response) -> int:
    total = 0
    async for chunk in response.aiter_raw():
        total += len(chunk)
    return total


async def _open_streams(
    client: requestx.AsyncClient, stack: contextlib.AsyncExitStack, origin: Origin, count: int
) -> list[requestx.Response]:
    """`count` streams, each holding its connection until read (headers in, body unread)."""
    streams = []
    for _ in range(count):
        response = await stack.enter_async_context(client.stream("GET", origin.big))
        assert response.status_code == 200
        streams.append(response)
    return streams


async def _fill_pool(client: requestx.AsyncClient, origin: Origin) -> None:
    """Leave BUSY + 1 idle connections in the pool: as many streams at once, then read."""
    async with contextlib.AsyncExitStack() as stack:
        streams = await _open_streams(client, stack, origin, BUSY + 1)
        for response in streams:
            assert await _read_to_end(response) == BODY


async def _small_requests(client: requestx.AsyncClient, origin: Origin) -> list[int]:
    """Five requests one after another, then BURST at once; their status codes."""
    statuses = [(await client.get(origin.small)).status_code for _ in range(5)]

    async def one() -> None:
        statuses.append((await client.get(origin.small)).status_code)

    async with anyio.create_task_group() as tg:
        for _ in range(BURST):
            tg.start_soon(one)
    return statuses


async def _check_reuse_with_most_of_the_pool_busy(origin: Origin, http2: bool) -> None:
    # A pool of BUSY + 1 connections with no idle limit of its own: every connection is kept.
    limits = requestx.Limits(max_connections=BUSY + 1, max_keepalive_connections=None)
    async with requestx.AsyncClient(
        base_url=origin.url, limits=limits, timeout=20, http2=http2, verify=origin.verify
    ) as client:
        connections, requests = origin.connections(), origin.requests()
        with anyio.fail_after(30):
            await _fill_pool(client, origin)
        assert origin.connections() - connections == BUSY + 1
        connections = origin.connections()
        with anyio.fail_after(30):
            async with contextlib.AsyncExitStack() as stack:
                streams = await _open_streams(client, stack, origin, BUSY)
                statuses = await _small_requests(client, origin)
                # Every small request was answered while the streams still held their
                # connections: through the one connection left idle.
                assert statuses == [200] * (5 + BURST)
                assert origin.connections() == connections
                for response in streams:
                    assert await _read_to_end(response) == BODY
    assert origin.connections() == connections, "a connection was opened, not reused"
    assert origin.requests() - requests == 2 * BUSY + 1 + 5 + BURST


async def test_an_idle_connection_is_found_among_busy_ones(origin: Origin) -> None:
    await _check_reuse_with_most_of_the_pool_busy(origin, http2=False)


async def test_a_client_that_may_multiplex_reuses_http1_connections(
    http1_only_origin: Origin,
) -> None:
    await _check_reuse_with_most_of_the_pool_busy(http1_only_origin, http2=True)
