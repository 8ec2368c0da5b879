"""Sockets of idle kept-alive connections stay registered with the engine's epoll ("parked",
csrc/sockets.h), so that the next request on the connection costs no epoll_ctl.

What could go wrong, and is tested here against servers that close idle connections
(the raw server closes right after its answer, nginx after a short keep-alive timeout, over
plain HTTP/1.1, TLS and HTTP/2; over TLS nginx says close_notify first, over HTTP/2 GOAWAY):

* a parked socket the server closed becomes readable for ever (level-triggered): the loop
  must let it go at its first event, not turn over and over while other requests wait;
* a closed socket's number comes back as a new connection: the new one must be watched;
* a child process forked meanwhile holds a copy of a parked socket, so closing ours does not
  end its registration: the engine must unregister it before it closes it.

Loop turns (the engine's `wakeups` stat) are what a busy loop would show: a request of 0.3 s
takes a few turns, and thousands when a socket reports an event at every wait.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import typing

import pytest

import requestx
from tests.servers import HypercornServer, RawServer
from tests.servers.nginx import Nginx, nginx_or_skip

SLOW_PATH = "/slow?delay=0.3"
MAX_TURNS_FOR_A_SLOW_REQUEST = 40


@pytest.fixture(scope="module")
def closing_nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(http2=True, keepalive_timeout="150ms") as server:
        yield server


class Closer(typing.NamedTuple):
    """A server that closes idle connections: where to send a request, how long to wait for the
    close, and how many connections it has accepted so far."""

    url: str
    close_after: float
    accepted: typing.Callable[[], int]
    options: dict[str, typing.Any]  # for the client: TLS verification, HTTP/2


@pytest.fixture(params=["raw", "nginx", "nginx-tls", "nginx-h2"])
def closer(request: pytest.FixtureRequest, raw_server: RawServer) -> Closer:
    if request.param == "raw":
        return Closer(raw_server.url + "/ok-then-close", 0.05, raw_server.connection_count, {})
    nginx: Nginx = request.getfixturevalue("closing_nginx")
    if request.param == "nginx":
        return Closer(nginx.url + "/get", 0.4, nginx.accepted_connections, {})
    options = {"verify": nginx.ca_file, "http2": request.param == "nginx-h2"}
    return Closer(nginx.tls_url + "/get", 0.4, nginx.accepted_connections, options)


async def _turns_for_a_slow_request(client: requestx.AsyncClient, server: HypercornServer) -> int:
    engine = client._transport._engine
    before = engine.stats()["wakeups"]
    response = await client.get(server.url + SLOW_PATH)
    assert response.status_code == 200
    return int(engine.stats()["wakeups"] - before)


@pytest.mark.anyio
async def test_an_idle_connection_the_server_closed_is_let_go_at_its_first_event(
    closer: Closer, server: HypercornServer
) -> None:
    accepted = closer.accepted()
    async with requestx.AsyncClient(timeout=5, **closer.options) as client:
        assert (await client.get(closer.url)).status_code == 200
        await _sleep(closer.close_after)  # the idle connection is closed now: readable for ever
        # Another request keeps the loop waiting on epoll while the closed socket is parked.
        turns = await _turns_for_a_slow_request(client, server)
        assert turns < MAX_TURNS_FOR_A_SLOW_REQUEST, f"{turns} loop turns for one slow request"
        # The next request to the closer opens a new connection and is answered.
        assert (await client.get(closer.url)).status_code == 200
    assert closer.accepted() - accepted == 2


@pytest.mark.anyio
async def test_descriptor_numbers_reused_by_new_connections_are_watched(
    raw_server: RawServer, server: HypercornServer
) -> None:
    # Every /ok-then-close answer is followed by the server's close, so each round opens new
    # connections, which the kernel numbers with the descriptors just closed. A socket left
    # unwatched under a reused number would leave its request waiting for the 5 s timeout.
    rounds, width = 30, 3
    accepted = raw_server.connection_count()
    async with requestx.AsyncClient(timeout=5) as client:
        for _ in range(rounds):
            started = time.monotonic()
            closing = [client.get(raw_server.url + "/ok-then-close") for _ in range(width)]
            kept = [client.get(server.url + "/echo") for _ in range(width)]
            responses = await _gather(*closing, *kept)
            assert [r.status_code for r in responses] == [200] * (2 * width)
            assert time.monotonic() - started < 2.0
    # Each request to the raw server came on a connection of its own (none was reused dead).
    assert raw_server.connection_count() - accepted == rounds * width


def test_blocking_requests_alternate_between_a_closing_and_a_kept_connection(
    closer: Closer, server: HypercornServer
) -> None:
    # The caller drives the engine here (rx_engine_drive): the same parking, another thread.
    accepted = closer.accepted()
    with requestx.Client(timeout=5, **closer.options) as client:
        for _ in range(3):
            assert client.get(closer.url).status_code == 200
            time.sleep(closer.close_after)
            started = time.monotonic()
            assert client.get(server.url + "/echo").status_code == 200
            assert time.monotonic() - started < 1.0
    assert closer.accepted() - accepted == 3


# A server in a process of its own (the forked child below must not hold its sockets too, or
# its close would not reach us): it reads one request, says nothing, and closes after a while.
_SILENT_SERVER = """
import socket, sys, time
listener = socket.create_server(("127.0.0.1", 0))
print(listener.getsockname()[1], flush=True)
listener.settimeout(10)
conn, _ = listener.accept()
conn.settimeout(10)
conn.recv(65536)
time.sleep(float(sys.argv[1]))
conn.close()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_parked_socket_a_child_also_holds_is_unregistered_before_it_is_closed(
    server: HypercornServer,
) -> None:
    # Closing a descriptor removes its epoll registration only when no other descriptor refers
    # to the socket. A child forked while a request is in flight keeps its socket open; when
    # the request times out, libcurl drops the connection (parked by then) and closes it. Had
    # the engine not unregistered it first, the server's close would later report the dead
    # connection's end at every wait of the loop.
    silent = subprocess.Popen(
        [sys.executable, "-c", _SILENT_SERVER, "0.6"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert silent.stdout is not None
        port = int(silent.stdout.readline())

        async def scenario() -> int:
            async with requestx.AsyncClient(timeout=5) as client:
                url = f"http://127.0.0.1:{port}/"
                stalled = asyncio.ensure_future(client.get(url, timeout=0.3))
                await asyncio.sleep(0.1)  # connected, the request sent, no answer coming
                pid = os.fork()
                if pid == 0:  # the child only holds the descriptors for a while
                    time.sleep(5)
                    os._exit(0)
                try:
                    with pytest.raises(requestx.ReadTimeout):
                        await stalled
                    await asyncio.sleep(0.5)  # the server has closed the connection now
                    return await _turns_for_a_slow_request(client, server)
                finally:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)

        turns = asyncio.run(scenario())
    finally:
        silent.kill()
        silent.wait(5)
    assert turns < MAX_TURNS_FOR_A_SLOW_REQUEST, f"{turns} loop turns for one slow request"


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


async def _gather(*awaitables: typing.Awaitable[requestx.Response]) -> list[requestx.Response]:
    """asyncio.gather that also runs on trio (anyio task group)."""
    import anyio

    results: list[typing.Any] = [None] * len(awaitables)

    async def run(index: int, awaitable: typing.Awaitable[requestx.Response]) -> None:
        results[index] = await awaitable

    async with anyio.create_task_group() as group:
        for index, awaitable in enumerate(awaitables):
            group.start_soon(run, index, awaitable)
    return results


# --- sequential requests cost no epoll registration -----------------------------------------


@pytest.fixture(scope="module")
def kept_nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip() as server:
        yield server


def _origin(request: pytest.FixtureRequest, kind: str, host: str) -> str:
    if kind == "nginx":
        url = request.getfixturevalue("kept_nginx").url + "/get"
    else:
        url = request.getfixturevalue("server").url + "/json"
    return url.replace("127.0.0.1", host)


SEQUENTIAL = 100
# Parked, a kept-alive connection's socket and libcurl's wake-up descriptor (which libcurl
# watches while a transfer is alive: by name, its resolver threads report through it) cost no
# epoll_ctl per request; before the wake-up descriptor was parked, each request cost two.
MAX_CHANGES = 10


@pytest.mark.parametrize("kind", ["nginx", "hypercorn"])
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_sequential_blocking_requests_change_no_epoll_registration(
    request: pytest.FixtureRequest, kind: str, host: str
) -> None:
    url = _origin(request, kind, host)
    with requestx.Client(timeout=10) as client:
        for _ in range(5):
            assert client.get(url).status_code == 200
        before = client._engine.stats()["poller_changes"]
        for _ in range(SEQUENTIAL):
            assert client.get(url).status_code == 200
        changes = client._engine.stats()["poller_changes"] - before
    print(f"{changes} epoll_ctl calls for {SEQUENTIAL} requests")
    assert changes < MAX_CHANGES


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["nginx", "hypercorn"])
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_sequential_async_requests_change_no_epoll_registration(
    request: pytest.FixtureRequest, kind: str, host: str
) -> None:
    url = _origin(request, kind, host)
    async with requestx.AsyncClient(timeout=10) as client:
        engine = client._transport._engine
        for _ in range(5):
            assert (await client.get(url)).status_code == 200
        before = engine.stats()["poller_changes"]
        for _ in range(SEQUENTIAL):
            assert (await client.get(url)).status_code == 200
        changes = engine.stats()["poller_changes"] - before
    print(f"{changes} epoll_ctl calls for {SEQUENTIAL} requests")
    assert changes < MAX_CHANGES
