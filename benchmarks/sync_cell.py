"""One blocking measurement ("cell") in a process of its own: a client, N threads sharing it
(or one each, when the library is not thread-safe), one operation.

    python benchmarks/sync_cell.py CLIENT THREADS BASE_URL OPERATION [SECONDS [WARMUP]]

OPERATION: `get` (GET /get, 13 bytes), `json1k` (GET /json1k, decoded), `post:SIZE` (POST a
JSON document of SIZE bytes to /post, answer decoded), `form` (POST five urlencoded fields to
/post, answer decoded), `download` (GET /big: 1 MiB of bytes), `json1m` (GET /json1m: 1 MiB
of JSON, decoded). Prints one JSON object: the figures of workload.run_timed (requests,
seconds, CPU seconds of every thread of this process, failed requests and the first failure),
the process's peak RSS (VmHWM: workload.peak_rss_kib), and how the client was made
(`settings`). benchmarks/compare.py runs every cell this way, each in the virtual environment
of its client, so no library runs with another's imports, threads or heap.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

from clients import DRIVERS, ClientUnavailable, Driver  # noqa: E402
from workload import close_drivers, make_drivers, peak_rss_kib, run_timed  # noqa: E402

FORM = {
    "user": "bench",
    "email": "bench@example.org",
    "plan": "pro",
    "seats": "12",
    "note": "x" * 64,
}


def document(size: int) -> dict[str, str]:
    """A JSON document of exactly `size` bytes in compact form: {"pad":"xxx..."}."""
    overhead = len(json.dumps({"pad": ""}, separators=(",", ":")))
    if size < overhead:
        raise ValueError(f"a JSON document needs at least {overhead} bytes")
    return {"pad": "x" * (size - overhead)}


def bind(driver: Driver, operation: str, base_url: str) -> Callable[[], Any]:
    """The zero-argument call that makes one request of `operation` with `driver`."""
    if operation == "get":
        return partial(driver.get, base_url + "/get")
    if operation == "json1k":
        return partial(driver.get_json, base_url + "/json1k")
    if operation == "json1m":
        return partial(driver.get_json, base_url + "/json1m")
    if operation == "download":
        return partial(driver.get, base_url + "/big")
    if operation == "form":
        return partial(driver.post_form, base_url + "/post", FORM)
    if operation.startswith("post:"):
        return partial(driver.post_json, base_url + "/post", document(int(operation[5:])))
    raise ValueError(f"unknown operation {operation!r}")


def measure(
    client: str, threads: int, base_url: str, operation: str, seconds: float, warmup: float
) -> dict[str, Any]:
    result: dict[str, Any] = {"client": client, "threads": threads, "operation": operation}
    try:
        drivers = make_drivers(DRIVERS[client], threads)
    except ClientUnavailable as exc:
        return {**result, "error": f"unavailable: {exc}"}
    try:
        measured = run_timed([bind(d, operation, base_url) for d in drivers], seconds, warmup)
    finally:
        close_drivers(drivers)
    sharing = "one shared by all threads" if drivers[0].thread_safe else "one per thread"
    return {
        **result,
        "settings": f"{drivers[0].settings}, {sharing}",
        "requests": measured.requests,
        "seconds": measured.seconds,
        "cpu_seconds": measured.cpu_seconds,
        "max_rss_kib": peak_rss_kib(),
        "error": measured.error,
        "errors": measured.errors,
    }


def main(argv: list[str]) -> int:
    if not 4 <= len(argv) <= 6 or argv[0] not in DRIVERS:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    client, threads, base_url, operation = argv[0], int(argv[1]), argv[2], argv[3]
    seconds = float(argv[4]) if len(argv) > 4 else 2.0
    warmup = float(argv[5]) if len(argv) > 5 else 0.5
    print(json.dumps(measure(client, threads, base_url, operation, seconds, warmup)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
