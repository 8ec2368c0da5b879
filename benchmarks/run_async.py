#!/usr/bin/env python3
"""Compare async HTTP clients against a local nginx, side by side, in one run.

    python benchmarks/run_async.py                      # everything, ~2 s per measurement
    python benchmarks/run_async.py --seconds 1 --clients requestx,aiohttp --loops uvloop
    python benchmarks/run_async.py --concurrency 1,16 --json results.json

N tasks share one client and loop over a keep-alive GET of a 100-byte JSON document, decoding
it with the client's json(). For each event loop, N and client: requests per second, CPU
microseconds per request (the measuring process, all threads), and both as ratios to aiohttp,
pyreqwest and httpx on the same loop. See benchmarks/README.md.
Exit status: 0 when every measurement ran, 1 when one failed, 2 on bad arguments or no nginx.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

import async_workload  # noqa: E402
from async_clients import ALL_LOOPS, DRIVERS, ClientUnavailable  # noqa: E402
from nginx import Nginx  # noqa: E402
from run_sync import _csv, _version, add_ratios, start_nginx  # noqa: E402

BASELINES = ("aiohttp", "pyreqwest", "httpx")
DEFAULT_CONCURRENCY = [1, 64, 256]
FLAT_LIMIT = 1.25  # CPU us/request max/min across concurrency levels still called "flat"
# A cell's process is killed after seconds + warm-up + this (its own limits come first).
CELL_SLACK = (
    async_workload.WARMUP_GRACE + async_workload.DRAIN_TIMEOUT + 2 * async_workload.OPEN_TIMEOUT
)


def _concurrency(value: str) -> list[int]:
    try:
        levels = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of integers: {value}") from None
    if not levels or not all(1 <= n <= 1000 for n in levels):
        raise argparse.ArgumentTypeError("concurrency levels must be in [1, 1000]")
    return levels


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="measured time per cell (2)")
    parser.add_argument("--warmup", type=float, default=0.5, help="warm-up time before each (0.5)")
    parser.add_argument(
        "--concurrency",
        type=_concurrency,
        default=DEFAULT_CONCURRENCY,
        help="comma-separated numbers of tasks sharing the client (1,64,256)",
    )
    parser.add_argument(
        "--clients",
        type=lambda v: _csv(v, list(DRIVERS), "client"),
        default=list(DRIVERS),
        help=f"comma-separated subset of {','.join(DRIVERS)}",
    )
    parser.add_argument(
        "--loops",
        type=lambda v: _csv(v, list(ALL_LOOPS), "loop"),
        default=list(ALL_LOOPS),
        help=f"comma-separated subset of {','.join(ALL_LOOPS)}",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600 or not 0 <= args.warmup <= 60:
        parser.error("--seconds must be in (0, 600] and --warmup in [0, 60]")
    return args


def environment(server: Nginx) -> dict[str, Any]:
    packages = [*DRIVERS, "uvloop", "trio", "anyio"]
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "server": f"nginx {server.version()} (worker_processes 1) on 127.0.0.1",
        "request": f"GET {async_workload.PATH} (100-byte JSON), keep-alive, body decoded",
        "versions": {name: _version(name) for name in packages},
    }


def available(clients: list[str], loops: list[str]) -> tuple[list[str], list[str], dict[str, str]]:
    """The clients and loops usable here, and why the others are not."""
    skipped: dict[str, str] = {}
    usable_clients = []
    for name in clients:
        try:
            DRIVERS[name].check()
            usable_clients.append(name)
        except ClientUnavailable as exc:
            skipped[name] = str(exc)
    usable_loops = []
    for loop in loops:
        reason = async_workload.loop_unavailable(loop)
        if reason is None:
            usable_loops.append(loop)
        else:
            skipped[loop] = reason
    return usable_clients, usable_loops, skipped


def run_process(command: list[str], limit: float) -> tuple[dict[str, Any] | None, str]:
    """Run a measuring process: the JSON object its last line of output holds, or None and why
    there is none (killed after `limit` seconds, crashed, failed: with its last stderr line)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return None, f"killed: no result after {limit:g} s"
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        if done.returncode < 0:
            why = f"crashed ({signal.Signals(-done.returncode).name})"
        else:
            why = f"exit status {done.returncode}"
        last = (done.stderr.strip().splitlines() or [""])[-1]
        return None, f"{why}: {last}" if last else why
    try:
        return json.loads(lines[-1]), ""
    except ValueError:
        return None, f"not a result: {lines[-1][:200]}"


