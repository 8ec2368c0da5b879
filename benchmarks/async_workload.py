"""One async measurement ("cell"): a client, an event loop, N tasks sharing the client.

    python benchmarks/async_workload.py CLIENT LOOP CONCURRENCY BASE_URL [SECONDS [WARMUP [PATH]]]
        [--no-status] [--timeout S]

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

Memory (`rss_idle_kib`, `rss_peak_kib`): the process's resident set once the client is made
and before any task starts (VmRSS in /proc/self/status), and its peak from then until every
task has stopped, warm-up (when the connections open) included. The peak is VmHWM, reset to
the current RSS just before the tasks start by writing 5 to /proc/self/clear_refs (Linux 4.0+),
so it is this run's peak alone. getrusage's ru_maxrss cannot be reset: it keeps the highest
RSS since the process started, imports and client creation included, and on Linux even the
peak of the process that exec replaced (compare.py's, about 35 MiB), which can hide the run's
growth; it is the fallback where clear_refs cannot be written, and `rss_method` says which
was used. (peak - idle) / CONCURRENCY is the memory a request in flight costs: the
client's connection, buffers and request state, plus the benchmark's own task, the same for
every client on a loop.

The open-file limit (RLIMIT_NOFILE) is raised to the hard limit first (benchmarks/fdlimit.py);
a cell whose CONCURRENCY connections would not fit under it reports why instead of running.
`settings` is what the client was made with (the library's own call, async_clients.py);
--timeout S gives the client a request timeout of S seconds (else the library's default).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import sys
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

from async_clients import ALL_LOOPS, DRIVERS, AsyncDriver  # noqa: E402
from fdlimit import raise_open_files, shortfall  # noqa: E402
from workload import Rates, process_cpu_seconds, status_kib  # noqa: E402

PATH = "/json100"  # a 100-byte JSON document (benchmarks/nginx.py)
MAX_REQUESTS = 2_000_000  # per measurement, whatever --seconds says
MIN_WARMUP_CALLS = 1  # per task before the measurement: its connection is open
OPEN_TIMEOUT = 30.0  # creating or closing a client
WARMUP_GRACE = 30.0  # after WARMUP, for the slowest task to reach MIN_WARMUP_CALLS
DRAIN_TIMEOUT = 30.0  # after the deadline, for the requests in flight
TEARDOWN_TIMEOUT = 45.0  # from the figures to the client closed, before the process is ended


def cell_bound(seconds: float, warmup: float) -> float:
    """The longest a cell runs before main() ends it (135 s beyond its warm-up and seconds)."""
    return OPEN_TIMEOUT + warmup + WARMUP_GRACE + seconds + DRAIN_TIMEOUT + TEARDOWN_TIMEOUT


_running: _State | None = None  # the cell's tasks, for the watchdog's message


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
    settings: str = ""  # how the client was made (AsyncDriver.settings)
    timeout: float | None = None  # the request timeout given to the client, if any
    open_files: int = 0  # RLIMIT_NOFILE in force (raised to the hard limit)
    rss_idle_kib: int | None = None  # RSS with the client made, before the tasks start
    rss_peak_kib: int | None = None  # peak RSS from then until every task stopped
    rss_method: str = ""  # "VmHWM" (reset by clear_refs) or "ru_maxrss" (process lifetime)
    error: str | None = None
    note: str | None = None  # set when the process was ended before the client closed


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


def _reset_peak_rss() -> str:
    """Make the peak RSS the current RSS, if the kernel lets us: the method that reads it."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return "ru_maxrss"
    return "VmHWM"


