"""The async scenario as pytest-benchmark tests: tasks sharing one client, on asyncio, uvloop
and trio.

    pytest benchmarks/test_bench_async.py --benchmark-only
    pytest benchmarks/ --benchmark-only -k "async and uvloop and c64"

Each (event loop, concurrency: 1, 2, 4, 6, 8, 10, 64, 256) is its own group, so
pytest-benchmark's table lines the clients up side by side. A round is a batch: N tasks each
make BATCH requests (GET /json100, answer decoded with the client's own json()). The event
loop runs in a thread of its own for the whole test (anyio's blocking portal), so a round pays
one hand-over to that thread, not an event loop's start; compare rows within a group, and use
compare.py (or run_async.py) for requests/second and CPU per request.

Clients run where they are installed: in the project's environment that is requestx and
httpx; run this file with a peer's environment on the path to add it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("pytest_benchmark")
anyio = pytest.importorskip("anyio")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, any import mode

from async_clients import ALL_LOOPS, DRIVERS  # noqa: E402
from async_workload import PATH  # noqa: E402
from clients import ClientUnavailable  # noqa: E402
from compare import CONCURRENCY_FULL  # noqa: E402
from nginx import Nginx  # noqa: E402

CONCURRENCY = CONCURRENCY_FULL  # 1, 2, 4, 6, 8, 10, 64, 256: compare.py's --full sweep
BATCH = 10  # requests per task per round


@pytest.fixture(scope="module")
def nginx() -> Iterator[Nginx]:
    with Nginx() as server:
        yield server


def _portal_backend(loop: str) -> tuple[str, dict[str, Any]]:
    if loop == "uvloop":
        pytest.importorskip("uvloop")
        return "asyncio", {"use_uvloop": True}
    if loop == "trio":
        pytest.importorskip("trio")
    return loop, {}


@pytest.mark.parametrize("concurrency", CONCURRENCY, ids=[f"c{n}" for n in CONCURRENCY])
@pytest.mark.parametrize("loop", ALL_LOOPS)
@pytest.mark.parametrize("client", list(DRIVERS))
def test_async_get(benchmark: Any, nginx: Nginx, client: str, loop: str, concurrency: int) -> None:
    driver_cls = DRIVERS[client]
    try:
        driver_cls.check()
    except ClientUnavailable as exc:
        pytest.skip(str(exc))
    if loop not in driver_cls.loops:
        pytest.skip(f"{client} does not run on {loop}")
    backend, options = _portal_backend(loop)
    benchmark.group = f"async GET {PATH} + json(), {concurrency} tasks, {loop}"
    benchmark.extra_info["requests_per_round"] = BATCH * concurrency
    url = nginx.url + PATH
    answers: list[Any] = []

    with anyio.from_thread.start_blocking_portal(backend, options) as portal:
        driver = portal.call(driver_cls.open, concurrency)

        async def one_task() -> None:
            for _ in range(BATCH):
                answers.append(await driver.get_json(url))

        async def batch() -> None:
            async with anyio.create_task_group() as group:
                for _ in range(concurrency):
                    group.start_soon(one_task)

        try:
            portal.call(batch)  # every connection open before timing
            answers.clear()
            benchmark(portal.call, batch)
        finally:
            portal.call(driver.close)
    # Every request of every round was answered with the document (benchmarks/nginx.py).
    assert answers and len(answers) % (BATCH * concurrency) == 0
    assert all(isinstance(answer, dict) and answer for answer in answers)
