"""A 1 MiB JSON document sent gzip-compressed, fetched whole at c=10: requestx's C decoder
(csrc/decode.c, what requestx uses) against the Python one it replaced (Python's zlib,
1 MiB at a time, the pieces joined), inside the same client and process.

    .venv/bin/python benchmarks/decode_gzip.py                 # 5 rounds of 3 s per cell
    .venv/bin/python benchmarks/decode_gzip.py --rounds 3 --seconds 2

The server is nginx (benchmarks/nginx.py) sending `/encoded/json1m-gzip`: `_large_document`
(1 MiB) gzip-compressed once, with `Content-Encoding: gzip`. Cells: 10 asyncio tasks on one
AsyncClient, and 10 threads on one Client; each reads `response.content` (decoded), and with
`--parse`, `response.json()` too. Decoders alternate within each round (the order flips every
round), after a warm-up; the table shows the median requests/s and CPU µs per request (all
threads of this process; for asyncio, also the event loop's thread alone, the rest being the
engine's loop thread), and the decoder alone on one body (no network), per call.

A third row per cell, `none`, fetches the same document uncompressed (`/json1m`): the caller
then decodes nothing, which is the most that moving decoding off the caller's thread (onto
the engine's loop thread, as the bytes arrive) could give it, if the loop thread had the time.
Issue 37, item 3 asked whether to do that; docs/performance.md has the numbers and the
decision.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import statistics
import sys
import threading
import time
import typing
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nginx import Nginx, _large_document  # noqa: E402

import requestx  # noqa: E402
from requestx import _decoders, _models  # noqa: E402

CONCURRENCY = 10
MAX_PIECE = _decoders.MAX_PIECE


def python_decode_all(
    raw: bytes, content_encodings: typing.Sequence[str], max_size: int | None = None
) -> bytes:
    """The decoding requestx did before csrc/decode.c, for one gzip member: Python's zlib,
    at most MAX_PIECE bytes per call, the pieces joined (LimitedJoin)."""
    assert [name.strip().lower() for name in content_encodings] == ["gzip"]
    decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
    output = _decoders.LimitedJoin(max_size)
    data = raw
    while True:
        piece = decompressor.decompress(data, MAX_PIECE)
        if piece:
            output.add(piece)
        data = decompressor.unconsumed_tail
        if decompressor.eof or (not data and len(piece) < MAX_PIECE):
            break
    if not decompressor.eof:
        raise requestx.DecodingError("truncated")
    return output.join()


DECODERS = {"python": python_decode_all, "c": _decoders.decode_all}
ROWS = [*DECODERS, "none"]  # none: the uncompressed document, nothing to decode


def _use(decoder: str) -> None:
    _models.decode_all = DECODERS.get(decoder, _decoders.decode_all)  # type: ignore[assignment]


def _cpu() -> float:
    return time.process_time()


def run_async(url: str, seconds: float, warmup: float, as_json: bool) -> tuple[float, float, float]:
    async def main() -> tuple[float, float, float]:
        async with requestx.AsyncClient(limits=requestx.Limits(max_connections=100)) as client:
            stop = 0.0
            count = 0

            async def worker() -> None:
                nonlocal count
                while time.perf_counter() < stop:
                    response = await client.get(url)
                    _ = response.json() if as_json else response.content
                    count += 1

            stop = time.perf_counter() + warmup  # every connection open
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            count = 0
            start, cpu, own = time.perf_counter(), _cpu(), time.thread_time()
            stop = start + seconds
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            wall, used = time.perf_counter() - start, _cpu() - cpu
            own = time.thread_time() - own
            return count / wall, used / count * 1e6, own / count * 1e6

    return asyncio.run(main())


def run_threads(
    url: str, seconds: float, warmup: float, as_json: bool
) -> tuple[float, float, float]:
    with requestx.Client(limits=requestx.Limits(max_connections=100)) as client:
        counts = [0] * CONCURRENCY
        stop = 0.0

        def worker(index: int) -> None:
            while time.perf_counter() < stop:
                response = client.get(url)
                _ = response.json() if as_json else response.content
                counts[index] += 1

        def round_of(duration: float) -> None:
            nonlocal stop
            stop = time.perf_counter() + duration
            threads = [threading.Thread(target=worker, args=(i,)) for i in range(CONCURRENCY)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

        round_of(warmup)
        counts[:] = [0] * CONCURRENCY
        start, cpu = time.perf_counter(), _cpu()
        round_of(seconds)
        wall, used = time.perf_counter() - start, _cpu() - cpu
        total = sum(counts)
        return total / wall, used / total * 1e6, float("nan")


def decode_alone(body: bytes, repeats: int = 200) -> dict[str, float]:
    """µs per decode of `body` with each decoder, no network (the best of 3 runs)."""
    result = {}
    for name, decode in DECODERS.items():
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(repeats):
                decode(body, ["gzip"])
            best = min(best, (time.perf_counter() - start) / repeats * 1e6)
        result[name] = best
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds before each cell")
    parser.add_argument("--parse", action="store_true", help="also parse each body (json())")
    args = parser.parse_args()

    document = _large_document(1 << 20)
    body = gzip.compress(document, 6)
    assert python_decode_all(body, ["gzip"]) == _decoders.decode_all(body, ["gzip"]) == document
    print(f"body: {len(document):,} bytes of JSON, {len(body):,} bytes gzip-compressed")
    alone = decode_alone(body)
    print("decoder alone: " + ", ".join(f"{k} {v:,.0f} µs" for k, v in alone.items()))

    cells = {"asyncio x10": run_async, "threads x10": run_threads}
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    with Nginx(encoded={"json1m-gzip": ("gzip", body)}) as server:
        urls = {"none": server.url + "/json1m"}
        for round_index in range(args.rounds):
            order = ROWS if round_index % 2 == 0 else ROWS[::-1]
            for cell, run in cells.items():
                for decoder in order:
                    _use(decoder)
                    url = urls.get(decoder, server.url + "/encoded/json1m-gzip")
                    results.setdefault((cell, decoder), []).append(
                        run(url, args.seconds, args.warmup, args.parse)
                    )
    _use("c")
    print(
        f"\n{'cell':<14}{'decoder':<9}{'requests/s':>12}{'spread':>9}{'CPU µs/req':>12}"
        f"{'of which the event loop':>25}"
    )
    for (cell, decoder), runs in sorted(results.items(), key=lambda item: item[0][0]):
        rates = [rate for rate, _, _ in runs]
        cpu = statistics.median(c for _, c, _ in runs)
        own = statistics.median(o for _, _, o in runs)
        spread = (max(rates) - min(rates)) / 2
        line = f"{cell:<14}{decoder:<9}{statistics.median(rates):>12,.0f}"
        line += f"{'±' + format(spread, ',.0f'):>9}{cpu:>12,.0f}"
        print(line + (f"{own:>25,.0f}" if own == own else ""))


if __name__ == "__main__":
    main()
