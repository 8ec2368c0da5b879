"""Memory, file descriptors, threads and transfers: nothing leaks per request or per client.

The load runs against `FastServer`, a subprocess (hypercorn in-process manages ~3k requests/s
and its own sockets would sit in our fd table); the measurements are of this process only.

Memory is measured two ways: RSS (what the requirement is stated in), and the bytes in use in
the C heaps, which is exact where RSS is blurred by the allocators keeping freed pages: glibc's
count (`mallinfo2`) plus, where the engine's heap is its own jemalloc (csrc/heap.h), jemalloc's,
which holds the engine's C buffers (bodies, headers, transfers) and libcurl's memory.
"""

from __future__ import annotations

import contextlib
import gc
import os
import socket
import sys
import threading
import time
import typing
from typing import Iterator

import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer
from tests.servers.fast_server import FastServer
from tests.support.paths import ROOT
from tests.support.sanitized import skip_under_asan
from tests.support.threads import engine_threads, engine_threads_baseline

# The memory readings benchmarks/run_chaos.py takes too.
sys.path.insert(0, str(ROOT / "benchmarks"))
from process_memory import HAVE_MALLINFO2, c_heap_in_use, rss_bytes  # noqa: E402


def heap_in_use() -> int:
    """Bytes handed out and not given back by glibc's malloc and by the engine's heap."""
    engine = _core.heap_stats()
    return (c_heap_in_use() or 0) + (engine["allocated"] if engine is not None else 0)


BODY_SIZE = 4096  # per response: a leaked body buffer would add 70 MB over the run


@pytest.fixture(scope="module")
def fast() -> Iterator[FastServer]:
    with FastServer(body_size=BODY_SIZE) as running:
        yield running


needs_mallinfo2 = pytest.mark.skipif(not HAVE_MALLINFO2, reason="needs glibc >= 2.33")


def _open_fds() -> set[tuple[int, str]]:
    """(fd, target) for every open descriptor; a reused number with a new target counts as new."""
    found = set()
    for name in os.listdir("/proc/self/fd"):
        # The listing's own directory fd is closed by the time it is read.
        with contextlib.suppress(FileNotFoundError):
            found.add((int(name), os.readlink(f"/proc/self/fd/{name}")))
    return found


def _settle(check: typing.Callable[[], bool], timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return check()
        time.sleep(0.01)
    return True


def _no_live_transfers() -> bool:
    # The engine drops its reference just after waking the waiter: allow it a moment.
    return _settle(lambda: _core.live_transfers() == 0)


@skip_under_asan
def test_no_growth_over_20000_requests(fast: FastServer) -> None:
    padding = "p" * 1000  # per-request header bytes: leaked header lists would show
    with requestx.Client(base_url=fast.url, timeout=10) as client:

        def run(start: int, count: int) -> None:
            for i in range(start, start + count):
                response = client.get(
                    f"/item/{i}",
                    params={"i": str(i), "page": "2"},
                    headers={"X-Request": f"{i}-{padding}"},
                )
                assert response.status_code == 200
                assert len(response.content) == BODY_SIZE

        run(0, 2_000)  # warm-up: pools, caches and allocator arenas reach their steady size
        gc.collect()
        before = rss_bytes()
        malloc_before = heap_in_use()
        started = time.monotonic()
        run(2_000, 18_000)
        elapsed = time.monotonic() - started
        gc.collect()
        growth = rss_bytes() - before
        print(f"18000 requests in {elapsed:.2f} s, RSS growth {growth / 1024:.0f} KiB")
        assert growth < 10 * 1024 * 1024, f"RSS grew by {growth / 1e6:.1f} MB"
        if HAVE_MALLINFO2:
            # 2 MB over 18,000 requests: any per-request leak of ~110 bytes or more shows.
            malloc_growth = heap_in_use() - malloc_before
            print(f"malloc'd bytes in use grew by {malloc_growth} B")
            assert malloc_growth < 2 * 1024 * 1024, f"malloc in use grew by {malloc_growth} B"
        assert _no_live_transfers()
        assert client._engine.stats()["running"] == 0


@skip_under_asan
def test_no_growth_over_failing_requests() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]  # bound, never listening: connections are refused
        with requestx.Client(timeout=5) as client:

            def run(count: int) -> None:
                for i in range(count):
                    with pytest.raises(requestx.ConnectError):
                        client.get(f"http://127.0.0.1:{port}/{i}", headers={"X-I": str(i)})

            run(500)
            gc.collect()
            before = rss_bytes()
            run(3_000)
            gc.collect()
            growth = rss_bytes() - before
    assert growth < 5 * 1024 * 1024, f"RSS grew by {growth / 1e6:.1f} MB over failed requests"
    assert _no_live_transfers()


