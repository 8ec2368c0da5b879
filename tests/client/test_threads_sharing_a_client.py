"""One blocking `Client` shared by many threads: every thread gets its own response, the pool
honours `Limits`, and closing the client under load fails the in-flight requests cleanly.

Every loop is bounded and every thread is joined with a timeout, so a deadlock fails the test
instead of hanging the run.
"""

from __future__ import annotations

import threading
import time
import typing

import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer, RawServer
from tests.servers.fast_server import FastServer
from tests.support.threads import (
    JOIN_TIMEOUT,
    engine_threads_baseline,
    run_threads,
    wait_engine_threads,
)


def _wait_no_live_transfers() -> None:
    # The engine drops its reference just after waking the waiter: allow it a moment.
    deadline = time.monotonic() + 2
    while _core.live_transfers() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _core.live_transfers() == 0


def test_threads_each_get_their_own_response(server: HypercornServer) -> None:
    threads, per_thread = 8, 200
    mismatches: list[tuple[int, int, dict[str, typing.Any]]] = []

    with requestx.Client(base_url=server.url, timeout=10) as client:

        def work(i: int) -> None:
            for j in range(per_thread):
                tag = f"{i}-{j}"
                response = client.post(
                    "/echo",
                    params={"id": tag},
                    headers={"X-Id": tag},
                    content=f"body-{tag}".encode(),
                )
                echo = response.json()
                received = [v for k, v in echo["headers"] if k == "x-id"]
                if (
                    response.status_code != 200
                    or echo["query"] != f"id={tag}"
                    or received != [tag]
                    or echo["body"] != f"body-{tag}"
                    or response.request.headers["x-id"] != tag
                ):
                    mismatches.append((i, j, echo))

        server.reset_stats()
        errors = run_threads(threads, work)
    assert errors == []
    assert mismatches == []
    assert server.request_count() == threads * per_thread
    # Connections were shared, not opened per request.
    assert 1 <= server.connection_count() <= threads
    _wait_no_live_transfers()


@pytest.mark.parametrize("max_connections", [1, 2])
def test_max_connections_bounds_server_side_connections(
    server: HypercornServer, max_connections: int
) -> None:
    limits = requestx.Limits(max_connections=max_connections)
    with requestx.Client(base_url=server.url, timeout=10, limits=limits) as client:

        def work(i: int) -> None:
            for j in range(40):
                response = client.get("/echo", params={"id": f"{i}-{j}"})
                assert response.json()["query"] == f"id={i}-{j}"

        server.reset_stats()
        errors = run_threads(8, work)
    assert errors == []
    assert server.request_count() == 8 * 40
    assert 1 <= server.connection_count() <= max_connections


def test_slow_requests_run_in_parallel(server: HypercornServer) -> None:
    # 8 requests of 0.5 s each on 8 threads: about 0.5 s in all, not 4 s. The GIL is released
    # while waiting and the engine serves them concurrently.
    with requestx.Client(base_url=server.url, timeout=10) as client:
        start = time.monotonic()
        errors = run_threads(8, lambda i: client.get("/slow?delay=0.5").raise_for_status())
        elapsed = time.monotonic() - start
    assert errors == []
    assert elapsed < 2.0, f"8 parallel 0.5 s requests took {elapsed:.2f} s"


def test_a_stalled_request_does_not_block_other_threads(raw_server: RawServer) -> None:
    with requestx.Client(timeout=5) as client:
        outcome: list[BaseException] = []

        def stall() -> None:
            try:
                client.get(raw_server.url + "/stall")
            except requestx.TransportError as exc:
                outcome.append(exc)

        stalled = threading.Thread(target=stall, daemon=True)
        stalled.start()
        try:
            time.sleep(0.2)
            start = time.monotonic()
            for _ in range(50):
                assert client.get(raw_server.url + "/ok").text == "ok"
            assert time.monotonic() - start < 2.0
            assert stalled.is_alive()
        finally:
            raw_server.release()
            stalled.join(5)
    assert not stalled.is_alive()
    assert isinstance(outcome[0], requestx.RemoteProtocolError)  # released: closed, no answer