def run_cell(
    client: str, loop: str, concurrency: int, base_url: str, seconds: float, warmup: float
) -> dict[str, Any]:
    """One measurement in a fresh process (async_workload.py); any failure becomes `error`."""
    script = Path(async_workload.__file__).resolve()
    command = [sys.executable, str(script), client, loop, str(concurrency), base_url]
    command += [repr(seconds), repr(warmup)]
    limit = seconds + warmup + CELL_SLACK
    row: dict[str, Any] = {"client": client, "loop": loop, "concurrency": concurrency}
    result, why = run_process(command, limit)
    if result is None:
        return {**row, "error": why}
    requests, secs, cpu = result["requests"], result["seconds"], result["cpu_seconds"]
    return {
        **row,
        "requests": requests,
        "seconds": round(secs, 4),
        "cpu_seconds": round(cpu, 4),
        "requests_per_second": requests / secs if secs else 0.0,
        "cpu_us_per_request": cpu * 1e6 / requests if requests else 0.0,
        "connections": result["connections"],
        "loop_impl": result["loop_impl"],
        "error": result["error"],
    }


def flatness(rows: list[dict[str, Any]], levels: list[int]) -> list[dict[str, Any]]:
    """Per client and loop: CPU us/request at each concurrency level, and max/min."""
    out = []
    for client in dict.fromkeys(r["client"] for r in rows):
        for loop in dict.fromkeys(r["loop"] for r in rows):
            cells = {
                r["concurrency"]: r for r in rows if r["client"] == client and r["loop"] == loop
            }
            if not cells:
                continue
            cpu = {n: cells[n].get("cpu_us_per_request") for n in levels if n in cells}
            good = [v for n, v in cpu.items() if v and not cells[n].get("error")]
            complete = len(good) == len(levels) > 1
            ratio = max(good) / min(good) if complete else None
            out.append(
                {
                    "client": client,
                    "loop": loop,
                    "cpu_us_per_request": cpu,
                    "max_over_min": ratio,
                    # the direction: above 1 when a request costs more with more tasks
                    "last_over_first": good[-1] / good[0] if complete else None,
                    "flat": None if ratio is None else ratio <= FLAT_LIMIT,
                }
            )
    return out


_WIDTHS = (8, 5, 10, 9, 11, 6, 8, 8, 8, 8, 8, 8)


def _line(cells: tuple[str, ...]) -> str:
    w = _WIDTHS
    left = f"{cells[0]:<{w[0]}} {cells[1]:>{w[1]}}  {cells[2]:<{w[2]}}"
    return left + "".join(f"{c:>{width + 1}}" for c, width in zip(cells[3:], w[3:]))


def render(rows: list[dict[str, Any]]) -> str:
    """The aligned table; ratios are this row's value divided by the baseline's."""
    header = ("loop", "c", "client", "req/s", "CPU us/req", "conns", *("req/s", "CPU") * 3)
    indent = len(_line(header[:6]))
    group = " " * indent + "".join(f" {' vs ' + b + ' ':-^17}" for b in BASELINES)
    lines = [group, _line(header), _line(tuple("-" * w for w in _WIDTHS))]
    previous = None
    for row in rows:
        cell = (row["loop"], row["concurrency"])
        if previous is not None and cell != previous:
            lines.append("")
        previous = cell
        start = (row["loop"], f"c={row['concurrency']}", row["client"])
        if row.get("error"):
            lines.append(_line(start)[: sum(_WIDTHS[:3]) + 4] + " error: " + row["error"][:90])
            if not row.get("requests"):
                continue
        lines.append(_line((*start, *measured_cells(row, BASELINES))))
    return "\n".join(lines)


