"""What is measured and how: the scenarios, and a bounded timed loop that counts requests and
the process's CPU time.

CPU time is `getrusage(RUSAGE_SELF)` user + system: every thread of this process, including a
client's own background threads (requestx's libcurl loop thread), and not nginx, which is a child
process. Divided by the requests completed, it is the client's cost per request, the number that
decides how many requests a busy program can make per core.
"""

from __future__ import annotations

import re
import resource
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable

from clients import POST_DOC, Driver

MAX_REQUESTS = 5_000_000  # per measurement, whatever --seconds says
MIN_WARMUP_CALLS = 20  # per thread: opens the connection and fills caches


@dataclass(frozen=True)
class Scenario:
    name: str  # for --scenarios
    label: str  # for the table
    concurrency: int
    operation: str  # a Driver method: get, get_json, post_json
    path: str


SCENARIOS = [
    Scenario("get", "GET /get c=1", 1, "get", "/get"),
    Scenario("get-c10", "GET /get c=10", 10, "get", "/get"),
    Scenario("json1k", "GET /json1k +decode c=1", 1, "get_json", "/json1k"),
    Scenario("post", "POST 1 KiB JSON c=1", 1, "post_json", "/post"),
    Scenario("post-c10", "POST 1 KiB JSON c=10", 10, "post_json", "/post"),
]
SCENARIO_NAMES = [s.name for s in SCENARIOS]


def bind(driver: Driver, scenario: Scenario, base_url: str) -> Callable[[], Any]:
    """The zero-argument call that makes one request of `scenario` with `driver`."""
    url = base_url + scenario.path
    if scenario.operation == "post_json":
        return partial(driver.post_json, url, POST_DOC)
    return partial(getattr(driver, scenario.operation), url)


def make_drivers(factory: Callable[[], Driver], count: int) -> list[Driver]:
    """One driver per thread, or one shared by all when the library is thread-safe."""
    first = factory()
    if first.thread_safe:
        return [first] * count
    return [first] + [factory() for _ in range(count - 1)]


def close_drivers(drivers: list[Driver]) -> None:
    for driver in {id(d): d for d in drivers}.values():
        driver.close()


class Rates:
    """The two figures every table shows, from a measurement's `requests`, `seconds` and
    `cpu_seconds` (shared by the sync and async benchmarks)."""

    requests: int
    seconds: float
    cpu_seconds: float

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def cpu_us_per_request(self) -> float:
        return self.cpu_seconds * 1e6 / self.requests if self.requests else 0.0


def status_kib(field: str) -> int | None:
    """A `kB` line of /proc/self/status (VmRSS, VmHWM), or None off Linux."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) if match else None


def peak_rss_kib() -> int:
    """This process's peak RSS so far, in KiB: VmHWM, the high-water mark of its own memory.
    Not getrusage's ru_maxrss, which on Linux also keeps the peak of the process image that
    exec replaced: in a cell started by compare.py, that is compare.py's own RSS (about
    35 MiB), a floor under every figure."""
    peak = status_kib("VmHWM")
    return peak if peak is not None else int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def process_cpu_seconds() -> float:
    """User + system CPU time of this process, all threads included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Measurement(Rates):
    requests: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    error: str | None = None  # the first failure, if any (warm-up failures end the run)
    errors: int = 0  # measured calls that raised (the others count in `requests`)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


def run_timed(calls: list[Callable[[], Any]], seconds: float, warmup: float) -> Measurement:
    """Run each call in its own thread: warm up, then count completed calls for `seconds`.

    All threads finish warming up and wait at a barrier before the clock and the CPU counter
    start, so neither includes connection set-up. Bounded by time and by MAX_REQUESTS.
    """
    result = Measurement()
    ready = threading.Barrier(len(calls) + 1)
    go = threading.Event()
    deadline = [0.0]
    cap = MAX_REQUESTS // len(calls)

    def worker(call: Callable[[], Any]) -> None:
        try:
            warm_until, n = time.perf_counter() + warmup, 0
            while n < MIN_WARMUP_CALLS or (time.perf_counter() < warm_until and n < cap):
                call()
                n += 1
        except Exception as exc:  # reported in the table, not as a traceback per thread
            result.error = f"{type(exc).__name__}: {exc}"
            ready.abort()
            return
        try:
            ready.wait()
        except threading.BrokenBarrierError:
            return
        go.wait()
        end, n, failed = deadline[0], 0, 0
        while n + failed < cap:
            try:
                call()
                n += 1
            except Exception as exc:  # counted: the error rate is part of the measurement
                failed += 1
                result.error = result.error or f"{type(exc).__name__}: {exc}"
            if time.perf_counter() >= end:
                break
        with result._lock:
            result.requests += n
            result.errors += failed

    threads = [threading.Thread(target=worker, args=(call,), daemon=True) for call in calls]
    for thread in threads:
        thread.start()
    try:
        ready.wait(timeout=warmup + 60)
    except threading.BrokenBarrierError:
        for thread in threads:
            thread.join(5)
        result.error = result.error or "warm-up did not finish"
        return result
    cpu0, t0 = process_cpu_seconds(), time.perf_counter()
    deadline[0] = t0 + seconds
    go.set()
    for thread in threads:
        thread.join(seconds + 60)
    result.seconds = time.perf_counter() - t0
    result.cpu_seconds = process_cpu_seconds() - cpu0
    return result


def measure(
    factory: Callable[[], Driver], scenario: Scenario, base_url: str, seconds: float, warmup: float
) -> Measurement:
    drivers = make_drivers(factory, scenario.concurrency)
    try:
        calls = [bind(driver, scenario, base_url) for driver in drivers]
        return run_timed(calls, seconds, warmup)
    finally:
        close_drivers(drivers)
