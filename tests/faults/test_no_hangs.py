"""Timeouts that must fire, in cases where they once never did and the request hung for ever.

* An AsyncClient posting an async-generator body to a server that never reads: the engine
  raised WriteTimeout, but the coroutine then waited for news of a transfer the completion
  queue had already handed over, for ever.
* A positive timeout below a millisecond (`read=1e-6`): it rounded to 0 ms, and a zero key
  re-armed itself at "now" in the engine's timeout heap, which spun the loop thread at 100 %
  CPU and never expired anything.

Each test bounds its own wait (`anyio.fail_after`, or a thread join for blocking calls) well
inside the suite's per-test timeout, so a regression fails here instead of stalling the run,
and each follows the timeout with a good request on the same client.
"""

from __future__ import annotations

import socket
import threading
import time
import typing
from typing import AsyncIterator, Iterator

import anyio
import pytest

import requestx
from tests.servers import RawServer
from tests.servers.stalling import full_backlog

BOUND = 10.0  # seconds: far beyond every timeout below, far below the suite's per-test limit
BIG_BODY = 128 * 1024 * 1024  # more than any socket buffer holds: the upload must stall


@pytest.fixture
def deaf_server() -> Iterator[str]:
    """A URL whose server completes the TCP handshake and then never reads a byte."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/upload"
    listener.close()


def _within(seconds: float, fn: typing.Callable[[], object]) -> BaseException | None:
    """Run a blocking call on a thread; fail the test if it has not returned after `seconds`."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"the call did not return within {seconds} s"
    return outcome[0]


