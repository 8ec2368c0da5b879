"""Which idle connection a request takes: the one that went idle last.

requestx's patch (scripts/libcurl-patches/curl-0016-idle-connections-ahead.patch) keeps each
origin's idle connections ahead of its busy ones in libcurl's pool: a connection that turns idle
goes to the head of the list, one taken for a transfer to the tail, and a transfer that cannot
multiplex stops looking at the first busy one. That a request still finds the one idle
connection among busy ones (which the early stop would break if the order were wrong) is
tests/libcurl/test_pool_reuse_under_load.py's; this file checks the order itself, which is the
patch's own effect (stock libcurl takes the oldest idle connection), so it skips on stock.

Three streams hold three connections (a body larger than a stream buffers keeps each
connection until read); they are read to the end one after another, so the connections go
idle in that order; the requests that follow, one at a time, must all come on the connection
that went idle last. The server (hypercorn) says which connection carried each request by its
client port.
"""

from __future__ import annotations

import contextlib

import anyio
import pytest

import requestx
from tests.servers import HypercornServer
from tests.support.bundled_libcurl import needs_patch

pytestmark = [pytest.mark.anyio, needs_patch("curl-0016-idle-connections-ahead")]

BODY = 8 * 1024 * 1024  # beyond the 1 MiB a stream buffers before it pauses: held until read
STREAMS = ("first", "second", "last")


async def test_the_connection_idle_the_shortest_time_is_taken_first(
    server: HypercornServer,
) -> None:
    server.reset_stats()
    limits = requestx.Limits(max_connections=len(STREAMS), max_keepalive_connections=None)
    async with requestx.AsyncClient(base_url=server.url, limits=limits, timeout=20) as client:
        with anyio.fail_after(30):
            async with contextlib.AsyncExitStack() as stack:
                streams = [
                    await stack.enter_async_context(
                        client.stream("GET", f"/bytes/{BODY}", params={"id": name})
                    )
                    for name in STREAMS
                ]
                for response in streams:  # each connection goes idle as its body ends
                    assert len(await response.aread()) == BODY
            for n in range(3):
                assert (await client.get("/json", params={"id": f"after-{n}"})).status_code == 200
    ports = server.client_ports()
    held = [ports[f"id={name}"] for name in STREAMS]
    assert len(set(held)) == len(STREAMS), f"the streams shared connections: {held}"
    after = [ports[f"id=after-{n}"] for n in range(3)]
    assert after == [held[-1]] * 3, (
        f"requests came on {after}; the connections went idle in the order {held}"
    )
