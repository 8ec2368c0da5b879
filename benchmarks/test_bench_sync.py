"""The run_sync.py scenarios as pytest-benchmark tests.

    pytest benchmarks/ --benchmark-only
    pytest benchmarks/ --benchmark-only -k "get and not c10" --benchmark-columns=mean,ops
    pytest benchmarks/ --benchmark-only -k post_payload     # the POST payload sweep
    pytest benchmarks/ --benchmark-only -k thread_sweep     # GET at 1 ... 256 threads
    pytest benchmarks/ --benchmark-only -k mixed            # form, JSON, 1 MiB downloads

Each scenario (and each payload size) is its own group, so pytest-benchmark's table lines
the clients up side by side.

Not part of the test suite (pytest's testpaths is tests/). Each round with one thread is one
request; with N threads it is a batch of N x BATCH requests spread over them, so compare rows
within a group, and use compare.py (or run_sync.py) for requests/second and CPU per request.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

pytest.importorskip("pytest_benchmark")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, any import mode

from clients import DRIVERS, ClientUnavailable, Driver  # noqa: E402
from compare import CONCURRENCY_FULL, MIXED, MIXED_TITLES  # noqa: E402
from nginx import Nginx  # noqa: E402
from sync_cell import bind as bind_operation  # noqa: E402
from sync_cell import document  # noqa: E402
from workload import SCENARIOS, Scenario, bind, close_drivers, make_drivers  # noqa: E402

BATCH = 10  # requests per thread per round when several threads run


@pytest.fixture(scope="session")
def nginx() -> Iterator[Nginx]:
    with Nginx() as server:
        yield server


@pytest.fixture(params=list(DRIVERS))
def factory(request: pytest.FixtureRequest) -> Callable[[], Driver]:
    make: Callable[[], Driver] = DRIVERS[request.param]
    try:
        make().close()
    except ClientUnavailable as exc:
        pytest.skip(str(exc))
    return make


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_sync(
    benchmark: Any, nginx: Nginx, factory: Callable[[], Driver], scenario: Scenario
) -> None:
    # One group per scenario: pytest-benchmark's table then lines the clients up.
    benchmark.group = scenario.label
    drivers = make_drivers(factory, scenario.concurrency)
    try:
        _measure(benchmark, [bind(driver, scenario, nginx.url) for driver in drivers])
    finally:
        close_drivers(drivers)


def _measure(benchmark: Any, calls: list[Callable[[], Any]]) -> None:
    """One call per round alone; with several threads, each makes BATCH calls per round."""
    for call in calls:  # open every connection before timing
        call()
    if len(calls) == 1:
        benchmark(calls[0])
        return
    benchmark.extra_info["requests_per_round"] = BATCH * len(calls)

    def run_batch(call: Callable[[], Any]) -> None:
        for _ in range(BATCH):
            call()

    with ThreadPoolExecutor(len(calls)) as pool:
        benchmark(lambda: list(pool.map(run_batch, calls)))  # list(): re-raise errors


@pytest.mark.parametrize("threads", CONCURRENCY_FULL, ids=[f"t{n}" for n in CONCURRENCY_FULL])
def test_thread_sweep(
    benchmark: Any, nginx: Nginx, factory: Callable[[], Driver], threads: int
) -> None:
    """GET /get from `threads` threads sharing one client (compare.py's sync-get sweep)."""
    benchmark.group = f"GET /get, {threads} threads"
    drivers = make_drivers(factory, threads)
    try:
        _measure(benchmark, [bind_operation(driver, "get", nginx.url) for driver in drivers])
    finally:
        close_drivers(drivers)


@pytest.mark.parametrize("operation", MIXED)
def test_mixed(benchmark: Any, nginx: Nginx, factory: Callable[[], Driver], operation: str) -> None:
    """compare.py's mixed requests at c=1: JSON answers decoded with the client's json()."""
    benchmark.group = f"{MIXED_TITLES[operation]} c=1"
    driver = factory()
    try:
        _measure(benchmark, [bind_operation(driver, operation, nginx.url)])
    finally:
        driver.close()


PAYLOADS = (41, 963, 9_951, 99_905, 511_901, 999_911)  # compare.py's post-sweep


@pytest.mark.parametrize("size", PAYLOADS, ids=[f"{size}B" for size in PAYLOADS])
def test_post_payload(
    benchmark: Any, nginx: Nginx, factory: Callable[[], Driver], size: int
) -> None:
    """POST a JSON body of `size` bytes at c=1, answer decoded: one group per size."""
    benchmark.group = f"POST {size:,} B JSON c=1"
    driver = factory()
    call = partial(driver.post_json, nginx.url + "/post", document(size))
    try:
        call()  # the connection is open before timing
        benchmark(call)
    finally:
        driver.close()
