"""The engine's heap (csrc/heap.h): where the bundled Linux builds keep libcurl's, OpenSSL's and
the engine's own memory, a private jemalloc that gives pages back, in place of glibc's arenas,
where a long run under faults crept (benchmarks/README.md, "A chaos soak").

These check that the memory really goes there, by jemalloc's own count (`_core.heap_stats()`):
connections held open by a client, TLS ones with OpenSSL's state, and given back when the
client closes; and that an engine gone idle gives the heap's free pages back. With OpenSSL's
hooks not installed, a TLS connection held 13 to 19 KiB of the engine's heap, as a plain one
does; with them, 150 to 190 KiB. Without the give-back, 34.5 MiB of free pages were still
resident after 2 s idle; with it, 2.8 MiB.
"""

from __future__ import annotations

import asyncio

import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer
from tests.support.sanitized import skip_under_asan
from tests.support.tls import TLSFiles

pytestmark = [
    pytest.mark.skipif(
        _core.heap_stats() is None, reason="the engine's heap is the C library's malloc here"
    ),
    skip_under_asan,
]

CONNECTIONS = 16
KiB = 1024


def _allocated() -> int:
    stats = _core.heap_stats()
    assert stats is not None
    return stats["allocated"]


def _hold_connections(server: HypercornServer, verify: str | bool) -> tuple[int, int]:
    """Open CONNECTIONS connections to `server` at once and keep them in the pool: the engine
    heap's growth while the client holds them, and after it has closed."""

    async def main() -> int:
        limits = requestx.Limits(max_keepalive_connections=CONNECTIONS)
        async with requestx.AsyncClient(verify=verify, limits=limits) as client:
            # Slow answers, all in flight together: one connection each.
            responses = await asyncio.gather(
                *(client.get(server.url + "/slow?delay=0.3") for _ in range(CONNECTIONS))
            )
            assert [response.status_code for response in responses] == [200] * CONNECTIONS
            return _allocated()

    server.reset_stats()
    before = _allocated()
    held = asyncio.run(main())
    after = _allocated()
    assert server.connection_count() == CONNECTIONS
    return held - before, after - before


def test_tls_state_lives_in_the_engine_heap(
    server: HypercornServer, tls: TLSFiles, tls_h1_server: HypercornServer
) -> None:
    _hold_connections(tls_h1_server, tls.ca_file)  # warm-up: caches made once per process
    plain_held, _ = _hold_connections(server, True)
    tls_held, _ = _hold_connections(tls_h1_server, tls.ca_file)
    per_plain, per_tls = plain_held // CONNECTIONS, tls_held // CONNECTIONS
    print(f"per connection held: plain {per_plain / KiB:.0f} KiB, TLS {per_tls / KiB:.0f} KiB")
    # OpenSSL's per-connection state (its SSL objects, record buffers) is what a TLS
    # connection adds; it shows here only if OpenSSL allocates from the engine's heap.
    assert per_tls - per_plain > 64 * KiB


def test_closed_clients_give_their_memory_back(
    tls: TLSFiles, tls_h1_server: HypercornServer
) -> None:
    _hold_connections(tls_h1_server, tls.ca_file)  # warm-up
    start = _allocated()
    for _ in range(5):
        held, _after = _hold_connections(tls_h1_server, tls.ca_file)
        assert held > CONNECTIONS * 64 * KiB  # the connections were counted while held
    growth = _allocated() - start
    print(f"engine heap after five clients of {CONNECTIONS} TLS connections: {growth:+,} B")
    # Five rounds of about 2.5 MiB held each: what a client does not give back would add up.
    assert growth < 1024 * KiB


def test_an_idle_engine_gives_its_free_pages_back(server: HypercornServer) -> None:
    # jemalloc keeps freed pages about ten seconds for reuse and purges them only while
    # something allocates; the engine's loop thread, parked a second with nothing to do, gives
    # them back (engine.c, park). Bodies of 1 MiB, received into the engine's buffers and then
    # dropped, leave such pages behind.
    async def burst() -> None:
        async with requestx.AsyncClient(base_url=server.url) as client:
            responses = await asyncio.gather(*(client.get("/bytes/1048576") for _ in range(24)))
            assert all(len(response.content) == 1048576 for response in responses)
            del responses
            stats = _core.heap_stats()
            assert stats is not None
            left_after_burst = stats["resident"] - stats["allocated"]
            await asyncio.sleep(2.0)  # the loop thread parks, then gives back after 1 s
            stats = _core.heap_stats()
            assert stats is not None
            left_after_idle = stats["resident"] - stats["allocated"]
            print(
                f"resident but not allocated: {left_after_burst / 2**20:.1f} MiB after the "
                f"burst, {left_after_idle / 2**20:.1f} MiB after 2 s idle"
            )
            assert left_after_burst > 8 * 2**20  # the burst left freed pages behind
            assert left_after_idle < left_after_burst / 2

    asyncio.run(burst())
