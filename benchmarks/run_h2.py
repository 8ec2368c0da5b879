#!/usr/bin/env python3
"""Measure requestx over HTTP/2 against a local nginx: throughput, connections, latency.

    python benchmarks/run_h2.py                         # all three parts, ~3 s per cell
    python benchmarks/run_h2.py --seconds 1 --parts A --protocols h2c --clients requestx,httpx
    python benchmarks/run_h2.py --parts B,C --json h2.json

nginx serves the benchmark's routes over TLS with ALPN h2 (a certificate from a CA made at
start-up, which the clients trust) and over cleartext HTTP/2 with prior knowledge (h2c).

A (throughput): 64 tasks share one async client on asyncio, looping over GET /json100 decoded
  with the client's json(); requestx, pyreqwest and httpx, over h2 and h2c, each cell in a fresh
  process. req/s, CPU us/request, the connections nginx accepted during the cell, and requestx's
  ratios to pyreqwest and httpx next to the issue's targets (h2 >= 1.2x pyreqwest and >= 10x
  httpx; h2c >= 1.2x pyreqwest). With --repeats N every cell runs once in each of N rounds,
  the order rotated each round; a row then holds the medians and the spread of its runs.
B (connections): requestx over h2, 10,000 requests from 64 tasks on one AsyncClient: the
  connections nginx accepted (target: 1).
C (latency): a blocking requestx.Client over h2c makes 10,000 GETs one after the other (after
  500 unmeasured): min, p50, p95, p99, p99.9, max in us; next to h2load -c 1 -m 1 (nghttp2's C
  load generator) on the same URL, which reports min, max, mean and sd but no percentiles.

Every response is checked to be HTTP/2. See benchmarks/README.md.
Exit status: 0 when every measurement ran, 1 when one failed, 2 on bad arguments or no nginx.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules, from any cwd

import h2_workload  # noqa: E402
from async_clients import H2_DRIVERS, H2_PROTOCOLS  # noqa: E402
from clients import ClientUnavailable  # noqa: E402
from nginx import Nginx  # noqa: E402
from run_async import CELL_SLACK, measured_cells, run_process  # noqa: E402
from run_sync import _csv, _version, add_ratios, start_nginx  # noqa: E402

PARTS = ("A", "B", "C")
BASELINES = ("pyreqwest", "httpx")
# The targets for requestx's req/s, as ratios to a baseline's on the same protocol.
TARGETS = (("h2", "pyreqwest", 1.2), ("h2", "httpx", 10.0), ("h2c", "pyreqwest", 1.2))
TARGET_CONNECTIONS = 1  # part B
H2LOAD_INSTALL = "apt-get install -y nghttp2-client"
H2LOAD_SLACK = 60.0  # seconds, on top of 10 ms a request, before h2load is killed
LATENCY_KEYS = ("min", "p50", "p95", "p99", "p99.9", "max", "mean", "sd")


def _parts(value: str) -> list[str]:
    return _csv(value.upper(), list(PARTS), "part")


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value}") from None
    if not 1 <= n <= 10_000_000:
        raise argparse.ArgumentTypeError("must be in [1, 10000000]")
    return n


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--seconds", type=float, default=3.0, metavar="S", help="part A: measured time per cell (3)"
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.5,
        metavar="S",
        help="part A: warm-up time before each (0.5)",
    )
    parser.add_argument(
        "--parts",
        metavar="LIST",
        type=_parts,
        default=list(PARTS),
        help="comma-separated subset of A,B,C (throughput, connections, latency)",
    )
    parser.add_argument(
        "--clients",
        metavar="LIST",
        type=lambda v: _csv(v, list(H2_DRIVERS), "client"),
        default=list(H2_DRIVERS),
        help=f"part A: comma-separated subset of {','.join(H2_DRIVERS)}",
    )
    parser.add_argument(
        "--protocols",
        metavar="LIST",
        type=lambda v: _csv(v, list(H2_PROTOCOLS), "protocol"),
        default=list(H2_PROTOCOLS),
        help="part A: comma-separated subset of h2 (TLS),h2c (cleartext)",
    )
    parser.add_argument(
        "--repeats",
        type=_positive,
        default=1,
        metavar="N",
        help="part A: interleaved rounds, each cell once a round in rotated order; rows carry"
        " the medians (1)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive,
        default=64,
        metavar="N",
        help="tasks sharing the client, A and B (64)",
    )
    parser.add_argument(
        "--requests", type=_positive, default=10_000, metavar="N", help="part B (10000)"
    )
    parser.add_argument(
        "--sequential",
        type=_positive,
        default=10_000,
        metavar="N",
        help="part C: measured requests (10000)",
    )
    parser.add_argument(
        "--sequential-warmup",
        metavar="N",
        type=int,
        default=500,
        help="part C: requests before the measured ones (500)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 600 or not 0 <= args.warmup <= 60:
        parser.error("--seconds must be in (0, 600] and --warmup in [0, 60]")
    if args.repeats > 50:
        parser.error("--repeats must be in [1, 50]")
    if args.concurrency > 1000 or args.sequential_warmup < 0:
        parser.error("--concurrency must be in [1, 1000] and --sequential-warmup >= 0")
    return args


def _command_version(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return "-"
    return (done.stdout.strip() or done.stderr.strip() or "-").splitlines()[0]


def environment(server: Nginx) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "server": f"nginx {server.version()} (worker_processes 1) on 127.0.0.1",
        "request": f"GET {h2_workload.PATH} (100-byte JSON), HTTP/2",
        "versions": {name: _version(name) for name in (*H2_DRIVERS, "h2")},
        "libcurl": _command_version(["curl-config", "--version"]),
        "h2load": _command_version(["h2load", "--version"]) if shutil.which("h2load") else "-",
    }


def available(clients: list[str]) -> tuple[list[str], dict[str, str]]:
    usable, skipped = [], {}
    for name in clients:
        try:
            H2_DRIVERS[name].check()
            usable.append(name)
        except ClientUnavailable as exc:
            skipped[name] = str(exc)
    return usable, skipped


def _script() -> str:
    return str(Path(h2_workload.__file__).resolve())


def _accepted(server: Nginx) -> int | None:
    try:
        return server.accepted_connections()
    except (OSError, RuntimeError):
        return None


def _counted(server: Nginx, command: list[str], limit: float) -> tuple[dict[str, Any], int | None]:
    """Run a measuring process; its result (or {"error": ...}) and the connections nginx
    accepted while it ran (None if the status could not be read)."""
    before = _accepted(server)
    result, why = run_process(command, limit)
    after = _accepted(server)
    connections = None if before is None or after is None else after - before
    return (result if result is not None else {"error": why}), connections


def _rates(result: dict[str, Any]) -> dict[str, Any]:
    requests, secs, cpu = result["requests"], result["seconds"], result["cpu_seconds"]
    return {
        "requests": requests,
        "seconds": round(secs, 4),
        "cpu_seconds": round(cpu, 4),
        "requests_per_second": requests / secs if secs else 0.0,
        "cpu_us_per_request": cpu * 1e6 / requests if requests else 0.0,
    }


# --- part A: throughput -------------------------------------------------------------------------


def throughput_cell(
    server: Nginx, client: str, protocol: str, concurrency: int, seconds: float, warmup: float
) -> dict[str, Any]:
    base_url = server.tls_url if protocol == "h2" else server.h2c_url
    ca = server.ca_file if protocol == "h2" else "-"
    command = [sys.executable, _script(), "throughput", client, protocol, base_url, ca]
    command += [str(concurrency), repr(seconds), repr(warmup)]
    result, connections = _counted(server, command, seconds + warmup + CELL_SLACK)
    row: dict[str, Any] = {"protocol": protocol, "client": client, "concurrency": concurrency}
    if "requests" not in result:
        return {**row, "error": result["error"], "connections": connections}
    return {**row, **_rates(result), "connections": connections, "error": result["error"]}


def median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One cell's row from its runs: the median req/s and CPU us/request of the runs that
    measured (each median on its own), the most connections any run opened, half the spread
    of req/s between the lowest and the highest run as a share of the median, and every run.
    The first error stands when no run measured."""
    ok = [r for r in runs if not r.get("error") and r.get("requests")]
    if not ok:
        return {**runs[0], "runs": runs}
    rps = statistics.median(r["requests_per_second"] for r in ok)
    rates = [r["requests_per_second"] for r in ok]
    counted = [r["connections"] for r in ok if r["connections"] is not None]
    return {
        **ok[0],
        "requests": sum(r["requests"] for r in ok),
        "seconds": round(sum(r["seconds"] for r in ok), 4),
        "cpu_seconds": round(sum(r["cpu_seconds"] for r in ok), 4),
        "requests_per_second": rps,
        "cpu_us_per_request": statistics.median(r["cpu_us_per_request"] for r in ok),
        "spread": (max(rates) - min(rates)) / 2 / rps if rps else 0.0,
        "connections": max(counted) if counted else None,
        "failed_runs": len(runs) - len(ok),
        "error": None,
        "runs": runs,
    }


