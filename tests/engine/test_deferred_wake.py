"""Deferred wake-ups: with several requests of one event loop in flight, `AsyncClient` queues
new ones for the engine's loop thread without waking it, and wakes it once at the end of the
event loop's turn (`_AsyncioBridge.submit`, `Engine.flush`, `rx_engine_submit_deferred`).

What could go wrong is a request left in the queue with nobody to wake the loop thread for it:
it would never be sent, and its caller would wait for ever. So the engine's rules are checked
one by one, counting at the server what was sent and when; and then whole clients on every
event loop, against hypercorn and nginx: requests made while others are in flight go out at
once, every one reaches the server exactly once, and cancelling or closing with wake-ups owed
leaves nothing behind.
"""

from __future__ import annotations

import select
import time
import typing

import anyio
import pytest

import requestx
from requestx import _core
from requestx._transports import request_timeouts_ms
from tests.servers import HypercornServer
from tests.servers.nginx import Nginx
from tests.support.transfers import wait_live_transfers

# commands.c's DEFER_BATCH: deferred submits that wake the loop thread without a flush.
DEFER_BATCH = 24


def _wait_until(condition: typing.Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


class _EngineDriver:
    """An AsyncClient's engine driven by hand: submits with and without a deferred wake-up,
    and a completion queue read with select() (no event loop), so that the engine's rules
    can be checked one at a time."""

    def __init__(self, client: requestx.AsyncClient) -> None:
        self.transport = client._transport
        self.engine = self.transport._engine
        self.queue = _core.CompletionQueue()
        self.finished: list[_core.PendingTransfer] = []

    def submit(self, url: str, defer: bool) -> _core.PendingTransfer:
        request = requestx.Request("GET", url)
        arguments = self.transport._engine_arguments(request, request_timeouts_ms(request))
        return self.engine.submit(*arguments, self.queue, defer)

    def wait_for(self, pending: _core.PendingTransfer, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while pending not in self.finished:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self.queue.fileno()], [], [], left)
            self.finished.extend(p for p in self.queue.drain() if p.finished)
        return True

    def close(self) -> None:
        self.queue.close()


@pytest.fixture
def driver() -> typing.Iterator[_EngineDriver]:
    client = requestx.AsyncClient(timeout=10)
    driver = _EngineDriver(client)
    yield driver
    driver.close()
    client._transport._close_engine()


def _slow_request_in_flight(
    driver: _EngineDriver, server: HypercornServer
) -> _core.PendingTransfer:
    """A request the server holds for 2 s, once the server has it and the loop thread sleeps on
    epoll for its answer (`sleeps` counts the wait): from then on only an eventfd write makes
    the loop thread look at its queue. Before it sleeps it may spin for a lone transfer's
    answer, and a spinning loop thread takes whatever it finds queued, deferred or not."""
    before = server.request_count()
    sleeps = driver.engine.stats()["sleeps"]
    slow = driver.submit(server.url + "/slow?delay=2", defer=False)
    assert _wait_until(lambda: server.request_count() == before + 1)
    assert _wait_until(lambda: driver.engine.stats()["sleeps"] > sleeps)
    return slow


# --- the engine's rules -----------------------------------------------------------------------


def test_a_deferred_submit_is_sent_on_the_flush(
    driver: _EngineDriver, server: HypercornServer
) -> None:
    slow = _slow_request_in_flight(driver, server)
    seen = server.request_count()
    fast = driver.submit(server.url + "/echo", defer=True)
    time.sleep(0.3)
    assert server.request_count() == seen, "sent before the flush"
    started = time.monotonic()
    driver.engine.flush()
    assert driver.wait_for(fast, timeout=1.5), "the flush did not wake the loop thread"
    assert time.monotonic() - started < 1.0
    assert fast.result()[0] == 200
    assert server.request_count() == seen + 1
    assert not slow.finished  # it was not the slow answer that woke the loop thread
    driver.engine.flush()  # nothing owed any more: harmless
    assert driver.wait_for(slow, timeout=5)


def test_a_batch_of_deferred_submits_wakes_the_loop_thread_without_a_flush(
    driver: _EngineDriver, server: HypercornServer
) -> None:
    _slow_request_in_flight(driver, server)
    seen = server.request_count()
    first = [driver.submit(server.url + "/echo", defer=True) for _ in range(DEFER_BATCH - 1)]
    time.sleep(0.3)
    assert server.request_count() == seen, "sent before the batch was full"
    last = driver.submit(server.url + "/echo", defer=True)
    for pending in [*first, last]:
        assert driver.wait_for(pending, timeout=1.5), "the full batch did not wake the loop"
    assert server.request_count() == seen + DEFER_BATCH


def test_a_submit_that_is_not_deferred_pays_the_owed_wake_up(
    driver: _EngineDriver, server: HypercornServer
) -> None:
    _slow_request_in_flight(driver, server)
    seen = server.request_count()
    deferred = driver.submit(server.url + "/echo", defer=True)
    time.sleep(0.2)
    prompt = driver.submit(server.url + "/echo", defer=False)
    assert driver.wait_for(prompt, timeout=1.5)
    assert driver.wait_for(deferred, timeout=1.5), "left behind by the next submit's wake-up"
    assert server.request_count() == seen + 2