def test_close_while_requests_are_in_flight(raw_server: RawServer) -> None:
    client = requestx.Client(timeout=10)
    outcomes: list[tuple[type[BaseException], float]] = []
    lock = threading.Lock()

    def stall(i: int) -> None:
        start = time.monotonic()
        try:
            client.get(raw_server.url + "/stall")
        except BaseException as exc:
            with lock:
                outcomes.append((type(exc), time.monotonic() - start))

    threads = [threading.Thread(target=stall, args=(i,), daemon=True) for i in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)  # all four are waiting on the server
    start = time.monotonic()
    client.close()
    assert time.monotonic() - start < 2.0
    for thread in threads:
        thread.join(5)
    assert not any(thread.is_alive() for thread in threads)
    # Each in-flight request failed promptly with a transport error, not a hang or a crash.
    assert len(outcomes) == 4
    for cls, elapsed in outcomes:
        assert issubclass(cls, requestx.TransportError), cls
        assert elapsed < 2.0
    _wait_no_live_transfers()


def test_close_under_load(raw_server: RawServer) -> None:
    # Hammer a client from 4 threads and close it underneath them, 20 times: every worker ends
    # with RuntimeError (client closed) after at most some TransportErrors, and no engine thread
    # survives.
    before = engine_threads_baseline()
    for _ in range(20):
        client = requestx.Client(timeout=5)
        unexpected: list[BaseException] = []

        def hammer(
            i: int, client: requestx.Client = client, unexpected: list[BaseException] = unexpected
        ) -> None:
            for _ in range(10_000):
                try:
                    client.get(raw_server.url + "/ok")
                except RuntimeError:
                    return  # closed: the expected end
                except requestx.TransportError:
                    continue  # in flight while closing
                except BaseException as exc:
                    unexpected.append(exc)
                    return
            unexpected.append(AssertionError("never saw the client closed"))

        workers = [threading.Thread(target=hammer, args=(i,), daemon=True) for i in range(4)]
        for worker in workers:
            worker.start()
        time.sleep(0.02)
        client.close()
        for worker in workers:
            worker.join(JOIN_TIMEOUT)
        assert not any(worker.is_alive() for worker in workers)
        assert unexpected == []
    _wait_no_live_transfers()
    wait_engine_threads(before)


def test_many_clients_in_parallel() -> None:
    # Engines start and stop concurrently: 6 threads x 10 clients x 20 requests.
    with FastServer() as fast:
        before = engine_threads_baseline()

        def work(i: int) -> None:
            for _ in range(10):
                with requestx.Client(timeout=10) as client:
                    for _ in range(20):
                        assert client.get(fast.url + f"/{i}").content == b"ok"

        errors = run_threads(6, work)
        assert errors == []
        wait_engine_threads(before)
    _wait_no_live_transfers()


class _CloseOnFirstMethodRead(requestx.Request):
    """A request that closes `client` the moment `Client.send` reads its method, i.e. after
    send() has checked `is_closed` and before it reaches the engine: exactly where another
    thread's `close()` lands in the race this reproduces deterministically."""

    def __init__(self, client: requestx.Client, method: str, url: str) -> None:
        self._armed = False
        self._client_to_close = client
        super().__init__(method, url)
        self._armed = True

    @property  # type: ignore[override]
    def method(self) -> str:
        if self._armed:
            self._armed = False
            self._client_to_close.close()
        return self._method

    @method.setter
    def method(self, value: str) -> None:
        self._method = value


def test_close_racing_a_send_does_not_restart_the_engine(raw_server: RawServer) -> None:
    before = engine_threads_baseline()
    client = requestx.Client(timeout=5)
    assert client.get(raw_server.url + "/ok").text == "ok"
    request = _CloseOnFirstMethodRead(client, "GET", raw_server.url + "/ok")
    # Regression (fixed in 50a926d): the engine used to restart lazily here, sending the
    # request after close() returned and leaving a loop thread running until garbage collection.
    with pytest.raises((RuntimeError, requestx.TransportError)):
        client.send(request)
    assert client.is_closed
    wait_engine_threads(before)
