"""`Timeout(total=...)`: one deadline for the whole exchange (httpx has none: encode/httpx#1450).

httpx's four timeouts bound each wait, so a server that sends one byte just inside the read
timeout, for ever (slowloris), keeps a request alive indefinitely. `total` bounds the request
from the moment the client starts it — waiting for a connection, connecting, sending, and
receiving the whole body — and raises the timeout class of the phase it ran out in
(`ReadTimeout` while the response trickles in), with a message that names the total.
"""

from __future__ import annotations

import time

import anyio
import pytest

import requestx
from tests.servers import HypercornServer, RawServer


def test_total_stops_a_slowloris_response(raw_server: RawServer) -> None:
    # One header line every 0.2 s for 6 s: every read is well inside the 1 s read timeout.
    url = raw_server.url + "/slow-headers?lines=30&delay=0.2"
    with requestx.Client(timeout=requestx.Timeout(1.0, total=0.8)) as client:
        start = time.monotonic()
        with pytest.raises(requestx.ReadTimeout, match="total timeout") as info:
            client.get(url)
        elapsed = time.monotonic() - start
        assert 0.7 <= elapsed <= 1.6, elapsed
        assert isinstance(info.value, requestx.TimeoutException)
        assert client.get(raw_server.url + "/ok").text == "ok"


def test_total_stops_a_slowloris_body(server: HypercornServer) -> None:
    # 40 body chunks 0.1 s apart (4 s): no single read waits long.
    url = server.url + "/drip?chunks=40&delay=0.1&size=10"
    with requestx.Client(timeout=requestx.Timeout(2.0, total=0.7)) as client:
        start = time.monotonic()
        with pytest.raises(requestx.ReadTimeout, match="total timeout"):
            client.get(url)
        assert time.monotonic() - start <= 1.5
        assert client.get(server.url + "/echo").status_code == 200


@pytest.mark.anyio
async def test_total_async(server: HypercornServer, raw_server: RawServer) -> None:
    timeout = requestx.Timeout(2.0, total=0.6)
    async with requestx.AsyncClient(timeout=timeout) as client:
        with anyio.fail_after(10):
            with pytest.raises(requestx.ReadTimeout, match="total timeout"):
                await client.get(server.url + "/drip?chunks=40&delay=0.1&size=10")
            with pytest.raises(requestx.ReadTimeout, match="total timeout"):
                await client.get(raw_server.url + "/slow-headers?lines=30&delay=0.2")
            assert (await client.get(raw_server.url + "/ok")).text == "ok"


def test_total_large_enough_lets_the_request_finish(server: HypercornServer) -> None:
    url = server.url + "/drip?chunks=5&delay=0.1&size=10"
    with requestx.Client(timeout=requestx.Timeout(2.0, total=5)) as client:
        assert len(client.get(url).content) == 50


def test_total_per_request_and_in_extensions(server: HypercornServer) -> None:
    url = server.url + "/drip?chunks=40&delay=0.1&size=10"
    with requestx.Client(timeout=2.0) as client:
        with pytest.raises(requestx.ReadTimeout, match="total timeout"):
            client.get(url, timeout=requestx.Timeout(2.0, total=0.5))
        request = client.build_request("GET", url, timeout=requestx.Timeout(2.0, total=0.5))
        assert request.extensions["timeout"]["total"] == 0.5
        with pytest.raises(requestx.ReadTimeout):
            client.send(request)


def test_timeout_object_with_total() -> None:
    timeout = requestx.Timeout(5.0, total=30)
    assert timeout.total == 30
    assert timeout == requestx.Timeout(timeout)
    assert timeout != requestx.Timeout(5.0)
    assert requestx.Timeout(**timeout.as_dict()) == timeout
    assert "total=30" in repr(timeout)
    # Without total, as httpx: four keys, and no total.
    assert requestx.Timeout(5.0).as_dict() == {
        "connect": 5.0,
        "read": 5.0,
        "write": 5.0,
        "pool": 5.0,
    }
    assert requestx.Timeout(5.0).total is None
