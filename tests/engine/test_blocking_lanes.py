"""Blocking lanes: a blocking HTTP/1.1 client runs each calling thread's request on an engine of
its own, one connection each (`Engine._reserve_lanes`, docs/architecture.md "Blocking lanes"),
so that threads do not queue behind one loop thread.

What could go wrong, and is counted here at the servers (nginx, hypercorn and a raw-socket
server that records how many connections are open at once):

* a lane per request instead of per thread: connections would pile up;
* lanes beside the client's own engine: `max_connections` must still cap the whole client;
* a lane's connection going to the wrong origin: one thread alternating two servers would
  reconnect at every request;
* HTTP/2 must keep one connection per origin, so an HTTP/2 client has no lanes;
* closing the client must stop every lane's thread, also while requests run on them.
"""

from __future__ import annotations

import gc
import socket
import sys
import threading
import time
import typing

import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers._socket_server import loopback_listener
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.support.threads import engine_threads_baseline, run_threads, wait_engine_threads

THREADS = 8
PER_THREAD = 100


@pytest.fixture(scope="module")
def nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(http2=True) as server:
        yield server


class PeakServer:
    """Keep-alive HTTP/1.1 on raw sockets, a thread per connection: answers every request
    "ok" after `delay` seconds and records the most connections it had open at once."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.listener = loopback_listener(128)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lock = threading.Lock()
        self.open = self.peak = self.accepted = self.requests = 0
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.accepted += 1
                self.open += 1
                self.peak = max(self.peak, self.open)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        buffered = b""
        try:
            for _ in range(10_000):  # requests on one connection, bounded
                while b"\r\n\r\n" not in buffered:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffered += data
                buffered = buffered.split(b"\r\n\r\n", 1)[1]  # GET requests: no body
                with self.lock:
                    self.requests += 1
                time.sleep(self.delay)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        except OSError:
            return
        finally:
            conn.close()
            with self.lock:
                self.open -= 1

    def close(self) -> None:
        self.stopping = True
        self.listener.close()


@pytest.fixture
def peak_server() -> typing.Iterator[PeakServer]:
    server = PeakServer(delay=0.005)
    yield server
    server.close()


def _hammer(client: requestx.Client, url: str, threads: int, per_thread: int) -> None:
    def work(i: int) -> None:
        for _ in range(per_thread):
            response = client.get(url)
            assert response.status_code == 200

    assert run_threads(threads, work) == []


def test_threads_share_lanes_one_connection_each_nginx(nginx: Nginx) -> None:
    accepted = nginx.accepted_connections()
    handled = nginx.handled_requests()
    with requestx.Client(timeout=10) as client:
        _hammer(client, nginx.url + "/get", THREADS, PER_THREAD)
        stats = client._engine.stats()
    # A lane is made only when every other one is held: never more than the threads.
    assert 2 <= stats["lanes"] <= THREADS
    assert stats["completed"] == THREADS * PER_THREAD and stats["running"] == 0
    assert nginx.handled_requests() - handled == THREADS * PER_THREAD
    # Each lane keeps its one connection; the client's own engine made none.
    assert nginx.accepted_connections() - accepted == stats["lanes"]


def test_threads_share_lanes_one_connection_each_hypercorn(server: HypercornServer) -> None:
    server.reset_stats()
    mismatches: list[str] = []
    with requestx.Client(base_url=server.url, timeout=10) as client:

        def work(i: int) -> None:
            for j in range(PER_THREAD // 4):  # hypercorn shares the GIL with the client
                tag = f"{i}-{j}"
                if client.get("/echo", params={"id": tag}).json()["query"] != f"id={tag}":
                    mismatches.append(tag)

        assert run_threads(THREADS, work) == []
        stats = client._engine.stats()
    assert mismatches == []
    assert 1 <= stats["lanes"] <= THREADS
    assert server.request_count() == THREADS * (PER_THREAD // 4)
    assert server.connection_count() == stats["lanes"]


@pytest.mark.parametrize("max_connections", [8, 20])
def test_max_connections_caps_lanes_and_the_client_together(
    peak_server: PeakServer, max_connections: int
) -> None:
    # More threads than connections: the lanes (half of the connections) fill up, the other
    # threads queue on the client's own engine, and the server never sees more than
    # max_connections open at once.
    threads = max_connections * 2
    limits = requestx.Limits(max_connections=max_connections)
    with requestx.Client(timeout=10, limits=limits) as client:
        _hammer(client, peak_server.url + "/", threads, 10)
        stats = client._engine.stats()
    assert stats["lanes"] == max_connections // 2
    assert stats["engines"] == stats["lanes"] + 1
    assert peak_server.requests == threads * 10
    assert max_connections // 2 < peak_server.peak <= max_connections


@pytest.mark.parametrize("streamed", [False, True])
def test_every_connection_of_the_limit_can_be_in_use_at_once(
    server: HypercornServer, streamed: bool
) -> None:
    # max_connections=4: two lanes and two connections for the client's own engine. Four
    # slow requests at once must all run, none waiting for a connection, whether they are
    # plain requests or streams (a blocking stream holds its lane until it is closed).
    server.reset_stats()
    limits = requestx.Limits(max_connections=4)
    timeout = requestx.Timeout(10, pool=0.3)
    with requestx.Client(base_url=server.url, timeout=timeout, limits=limits) as client:

        def slow(i: int) -> None:
            if streamed:
                with client.stream("GET", "/slow?delay=0.6") as response:
                    assert response.read() and response.status_code == 200
            else:
                assert client.get("/slow?delay=0.6").status_code == 200

        assert run_threads(4, slow) == []
        stats = client._engine.stats()
        assert stats["lanes"] == 2 and stats["engines"] == 3
        # The lane was given back: a request after the streams reuses its connection.
        assert client.get("/echo").status_code == 200
    assert server.request_count() == 5
    assert server.connection_count() == 4


def test_a_pool_of_one_connection_has_no_lanes(peak_server: PeakServer) -> None:
    limits = requestx.Limits(max_connections=1)
    with requestx.Client(timeout=10, limits=limits) as client:
        _hammer(client, peak_server.url + "/", 6, 5)
        assert client._engine.stats()["lanes"] == 0
    assert peak_server.peak == 1


def test_one_thread_alternating_origins_keeps_a_connection_to_each(
    nginx: Nginx, server: HypercornServer
) -> None:
    accepted = nginx.accepted_connections()
    server.reset_stats()
    with requestx.Client(timeout=10) as client:
        for _ in range(30):
            assert client.get(nginx.url + "/get").status_code == 200
            assert client.get(server.url + "/echo").status_code == 200
        assert client._engine.stats()["lanes"] == 2
    assert nginx.accepted_connections() - accepted == 1
    assert server.connection_count() == 1


def test_no_keepalive_means_no_reuse_on_lanes(server: HypercornServer) -> None:
    server.reset_stats()
    limits = requestx.Limits(max_keepalive_connections=0)
    with requestx.Client(base_url=server.url, timeout=10, limits=limits) as client:
        for _ in range(10):
            assert client.get("/echo").status_code == 200
        assert client._engine.stats()["lanes"] == 1
    assert server.connection_count() == 10


def test_http2_keeps_one_connection_per_origin_without_lanes(nginx: Nginx) -> None:
    accepted = nginx.accepted_connections()
    with requestx.Client(timeout=10, http2=True, verify=nginx.ca_file) as client:
        _hammer(client, nginx.tls_url + "/get", THREADS, 20)
        stats = client._engine.stats()
    assert stats["lanes"] == 0
    assert nginx.accepted_connections() - accepted == 1


def test_async_clients_have_no_lanes(nginx: Nginx) -> None:
    import asyncio

    async def main() -> dict[str, int]:
        async with requestx.AsyncClient(timeout=10) as client:
            await asyncio.gather(*(client.get(nginx.url + "/get") for _ in range(20)))
            return client._transport._engine.stats()

    assert asyncio.run(main())["lanes"] == 0


def test_closing_the_client_stops_every_lane_under_load(peak_server: PeakServer) -> None:
    before = engine_threads_baseline()
    client = requestx.Client(timeout=10)
    outcomes: list[str] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        for _ in range(10_000):
            try:
                client.get(peak_server.url + "/")
            except RuntimeError:  # closed: the expected end
                with lock:
                    outcomes.append("closed")
                return
            except requestx.TransportError:
                continue  # in flight while closing
        with lock:
            outcomes.append("never saw the client closed")

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(6)]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 5
    while client._engine.stats()["lanes"] < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client._engine.stats()["lanes"] >= 2
    client.close()
    for worker in workers:
        worker.join(10)
    assert not any(worker.is_alive() for worker in workers)
    assert outcomes == ["closed"] * 6
    wait_engine_threads(before)


def test_a_failed_stream_collected_with_its_client_reports_nothing(
    monkeypatch: pytest.MonkeyPatch, server: HypercornServer
) -> None:
    """A stream's error kept in a reference cycle with its client (the traceback's frames hold
    the stream's transfer, which holds the client's engine): the garbage collector may take
    the engine apart before the transfer, which then has no lane list to give its lane back
    to. That must pass silently, not as "Exception ignored" on stderr."""
    unraisable: list[typing.Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    def fail_and_keep_the_error() -> list[BaseException]:
        client = requestx.Client(timeout=2)
        kept: list[BaseException] = []
        assert client.get(server.url + "/echo").status_code == 200  # a lane is made
        try:
            with client.stream("GET", "http://127.0.0.1:9/unreachable"):
                pass
        except requestx.ConnectError as exc:
            kept.append(exc)
        client.close()
        return kept

    for _ in range(3):
        assert fail_and_keep_the_error()
        gc.collect()
    assert [repr(hook.exc_value) for hook in unraisable] == []
    client = requestx.Client()
    with client, client.stream("GET", server.url + "/echo") as response:  # lanes still work
        assert response.read()