def test_close_releases_every_descriptor_and_the_thread(fast: FastServer) -> None:
    gc.collect()
    fds_before = _open_fds()
    threads_before = engine_threads_baseline()

    client = requestx.Client(base_url=fast.url, limits=requestx.Limits(max_connections=4))
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(50):
                client.get(f"/{i}")
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert errors == []
    during = _open_fds() - fds_before
    # The measurement sees the client: its sockets (pooled connections) and engine fds are open.
    assert sum(1 for _, target in during if target.startswith("socket:")) >= 1
    # A loop thread per engine started: the client's own and its blocking lanes
    # (test_blocking_lanes), which take the requests first.
    started = client._engine.stats()["engines"]
    assert started >= 1 + (client._engine.stats()["lanes"] > 1)
    assert _settle(lambda: engine_threads() == threads_before + started)

    client.close()
    gc.collect()
    assert _settle(lambda: not (_open_fds() - fds_before)), sorted(_open_fds() - fds_before)
    assert _settle(lambda: engine_threads() <= threads_before)
    assert _no_live_transfers()


def test_many_clients_leave_nothing_behind(fast: FastServer) -> None:
    gc.collect()
    fds_before = _open_fds()
    threads_before = engine_threads_baseline()
    rss_before = rss_bytes()
    for i in range(100):
        with requestx.Client() as client:
            assert client.get(f"{fast.url}/{i}").status_code == 200
    gc.collect()
    assert _settle(lambda: not (_open_fds() - fds_before)), sorted(_open_fds() - fds_before)
    assert _settle(lambda: engine_threads() <= threads_before)
    assert rss_bytes() - rss_before < 10 * 1024 * 1024
    assert _no_live_transfers()


def test_an_unclosed_client_is_cleaned_up_by_garbage_collection(fast: FastServer) -> None:
    gc.collect()
    fds_before = _open_fds()
    threads_before = engine_threads_baseline()
    client = requestx.Client()
    assert client.get(fast.url).status_code == 200
    # One request, on a blocking lane (test_blocking_lanes): the lane's engine alone started.
    assert client._engine.stats()["lanes"] == 1
    assert _settle(lambda: engine_threads() == threads_before + 1)
    del client
    gc.collect()
    assert _settle(lambda: engine_threads() <= threads_before)
    assert _settle(lambda: not (_open_fds() - fds_before)), sorted(_open_fds() - fds_before)


@needs_mallinfo2
@skip_under_asan
def test_response_bodies_are_freed(fast: FastServer) -> None:
    # Responses kept alive hold their bodies (C buffers); dropped ones must free them.
    with requestx.Client(base_url=fast.url) as client:
        client.get("/")
        gc.collect()
        before = heap_in_use()
        kept = [client.get(f"/{i}") for i in range(3000)]
        assert all(len(r.content) == BODY_SIZE for r in kept)
        held = heap_in_use() - before
        del kept
        gc.collect()
        after = heap_in_use() - before
    print(f"3000 kept Response objects: {held / 1024:.0f} KiB held, {after / 1024:.0f} KiB after")
    assert held > 0.9 * 3000 * BODY_SIZE  # the measurement sees the bodies
    assert after < 3000 * BODY_SIZE // 10  # ...and they are gone


@pytest.mark.parametrize("mode", ["h1", "h2c"])
def test_an_idle_engine_sleeps(server: HypercornServer, mode: str) -> None:
    """Between requests the loop thread must sleep, not poll: until this session's fix a curl
    timer that stayed due kept it at 100% of a CPU for as long as the client existed."""
    options: dict[str, typing.Any] = {"http1": False, "http2": True} if mode == "h2c" else {}
    with requestx.Client(**options) as client:
        for _ in range(50):
            assert client.get(server.url + "/json").status_code == 200
        time.sleep(0.05)  # past the loop's short linger after activity
        before = os.times()
        wakeups = client._engine.stats()["wakeups"]
        time.sleep(1.0)
        after = os.times()
        idle_wakeups = client._engine.stats()["wakeups"] - wakeups
    cpu = (after.user - before.user) + (after.system - before.system)
    assert cpu < 0.2, f"{cpu:.2f} s of CPU while idle for 1 s"
    assert idle_wakeups < 100, f"{idle_wakeups} loop wake-ups while idle for 1 s"
