#!/usr/bin/env python3
"""Compare synchronous HTTP clients against a local nginx, side by side, in one run.

    python benchmarks/run_sync.py                       # everything, ~3 s per measurement
    python benchmarks/run_sync.py --seconds 1 --clients httpx,pycurl --scenarios get,post
    python benchmarks/run_sync.py --json results.json

For each scenario and client: requests per second, CPU microseconds per request (this process,
all threads), and both as ratios to httpx and to pycurl. See benchmarks/README.md.
Exit status: 0 when every measurement ran, 1 when one failed, 2 on bad arguments or no nginx.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

from clients import DRIVERS, ClientUnavailable  # noqa: E402
from nginx import Nginx  # noqa: E402
from workload import SCENARIO_NAMES, SCENARIOS, Measurement, measure  # noqa: E402

BASELINES = ("httpx", "pycurl")


def _csv(value: str, allowed: list[str], what: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})"
        )
    return names


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="measured time per client and scenario (3)"
    )
    parser.add_argument("--warmup", type=float, default=0.5, help="warm-up time before each (0.5)")
    parser.add_argument(
        "--clients",
        type=lambda v: _csv(v, list(DRIVERS), "client"),
        default=list(DRIVERS),
        help=f"comma-separated subset of {','.join(DRIVERS)}",
    )
    parser.add_argument(
        "--scenarios",
        type=lambda v: _csv(v, SCENARIO_NAMES, "scenario"),
        default=SCENARIO_NAMES,
        help=f"comma-separated subset of {','.join(SCENARIO_NAMES)}",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600 or not 0 <= args.warmup <= 60:
        parser.error("--seconds must be in (0, 600] and --warmup in [0, 60]")
    return args


# Clients whose distribution is named otherwise than the module: requestx is published as
# requestx-curl (the package index's "requestx" is another project).
_DISTRIBUTIONS = {"requestx": "requestx-curl"}


def _version(dist: str) -> str:
    try:
        return metadata.version(_DISTRIBUTIONS.get(dist, dist))
    except metadata.PackageNotFoundError:
        return "-"


def environment(server: Nginx) -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "server": f"nginx {server.version()} (worker_processes 1) on 127.0.0.1",
        "versions": {name: _version(name) for name in DRIVERS},
    }
    try:
        import pycurl

        # pycurl wheels bundle their own libcurl, which may differ from the system's.
        info["pycurl_libcurl"] = pycurl.version
    except ImportError:
        pass
    return info


def available_clients(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """Clients that can be constructed here, and why the others cannot."""
    usable, skipped = [], {}
    for name in names:
        try:
            DRIVERS[name]().close()
            usable.append(name)
        except ClientUnavailable as exc:
            skipped[name] = str(exc)
    return usable, skipped


def render(rows: list[dict[str, Any]]) -> str:
    """The aligned table; ratios are this row's value divided by the baseline's."""
    header = ("scenario", "client", "req/s", "CPU us/req", "req/s", "CPU", "req/s", "CPU")
    group = f"{'':>48}{'--- vs httpx ---':>18}{'--- vs pycurl ---':>19}"
    widths = (24, 9, 9, 11, 8, 8, 9, 8)
    lines = [group, _line(header, widths), _line(tuple("-" * w for w in widths), widths)]
    previous = None
    for row in rows:
        if previous is not None and row["scenario"] != previous:
            lines.append("")
        previous = row["scenario"]
        if row.get("error"):
            cells = (row["label"], row["client"], "error: " + row["error"][:70])
            lines.append(f"{cells[0]:<24}  {cells[1]:<9}  {cells[2]}")
            continue
        rps, cpu = row["requests_per_second"], row["cpu_us_per_request"]
        base = {b: row.get(f"vs_{b}") or {} for b in BASELINES}
        cells = (
            row["label"],
            row["client"],
            f"{rps:,.0f}",
            f"{cpu:,.1f}",
            *(
                f"{v:.2f}x" if v else "-"
                for b in BASELINES
                for v in (base[b].get("rps"), base[b].get("cpu"))
            ),
        )
        lines.append(_line(cells, widths))
    return "\n".join(lines)


def _line(cells: tuple[str, ...], widths: tuple[int, ...]) -> str:
    left = f"{cells[0]:<{widths[0]}}  {cells[1]:<{widths[1]}}"
    right = "".join(f"{c:>{w + 1}}" for c, w in zip(cells[2:], widths[2:]))
    return left + right


def add_ratios(
    rows: list[dict[str, Any]], cell: tuple[str, ...], baselines: tuple[str, ...]
) -> None:
    """vs_<baseline>: {"rps": mine/theirs (above 1 = faster), "cpu": mine/theirs (below 1 =
    cheaper)}, against the baseline's row of the same cell (rows with equal values of the
    `cell` keys: scenario; loop and concurrency; protocol). Shared by the three runners."""

    def key(row: dict[str, Any], client: str) -> tuple[Any, ...]:
        return (*(row[k] for k in cell), client)

    ok = {key(r, r["client"]): r for r in rows if not r.get("error") and r.get("requests")}
    for row in rows:
        if key(row, row["client"]) not in ok:
            continue
        for baseline in baselines:
            base = ok.get(key(row, baseline))
            if base is None:
                continue
            row[f"vs_{baseline}"] = {
                "rps": row["requests_per_second"] / base["requests_per_second"],
                "cpu": row["cpu_us_per_request"] / base["cpu_us_per_request"],
            }


def _row(client: str, scenario: Any, m: Measurement) -> dict[str, Any]:
    return {
        "scenario": scenario.name,
        "label": scenario.label,
        "concurrency": scenario.concurrency,
        "client": client,
        "requests": m.requests,
        "seconds": round(m.seconds, 4),
        "cpu_seconds": round(m.cpu_seconds, 4),
        "requests_per_second": m.requests_per_second,
        "cpu_us_per_request": m.cpu_us_per_request,
        "error": m.error,
    }


def start_nginx(http2: bool = False) -> Nginx | None:
    """A started local nginx, or None after saying on stderr why there is none."""
    server = Nginx(http2=http2)
    try:
        server.start()
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    return server


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Turn SIGTERM into a normal exit so that nginx is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    clients, skipped = available_clients(args.clients)
    scenarios = [s for s in SCENARIOS if s.name in args.scenarios]
    for name, reason in skipped.items():
        print(f"note: skipping {name}: {reason}", file=sys.stderr)
    if not clients:
        print("error: no client to measure", file=sys.stderr)
        return 2
    server = start_nginx()
    if server is None:
        return 2
    rows: list[dict[str, Any]] = []
    try:
        env = environment(server)
        print(
            f"{env['server']}; Python {env['python']} on {env['cpus']} CPUs; "
            f"{args.seconds:g} s per measurement after {args.warmup:g} s warm-up",
            file=sys.stderr,
        )
        for scenario in scenarios:
            for client in clients:
                print(f"  {scenario.label:<24} {client:<9}", end="", file=sys.stderr, flush=True)
                m = measure(DRIVERS[client], scenario, server.url, args.seconds, args.warmup)
                rows.append(_row(client, scenario, m))
                status = m.error or f"{m.requests_per_second:,.0f} req/s"
                print(f" {status}", file=sys.stderr)
    finally:
        server.stop()
    add_ratios(rows, ("scenario",), BASELINES)
    print()
    print(render(rows))
    print("\nCPU = user+sys time of this process (all its threads) per request; nginx excluded.")
    print("versions: " + ", ".join(f"{c} {env['versions'][c]}" for c in clients))
    if "pycurl" in clients:
        print(f"pycurl: {env['pycurl_libcurl']}")
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")
    if args.json:
        out = {"environment": env, "settings": vars(args), "skipped": skipped, "results": rows}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"results written to {args.json}")
    return 1 if any(r["error"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
