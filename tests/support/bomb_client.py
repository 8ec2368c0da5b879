"""
The client side of tests/faults/test_decompression_bombs.py, run in a child process so that its
peak resident set size is the client's alone:

    python -m tests.support.bomb_client MODE BASE_URL OK_URL CODING...

MODE is blocking, asyncio or trio. For each coding it fetches BASE_URL + coding (a body
that decodes to 1 GiB) three ways, each on a fresh client, each followed by a GET of
OK_URL on the same client:

* "stream":  iter_bytes() without chunk_size, abandoned after 10 MB;
* "chunked": iter_bytes(chunk_size=65536), abandoned after 10 MB;
* "capped":  a plain GET on a client with max_body_bytes=10 MiB (ResponseTooLarge).

Before each case the kernel's peak-RSS mark is reset (/proc/self/clear_refs), so each
case reports its own peak growth. Prints one JSON line: a list of case reports.
"""

from __future__ import annotations

import asyncio
import json
import sys
import typing

import requestx

ABANDON_AFTER = 10 * 1024 * 1024
CHUNK_SIZE = 65536
CAP = 10 * 1024 * 1024


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} is not in /proc/self/status")


class Case:
    """One case's measurements: chunk sizes seen, the outcome, the peak RSS growth."""

    def __init__(self, coding: str, kind: str) -> None:
        self.report: dict[str, typing.Any] = {"coding": coding, "kind": kind}
        self.read = 0
        self.largest_chunk = 0
        self.sizes: set[int] = set()

    def __enter__(self) -> Case:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")  # resets VmHWM, the peak, to the current RSS
        self._start = _rss_kib("VmRSS")
        return self

    def chunk(self, data: bytes) -> bool:
        """Note one chunk; True once enough was read to abandon the stream."""
        self.read += len(data)
        self.largest_chunk = max(self.largest_chunk, len(data))
        self.sizes.add(len(data))
        return self.read >= ABANDON_AFTER

    def __exit__(self, *exc_info: object) -> None:
        self.report.update(
            read=self.read,
            largest_chunk=self.largest_chunk,
            chunk_sizes=sorted(self.sizes)[:5],
            peak_growth_kib=_rss_kib("VmHWM") - self._start,
        )


def run_blocking(base: str, ok_url: str, codings: list[str]) -> list[dict[str, typing.Any]]:
    reports = []
    for coding in codings:
        url = base + coding
        for kind in ("stream", "chunked", "capped"):
            with requestx.Client(max_body_bytes=CAP if kind == "capped" else None) as client:
                with Case(coding, kind) as case:
                    if kind == "capped":
                        try:
                            client.get(url)
                            case.report["outcome"] = "no exception"
                        except requestx.ResponseTooLarge as exc:
                            case.report["outcome"] = type(exc).__name__
                    else:
                        size = CHUNK_SIZE if kind == "chunked" else None
                        with client.stream("GET", url) as response:
                            for data in response.iter_bytes(size):
                                if case.chunk(data):
                                    break
                        case.report["outcome"] = "abandoned"
                case.report["next_status"] = client.get(ok_url).status_code
            reports.append(case.report)
    return reports


async def run_async(base: str, ok_url: str, codings: list[str]) -> list[dict[str, typing.Any]]:
    reports = []
    for coding in codings:
        url = base + coding
        for kind in ("stream", "chunked", "capped"):
            cap = CAP if kind == "capped" else None
            async with requestx.AsyncClient(max_body_bytes=cap) as client:
                with Case(coding, kind) as case:
                    if kind == "capped":
                        try:
                            await client.get(url)
                            case.report["outcome"] = "no exception"
                        except requestx.ResponseTooLarge as exc:
                            case.report["outcome"] = type(exc).__name__
                    else:
                        size = CHUNK_SIZE if kind == "chunked" else None
                        async with client.stream("GET", url) as response:
                            async for data in response.aiter_bytes(size):
                                if case.chunk(data):
                                    break
                        case.report["outcome"] = "abandoned"
                case.report["next_status"] = (await client.get(ok_url)).status_code
            reports.append(case.report)
    return reports


def main(argv: list[str]) -> None:
    mode, base, ok_url, *codings = argv
    if mode == "blocking":
        reports = run_blocking(base, ok_url, codings)
    elif mode == "asyncio":
        reports = asyncio.run(run_async(base, ok_url, codings))
    elif mode == "trio":
        import trio

        reports = trio.run(run_async, base, ok_url, codings)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    print(json.dumps(reports))


if __name__ == "__main__":
    main(sys.argv[1:])
