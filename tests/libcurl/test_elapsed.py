"""`response.elapsed` covers the whole exchange: from the request's start to its response's end.

libcurl times the transfer (CURLINFO_TOTAL_TIME): a response that took a server 0.25 s must say
at least 0.25 s, and never more than the caller waited. (Written for a patch that read
libcurl's clock once per step of a transfer, since dropped for gaining too little:
docs/libcurl-patches.md; it holds any libcurl to the same.) Against hypercorn (`/slow`), the
raw-socket server (header lines dribbled out, each step of the transfer reading a little), and
nginx (a large body read over many steps).
"""

from __future__ import annotations

import datetime
import time

import pytest

import requestx
from tests.servers import HypercornServer, RawServer
from tests.servers.nginx import Nginx

pytestmark = pytest.mark.timeout(30)


def _timed_get(client: requestx.Client, url: str) -> tuple[requestx.Response, float]:
    started = time.monotonic()
    response = client.get(url)
    return response, time.monotonic() - started


async def _timed_aget(client: requestx.AsyncClient, url: str) -> tuple[requestx.Response, float]:
    started = time.monotonic()
    response = await client.get(url)
    return response, time.monotonic() - started


def _assert_between(response: requestx.Response, at_least: float, wall: float) -> None:
    assert response.status_code == 200
    elapsed = response.elapsed.total_seconds()
    assert at_least <= elapsed <= wall, (at_least, elapsed, wall)


def test_a_slow_answer_counts_in_full_hypercorn(server: HypercornServer) -> None:
    with requestx.Client() as client:
        client.get(server.url + "/slow?delay=0")  # a pooled connection: only the wait is left
        response, wall = _timed_get(client, server.url + "/slow?delay=0.25")
    _assert_between(response, 0.25, wall)


def test_a_slow_header_block_counts_in_full_raw_server(raw_server: RawServer) -> None:
    with requestx.Client() as client:
        response, wall = _timed_get(client, raw_server.url + "/slow-headers?lines=3&delay=0.1")
    assert response.text == "ok"
    _assert_between(response, 0.3, wall)


def test_a_large_body_is_timed_to_its_end_nginx(nginx: Nginx) -> None:
    with requestx.Client() as client:
        response, wall = _timed_get(client, nginx.url + "/big8m")
    assert len(response.content) == 8 * 1024 * 1024
    _assert_between(response, 0.0, wall)
    assert response.elapsed > datetime.timedelta(0)


@pytest.mark.anyio
async def test_async_slow_answer_counts_in_full_hypercorn(server: HypercornServer) -> None:
    async with requestx.AsyncClient() as client:
        await client.get(server.url + "/slow?delay=0")
        response, wall = await _timed_aget(client, server.url + "/slow?delay=0.25")
    _assert_between(response, 0.25, wall)


@pytest.mark.anyio
async def test_async_slow_header_block_counts_in_full_raw_server(raw_server: RawServer) -> None:
    async with requestx.AsyncClient() as client:
        response, wall = await _timed_aget(
            client, raw_server.url + "/slow-headers?lines=3&delay=0.1"
        )
    _assert_between(response, 0.3, wall)
