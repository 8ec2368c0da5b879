"""Leak soak: many mixed requests on one client; does the process keep growing?

    python benchmarks/run_soak.py [--requests 100000] [--warmup 20000] [--concurrency 16]

Runs on one AsyncClient (asyncio) against a local nginx (benchmarks/nginx.py), a mix that
exercises every way a request can end:

    GET /get                         plain keep-alive GETs
    POST /post, 1 KiB                request bodies
    GET /json1k + .json()            decoding from the engine's buffer
    stream GET /big, abandoned       a 1 MiB response closed after its first chunk
    cancelled GET /big               the task's cancel scope ends mid-transfer
    GET on a closed port             ConnectError
    GET /missing                     404

After `--warmup` requests it reads the resident set size (/proc/self/statm), runs
`--requests` more, and reads it again. It prints one JSON line: counts per kind and outcome,
the RSS before and after and their difference, and the engine's live C objects once the client
is closed (all must be zero). Exit status 0 when the growth is under `--max-growth-mb` (5) and
nothing is left alive, 1 otherwise, 2 when nginx is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nginx import Nginx  # noqa: E402

import requestx  # noqa: E402
from requestx import _core  # noqa: E402

# Out of every 20 requests: the common cases most, each way of ending early at least once.
MIX = ["get"] * 8 + ["post"] * 3 + ["json"] * 3 + ["abandoned-stream"] * 2 + ["cancelled"] * 2
MIX += ["refused", "not-found"]
BODY = b'{"payload": "' + b"x" * 1000 + b'"}'


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens once it is closed


async def one(client: requestx.AsyncClient, kind: str, base: str, refused: str) -> str:
    """Run one request of `kind`; return its outcome ("ok" or an exception class name)."""
    try:
        if kind == "get":
            (await client.get(base + "/get")).raise_for_status()
        elif kind == "post":
            (await client.post(base + "/post", content=BODY)).raise_for_status()
        elif kind == "json":
            assert (await client.get(base + "/json1k")).json()
        elif kind == "abandoned-stream":
            async with client.stream("GET", base + "/big") as response:
                async for _ in response.aiter_raw():
                    break
        elif kind == "cancelled":
            task = asyncio.ensure_future(client.get(base + "/big"))
            await asyncio.sleep(0)  # submitted, then cancelled mid-transfer
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                return "cancelled"
        elif kind == "refused":
            await client.get(refused)
        else:
            if (await client.get(base + "/missing")).status_code != 404:
                return "unexpected-status"
        return "ok"
    except requestx.HTTPError as exc:
        return type(exc).__name__


async def run(base: str, total: int, concurrency: int, counts: collections.Counter[str]) -> None:
    refused = f"http://127.0.0.1:{closed_port()}/"
    async with requestx.AsyncClient(timeout=10) as client:
        queue = iter(range(total))

        async def worker() -> None:
            for n in queue:
                kind = MIX[n % len(MIX)]
                counts[f"{kind}:{await one(client, kind, base, refused)}"] += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--warmup", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-growth-mb", type=float, default=5.0)
    args = parser.parse_args()
    try:
        server = Nginx()
        server.start()
    except Exception as exc:  # noqa: BLE001 - reported, exit 2
        print(f"run_soak: cannot start nginx: {exc}", file=sys.stderr)
        return 2
    try:
        warm: collections.Counter[str] = collections.Counter()
        asyncio.run(run(server.url, args.warmup, args.concurrency, warm))
        gc.collect()
        before = rss_bytes()
        counts: collections.Counter[str] = collections.Counter()
        started = time.monotonic()
        asyncio.run(run(server.url, args.requests, args.concurrency, counts))
        elapsed = time.monotonic() - started
        gc.collect()
        after = rss_bytes()
    finally:
        server.stop()
    gc.collect()
    live = _core.live_objects()
    growth_mb = (after - before) / 2**20
    report: dict[str, Any] = {
        "requests": args.requests,
        "seconds": round(elapsed, 1),
        "rss_before_mb": round(before / 2**20, 1),
        "rss_after_mb": round(after / 2**20, 1),
        "rss_growth_mb": round(growth_mb, 2),
        "live_objects": live,
        "outcomes": dict(sorted(counts.items())),
    }
    print(json.dumps(report))
    ok = growth_mb < args.max_growth_mb and not any(live.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