def check_targets(rows: list[dict[str, Any]], protocols: list[str]) -> list[dict[str, Any]]:
    """requestx's req/s ratio against each of the issue's targets that this run can judge."""
    by_protocol = {r["protocol"]: r for r in rows if r["client"] == "requestx"}
    out = []
    for protocol, baseline, target in TARGETS:
        if protocol not in protocols:
            continue
        vs = (by_protocol.get(protocol) or {}).get(f"vs_{baseline}")
        ratio = vs["rps"] if vs else None
        out.append(
            {
                "protocol": protocol,
                "baseline": baseline,
                "target": target,
                "ratio": ratio,
                "met": None if ratio is None else ratio >= target,
            }
        )
    return out


_WIDTHS = (8, 10, 9, 11, 6, 8, 8, 8, 8)


def _line(cells: tuple[str, ...]) -> str:
    w = _WIDTHS
    left = f"{cells[0]:<{w[0]}} {cells[1]:<{w[1]}}"
    return left + "".join(f"{c:>{width + 1}}" for c, width in zip(cells[2:], w[2:]))


def render_throughput(rows: list[dict[str, Any]], targets: list[dict[str, Any]]) -> str:
    header = ("protocol", "client", "req/s", "CPU us/req", "conns", *("req/s", "CPU") * 2)
    indent = len(_line(header[:5]))
    group = " " * indent + "".join(f" {' vs ' + b + ' ':-^17}" for b in BASELINES)
    lines = [group, _line(header), _line(tuple("-" * w for w in _WIDTHS))]
    previous = None
    for row in rows:
        if previous is not None and row["protocol"] != previous:
            lines.append("")
        previous = row["protocol"]
        start = (row["protocol"], row["client"])
        if row.get("error"):
            lines.append(_line(start) + "  error: " + row["error"][:100])
            if not row.get("requests"):
                continue
        line = _line((*start, *measured_cells(row, BASELINES)))
        if len(row.get("runs", ())) > 1:
            line += f"  ±{row['spread'] * 100:.0f}% over {len(row['runs'])} runs"
            if row["failed_runs"]:
                line += f", {row['failed_runs']} failed: {row['runs'][0].get('error') or '?'}"
        lines.append(line)
    if targets:
        lines += ["", "targets (issue 6), requestx's req/s over the baseline's:"]
        for t in targets:
            ratio = "-" if t["ratio"] is None else f"{t['ratio']:.2f}x"
            verdict = {None: "not measured", True: "met", False: "NOT met"}[t["met"]]
            want = f">= {t['target']:g}x"
            vs = f"{t['protocol']:<4} vs {t['baseline']:<10}"
            lines.append(f"  {vs} {ratio:>8}  target {want:<8} {verdict}")
    return "\n".join(lines)