def test_closing_with_a_wake_up_owed_fails_the_request_and_sends_nothing(
    driver: _EngineDriver, server: HypercornServer
) -> None:
    slow = _slow_request_in_flight(driver, server)
    seen = server.request_count()
    owed = driver.submit(server.url + "/echo", defer=True)
    driver.transport._close_engine()
    assert driver.wait_for(owed, timeout=5) and driver.wait_for(slow, timeout=5)
    for pending in (owed, slow):
        with pytest.raises(_core.EngineError, match="closed"):
            pending.result()
    driver.engine.flush()  # after close: does nothing (its eventfd is gone)
    time.sleep(0.1)
    assert server.request_count() == seen


# --- whole clients, every event loop ----------------------------------------------------------


@pytest.mark.anyio
async def test_a_request_made_while_slow_ones_run_goes_out_at_once(
    server: HypercornServer, nginx: Nginx
) -> None:
    """Six requests held 2 s by hypercorn keep the loop thread waiting on epoll; requests made
    meanwhile (deferred: more than four in flight) must not wait for those answers."""
    handled = nginx.handled_requests()
    slow_seen = server.request_count()
    async with requestx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(client.get, server.url + "/slow?delay=2")
                while server.request_count() < slow_seen + 6:
                    await anyio.sleep(0.01)
                started = time.monotonic()
                fast = await client.get(nginx.url + "/get")
                echoed = await client.get(server.url + "/echo?n=1")
                took = time.monotonic() - started
    assert fast.status_code == 200 and echoed.json()["query"] == "n=1"
    assert took < 1.0, f"the requests waited {took:.2f} s for the slow ones"
    assert nginx.handled_requests() - handled == 1
    assert server.request_count() - slow_seen == 7


async def _burst(client: requestx.AsyncClient, url: str, tasks: int, each: int) -> list[str]:
    """`tasks` tasks making `each` requests, each with its own query; the queries echoed."""
    echoed: list[str] = []

    async def worker(task: int) -> None:
        for i in range(each):
            response = await client.get(f"{url}?t={task}&i={i}")
            assert response.status_code == 200
            echoed.append(response.json()["query"])

    async with anyio.create_task_group() as tg:
        for task in range(tasks):
            tg.start_soon(worker, task)
    return echoed


@pytest.mark.anyio
async def test_bursts_from_many_tasks_reach_hypercorn_once_each(server: HypercornServer) -> None:
    seen = server.request_count()
    async with requestx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(30):
            echoed = await _burst(client, server.url + "/echo", tasks=48, each=8)
    expected = {f"t={t}&i={i}" for t in range(48) for i in range(8)}
    assert sorted(echoed) == sorted(expected)
    assert server.request_count() - seen == 48 * 8


@pytest.mark.anyio
async def test_bursts_from_many_tasks_reach_nginx_once_each(nginx: Nginx) -> None:
    handled = nginx.handled_requests()
    async with requestx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(30):

            async def worker() -> None:
                for _ in range(20):
                    assert (await client.get(nginx.url + "/get")).status_code == 200

            async with anyio.create_task_group() as tg:
                for _ in range(100):
                    tg.start_soon(worker)
    assert nginx.handled_requests() - handled == 100 * 20


@pytest.mark.anyio
@pytest.mark.parametrize("server_name", ["nginx", "hypercorn"])
async def test_a_spinning_loop_thread_takes_deferred_submits_as_they_come(
    anyio_backend: typing.Any, nginx: Nginx, server: HypercornServer, server_name: str
) -> None:
    """Between bursts the loop thread lingers, spinning, and a deferred submit it finds then is
    taken at once instead of waiting for the flush (engine.c, `wait_for_events`). Every
    request is counted at the server, exactly once. Against nginx the engine's
    `taken_spinning` must also move: how often the spin meets a deferred submit depends on
    timing (1 to 39 times in a burst of 1,280 requests here, fewest beside two CPU-bound
    processes), so up to 20 bursts are run until one does. hypercorn, a Python server, can
    keep the loop thread busy through a whole burst on a loaded machine: there only the
    counts are checked. trio does not defer."""
    if anyio_backend == "trio":
        pytest.skip("trio submits without deferring")
    if server_name == "nginx":
        url, count, bursts = nginx.url + "/get", nginx.handled_requests, 20
    else:
        url, count, bursts = server.url + "/echo", server.request_count, 2
    async with requestx.AsyncClient(timeout=10) as client:
        engine = client._transport._engine
        for burst in range(bursts):
            seen = count()
            with anyio.fail_after(30):

                async def worker() -> None:
                    for _ in range(20):
                        assert (await client.get(url)).status_code == 200

                async with anyio.create_task_group() as tg:
                    for _ in range(64):
                        tg.start_soon(worker)
            assert count() - seen == 64 * 20, burst
            if engine.stats()["taken_spinning"] > 0:
                break
        if server_name == "nginx":
            assert engine.stats()["taken_spinning"] > 0


@pytest.mark.anyio
async def test_cancelling_requests_whose_wake_up_is_owed(server: HypercornServer) -> None:
    """Tasks cancelled right after they submitted (in the same turn, before the flush): no
    hang, no transfer left behind, and the client goes on working."""
    baseline = _core.live_transfers()
    async with requestx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as slow_group:
                seen = server.request_count()
                for _ in range(6):
                    slow_group.start_soon(client.get, server.url + "/slow?delay=1")
                while server.request_count() < seen + 6:
                    await anyio.sleep(0.01)
                async with anyio.create_task_group() as doomed:
                    for _ in range(16):
                        doomed.start_soon(client.get, server.url + "/slow?delay=3")
                    await anyio.sleep(0)  # let them submit, then cancel before the flush
                    doomed.cancel_scope.cancel()
            response = await client.get(server.url + "/echo")
    assert response.status_code == 200
    assert await wait_live_transfers(baseline) == baseline
