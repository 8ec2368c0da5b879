"""One async measurement ("cell"): a client, an event loop, N tasks sharing the client.

    python benchmarks/async_workload.py CLIENT LOOP CONCURRENCY BASE_URL [SECONDS [WARMUP [PATH
        [--no-status]]]]

prints one JSON object (the Measurement) on stdout. At the end it asks nginx's status page how
many connections are open (`connections`), unless --no-status says the caller counts them
from outside (compare.py counts the connections nginx accepted during the run, which that
request would add to). run_async.py runs every cell this way, in a
fresh process of its own: a client that crashes or hangs costs its cell, not the whole run, and
no client runs with another one's threads, heap or imports around.

In the cell: a new event loop starts (anyio.run, so asyncio, uvloop or trio); the client is
created inside it; N tasks loop over `await driver.get_json(url)`. They warm up for WARMUP
seconds, and until every task has completed MIN_WARMUP_CALLS requests (so all N connections
are open). Then the clock and the CPU counter start, the same tasks run on for SECONDS, and
stop at the deadline after their request in flight (counted; the time includes it). Last, the
client is closed in the loop. Bounded: at most MAX_REQUESTS in the measured part, and every
wait has a time limit.

CPU time is `getrusage(RUSAGE_SELF)` user + system over the measured part: every thread of the
process, including the clients' own threads (requestx's engine thread, pyreqwest's tokio
runtime thread), and not nginx.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

from async_clients import ALL_LOOPS, DRIVERS, AsyncDriver  # noqa: E402
from workload import Rates, process_cpu_seconds  # noqa: E402

PATH = "/json100"  # a 100-byte JSON document (benchmarks/nginx.py)
MAX_REQUESTS = 2_000_000  # per measurement, whatever --seconds says
MIN_WARMUP_CALLS = 1  # per task before the measurement: its connection is open
OPEN_TIMEOUT = 30.0  # creating or closing a client
WARMUP_GRACE = 30.0  # after WARMUP, for the slowest task to reach MIN_WARMUP_CALLS
DRAIN_TIMEOUT = 30.0  # after the deadline, for the requests in flight


@dataclass
class Measurement(Rates):
    client: str
    loop: str
    concurrency: int
    requests: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    connections: int | None = None  # nginx's open connections right after the measurement
    loop_impl: str = ""  # the event loop class actually running
    error: str | None = None


def loop_unavailable(loop: str) -> str | None:
    """Why this event loop cannot run here, or None."""
    module = {"asyncio": None, "uvloop": "uvloop", "trio": "trio"}[loop]
    if module is None:
        return None
    try:
        __import__(module)
    except ImportError:
        return f"{module} is not installed"
    return None


def _loop_impl(loop: str) -> str:
    if loop == "trio":
        import trio

        return f"trio {trio.__version__}"
    running = type(asyncio.get_running_loop())
    return f"{running.__module__}.{running.__qualname__}"


def _open_connections(base_url: str) -> int | None:
    """nginx's stub_status "Active connections", minus the one asking."""
    try:
        with urllib.request.urlopen(base_url + "/status", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return None
    match = re.search(r"Active connections:\s*(\d+)", text)
    return int(match.group(1)) - 1 if match else None


class _State:
    """Shared by the tasks of one cell (one event loop thread: no locking needed)."""

    def __init__(self, tasks: int) -> None:
        import anyio

        self.done = 0  # requests completed since the start, warm-up included
        self.limit = MAX_REQUESTS  # tasks stop once `done` reaches it; 0 means stop now
        self.warm = 0  # tasks that completed MIN_WARMUP_CALLS requests
        self.running = tasks
        self.finished = anyio.Event()  # the last task has returned
        self.error: str | None = None


async def _task(state: _State, call: Callable[[str], Awaitable[Any]], url: str) -> None:
    n = 0
    try:
        while state.done < state.limit:
            await call(url)
            state.done += 1
            n += 1
            if n == MIN_WARMUP_CALLS:
                state.warm += 1
    except Exception as exc:  # reported in the table; the other tasks stop too
        state.error = state.error or f"{type(exc).__name__}: {exc}"
        state.limit = 0
    finally:
        state.running -= 1
        if state.running == 0:
            state.finished.set()


async def _run(
    driver_cls: type[AsyncDriver],
    base_url: str,
    result: Measurement,
    seconds: float,
    warmup: float,
    count_open: bool,
    path: str = PATH,
) -> None:
    import anyio

    result.loop_impl = _loop_impl(result.loop)
    if result.loop == "uvloop" and not result.loop_impl.startswith("uvloop"):
        raise RuntimeError(f"asked for uvloop, got {result.loop_impl}")
    n = result.concurrency
    with anyio.fail_after(OPEN_TIMEOUT):
        driver = await driver_cls.open(n)
    try:
        state = _State(n)
        async with anyio.create_task_group() as group:
            for _ in range(n):
                group.start_soon(_task, state, driver.get_json, base_url + path)
            # Warm-up: connections open, caches filled, every task past its first request.
            with anyio.move_on_after(warmup + WARMUP_GRACE):
                await anyio.sleep(warmup)
                while state.warm < n and state.error is None:
                    await anyio.sleep(0.005)
            if state.error is None and state.warm < n:
                state.error = f"warm-up did not finish: {state.warm} of {n} tasks warm"
            if state.error is None:
                base = state.done
                cpu0, t0 = process_cpu_seconds(), time.perf_counter()
                state.limit = base + MAX_REQUESTS
                with anyio.move_on_after(seconds):
                    await state.finished.wait()  # early only when the cap or an error stops it
                state.limit = 0
                with anyio.move_on_after(DRAIN_TIMEOUT):
                    await state.finished.wait()
                result.seconds = time.perf_counter() - t0
                result.cpu_seconds = process_cpu_seconds() - cpu0
                result.requests = state.done - base
                if not state.finished.is_set():
                    state.error = f"requests still running {DRAIN_TIMEOUT:g} s after the deadline"
            state.limit = 0
            with anyio.move_on_after(DRAIN_TIMEOUT):
                await state.finished.wait()
            group.cancel_scope.cancel()
        result.error = state.error
        if result.error is None and count_open:
            result.connections = _open_connections(base_url)  # blocks the loop: after timing
    finally:
        with anyio.fail_after(OPEN_TIMEOUT):
            await driver.close()


def measure(
    client: str,
    loop: str,
    concurrency: int,
    base_url: str,
    seconds: float,
    warmup: float,
    *,
    driver: type[AsyncDriver] | None = None,
    count_open: bool = True,
    path: str = PATH,
) -> Measurement:
    """Run one cell in this process; failures end up in `error`, not as exceptions.

    `driver` replaces DRIVERS[client] (run_h2.py's HTTP/2 drivers). With `count_open` False
    the cell leaves `connections` unset and opens no connection of its own to read nginx's
    status (run_h2.py counts the connections from outside, and its servers are not HTTP/1.1).
    """
    import anyio

    result = Measurement(client, loop, concurrency)
    options: dict[str, Any] = {}
    if loop == "uvloop":
        options["use_uvloop"] = True
    backend = "trio" if loop == "trio" else "asyncio"
    try:
        anyio.run(
            _run, driver or DRIVERS[client], base_url, result, seconds, warmup, count_open,
            path, backend=backend, backend_options=options,
        )  # fmt: skip
    except Exception as exc:
        result.error = result.error or f"{type(exc).__name__}: {exc}"
    return result


def main(argv: list[str]) -> int:
    count_open = "--no-status" not in argv
    argv = [arg for arg in argv if arg != "--no-status"]
    if not 4 <= len(argv) <= 7 or argv[0] not in DRIVERS or argv[1] not in ALL_LOOPS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    client, loop, concurrency, base_url = argv[0], argv[1], int(argv[2]), argv[3]
    seconds = float(argv[4]) if len(argv) > 4 else 2.0
    warmup = float(argv[5]) if len(argv) > 5 else 0.5
    path = argv[6] if len(argv) > 6 else PATH
    result = measure(
        client, loop, concurrency, base_url, seconds, warmup, count_open=count_open, path=path
    )
    print(json.dumps(asdict(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