# --- part B: connections ------------------------------------------------------------------------


def connections_run(server: Nginx, requests: int, concurrency: int) -> dict[str, Any]:
    command = [sys.executable, _script(), "count", server.tls_url, server.ca_file]
    command += [str(requests), str(concurrency)]
    result, connections = _counted(server, command, h2_workload.COUNT_TIMEOUT + CELL_SLACK)
    row: dict[str, Any] = {"client": "requestx", "protocol": "h2", "concurrency": concurrency}
    row["connections"] = connections
    if "requests" not in result:
        return {**row, "error": result["error"]}
    row.update(_rates(result))
    row["error"] = result["error"]
    if row["error"] is None and row["requests"] != requests:
        row["error"] = f"{row['requests']} of {requests} requests done"
    row["target_connections"] = TARGET_CONNECTIONS
    row["met"] = None if connections is None else connections <= TARGET_CONNECTIONS
    return row


def render_connections(row: dict[str, Any], requests: int) -> str:
    head = (
        f"requestx.AsyncClient(http2=True) over TLS, {requests:,} requests from "
        f"{row['concurrency']} tasks:"
    )
    if row.get("error"):
        return f"{head} error: {row['error']}"
    conns = row["connections"]
    verdict = {None: "", True: "met", False: "NOT met"}[row["met"]]
    return (
        f"{head} nginx accepted {'?' if conns is None else conns} connection(s)"
        f" (target: {TARGET_CONNECTIONS}) {verdict}\n"
        f"  {row['seconds']:.2f} s, {row['requests_per_second']:,.0f} req/s,"
        f" {row['cpu_us_per_request']:,.1f} CPU us/req (client creation and connect included)"
    )