async def _async_chunks(total: int, sent: list[int]) -> AsyncIterator[bytes]:
    chunk = b"x" * 65536
    for _ in range(total // len(chunk)):
        sent[0] += len(chunk)
        yield chunk


def _sync_chunks(total: int, sent: list[int]) -> Iterator[bytes]:
    chunk = b"x" * 65536
    for _ in range(total // len(chunk)):
        sent[0] += len(chunk)
        yield chunk


# --- case 1: the write timeout of a fed (generator) body ------------------------------------


@pytest.mark.anyio
async def test_async_generator_upload_to_a_deaf_server_raises_write_timeout(
    deaf_server: str, raw_server: RawServer
) -> None:
    sent = [0]
    timeout = requestx.Timeout(10, write=0.5)
    async with requestx.AsyncClient(timeout=timeout) as client:
        start = time.monotonic()
        with anyio.fail_after(BOUND):
            with pytest.raises(requestx.WriteTimeout):
                await client.post(deaf_server, content=_async_chunks(BIG_BODY, sent))
        elapsed = time.monotonic() - start
        assert 0.4 <= elapsed <= 5, elapsed
        # The body really stalled part-way (socket buffers full), it was not refused up front.
        assert 0 < sent[0] < BIG_BODY
        with anyio.fail_after(BOUND):
            assert (await client.get(raw_server.url + "/ok")).text == "ok"


@pytest.mark.anyio
async def test_async_generator_upload_with_a_streamed_response_raises_write_timeout(
    deaf_server: str, raw_server: RawServer
) -> None:
    sent = [0]
    async with requestx.AsyncClient(timeout=requestx.Timeout(10, write=0.5)) as client:
        request = client.build_request("POST", deaf_server, content=_async_chunks(BIG_BODY, sent))
        with anyio.fail_after(BOUND):
            with pytest.raises(requestx.WriteTimeout):
                await client.send(request, stream=True)
            assert (await client.get(raw_server.url + "/ok")).text == "ok"


def test_generator_upload_to_a_deaf_server_raises_write_timeout(
    deaf_server: str, raw_server: RawServer
) -> None:
    sent = [0]
    with requestx.Client(timeout=requestx.Timeout(10, write=0.5)) as client:
        error = _within(
            BOUND, lambda: client.post(deaf_server, content=_sync_chunks(BIG_BODY, sent))
        )
        assert isinstance(error, requestx.WriteTimeout), repr(error)
        assert 0 < sent[0] < BIG_BODY
        assert client.get(raw_server.url + "/ok").text == "ok"


# --- case 2: timeouts far below a millisecond ------------------------------------------------

TINY = [1e-6, 1e-4, 0.0]


@pytest.mark.anyio
@pytest.mark.parametrize("seconds", TINY)
async def test_tiny_read_timeout_raises(raw_server: RawServer, seconds: float) -> None:
    # The server sends its first header line 0.3 s after the request.
    url = raw_server.url + "/slow-headers?lines=3&delay=0.3"
    async with requestx.AsyncClient(timeout=requestx.Timeout(None, read=seconds)) as client:
        with anyio.fail_after(BOUND):
            with pytest.raises(requestx.ReadTimeout):
                await client.get(url)
            assert (await client.get(raw_server.url + "/ok", timeout=5)).text == "ok"


@pytest.mark.parametrize("seconds", TINY)
def test_tiny_read_timeout_raises_blocking(raw_server: RawServer, seconds: float) -> None:
    url = raw_server.url + "/slow-headers?lines=3&delay=0.3"
    with requestx.Client(timeout=requestx.Timeout(None, read=seconds)) as client:
        error = _within(BOUND, lambda: client.get(url))
        assert isinstance(error, requestx.ReadTimeout), repr(error)
        assert client.get(raw_server.url + "/ok", timeout=5).text == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("seconds", TINY)
async def test_tiny_write_timeout_raises(
    deaf_server: str, raw_server: RawServer, seconds: float
) -> None:
    body = b"x" * (16 * 1024 * 1024)  # more than loopback's socket buffers take at once
    async with requestx.AsyncClient(timeout=requestx.Timeout(None, write=seconds)) as client:
        with anyio.fail_after(BOUND):
            with pytest.raises(requestx.WriteTimeout):
                await client.post(deaf_server, content=body)
            assert (await client.get(raw_server.url + "/ok", timeout=5)).text == "ok"


@pytest.mark.parametrize("seconds", TINY)
def test_tiny_write_timeout_raises_blocking(
    deaf_server: str, raw_server: RawServer, seconds: float
) -> None:
    body = b"x" * (16 * 1024 * 1024)
    with requestx.Client(timeout=requestx.Timeout(None, write=seconds)) as client:
        error = _within(BOUND, lambda: client.post(deaf_server, content=body))
        assert isinstance(error, requestx.WriteTimeout), repr(error)
        assert client.get(raw_server.url + "/ok", timeout=5).text == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("seconds", TINY)
async def test_tiny_connect_timeout_raises(raw_server: RawServer, seconds: float) -> None:
    with full_backlog() as port:
        if port is None:
            pytest.skip("this kernel completes every loopback handshake")
        timeout = requestx.Timeout(None, connect=seconds)
        async with requestx.AsyncClient(timeout=timeout) as client:
            with anyio.fail_after(BOUND):
                with pytest.raises(requestx.ConnectTimeout):
                    await client.get(f"http://127.0.0.1:{port}/")
                assert (await client.get(raw_server.url + "/ok", timeout=5)).text == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("seconds", [1e-4, 0.0])
async def test_tiny_pool_timeout_raises(raw_server: RawServer, seconds: float) -> None:
    # One connection, held by a request the server never answers: the next one must wait for
    # the pool, and a pool timeout far below a millisecond must still expire.
    limits = requestx.Limits(max_connections=1)
    async with requestx.AsyncClient(limits=limits, timeout=5) as client:
        with anyio.fail_after(BOUND):
            async with anyio.create_task_group() as tasks:
                holder_done = anyio.Event()

                async def hold() -> None:
                    with pytest.raises(requestx.ReadTimeout):
                        await client.get(raw_server.url + "/stall", timeout=2)
                    holder_done.set()

                tasks.start_soon(hold)
                await anyio.sleep(0.3)  # the holder has the only connection by now
                with pytest.raises(requestx.PoolTimeout):
                    await client.get(
                        raw_server.url + "/ok", timeout=requestx.Timeout(5, pool=seconds)
                    )
                await holder_done.wait()
            assert (await client.get(raw_server.url + "/ok")).text == "ok"


def test_timeouts_refuse_nan_and_negative_values(raw_server: RawServer) -> None:
    with requestx.Client() as client:
        for bad in (float("nan"), -1.0):
            with pytest.raises(ValueError, match="timeouts must be"):
                client.get(raw_server.url + "/ok", timeout=requestx.Timeout(bad))
        # A timeout beyond any clock's reach means "none", not an overflow.
        assert client.get(raw_server.url + "/ok", timeout=1e300).text == "ok"