def _peak_rss_kib(method: str) -> int | None:
    if method == "VmHWM":
        return status_kib("VmHWM")
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)  # KiB on Linux


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
    on_measured: Callable[[Measurement], None] | None = None,
) -> None:
    import anyio

    result.loop_impl = _loop_impl(result.loop)
    if result.loop == "uvloop" and not result.loop_impl.startswith("uvloop"):
        raise RuntimeError(f"asked for uvloop, got {result.loop_impl}")
    n = result.concurrency
    result.settings = driver_cls.settings(n, result.timeout)
    with anyio.fail_after(OPEN_TIMEOUT):
        driver = await driver_cls.open(n, result.timeout)
    try:
        global _running
        state = _running = _State(n)
        result.rss_idle_kib = status_kib("VmRSS")
        result.rss_method = _reset_peak_rss()
        async with anyio.create_task_group() as group:
            for _ in range(n):
                group.start_soon(_task, state, driver.get_json, base_url + path)
            # Warm-up: connections open, caches filled, every task past its first request.
            with anyio.move_on_after(warmup + WARMUP_GRACE):
                await anyio.sleep(warmup)
                while state.warm < n and state.error is None:
                    await anyio.sleep(0.005)
            if state.error is None and state.warm < n:
                state.error = (
                    f"warm-up did not finish: {state.warm:,} of {n:,} tasks had an answer after "
                    f"{warmup + WARMUP_GRACE:g} s"
                )
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
            result.rss_peak_kib = _peak_rss_kib(result.rss_method)
            result.error = state.error
            if on_measured is not None:
                on_measured(result)  # what follows only stops and closes
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
    timeout: float | None = None,
    on_measured: Callable[[Measurement], None] | None = None,
    on_start: Callable[[Measurement], None] | None = None,
) -> Measurement:
    """Run one cell in this process; failures end up in `error`, not as exceptions.

    `driver` replaces DRIVERS[client] (run_h2.py's HTTP/2 drivers). With `count_open` False
    the cell leaves `connections` unset and opens no connection of its own to read nginx's
    status (run_h2.py counts the connections from outside, and its servers are not HTTP/1.1).
    `on_start(result)` is called before the loop starts, and `on_measured(result)` in the
    loop once the figures are in, before the tasks are stopped and the client closed.
    """
    import anyio

    result = Measurement(client, loop, concurrency, timeout=timeout)
    limits = raise_open_files()
    result.open_files = limits.soft
    problem = shortfall(concurrency, limits)
    if problem is not None:
        result.error = f"not run: {problem}"
        return result
    if on_start is not None:
        on_start(result)
    options: dict[str, Any] = {}
    if loop == "uvloop":
        options["use_uvloop"] = True
    backend = "trio" if loop == "trio" else "asyncio"
    try:
        anyio.run(
            _run, driver or DRIVERS[client], base_url, result, seconds, warmup, count_open,
            path, on_measured, backend=backend, backend_options=options,
        )  # fmt: skip
    except Exception as exc:
        result.error = result.error or f"{type(exc).__name__}: {exc}"
    return result


def main(argv: list[str]) -> int:
    count_open = "--no-status" not in argv
    argv = [arg for arg in argv if arg != "--no-status"]
    timeout: float | None = None
    if "--timeout" in argv[:-1]:
        at = argv.index("--timeout")
        timeout = float(argv[at + 1])
        del argv[at : at + 2]
    if not 4 <= len(argv) <= 7 or argv[0] not in DRIVERS or argv[1] not in ALL_LOOPS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    client, loop, concurrency, base_url = argv[0], argv[1], int(argv[2]), argv[3]
    seconds = float(argv[4]) if len(argv) > 4 else 2.0
    warmup = float(argv[5]) if len(argv) > 5 else 0.5
    path = argv[6] if len(argv) > 6 else PATH
    watchdog = _Watchdog(cell_bound(seconds, warmup), TEARDOWN_TIMEOUT)
    result = measure(
        client, loop, concurrency, base_url, seconds, warmup, count_open=count_open, path=path,
        timeout=timeout, on_measured=watchdog.measured, on_start=watchdog.start,
    )  # fmt: skip
    watchdog.cancel()
    print(json.dumps(asdict(result)))
    return 0


class _Watchdog:
    """A bound on the whole cell, from outside the event loop. Stopping N tasks and closing
    the client can take far longer than the measurement, and at 10,000 tasks a client whose
    pool does O(N) work per request can keep the loop from reaching even its own timeouts
    (one pass over the tasks takes longer than the warm-up's grace). A timer thread
    ends the process instead, after printing what is known: `total` seconds after the start,
    or `after` seconds once the figures are in (`measured`, measure's on_measured), whichever
    comes first."""

    def __init__(self, total: float, after: float) -> None:
        self.total, self.after = total, after
        self._deadline = 0.0
        self._result: Measurement | None = None
        self._timer: threading.Timer | None = None

    def start(self, result: Measurement) -> None:
        self._result = result
        self._deadline = time.monotonic() + self.total
        self._arm(self.total, measured=False)

    def measured(self, result: Measurement) -> None:
        self._arm(min(self.after, max(0.0, self._deadline - time.monotonic())), measured=True)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _arm(self, seconds: float, measured: bool) -> None:
        self.cancel()
        self._timer = threading.Timer(seconds, self._give_up, (seconds, measured))
        self._timer.daemon = True
        self._timer.start()

    def _give_up(self, seconds: float, measured: bool) -> None:
        result = self._result
        assert result is not None
        state = _running
        if measured:
            result.note = (
                f"the tasks had not stopped and the client not closed {seconds:.0f} s after the "
                "measurement: the process was ended"
            )
        elif result.error is None:
            progress = (
                f": {state.warm:,} of {result.concurrency:,} tasks had an answer" if state else ""
            )
            result.error = (
                f"the cell did not end within {seconds:g} s, its event loop too busy to reach "
                f"its own timeouts{progress}"
            )
        print(json.dumps(asdict(result)), flush=True)
        os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
