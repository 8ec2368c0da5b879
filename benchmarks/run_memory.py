"""Peak memory of streaming: how much a client's peak RSS grows while it streams a large
response or uploads a large generator body (issue 5's bounded-memory goal: < 15 MB).

    .venv/bin/python benchmarks/run_memory.py            # every scenario, requestx and httpx
    .venv/bin/python benchmarks/run_memory.py --clients requestx

Each measurement runs in a fresh interpreter that imports the client, makes one small request
(so the engine thread, the connection and the allocator are warm), then records its peak RSS
(`ru_maxrss`) before and after the scenario. The server is the test suite's ASGI app
(`tests/servers`), run by this parent process, so its memory is not counted.

Scenarios:
    stream-sync    `with client.stream(...)`: iter_bytes() over a 50 MiB body, discarded
    stream-async   the same with AsyncClient on asyncio
    stream-trio    the same with AsyncClient on trio (requestx only; httpx on trio too)
    stream-h2c     the blocking stream over HTTP/2 (h2c, prior knowledge): paused per stream
    upload-sync    POST of a 20 MiB generator body (64 KiB pieces), chunked
    upload-async   the same with AsyncClient and an async generator
    read-sync      for contrast: client.get() of the 50 MiB body, held in memory
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STREAM_BYTES = 50 * 1024 * 1024
UPLOAD_BYTES = 20 * 1024 * 1024
PIECE = 64 * 1024
SCENARIOS = [
    "stream-sync",
    "stream-async",
    "stream-trio",
    "stream-h2c",
    "upload-sync",
    "upload-async",
    "read-sync",
]
CLIENTS = ["requestx", "httpx"]


def _peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def _pieces() -> typing.Iterator[bytes]:
    for _ in range(UPLOAD_BYTES // PIECE):
        yield b"u" * PIECE


async def _apieces() -> typing.AsyncIterator[bytes]:
    for piece in _pieces():
        yield piece


def _child(client_name: str, scenario: str, url: str) -> dict[str, typing.Any]:
    """Runs in the fresh interpreter: returns the peak RSS growth and what was moved."""
    lib: typing.Any = __import__(client_name)
    big = f"{url}/bytes/{STREAM_BYTES}"
    upload = f"{url}/upload-digest"

    if scenario.endswith("-sync") or scenario == "stream-h2c":
        options = {"http1": False, "http2": True} if scenario == "stream-h2c" else {}
        with lib.Client(timeout=60, **options) as client:
            client.get(f"{url}/json").raise_for_status()
            before = _peak_kib()
            if scenario.startswith("stream"):
                with client.stream("GET", big) as response:
                    moved = sum(len(chunk) for chunk in response.iter_bytes())
            elif scenario == "upload-sync":
                moved = client.post(upload, content=_pieces()).json()["length"]
            else:
                moved = len(client.get(big).content)
        return {"growth_kib": _peak_kib() - before, "bytes": moved}

    async def run() -> dict[str, typing.Any]:
        async with lib.AsyncClient(timeout=60) as client:
            (await client.get(f"{url}/json")).raise_for_status()
            before = _peak_kib()
            if scenario.startswith("stream"):
                async with client.stream("GET", big) as response:
                    moved = 0
                    async for chunk in response.aiter_bytes():
                        moved += len(chunk)
            else:
                moved = (await client.post(upload, content=_apieces())).json()["length"]
            return {"growth_kib": _peak_kib() - before, "bytes": moved}

    if scenario == "stream-trio":
        import trio

        result: dict[str, typing.Any] = trio.run(run)
        return result
    import asyncio

    return asyncio.run(run())


def _measure(client_name: str, scenario: str, url: str) -> dict[str, typing.Any]:
    command = [sys.executable, __file__, "--child", client_name, scenario, url]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return typing.cast("dict[str, typing.Any]", json.loads(out.stdout))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0

    sys.path.insert(0, str(ROOT))
    from tests.servers import HypercornServer

    results: list[dict[str, typing.Any]] = []
    print(f"{'scenario':14} {'client':10} {'peak RSS growth':>16} {'bytes moved':>12}")
    with HypercornServer() as server:
        for scenario in args.scenarios.split(","):
            for client_name in args.clients.split(","):
                result = _measure(client_name, scenario, server.url)
                results.append({"scenario": scenario, "client": client_name, **result})
                if "error" in result:
                    print(f"{scenario:14} {client_name:10} failed: {result['error']}")
                    continue
                growth = f"{result['growth_kib'] / 1024:.1f} MiB"
                print(f"{scenario:14} {client_name:10} {growth:>16} {result['bytes']:>12,}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    failed = any("error" in result for result in results)
    return 1 if failed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