# --- part C: sequential latency -----------------------------------------------------------------


def latency_run(server: Nginx, requests: int, warmup: int) -> dict[str, Any]:
    command = [sys.executable, _script(), "latency", server.h2c_url, str(requests), str(warmup)]
    limit = H2LOAD_SLACK + (requests + warmup) / 100
    result, connections = _counted(server, command, limit)
    row: dict[str, Any] = {"tool": "requestx.Client(http1=False, http2=True)"}
    row["connections"] = connections
    if "requests" not in result:
        return {**row, "error": result["error"]}
    return {
        **row,
        **_rates(result),
        "latency_us": result.get("latency_us"),
        "error": result["error"],
    }


_DURATION = re.compile(r"([\d.]+)(us|ms|s)$")
_UNITS = {"us": 1.0, "ms": 1e3, "s": 1e6}


def _us(text: str) -> float:
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_h2load(output: str, requests: int) -> dict[str, Any]:
    """What h2load prints about its requests: "time for request" min/max/mean/sd (rounded to
    its display units) and the share within mean +/- sd, and its req/s. Raises ValueError when
    the output lacks them or requests failed."""
    done = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded", output)
    if done is None or int(done.group(2)) != requests:
        raise ValueError("not every request succeeded: " + (done.group(0) if done else "?"))
    protocol = re.search(r"Application protocol: (\S+)", output)
    if protocol is None or protocol.group(1) != "h2c":
        raise ValueError(f"h2load spoke {protocol.group(1) if protocol else '?'}, not h2c")
    times = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)%", output)
    rate = re.search(r"finished in \S+, ([\d.]+) req/s", output)
    if times is None or rate is None:
        raise ValueError("no 'time for request' or 'finished in' line")
    low, high, mean, sd = (_us(times.group(i)) for i in range(1, 5))
    return {
        "requests": requests,
        "requests_per_second": float(rate.group(1)),
        "latency_us": {"min": low, "max": high, "mean": mean, "sd": sd},
        "within_one_sd_percent": float(times.group(5)),
    }


