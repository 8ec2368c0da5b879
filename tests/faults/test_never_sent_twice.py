"""A request that is not idempotent is never sent twice; an idempotent one may be, once.

libcurl sends a request again, on a new connection, when the kept-alive connection it went out
on closes before any response byte arrives (libcurl 8.22, `Curl_retry_request`), whatever the
method. The server may have acted on it, so for POST and PATCH requestx stops that second
attempt and raises `RemoteProtocolError` (csrc/transfer.c, `on_prereq`). The raw server answers
a first request on a connection, then reads the second and closes without a byte; it counts the
requests it read, so each test checks what the server saw, not only what the client raised.
HTTP/2 (refused streams may be resent, processed ones not) is in tests/faults/test_h2_failures.py.
"""

from __future__ import annotations

import time

import anyio
import pytest

import requestx
from tests.servers import RawServer


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_a_post_on_a_connection_closed_without_answer_is_not_resent(
    raw_server: RawServer, method: str
) -> None:
    raw_server.reset_stats()
    with requestx.Client(base_url=raw_server.url) as client:
        assert client.request(method, "/ok", content=b"first").text == "ok"
        with pytest.raises(requestx.RemoteProtocolError, match="not sent again"):
            client.request(method, "/close-no-response", content=b"second")
        assert client.get("/ok").text == "ok"  # the client goes on working
    # libcurl connects for its second attempt before the engine stops it: the server sees
    # that connection, but no request on it
    assert raw_server.requests_seen("close-no-response") == 1


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_an_idempotent_request_may_be_sent_once_more(raw_server: RawServer, method: str) -> None:
    raw_server.reset_stats()
    with requestx.Client(base_url=raw_server.url) as client:
        assert client.get("/ok").text == "ok"
        with pytest.raises(requestx.RemoteProtocolError):
            client.request(method, "/close-no-response")
    # sent on the kept-alive connection, then once more on a new one, which closes too
    assert raw_server.requests_seen("close-no-response") == 2


@pytest.mark.anyio
async def test_async_post_is_not_resent(raw_server: RawServer) -> None:
    raw_server.reset_stats()
    async with requestx.AsyncClient(base_url=raw_server.url) as client:
        assert (await client.post("/ok", content=b"first")).text == "ok"
        with pytest.raises(requestx.RemoteProtocolError, match="not sent again"):
            await client.post("/close-no-response", content=b"second")
        assert (await client.get("/ok")).text == "ok"
    assert raw_server.requests_seen("close-no-response") == 1


@pytest.mark.parametrize("method", ["POST", "PATCH"])
def test_a_post_after_the_server_closed_the_idle_connection_goes_out_once(
    raw_server: RawServer, method: str
) -> None:
    # The other side of the rule: the server closed the pooled connection *before* the POST
    # (its FIN is in), so the POST was never sent on it and must not fail. libcurl 8.22 checks
    # an idle connection at most once a second and would send on the dead one; the engine
    # peeks first and reconnects. Before that fix, 40 POSTs in 40 failed with NOT_RESENT.
    raw_server.reset_stats()
    with requestx.Client(base_url=raw_server.url, timeout=5) as client:
        for _ in range(10):
            assert client.get("/ok-then-close").text == "ok"
            time.sleep(0.05)  # the server's FIN arrives while the connection sits in the pool
            assert client.request(method, "/ok", content=b"body").text == "ok"
    assert raw_server.requests_seen("ok") == 10  # each exactly once
    # A new connection for every POST (the next GET reuses it, and the server closes it after
    # answering), plus the first GET's.
    assert raw_server.connection_count() == 11


@pytest.mark.anyio
async def test_a_post_after_the_server_closed_the_idle_connection_goes_out_once_async(
    raw_server: RawServer,
) -> None:
    raw_server.reset_stats()
    async with requestx.AsyncClient(base_url=raw_server.url, timeout=5) as client:
        for _ in range(5):
            assert (await client.get("/ok-then-close")).text == "ok"
            await anyio.sleep(0.05)
            assert (await client.post("/ok", content=b"body")).text == "ok"
    assert raw_server.requests_seen("ok") == 5
