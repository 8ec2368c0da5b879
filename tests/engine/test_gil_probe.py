"""The GIL probe (requestx/gil_probe.h): a blocking caller whose answer is in, finding the GIL
held by another thread, yields the CPU until the holder lets go instead of sleeping on
CPython's condition variable (two context switches per request with many threads on one
client).

What could go wrong, and is checked here:

* the probe reading the wrong memory (CPython's internal layout differs between versions): it
  must say "held" while this thread holds the GIL, "free" once released with no other Python
  thread running, and "held" when another thread took it meanwhile;
* a caller spinning for a thread that keeps the GIL (CPU-bound Python): it must back off, so
  that few of its requests pay for a spin;
* the spin losing or repeating requests of threads that share a client: every request must
  reach the server once (counted at nginx and at hypercorn, which runs in this process and
  takes the GIL itself), with the probe exercised.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import time
import typing
from pathlib import Path

import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.support.threads import run_threads

# Where gil_probe.c knows CPython's layout: 3.9-3.13 with a GIL, built with its internal headers
# (a wheel carries what its build saw; the interpreter it runs on may have no headers), on more
# than one CPU.
PROBE_EXPECTED = (
    sys.implementation.name == "cpython"
    and sys.version_info < (3, 14)
    and not sysconfig.get_config_var("Py_GIL_DISABLED")
    and _core.gil_probe_layout_known()
    and (os.cpu_count() or 1) > 1
)
# Built in place from this checkout (a wheel installs no .pyx), by this interpreter, whose
# internal headers are installed: then the build must know the layout.
BUILT_HERE_WITH_HEADERS = (
    Path(_core.__file__).with_name("_core.pyx").exists()
    and sys.version_info < (3, 14)
    and not sysconfig.get_config_var("Py_GIL_DISABLED")
    and os.path.exists(os.path.join(sysconfig.get_paths()["include"], "internal"))
)
needs_probe = pytest.mark.skipif(not PROBE_EXPECTED, reason="no GIL probe on this interpreter")

THREADS = 8


@pytest.fixture(scope="module")
def nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(log=True) as server:
        yield server


class Hog:
    """A thread running Python without a pause: it holds the GIL until CPython's switch
    interval makes it let go for a thread that asked."""

    def __init__(self) -> None:
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        spins = 0
        deadline = time.monotonic() + 30  # bounded, whatever the test does
        while not self.stopping and time.monotonic() < deadline:
            spins += 1

    def __enter__(self) -> Hog:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping = True
        self.thread.join(10)
        assert not self.thread.is_alive()


def _counts() -> dict[str, int]:
    stats = _core.gil_probe_stats()
    return {key: int(value) for key, value in stats.items() if key != "on"}


def _delta(before: dict[str, int]) -> dict[str, int]:
    after = _counts()
    return {key: after[key] - before[key] for key in after}


def test_the_probe_is_on_where_the_layout_is_known() -> None:
    assert _core.gil_probe_stats()["on"] is PROBE_EXPECTED
    if BUILT_HERE_WITH_HEADERS:
        assert _core.gil_probe_layout_known()


@needs_probe
def test_the_probe_reads_the_gil_held_and_free() -> None:
    assert _core.gil_held()
    # A test server's thread may take the GIL now and then: one free reading in 50 will do.
    assert any(not _core.gil_held_while_released() for _ in range(50))


@needs_probe
def test_the_probe_sees_another_thread_take_the_gil() -> None:
    with Hog():
        # Released for 2 ms, the GIL goes to the hog, which asked for it long before.
        readings = [_core.gil_held_while_released(2000) for _ in range(20)]
    assert any(readings)


@needs_probe
def test_a_thread_keeping_the_gil_makes_callers_back_off(nginx: Nginx) -> None:
    requests = 100
    with requestx.Client(timeout=10) as client:
        # 8 MiB answers (a few ms each): long enough for the hog to hold the GIL when each one
        # is in, even when another process takes a CPU. With /get's microseconds the hog was
        # then rarely scheduled in time and the probe had nothing to back off from (one busy
        # process beside the test: 2-3 timeouts, 0 skipped; with /big8m: 6 and 90).
        url = nginx.url + "/big8m"
        client.get(url)  # connected before counting
        before = _counts()
        with Hog():
            statuses = [client.get(url).status_code for _ in range(requests)]
        delta = _delta(before)
    assert statuses == [200] * requests
    # Four spins in a row that time out on one holder, then 16, 32, 64 waits skipped with one
    # spin between: about 7 of 100 requests spin. Without the back-off, each would.
    assert delta["timeouts"] <= 12, delta
    assert delta["skipped"] >= 50, delta


def _hammer(client: requestx.Client, url: str, per_thread: int, expect: str) -> list[str]:
    """Each thread sends `per_thread` GETs tagged ?id=thread-request; the tags whose answer
    was not a 200 containing `expect` (formatted with the tag)."""
    mismatches: list[str] = []

    def work(i: int) -> None:
        for j in range(per_thread):
            tag = f"{i}-{j}"
            answer = client.get(url, params={"id": tag})
            if answer.status_code != 200 or expect.format(tag=tag) not in answer.text:
                mismatches.append(tag)

    assert run_threads(THREADS, work) == []
    return mismatches


def _tags(per_thread: int) -> list[str]:
    return sorted(f"{i}-{j}" for i in range(THREADS) for j in range(per_thread))


@needs_probe
def test_threads_sharing_a_client_each_request_reaches_nginx_once(nginx: Nginx) -> None:
    per_thread = 200
    seen = len(nginx.requested_uris())
    before = _counts()
    with requestx.Client(timeout=10) as client:
        assert _hammer(client, nginx.url + "/get", per_thread, "Hello, world!") == []
    delta = _delta(before)
    uris = nginx.requested_uris()[seen:]
    assert sorted(uri.removeprefix("/get?id=") for uri in uris) == _tags(per_thread)
    # The callers found the GIL held after their waits, and went through the probe.
    assert sum(delta.values()) > 0, delta


@needs_probe
def test_threads_sharing_a_client_each_request_reaches_hypercorn_once(
    server: HypercornServer,
) -> None:
    per_thread = 25  # hypercorn runs in this process and needs the GIL too
    server.reset_stats()
    before = _counts()
    with requestx.Client(timeout=10) as client:
        assert _hammer(client, server.url + "/echo", per_thread, "id={tag}") == []
    delta = _delta(before)
    assert server.request_count() == THREADS * per_thread
    assert sorted(query.removeprefix("id=") for query in server.request_queries()) == _tags(
        per_thread
    )
    assert sum(delta.values()) > 0, delta
