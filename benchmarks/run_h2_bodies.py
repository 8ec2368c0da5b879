#!/usr/bin/env python3
"""HTTP/2 request bodies against a server that answers before reading them: what arrives.

    python benchmarks/run_h2_bodies.py                 # every scenario, 3,000 requests each
    python benchmarks/run_h2_bodies.py --requests 20000 --scenarios small-c1,small-c64

nginx's `/post` answers as soon as a request's HEADERS arrive and then resets the stream with
NO_ERROR, which libcurl 7.88 gets wrong (docs/architecture.md, "HTTP/2 request bodies and
servers that answer early"). Each scenario sends POSTs from one requestx.AsyncClient and
counts the answers, the failures by message, the requests nginx counted (stub_status), and,
from nginx's log of each request's URI (every POST carries its own tag), the POSTs that
reached it twice: there must be none. Also the rate and
CPU per request next to GETs, for the cost of the engine's handling.

Scenarios: small-c1 / small-c64 (100 B), fed-c16 (async generator, 100 B), mid-c16 (20 kB),
large-c16 (200 kB: libcurl 7.88 loses these answers), each over h2c and TLS h2.
Exit status: 0 when every scenario ran and no request reached nginx twice.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import sys
import time
import typing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

from nginx import Nginx  # noqa: E402

import requestx  # noqa: E402

SCENARIOS: dict[str, tuple[int, int, bool]] = {
    # name: (body size, concurrency, fed by an async generator)
    "get-c64": (0, 64, False),
    "small-c1": (100, 1, False),
    "small-c64": (100, 64, False),
    "fed-c16": (100, 16, True),
    "mid-c16": (20_000, 16, False),
    "large-c16": (200_000, 16, False),
}


_runs = itertools.count()


async def _chunks(size: int) -> typing.AsyncIterator[bytes]:
    yield b"f" * size


async def run(
    server: Nginx, protocol: str, size: int, concurrency: int, fed: bool, requests: int
) -> dict[str, typing.Any]:
    if protocol == "h2c":
        base, options = server.h2c_url, {"http1": False, "http2": True}
    else:
        base, options = server.tls_url, {"http2": True, "verify": server.ca_file}
    failures: collections.Counter[str] = collections.Counter()
    answered = 0
    before = server.handled_requests()
    run_tag = f"run={protocol}-{size}-{concurrency}-{fed}-{next(_runs)}&"
    async with requestx.AsyncClient(**options, timeout=requestx.Timeout(10, write=2)) as client:
        work = iter(range(requests))

        async def worker() -> None:
            nonlocal answered
            for n in work:
                try:
                    if size == 0:
                        response = await client.get(f"{base}/json100?{run_tag}n={n}")
                    else:
                        body = _chunks(size) if fed else b"p" * size
                        response = await client.post(f"{base}/post?{run_tag}n={n}", content=body)
                    answered += response.status_code == 200
                except requestx.HTTPError as exc:
                    failures[f"{type(exc).__name__}: {str(exc)[:70]}"] += 1

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    arrivals = collections.Counter(u for u in server.requested_uris() if run_tag in u)
    return {
        "twice": sum(1 for count in arrivals.values() if count > 1),
        "answered": answered,
        "failures": failures,
        "nginx_counted": server.handled_requests() - before,
        "rate": requests / elapsed,
        "cpu_us": cpu / requests * 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="per scenario (3000)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated")
    parser.add_argument("--protocols", default="h2c,h2", help="h2c and/or h2 (TLS)")
    args = parser.parse_args()
    names = [n for n in args.scenarios.split(",") if n]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown or args.requests <= 0:
        parser.error(f"unknown scenarios {unknown}" if unknown else "--requests must be > 0")
    ok = True
    with Nginx(http2=True, log=True) as server:
        print(
            f"{'scenario':<10} {'proto':<5} {'sent':>7} {'answered':>8} {'nginx':>7} "
            f"{'twice':>5} {'req/s':>8} {'CPU us':>7}  failures"
        )
        for name in names:
            size, concurrency, fed = SCENARIOS[name]
            for protocol in args.protocols.split(","):
                r = asyncio.run(run(server, protocol, size, concurrency, fed, args.requests))
                ok &= r["twice"] == 0
                failed = "; ".join(f"{n} x {m}" for m, n in r["failures"].most_common(3))
                print(
                    f"{name:<10} {protocol:<5} {args.requests:>7,} {r['answered']:>8,} "
                    f"{r['nginx_counted']:>7,} {r['twice']:>5} {r['rate']:>8,.0f} "
                    f"{r['cpu_us']:>7.1f}  {failed or '-'}"
                )
    print("no request reached nginx twice" if ok else "REQUESTS SENT TWICE: see 'twice'")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
