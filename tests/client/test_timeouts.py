"""Timeouts, with httpx's meaning of each of the four (all on loopback, no outside address):

* connect: establishing the TCP connection and the TLS handshake;
* read: the longest wait for *any* data from the server (per wait, not for the whole response);
* write: the longest wait for the socket to take more of the request body;
* pool: the longest wait for a connection from the pool.

Elapsed-time bounds are generous (a loaded 2-core CI machine) but tight enough that a timeout
firing at twice its value, or never, fails.
"""

from __future__ import annotations

import gc
import socket
import threading
import time
import typing
from typing import Iterator

import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer, RawServer


@pytest.fixture
def silent_listener() -> Iterator[socket.socket]:
    """A loopback socket that listens and never accepts: the kernel completes the TCP handshake
    (the connection sits in the backlog), then nothing is ever read or written."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield listener
    listener.close()


def _timed(fn: typing.Callable[[], object]) -> tuple[BaseException | None, float]:
    start = time.monotonic()
    try:
        fn()
    except Exception as exc:
        return exc, time.monotonic() - start
    return None, time.monotonic() - start


def _assert_timeout(
    error: BaseException | None, cls: type[Exception], elapsed: float, expected: float
) -> None:
    assert isinstance(error, cls), repr(error)
    assert isinstance(error, requestx.TimeoutException)
    assert isinstance(error.__cause__, _core.EngineError)
    assert error.request is not None
    assert expected - 0.1 <= elapsed <= expected + 0.5, f"{cls.__name__} after {elapsed:.3f} s"


# --- read ------------------------------------------------------------------------------------


def test_read_timeout_on_a_stalled_server(raw_server: RawServer) -> None:
    with requestx.Client(timeout=0.5) as client:
        error, elapsed = _timed(lambda: client.get(raw_server.url + "/stall"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.5)
        assert isinstance(error, requestx.ReadTimeout)
        assert error.request.url == requestx.URL(raw_server.url + "/stall")
        # The client is healthy afterwards, on the same server.
        assert client.get(raw_server.url + "/ok").text == "ok"


def test_read_timeout_from_a_timeout_object(server: HypercornServer) -> None:
    with requestx.Client(timeout=requestx.Timeout(5.0, read=0.3)) as client:
        error, elapsed = _timed(lambda: client.get(server.url + "/slow?delay=3"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.3)
        assert client.get(server.url + "/").status_code == 200


def test_read_timeout_while_the_body_stalls(server: HypercornServer) -> None:
    # Headers arrive at once; the body's first chunk comes 1 s later.
    url = server.url + "/drip?chunks=2&delay=1&size=10&length=1"
    with requestx.Client(timeout=requestx.Timeout(5.0, read=0.4)) as client:
        error, elapsed = _timed(lambda: client.get(url))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.4)
        assert client.get(server.url + "/").status_code == 200


def test_read_timeout_is_per_wait_not_for_the_whole_response(
    server: HypercornServer, raw_server: RawServer
) -> None:
    # 8 chunks 0.15 s apart: 1.2 s in all, but no single wait reaches the 0.5 s read timeout.
    with requestx.Client(timeout=0.5) as client:
        start = time.monotonic()
        response = client.get(server.url + "/drip?chunks=8&delay=0.15&size=100")
        elapsed = time.monotonic() - start
        assert response.status_code == 200
        assert len(response.content) == 800
        assert elapsed > 0.9  # it really took longer than the read timeout in total
        # The same while headers trickle in: one header line every 0.2 s, 6 lines.
        start = time.monotonic()
        response = client.get(raw_server.url + "/slow-headers?lines=6&delay=0.2")
        assert time.monotonic() - start > 0.9
        assert response.text == "ok"
        assert response.headers["x-slow-5"] == "5"


def test_read_timeout_survives_a_response_sent_one_byte_at_a_time(raw_server: RawServer) -> None:
    # Slow but steady: every byte of the response 0.05 s apart (~3.5 s in all); no single wait
    # comes near the 0.5 s read timeout, so the request succeeds.
    with requestx.Client(timeout=requestx.Timeout(10, read=0.5)) as client:
        start = time.monotonic()
        response = client.get(raw_server.url + "/byte-by-byte?delay=0.05")
        assert time.monotonic() - start > 2.0
        assert response.text == "ok"
        assert response.headers["x-trickle"] == "one byte at a time"


@pytest.mark.anyio
async def test_read_timeout_survives_a_response_sent_one_byte_at_a_time_async(
    raw_server: RawServer,
) -> None:
    async with requestx.AsyncClient(timeout=requestx.Timeout(10, read=0.5)) as client:
        response = await client.get(raw_server.url + "/byte-by-byte?delay=0.05")
        assert response.text == "ok"


def test_timeout_none_waits(server: HypercornServer) -> None:
    with requestx.Client(timeout=None) as client:
        assert client.timeout == requestx.Timeout(None)
        assert client.get(server.url + "/slow?delay=0.3").text == "slow"
    with requestx.Client(timeout=0.1) as client:
        assert client.get(server.url + "/slow?delay=0.3", timeout=None).text == "slow"
        assert client.get(server.url + "/slow?delay=0.3", timeout=requestx.Timeout(None)).text == (
            "slow"
        )


def test_per_request_timeout_overrides_the_clients(server: HypercornServer) -> None:
    with requestx.Client(timeout=0.2) as client:
        # Longer per request: succeeds where the client's own value would time out.
        assert client.get(server.url + "/slow?delay=0.5", timeout=2).text == "slow"
        error, elapsed = _timed(lambda: client.get(server.url + "/slow?delay=1"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.2)
    with requestx.Client(timeout=5) as client:
        # Shorter per request.
        error, elapsed = _timed(lambda: client.get(server.url + "/slow?delay=1", timeout=0.3))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.3)
        # ...and the next request is back to the client's 5 s.
        assert client.get(server.url + "/slow?delay=0.5").text == "slow"


def test_client_timeout_can_be_changed(server: HypercornServer) -> None:
    with requestx.Client(timeout=5) as client:
        client.timeout = 0.2  # type: ignore[assignment]
        assert client.timeout == requestx.Timeout(0.2)
        error, elapsed = _timed(lambda: client.get(server.url + "/slow?delay=1"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.2)


def test_many_timeouts_leave_the_client_healthy(raw_server: RawServer) -> None:
    # Transfers are counted process-wide: one an earlier test left to the garbage collector
    # (Python 3.13 collected one later than 3.11 did) is not this test's.
    gc.collect()
    before = _core.live_transfers()
    with requestx.Client(timeout=0.1) as client:
        for _ in range(5):
            with pytest.raises(requestx.ReadTimeout):
                client.get(raw_server.url + "/stall")
        assert client.get(raw_server.url + "/ok").text == "ok"
    deadline = time.monotonic() + 2
    while _core.live_transfers() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _core.live_transfers() <= before


# --- connect ---------------------------------------------------------------------------------


def test_connect_timeout_during_the_tls_handshake(silent_listener: socket.socket) -> None:
    # TCP connects (the kernel accepts into the backlog) but the server never answers the
    # ClientHello: the connect timeout covers the handshake, as in httpx.
    port = silent_listener.getsockname()[1]
    with requestx.Client(timeout=requestx.Timeout(5.0, connect=0.5)) as client:
        error, elapsed = _timed(lambda: client.get(f"https://127.0.0.1:{port}/"))
        _assert_timeout(error, requestx.ConnectTimeout, elapsed, 0.5)


def test_connect_timeout_when_the_backlog_is_full() -> None:
    # A listener that never accepts, with its accept queue filled: Linux then drops further
    # SYNs, so connect() hangs on loopback. The queue is known to be full once a probe connect
    # times out; if the kernel never gets there the premise does not hold and we skip.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    fillers: list[socket.socket] = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(16):
            probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            probe.settimeout(0.2)
            try:
                probe.connect(("127.0.0.1", port))
            except TimeoutError:
                probe.close()
                break
            fillers.append(probe)
        else:
            pytest.skip("this kernel completes every loopback handshake; cannot stall connect")
        with requestx.Client(timeout=requestx.Timeout(5.0, connect=0.5)) as client:
            error, elapsed = _timed(lambda: client.get(f"http://127.0.0.1:{port}/"))
            _assert_timeout(error, requestx.ConnectTimeout, elapsed, 0.5)
    finally:
        for probe in fillers:
            probe.close()
        listener.close()


def test_connect_timeout_does_not_limit_the_response(server: HypercornServer) -> None:
    # A short connect timeout with no read timeout: a slow response is fine.
    with requestx.Client(timeout=requestx.Timeout(None, connect=0.2)) as client:
        assert client.get(server.url + "/slow?delay=0.5").text == "slow"


# --- write and pool ---------------------------------------------------------------------------


def test_write_timeout_when_the_server_does_not_read(silent_listener: socket.socket) -> None:
    # 32 MiB cannot fit in loopback socket buffers; once they fill, the upload stalls.
    port = silent_listener.getsockname()[1]
    body = b"x" * (32 * 1024 * 1024)
    with requestx.Client(timeout=requestx.Timeout(5.0, write=0.5)) as client:
        error, elapsed = _timed(lambda: client.post(f"http://127.0.0.1:{port}/", content=body))
        _assert_timeout(error, requestx.WriteTimeout, elapsed, 0.5)


def test_pool_timeout(raw_server: RawServer) -> None:
    with requestx.Client(timeout=5, limits=requestx.Limits(max_connections=1)) as client:
        outcome: list[BaseException | None] = []

        def hold_the_only_connection() -> None:
            outcome.append(_timed(lambda: client.get(raw_server.url + "/stall"))[0])

        holder = threading.Thread(target=hold_the_only_connection)
        holder.start()
        try:
            time.sleep(0.3)  # the holder's request is on the wire
            error, elapsed = _timed(
                lambda: client.get(raw_server.url + "/ok", timeout=requestx.Timeout(5, pool=0.5))
            )
            _assert_timeout(error, requestx.PoolTimeout, elapsed, 0.5)
        finally:
            raw_server.release()  # the stalled connection closes; the holder fails and returns
            holder.join(5)
        assert not holder.is_alive()
        assert isinstance(outcome[0], requestx.RemoteProtocolError)
        assert client.get(raw_server.url + "/ok").text == "ok"
