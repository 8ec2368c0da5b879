"""One HTTP/2 measurement of run_h2.py, in the process that runs this file; prints one JSON object.

    python benchmarks/h2_workload.py throughput CLIENT PROTOCOL BASE_URL CA_FILE C SECONDS WARMUP
    python benchmarks/h2_workload.py count BASE_URL CA_FILE REQUESTS C
    python benchmarks/h2_workload.py latency BASE_URL REQUESTS WARMUP_REQUESTS

throughput (part A): async_workload's cell, C tasks sharing one client on asyncio, with the
HTTP/2 drivers of async_clients.py (PROTOCOL h2 over TLS trusting CA_FILE, or h2c; CA_FILE "-"
for none). count (part B): requestx over h2, exactly REQUESTS requests spread over C tasks of
one AsyncClient. latency (part C): a blocking `requestx.Client(http1=False, http2=True)` makes
WARMUP_REQUESTS requests, then REQUESTS more one after the other, each timed alone with
time.perf_counter_ns; the result holds the distribution in microseconds.

Every response is checked for status 200 and HTTP/2. None of these opens a connection of its own
to read nginx's status: run_h2.py counts the connections nginx accepted around each process.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import sys
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

import async_workload  # noqa: E402
from async_clients import H2_DRIVERS, H2_PROTOCOLS, h2_driver  # noqa: E402
from workload import process_cpu_seconds  # noqa: E402

PATH = async_workload.PATH  # /json100
COUNT_TIMEOUT = 120.0  # part B, whole run
PERCENTILES = (50.0, 95.0, 99.0, 99.9)


def throughput(
    client: str,
    protocol: str,
    base_url: str,
    ca_file: str,
    concurrency: int,
    seconds: float,
    warmup: float,
) -> dict[str, Any]:
    driver = h2_driver(client, protocol, ca_file)
    result = async_workload.measure(
        client, "asyncio", concurrency, base_url, seconds, warmup, driver=driver, count_open=False
    )
    return asdict(result)


async def _count(base_url: str, ca_file: str, requests: int, concurrency: int) -> int:
    driver = await h2_driver("requestx", "h2", ca_file).open(concurrency)
    url = base_url + PATH
    left = [requests]
    done = [0]

    async def task() -> None:
        while left[0] > 0:
            left[0] -= 1
            await driver.get_json(url)
            done[0] += 1

    try:
        tasks = [asyncio.ensure_future(task()) for _ in range(concurrency)]
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), COUNT_TIMEOUT)
        finally:
            for t in tasks:
                t.cancel()
    finally:
        await driver.close()
    return done[0]


def count(base_url: str, ca_file: str, requests: int, concurrency: int) -> dict[str, Any]:
    out: dict[str, Any] = {"requests": 0, "seconds": 0.0, "cpu_seconds": 0.0, "error": None}
    cpu0, t0 = process_cpu_seconds(), time.perf_counter()
    try:
        out["requests"] = asyncio.run(_count(base_url, ca_file, requests, concurrency))
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["seconds"] = time.perf_counter() - t0
    out["cpu_seconds"] = process_cpu_seconds() - cpu0
    return out


def percentile(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of a sorted list: the smallest value with at least p% of the
    values at or below it."""
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def summarize(samples_us: list[float]) -> dict[str, float]:
    ordered = sorted(samples_us)
    summary = {"min": ordered[0], "max": ordered[-1]}
    summary.update({f"p{p:g}": percentile(ordered, p) for p in PERCENTILES})
    summary["mean"] = statistics.fmean(ordered)
    summary["sd"] = statistics.pstdev(ordered) if len(ordered) > 1 else 0.0
    return summary


def latency(base_url: str, requests: int, warmup_requests: int) -> dict[str, Any]:
    import requestx

    out: dict[str, Any] = {"requests": 0, "seconds": 0.0, "cpu_seconds": 0.0, "error": None}
    url = base_url + PATH
    samples = [0] * requests
    clock = time.perf_counter_ns
    try:
        with requestx.Client(http1=False, http2=True) as client:
            for _ in range(warmup_requests):
                _check(client.get(url), url)
            cpu0, t0 = process_cpu_seconds(), time.perf_counter()
            for i in range(requests):
                start = clock()
                response = client.get(url)  # the whole body is read before it returns
                samples[i] = clock() - start
                _check(response, url)
            out["seconds"] = time.perf_counter() - t0
            out["cpu_seconds"] = process_cpu_seconds() - cpu0
            out["requests"] = requests
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    out["latency_us"] = summarize([ns / 1000 for ns in samples])
    return out


def _check(response: Any, url: str) -> None:
    if response.status_code != 200:
        raise RuntimeError(f"requestx: {url} answered {response.status_code}")
    if response.http_version != "HTTP/2":
        raise RuntimeError(f"requestx: {url} answered over {response.http_version}, not HTTP/2")


def main(argv: list[str]) -> int:
    mode, rest = (argv[0], argv[1:]) if argv else ("", [])
    run: Callable[[], dict[str, Any]]
    try:
        if mode == "throughput" and len(rest) == 7:
            client, protocol, base_url, ca_file = rest[:4]
            if client not in H2_DRIVERS or protocol not in H2_PROTOCOLS:
                raise ValueError(f"unknown client or protocol: {client} {protocol}")
            ca = "" if ca_file == "-" else ca_file
            n, seconds, warmup = int(rest[4]), float(rest[5]), float(rest[6])
            run = partial(throughput, client, protocol, base_url, ca, n, seconds, warmup)
        elif mode == "count" and len(rest) == 4:
            run = partial(count, rest[0], rest[1], int(rest[2]), int(rest[3]))
        elif mode == "latency" and len(rest) == 3:
            run = partial(latency, rest[0], int(rest[1]), int(rest[2]))
        else:
            raise ValueError("unknown mode or wrong number of arguments")
    except ValueError as exc:
        print(f"error: {exc}\n\n{__doc__.split(chr(10) * 2)[1]}", file=sys.stderr)
        return 2
    print(json.dumps(run()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
