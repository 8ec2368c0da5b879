"""Blocking callers drive an idle engine themselves (csrc/engine.h, docs/architecture.md).

A lone blocking request runs libcurl in the caller's thread instead of waking the loop
thread. These tests count what the servers saw (requests, connections) and what the engine
reports (`driven`), against nginx and hypercorn, and check the hand-overs: a request slower
than the caller's driving budget, threads submitting while one caller drives, an event loop's
requests on the same engine, and a timeout that fires while the caller drives.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer
from tests.servers.nginx import Nginx

REQUESTS = 200


def test_sequential_requests_are_driven_by_the_caller_on_one_connection(
    nginx: Nginx, server: HypercornServer
) -> None:
    # nginx: its access log and status page count requests and accepted connections.
    connections_before = nginx.accepted_connections()
    requests_before = nginx.handled_requests()
    with requestx.Client(timeout=10) as client:
        for _ in range(REQUESTS):
            assert client.get(nginx.url + "/get").status_code == 200
        stats = client._engine.stats()
    # The first request may find the loop thread still lingering after start-up.
    assert stats["driven"] >= REQUESTS - 1
    assert stats["completed"] == REQUESTS and stats["running"] == 0
    assert nginx.handled_requests() - requests_before == REQUESTS
    assert nginx.accepted_connections() - connections_before == 1

    # hypercorn: its app counts requests and distinct client connections.
    server.reset_stats()
    with requestx.Client(base_url=server.url, timeout=10) as client:
        queries = [client.get("/echo", params={"i": i}).json()["query"] for i in range(REQUESTS)]
        stats = client._engine.stats()
    assert queries == [f"i={i}" for i in range(REQUESTS)]
    assert stats["driven"] >= REQUESTS - 1
    assert server.request_count() == REQUESTS
    assert server.connection_count() == 1


def test_a_request_slower_than_the_driving_budget_is_finished_by_the_loop_thread(
    server: HypercornServer,
) -> None:
    # The caller drives for 50 ms at most, then hands the transfer to the loop thread and
    # waits for it like any submitted request.
    server.reset_stats()
    with requestx.Client(base_url=server.url, timeout=10) as client:
        response = client.get("/slow", params={"delay": "0.3"})
        assert response.status_code == 200 and response.text == "slow"
        assert client.get("/echo").status_code == 200  # the engine is healthy afterwards
        stats = client._engine.stats()
    assert stats["driven"] >= 1
    assert server.request_count() == 2


def test_a_timeout_fires_while_the_caller_drives(server: HypercornServer) -> None:
    # The caller drives only an engine whose loop thread parks within HANDOVER_WAIT_US of being
    # asked; a new engine's thread may not have got that far on a loaded machine (the full
    # suite once saw it). So: up to five tries, each timing out, until one was driven.
    with requestx.Client(base_url=server.url, timeout=requestx.Timeout(10, read=0.02)) as client:
        for _ in range(5):
            driven = client._engine.stats()["driven"]
            with pytest.raises(requestx.ReadTimeout):
                client.get("/slow", params={"delay": "1"})
            if client._engine.stats()["driven"] > driven:
                break
        assert client._engine.stats()["driven"] > driven
        assert client.get("/echo", timeout=10).status_code == 200


@pytest.mark.parametrize("kind", ["nginx", "hypercorn"])
def test_threads_and_an_event_loop_share_an_engine_a_caller_may_be_driving(
    kind: str, nginx: Nginx, server: HypercornServer
) -> None:
    # Six blocking threads and an event loop on one engine (the transport's), so the driver
    # role keeps changing hands: every request gets its own answer, and the server counts
    # exactly as many requests as were made.
    base = nginx.url if kind == "nginx" else server.url
    path = "/get" if kind == "nginx" else "/echo"
    requests_before = nginx.handled_requests() if kind == "nginx" else 0
    server.reset_stats()
    client = requestx.Client(timeout=10)
    # The async transport borrows the blocking client's engine (and so its driver role).
    async_transport = requestx.AsyncHTTPTransport(engine=client._engine)
    errors: list[BaseException] = []
    per_thread = 60

    def blocking(i: int) -> None:
        try:
            for j in range(per_thread):
                response = client.get(f"{base}{path}?t={i}&j={j}")
                assert response.status_code == 200
                if kind == "hypercorn":
                    assert response.json()["query"] == f"t={i}&j={j}"
        except BaseException as exc:  # reported below
            errors.append(exc)

    async def asynchronous() -> int:
        async with requestx.AsyncClient(transport=async_transport, timeout=10) as client:
            responses = await asyncio.gather(
                *(client.get(f"{base}{path}?a={k}") for k in range(100))
            )
        return sum(r.status_code == 200 for r in responses)

    threads = [threading.Thread(target=blocking, args=(i,), daemon=True) for i in range(6)]
    for thread in threads:
        thread.start()
    ok_async = asyncio.run(asynchronous())
    for thread in threads:
        thread.join(30)
    assert not any(thread.is_alive() for thread in threads)
    client.close()
    assert errors == []
    assert ok_async == 100
    total = 6 * per_thread + 100
    if kind == "nginx":
        assert nginx.handled_requests() - requests_before == total
    else:
        assert server.request_count() == total


@pytest.mark.anyio
async def test_an_event_loop_waiting_on_a_slow_server_costs_a_few_loop_turns_per_request(
    server: HypercornServer,
) -> None:
    # The loop thread parks between requests and is woken by the next submit. A wake-up whose
    # command was not yet announced on the eventfd once made it turn over without sleeping
    # until the announcement came: about 700 turns per request. Count the turns.
    requests = 40
    async with requestx.AsyncClient(base_url=server.url, timeout=10) as client:
        await client.get("/echo")
        engine = client._transport._engine
        before = engine.stats()
        for _ in range(requests):
            response = await client.get("/slow", params={"delay": "0.005"})
            assert response.text == "slow"
        after = engine.stats()
    assert after["completed"] - before["completed"] == requests
    turns = (after["wakeups"] - before["wakeups"]) / requests
    assert turns < 12, f"{turns:.0f} turns of the loop per request"


def test_closing_the_client_while_a_caller_drives_ends_its_request_promptly(
    server: HypercornServer,
) -> None:
    # close() from another thread lands at different points of a driven request (the server
    # answers after 30 ms, within the 50 ms a caller drives): the request either completes or
    # fails with a transport error, at once; the loop thread takes the loop back only to shut
    # down, and nothing is left behind.
    baseline = _core.live_transfers()
    outcomes: list[str] = []
    for delay in (0.0, 0.005, 0.01, 0.02, 0.03, 0.04, 0.06):
        client = requestx.Client(base_url=server.url, timeout=10)
        client.get("/echo")  # the connection is open; the loop thread has parked since
        time.sleep(0.01)
        closer = threading.Timer(delay, client.close)
        started = time.monotonic()
        closer.start()
        try:
            response = client.get("/slow", params={"delay": "0.03"})
            outcomes.append(f"answered {response.status_code}")
        except requestx.TransportError:
            outcomes.append("transport error")
        except RuntimeError:
            outcomes.append("closed before it started")
        finally:
            closer.join(5)
        assert time.monotonic() - started < 2.0, outcomes
        assert client._engine.stats()["running"] == 0
    assert len(outcomes) == 7
    assert "transport error" in outcomes, outcomes  # some close() landed mid-request
    deadline = time.monotonic() + 2
    while _core.live_transfers() > baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _core.live_transfers() <= baseline