def h2load_run(server: Nginx, requests: int) -> dict[str, Any] | None:
    """h2load -n N -c 1 -m 1 on the h2c URL; None when h2load is not installed."""
    h2load = shutil.which("h2load")
    if h2load is None:
        return None
    url = server.h2c_url + h2_workload.PATH
    command = [h2load, "-n", str(requests), "-c", "1", "-m", "1", url]
    row: dict[str, Any] = {"tool": f"h2load -n {requests} -c 1 -m 1", "error": None}
    before = _accepted(server)
    limit = H2LOAD_SLACK + requests / 100
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return {**row, "error": f"killed: no result after {limit:g} s"}
    after = _accepted(server)
    row["connections"] = None if before is None or after is None else after - before
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [""])[-1]
        return {**row, "error": f"h2load exit status {done.returncode}: {last}"}
    try:
        row.update(parse_h2load(done.stdout, requests))
    except ValueError as exc:
        row["error"] = f"h2load: {exc}"
    return row


def render_latency(rows: list[dict[str, Any]], requests: int, warmup: int) -> str:
    name_width = 24
    head = f"{'latency (us)':<{name_width}}" + "".join(f"{k:>9}" for k in LATENCY_KEYS)
    head += f"{'req/s':>9}{'conns':>7}"
    lines = [
        f"{requests:,} sequential GET {h2_workload.PATH} on one h2c connection"
        f" (requestx after {warmup:,} unmeasured; h2load counts from its first request):",
        head,
    ]
    for row in rows:
        name = "requestx.Client" if row["tool"].startswith("requestx") else "h2load -c 1 -m 1"
        if row.get("error"):
            lines.append(f"{name:<{name_width}}error: {row['error'][:100]}")
            continue
        stats = row.get("latency_us") or {}
        values = "".join(f"{stats[k]:>9,.1f}" if k in stats else f"{'-':>9}" for k in LATENCY_KEYS)
        conns = row.get("connections")
        tail = f"{row['requests_per_second']:>9,.0f}{'-' if conns is None else conns:>7}"
        lines.append(f"{name:<{name_width}}{values}{tail}")
    return "\n".join(lines)