def measured_cells(row: dict[str, Any], baselines: tuple[str, ...]) -> tuple[str, ...]:
    """A measured row's table cells: req/s, CPU us/request, connections, then req/s and CPU
    as ratios to each baseline ("-" where there is none). Shared with run_h2.py."""
    conns = row.get("connections")
    ratios: list[str] = []
    for baseline in baselines:
        vs = row.get(f"vs_{baseline}") or {}
        ratios += [f"{vs[k]:.2f}x" if k in vs else "-" for k in ("rps", "cpu")]
    return (
        f"{row['requests_per_second']:,.0f}",
        f"{row['cpu_us_per_request']:,.1f}",
        "-" if conns is None else str(conns),
        *ratios,
    )


def render_flatness(flat: list[dict[str, Any]], levels: list[int]) -> str:
    head = "".join(f"{'c=' + str(n):>9}" for n in levels)
    trend = f"c={levels[-1]}/c={levels[0]}"
    lines = [
        f"CPU us/request across concurrency (flat = max/min <= {FLAT_LIMIT:.2f}x):",
        f"  {'client':<10} {'loop':<8}{head}  {'max/min':>8}  {trend:>11}",
    ]
    for item in sorted(flat, key=lambda f: f["client"] != "requestx"):
        cpu = item["cpu_us_per_request"]
        values = "".join(f"{cpu[n]:>9.1f}" if cpu.get(n) else f"{'-':>9}" for n in levels)
        ratio, last = item["max_over_min"], item["last_over_first"]
        if ratio is None:
            tail = f"{'-':>8}  {'-':>11}"
        else:
            verdict = "flat" if item["flat"] else "NOT flat"
            tail = f"{ratio:>7.2f}x  {last:>10.2f}x  {verdict}"
        lines.append(f"  {item['client']:<10} {item['loop']:<8}{values}  {tail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Turn SIGTERM into a normal exit so that nginx is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    clients, loops, skipped = available(args.clients, args.loops)
    for name, reason in skipped.items():
        print(f"note: skipping {name}: {reason}", file=sys.stderr)
    cells = [
        (loop, n, client)
        for loop in loops
        for n in args.concurrency
        for client in clients
        if loop in DRIVERS[client].loops
    ]
    if not cells:
        print("error: no client and event loop to measure", file=sys.stderr)
        return 2
    server = start_nginx()
    if server is None:
        return 2
    rows: list[dict[str, Any]] = []
    try:
        env = environment(server)
        print(
            f"{env['server']}; Python {env['python']} on {env['cpus']} CPUs; "
            f"{args.seconds:g} s per measurement after {args.warmup:g} s warm-up; "
            f"{len(cells)} measurements, each in its own process",
            file=sys.stderr,
        )
        for loop, n, client in cells:
            print(f"  {loop:<8} c={n:<4} {client:<10}", end="", file=sys.stderr, flush=True)
            row = run_cell(client, loop, n, server.url, args.seconds, args.warmup)
            rows.append(row)
            status = row["error"] or f"{row['requests_per_second']:,.0f} req/s"
            print(f" {status}", file=sys.stderr)
    finally:
        server.stop()
    add_ratios(rows, ("loop", "concurrency"), BASELINES)
    flat = flatness(rows, args.concurrency)
    print()
    print(render(rows))
    print(
        "\nCPU = user+sys time of the measuring process (all its threads) per request; nginx"
        " excluded.\nconns = connections nginx had open right after the measurement."
    )
    print()
    print(render_flatness(flat, args.concurrency))
    print()
    used = [*clients, *(lp for lp in ("uvloop", "trio") if lp in loops), "anyio"]
    print("versions: " + ", ".join(f"{c} {env['versions'][c]}" for c in used))
    only = [c for c in clients if set(DRIVERS[c].loops) != set(ALL_LOOPS)]
    if only and "trio" in loops:
        print(f"not on trio (asyncio only): {', '.join(only)}")
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")
    if args.json:
        out = {
            "environment": env,
            "settings": vars(args),
            "skipped": skipped,
            "results": rows,
            "cpu_flatness": [
                {**f, "cpu_us_per_request": {str(k): v for k, v in f["cpu_us_per_request"].items()}}
                for f in flat
            ],
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"results written to {args.json}")
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
