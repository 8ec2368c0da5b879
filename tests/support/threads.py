"""Threads: run a function in many of them, and count the engines' loop threads.

Every thread is joined with a timeout, so a deadlock fails the test instead of hanging the run.
"""

from __future__ import annotations

import os
import threading
import time
import typing

JOIN_TIMEOUT = 30.0


def run_threads(count: int, target: typing.Callable[[int], None]) -> list[BaseException]:
    """Run target(i) in `count` threads; return what they raised."""
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        try:
            target(i)
        except BaseException as exc:  # collected and reported by the test
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
    assert not any(thread.is_alive() for thread in threads), "a worker thread hung"
    return errors


def engine_threads() -> int:
    """Threads of this process that Python does not know about: the engines' loop threads.

    A Python thread leaves threading.enumerate() a moment before its OS thread is gone, so the
    in-process test servers' handler threads show up here briefly while they exit; the helpers
    below sample rather than trust a single reading."""
    python_threads = {thread.native_id for thread in threading.enumerate()}
    return sum(1 for tid in os.listdir("/proc/self/task") if int(tid) not in python_threads)


def engine_threads_baseline() -> int:
    """The fewest engine threads in a few readings: exiting Python threads of the in-process
    test servers show up briefly."""
    counts = []
    for _ in range(5):
        counts.append(engine_threads())
        time.sleep(0.01)
    return min(counts)


def wait_engine_threads(expected: int) -> None:
    """Wait up to 2 s for the engine threads to be down to `expected`; fail if they are not."""
    deadline = time.monotonic() + 2
    while True:
        count = engine_threads()
        if count <= expected or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert count <= expected, f"{count - expected} engine thread(s) still running"