# --- main ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Turn SIGTERM into a normal exit so that nginx is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    needed = list(args.clients) if "A" in args.parts else []
    if set(args.parts) & {"B", "C"}:
        needed.append("requestx")  # parts B and C measure requestx alone
    clients, skipped = available(list(dict.fromkeys(needed)))
    for name, reason in skipped.items():
        print(f"note: skipping {name}: {reason}", file=sys.stderr)
    part_a = [c for c in args.clients if c in clients] if "A" in args.parts else []
    parts = [p for p in args.parts if (part_a if p == "A" else "requestx" in clients)]
    if not parts:
        print("error: nothing to measure (requestx or every client missing)", file=sys.stderr)
        return 2
    if "C" in parts and shutil.which("h2load") is None:
        print(
            f"note: h2load not found, part C runs without it; install it with: {H2LOAD_INSTALL}",
            file=sys.stderr,
        )
    server = start_nginx(http2=True)
    if server is None:
        return 2
    out: dict[str, Any] = {"settings": vars(args), "skipped": skipped}
    rows: list[dict[str, Any]] = []
    part_b: dict[str, Any] | None = None
    part_c: list[dict[str, Any]] = []
    h2load_missing = False
    try:
        env = out["environment"] = environment(server)
        print(
            f"{env['server']}; Python {env['python']} on {env['cpus']} CPUs; parts "
            f"{','.join(parts)}; every measurement in its own process",
            file=sys.stderr,
        )
        if "A" in parts:
            print(
                f"A: {args.seconds:g} s per cell after {args.warmup:g} s warm-up, "
                f"{args.concurrency} tasks, {args.repeats} round(s)",
                file=sys.stderr,
            )
            cells = [(protocol, client) for protocol in args.protocols for client in part_a]
            runs: dict[tuple[str, str], list[dict[str, Any]]] = {cell: [] for cell in cells}
            for round_ in range(args.repeats):
                # Rotate the order so that no client always runs first (or right after the
                # same neighbour) in a round.
                shift = round_ % len(cells)
                for protocol, client in cells[shift:] + cells[:shift]:
                    label = f"  {protocol:<4} {client:<10}"
                    if args.repeats > 1:
                        label = f"  round {round_ + 1}/{args.repeats}" + label[1:]
                    print(label, end="", file=sys.stderr, flush=True)
                    row = throughput_cell(
                        server, client, protocol, args.concurrency, args.seconds, args.warmup
                    )
                    runs[(protocol, client)].append(row)
                    status = row["error"] or (
                        f"{row['requests_per_second']:,.0f} req/s, {row['connections']} conn(s)"
                    )
                    print(f" {status}", file=sys.stderr)
            rows = [median_row(runs[cell]) for cell in cells]
        if "B" in parts:
            print(f"B: {args.requests:,} requests over h2", end="", file=sys.stderr, flush=True)
            part_b = connections_run(server, args.requests, args.concurrency)
            print(f" {part_b['error'] or 'done'}", file=sys.stderr)
        if "C" in parts:
            print(f"C: {args.sequential:,} sequential requests", end="", file=sys.stderr)
            part_c.append(latency_run(server, args.sequential, args.sequential_warmup))
            print(f" {part_c[0]['error'] or 'done'}", end="", file=sys.stderr, flush=True)
            h2load = h2load_run(server, args.sequential)
            if h2load is None:
                h2load_missing = True
            else:
                part_c.append(h2load)
                print(f"; h2load {h2load['error'] or 'done'}", end="", file=sys.stderr)
            print(file=sys.stderr)
    finally:
        server.stop()

    failed = False
    if "A" in parts:
        add_ratios(rows, ("protocol",), BASELINES)
        targets = check_targets(rows, args.protocols) if "requestx" in part_a else []
        out["throughput"] = {"results": rows, "targets": targets}
        failed |= any(r["error"] or r.get("failed_runs") for r in rows)
        print()
        print(
            f"A. Throughput: GET {h2_workload.PATH} + json(), {args.concurrency} tasks on one"
            f" AsyncClient, asyncio, {args.seconds:g} s per cell"
        )
        print(render_throughput(rows, targets))
        print(
            "CPU = user+sys time of the cell's process (all its threads) per request; nginx"
            " excluded.\nconns = connections nginx accepted during the cell (warm-up included)."
        )
    if part_b is not None:
        out["connections"] = part_b
        failed |= bool(part_b["error"])
        print()
        print("B. Connections: " + render_connections(part_b, args.requests))
    if part_c:
        out["latency"] = part_c
        failed |= any(r["error"] for r in part_c)
        print()
        print("C. Latency: " + render_latency(part_c, args.sequential, args.sequential_warmup))
        if h2load_missing:
            print(f"h2load: not installed, column skipped; install it with: {H2LOAD_INSTALL}")
        else:
            print(
                "h2load reports min, max, mean and sd of 'time for request' (in its display"
                " units, e.g. 1.02ms), and no percentiles: p50, p95, p99 and p99.9 are '-'."
            )
        rx_row = part_c[0]
        if not rx_row.get("error"):
            print(f"requestx CPU: {rx_row['cpu_us_per_request']:,.1f} us/request")
    print()
    used = [c for c in H2_DRIVERS if c in clients]
    if "httpx" in used:
        used.append("h2")  # httpx's HTTP/2 implementation
    versions = [", ".join(f"{c} {env['versions'][c]}" for c in used)]
    versions += [env[tool] for tool in ("libcurl", "h2load") if env[tool] != "-"]
    print("versions: " + "; ".join(versions))
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"results written to {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
