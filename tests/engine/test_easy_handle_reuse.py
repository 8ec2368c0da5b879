"""A pooled easy handle keeps its options after a plain GET over HTTP/1.1, and the next plain GET
with the same TLS settings and route sets only its own (`rx_easy_setup`, csrc/transfer.h);
anything else resets the handle first, as every handle was reset before.

What a kept option could get wrong is what reaches the server, so each case sends a sequence
of requests through one engine, whose pool hands the same handle back each time, and compares
every request head, byte for byte, with the head a fresh client sends for the same request;
and requests that alternate between a proxy route and a direct one, on one shared engine, are
counted at the proxy and at the origin.
"""

from __future__ import annotations

import os
import tempfile
import typing

import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.proxies import ForwardProxy, UnixSocketHTTPServer
from tests.servers.recorder import RecordedHead, RecordingServer

# Each step: method, path, keyword arguments. GETs after every other kind of request, and
# GETs whose headers, URL and timeout differ from the GET before them.
SEQUENCE: list[tuple[str, str, dict[str, typing.Any]]] = [
    ("GET", "/a", {}),
    ("GET", "/b?q=1", {"headers": {"X-One": "1"}}),
    ("GET", "/c", {}),
    ("HEAD", "/d", {}),
    ("GET", "/e", {}),
    ("POST", "/f", {"content": b"body"}),
    ("GET", "/g", {"headers": {"X-Two": "2", "Accept": "text/plain"}}),
    ("DELETE", "/h", {}),
    ("GET", "/i", {"timeout": 0.5}),
    ("PUT", "/j", {"json": {"k": "v"}}),
    ("GET", "/k", {}),
    ("OPTIONS", "/l", {}),
    ("GET", "/m", {"timeout": None}),
]


def _head(
    recorder: RecordingServer, client: requestx.Client, method: str, url: str, kwargs: typing.Any
) -> RecordedHead:
    recorder.reset()
    client.request(method, url, **kwargs)
    assert len(recorder.heads) == 1
    return recorder.heads[0]


def test_a_reused_handle_sends_what_a_fresh_client_sends(recorder: RecordingServer) -> None:
    with requestx.Client() as reused:
        for method, path, kwargs in SEQUENCE:
            url = recorder.url + path
            sent = _head(recorder, reused, method, url, kwargs)
            with requestx.Client() as fresh:
                expected = _head(recorder, fresh, method, url, kwargs)
            assert sent.raw == expected.raw, (method, path)
        # One connection all along: a kept handle reuses the pool's connection like any other.
        recorder.reset()
        reused.get(recorder.url + "/last")
        assert recorder.connections == 0


@pytest.mark.anyio
async def test_the_async_client_reuses_handles_as_well(recorder: RecordingServer) -> None:
    async with requestx.AsyncClient() as reused:
        for method, path, kwargs in SEQUENCE:
            url = recorder.url + path
            recorder.reset()
            await reused.request(method, url, **kwargs)
            sent = recorder.heads[0]
            with requestx.Client() as fresh:
                expected = _head(recorder, fresh, method, url, kwargs)
            assert sent.raw == expected.raw, (method, path)


@pytest.mark.anyio
async def test_a_route_change_on_a_shared_engine_resets_the_handle(
    proxy: ForwardProxy, server: HypercornServer
) -> None:
    """Two async transports on one engine (async engines have no blocking lanes, so one pool
    serves both), one through a proxy: GETs alternate between them, so each GET finds the
    handle the other route's GET left. Counted at both ends: no request takes the other's
    route."""
    direct = requestx.AsyncHTTPTransport()
    proxied = requestx.AsyncHTTPTransport(proxy=proxy.url, engine=direct._engine)
    url = server.url + "/echo"
    # Clients, not handle_async_request: that streams the response, and a stream's handle is
    # reset anyway.
    async with (
        requestx.AsyncClient(transport=direct) as straight,
        requestx.AsyncClient(transport=proxied) as through_proxy,
    ):
        server.reset_stats()
        for n in range(4):
            for client in (straight, through_proxy, through_proxy, straight):
                assert (await client.get(url, params={"n": n})).status_code == 200
    assert proxy.forwarded == [f"{url}?n={n}" for n in range(4) for _ in range(2)]
    assert server.request_count() == 16  # 8 direct, 8 forwarded by the proxy


@pytest.mark.anyio
async def test_a_handle_left_by_a_unix_socket_route_is_reset(server: HypercornServer) -> None:
    """A route's options that only some routes set (a Unix socket path) must not stay on a
    handle the next route's GET takes: the handle is reset when the route differs."""
    with (
        tempfile.TemporaryDirectory(prefix="rx-") as directory,  # socket paths are short
        UnixSocketHTTPServer(os.path.join(directory, "http.sock")) as unix_server,
    ):
        over_tcp = requestx.AsyncHTTPTransport()
        over_unix = requestx.AsyncHTTPTransport(uds=unix_server.path, engine=over_tcp._engine)
        async with (
            requestx.AsyncClient(transport=over_tcp) as tcp_client,
            requestx.AsyncClient(transport=over_unix) as unix_client,
        ):
            server.reset_stats()
            for _ in range(3):
                unix_answer = await unix_client.get("http://docker/ping")
                assert unix_answer.json()["path"] == "/ping"
                tcp_answer = await tcp_client.get(server.url + "/echo")
                assert tcp_answer.json()["method"] == "GET"
        assert len(unix_server.requests) == 3
        assert server.request_count() == 3
