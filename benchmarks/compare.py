"""
requestx side by side with the other Python HTTP clients, the way a user would compare them:
every client against the same local nginx, in one run, with a Markdown report, a JSON file of
every measurement and PNG charts.

    python benchmarks/compare.py                 the quick subset (about 4 minutes; every
                                                 client, fewer columns: see *_QUICK below)
    python benchmarks/compare.py --full          every scenario below (about 35 minutes)
    python benchmarks/compare.py --peers requestx,httpx,pycurl --repeats 5

Scenarios:
  sync-get    GET /get, 1 to 256 threads sharing one client (one per thread where the
              library is not thread-safe), with wrk at the same concurrency as the ceiling
  async-get   GET /json100 decoded with the client's json(), 1 to 256 tasks on one client,
              on asyncio, uvloop and trio (each client on the loops it supports)
  post-sweep  POST JSON bodies of 41 B to 999,911 B at c=1, answer decoded
  mixed       at c=1: GET /json1k decoded, POST a form and POST 1 KiB of JSON (answers
              decoded), a 1 MiB download as bytes, and 1 MiB of JSON decoded
  async-json1m  1 MiB of JSON decoded with json(), 10 tasks on one client, asyncio
  h2          HTTP/2 over TLS and h2c: 64 tasks on one connection (requestx, pyreqwest, httpx),
              and the latency of sequential requests (5,000 quick, 50,000 full) beside h2load:
              benchmarks/run_h2.py, run once in the project's environment
  loadgen     the load generator: `python -m requestx.bench` (its engines, and --client)
              against wrk, 200 connections on GET /get, interleaved rounds

Method: each measurement is one process (benchmarks/sync_cell.py, async_workload.py) in the
client's own virtual environment (benchmarks/peers.py); it warms up, then counts requests and
the CPU time of all its threads for --seconds. Repeats are interleaved: every client of a cell
runs once before any runs again, in an order rotated each round. The report gives medians, the
spread (lowest and highest run), CPU microseconds per request and the connections nginx
accepted during each run, ratios to the best peer and to wrk, and warns when the machine was
busy before the run started.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # sibling modules, from any cwd

from nginx import Nginx  # noqa: E402
from peers import PEERS, PeerMissing, python_for  # noqa: E402

CONCURRENCY_FULL = (1, 2, 4, 6, 8, 10, 64, 256)
CONCURRENCY_QUICK = (1, 10, 64)
# The quick subset (scripts/bench.sh, meant to take under 5 minutes): uvloop only where the
# issue's goals look at it, 64 tasks; asyncio at 1 and 64.
ASYNC_CONCURRENCY_QUICK = {"asyncio": (1, 64), "uvloop": (64,)}
PAYLOADS_FULL = (41, 963, 9_951, 99_905, 511_901, 999_911)
PAYLOADS_QUICK = (41, 9_951, 511_901)
LOOPS_FULL = ("asyncio", "uvloop", "trio")
LOOPS_QUICK = ("asyncio", "uvloop")
# Which loops each async client supports (benchmarks/async_clients.py says the same).
ASYNC_LOOPS = {
    "requestx": LOOPS_FULL,
    "httpx": LOOPS_FULL,
    "aiohttp": ("asyncio", "uvloop"),
    "pyreqwest": ("asyncio", "uvloop"),
    "curl_cffi": ("asyncio", "uvloop"),
    "niquests": ("asyncio", "uvloop"),
}
# The `mixed` group's columns, in this order (sync_cell.py's operations).
MIXED = ("json1k", "form", "post:1024", "download", "json1m")
MIXED_QUICK = ("json1k", "json1m")  # POSTs are the payload sweep's, in the quick subset
MIXED_TITLES = {
    "json1k": "GET json 1 KiB",
    "form": "POST form",
    "post:1024": "POST json 1 KiB",
    "download": "GET 1 MiB bytes",
    "json1m": "GET json 1 MiB",
}
# requestx set up another way, shown beside requestx but not counted among its peers.
OURS_BESIDE = ("requestx-per-thread",)
CELL_TIMEOUT_EXTRA = 90.0  # seconds a cell may take beyond its warm-up and measurement


@dataclass(frozen=True)
class Cell:
    """One measurement's setting; `key` names the column it belongs to in its group."""

    group: str  # sync-get, async-get-<loop>, post-sweep, mixed, async-json1m
    key: int | str  # concurrency, payload bytes, or (mixed) the operation
    client: str
    kind: str  # sync or async
    operation: str  # sync: sync_cell.py's operation; async: the loop
    concurrency: int
    path: str = "/json100"  # async: what every request GETs


@dataclass
class Outcome:
    cell: Cell
    runs: list[dict[str, Any]] = field(default_factory=list)

    def ok_runs(self) -> list[dict[str, Any]]:
        return [run for run in self.runs if not run.get("error") and run.get("requests")]

    def rps(self) -> list[float]:
        return [run["requests"] / run["seconds"] for run in self.ok_runs()]

    def cpu_us(self) -> list[float]:
        return [run["cpu_seconds"] * 1e6 / run["requests"] for run in self.ok_runs()]


def plan(full: bool, clients: list[str], groups: list[str]) -> list[Cell]:
    concurrency = CONCURRENCY_FULL if full else CONCURRENCY_QUICK
    cells: list[Cell] = []
    sync_clients = [c for c in clients if PEERS[c].sync]
    async_clients = [c for c in clients if PEERS[c].asynchronous]
    if "sync-get" in groups:
        for n in concurrency:
            cells += [Cell("sync-get", n, c, "sync", "get", n) for c in sync_clients]
    # A client per thread differs from the shared one only when there are several threads.
    sync_clients = [c for c in sync_clients if c not in OURS_BESIDE]
    if "async-get" in groups:
        for loop in LOOPS_FULL if full else LOOPS_QUICK:
            for n in concurrency if full else ASYNC_CONCURRENCY_QUICK[loop]:
                cells += [
                    Cell(f"async-get-{loop}", n, c, "async", loop, n)
                    for c in async_clients
                    if loop in ASYNC_LOOPS.get(c, ())
                ]
    if "post-sweep" in groups:
        for size in PAYLOADS_FULL if full else PAYLOADS_QUICK:
            cells += [Cell("post-sweep", size, c, "sync", f"post:{size}", 1) for c in sync_clients]
    if "mixed" in groups:
        for operation in MIXED if full else MIXED_QUICK:
            cells += [Cell("mixed", operation, c, "sync", operation, 1) for c in sync_clients]
    if "async-json1m" in groups:
        cells += [
            Cell("async-json1m", 10, c, "async", "asyncio", 10, "/json1m") for c in async_clients
        ]
    return cells


def _command(python: Path, cell: Cell, url: str, seconds: float, warmup: float) -> list[str]:
    timing = [str(seconds), str(warmup)]
    if cell.kind == "sync":
        script = str(HERE / "sync_cell.py")
        return [
            str(python),
            script,
            cell.client,
            str(cell.concurrency),
            url,
            cell.operation,
            *timing,
        ]
    script = str(HERE / "async_workload.py")
    return [
        str(python), script, cell.client, cell.operation, str(cell.concurrency), url, *timing,
        cell.path, "--no-status",  # measure_all counts the connections from outside
    ]  # fmt: skip


def run_cell(python: Path, cell: Cell, url: str, seconds: float, warmup: float) -> dict[str, Any]:
    """One process, one measurement; a crash or a hang costs this run, not the comparison."""
    command = _command(python, cell, url, seconds, warmup)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + warmup + CELL_TIMEOUT_EXTRA
        )
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    try:
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError):
        return {"error": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}


def wrk_ceiling(url: str, concurrency: int, seconds: float) -> float | None:
    """wrk's requests/s at `concurrency` connections: the C ceiling (None without wrk)."""
    wrk = shutil.which("wrk")
    if wrk is None:
        return None
    done = subprocess.run(
        [wrk, "-t", "1", "-c", str(concurrency), "-d", f"{max(1, round(seconds))}s", url],
        capture_output=True, text=True, timeout=seconds + 60,
    )  # fmt: skip
    for line in done.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split()[1])
    return None


class Progress:
    """A one-line progress bar on stderr (silent when stderr is not a terminal, but for a
    line every 10 %)."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.tty = sys.stderr.isatty()
        self._last_tenth = -1

    def step(self, what: str) -> None:
        self.done += 1
        fraction = self.done / self.total
        elapsed = time.monotonic() - self.started
        left = elapsed / fraction - elapsed if fraction else 0.0
        bar = "#" * int(fraction * 30)
        line = f"[{bar:<30}] {self.done}/{self.total}  {left:4.0f} s left  {what}"
        if self.tty:
            sys.stderr.write("\r" + line[:110].ljust(110))
            sys.stderr.flush()
        elif int(fraction * 10) != self._last_tenth:
            self._last_tenth = int(fraction * 10)
            print(line, file=sys.stderr)

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def measure_all(
    cells: list[Cell],
    pythons: dict[str, Path],
    url: str,
    args: argparse.Namespace,
    accepted_connections: Callable[[], int],
) -> list[Outcome]:
    """Every cell `args.repeats` times: round by round, each column's clients side by side in
    an order rotated every round, so drift in the machine's speed hits every client alike.
    Each run also records the connections the server accepted while it ran (runs are one at a
    time, so the count is that client's: warm-up and measurement together)."""
    outcomes = {cell: Outcome(cell) for cell in cells}
    columns: dict[tuple[str, int | str], list[Cell]] = {}
    for cell in cells:
        columns.setdefault((cell.group, cell.key), []).append(cell)
    progress = Progress(len(cells) * args.repeats)
    for round_ in range(args.repeats):
        for column in columns.values():
            shift = round_ % len(column)
            for cell in column[shift:] + column[:shift]:
                before = accepted_connections()
                run = run_cell(pythons[cell.client], cell, url, args.seconds, args.warmup)
                run["connections"] = accepted_connections() - before
                run["round"] = round_
                outcomes[cell].runs.append(run)
                progress.step(f"{cell.group} {cell.key} {cell.client}")
    progress.close()
    return list(outcomes.values())


# --- the report ----------------------------------------------------------------------------


GROUP_TITLES = {
    "sync-get": "Blocking GET /get: threads sharing one client",
    "post-sweep": "Blocking POST of a JSON body at c=1, answer decoded: body size",
    "async-get-asyncio": "Async GET /json100 + json(), tasks on one client: asyncio",
    "async-get-uvloop": "Async GET /json100 + json(), tasks on one client: uvloop",
    "async-get-trio": "Async GET /json100 + json(), tasks on one client: trio",
    "mixed": "Blocking requests of several kinds at c=1 (JSON answers decoded)",
    "async-json1m": "Async GET of 1 MiB of JSON + json(), 10 tasks, asyncio",
}


def _column_order(key: int | str) -> tuple[int, int | str]:
    """Numbers in order; the `mixed` operations in MIXED's order."""
    if isinstance(key, str):
        return (1, MIXED.index(key) if key in MIXED else len(MIXED))
    return (0, key)


def _column_title(key: int | str) -> str:
    return MIXED_TITLES.get(key, key) if isinstance(key, str) else f"{key:,}"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


Summary = dict[str, dict[str, dict[Any, dict[str, Any]]]]


def summarise(outcomes: list[Outcome]) -> Summary:
    """group -> client -> key -> {rps, low, high, cpu_us, runs, failed}."""
    table: Summary = {}
    for outcome in outcomes:
        cell, rps = outcome.cell, outcome.rps()
        failed = [run.get("error") for run in outcome.runs if run.get("error")]
        table.setdefault(cell.group, {}).setdefault(cell.client, {})[cell.key] = {
            "rps": _median(rps),
            "low": min(rps) if rps else None,
            "high": max(rps) if rps else None,
            "cpu_us": _median(outcome.cpu_us()),
            "connections": _median([run["connections"] for run in outcome.ok_runs()]),
            "runs": len(rps),
            "failed": failed,
            # Every run, failed ones included: how much memory, how many requests failed.
            "rss_mib": _median(
                [run["max_rss_kib"] / 1024 for run in outcome.runs if run.get("max_rss_kib")]
            ),
            "cpu_percent": _median(
                [run["cpu_seconds"] / run["seconds"] * 100 for run in outcome.ok_runs()]
            ),
            "requests": sum(run.get("requests") or 0 for run in outcome.runs),
            "errors": sum(run.get("errors") or 0 for run in outcome.runs),
        }
    return table


def _cell_text(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "—"
    if entry["rps"] is None:
        return "failed"
    spread = (entry["high"] - entry["low"]) / entry["rps"] * 100 if entry["rps"] else 0
    text = f"{entry['rps']:,.0f} ±{spread / 2:.0f}% · {entry['cpu_us']:.0f} µs"
    if entry.get("connections") is not None:
        text += f" · {entry['connections']:.0f} conn"
    return text


def _memory_and_errors(
    by_client: dict[str, dict[Any, dict[str, Any]]], keys: list[Any]
) -> list[str]:
    """The payload sweep's second table: each client's peak memory and error rate."""
    lines = [
        "CPU use (median of the runs' CPU time over wall time, all threads; 100% is one core) · "
        "peak memory (median of the runs' peak RSS, the whole process) · requests that raised, "
        "of all measured ones:",
        "",
        "| client \\ bytes | " + " | ".join(_column_title(k) for k in keys) + " |",
        "| --- |" + " --- |" * len(keys),
    ]
    for client, entries in by_client.items():
        cells = []
        for key in keys:
            entry = entries.get(key)
            if entry is None or entry.get("rss_mib") is None:
                cells.append("—")
                continue
            total = entry["requests"] + entry["errors"]
            rate = entry["errors"] / total * 100 if total else 0.0
            cpu = f"{entry['cpu_percent']:.0f}% CPU · " if entry.get("cpu_percent") else ""
            cells.append(f"{cpu}{entry['rss_mib']:.0f} MiB · {entry['errors']:,} ({rate:.2g}%)")
        lines.append(f"| {client} | " + " | ".join(cells) + " |")
    return lines


def markdown(
    summary: Summary,
    ceilings: dict[int, float | None],
    missing: dict[str, str],
    environment: dict[str, Any],
) -> str:
    lines = [
        "# requestx compared with other Python HTTP clients",
        "",
        f"{environment['date']} · {environment['machine']} · Python {environment['python']} · "
        f"{environment['server']} · {environment['repeats']} interleaved runs of "
        f"{environment['seconds']} s per cell",
        "",
        "Each cell: median requests/s, ± half the spread between the lowest and the highest run "
        "as a share of the median, · median CPU µs per request (every thread of the client's "
        "process) · median connections nginx accepted during a run (warm-up included; more "
        "than the concurrency means the client did not keep its connections alive). The last "
        "rows divide requestx's median by the best other client's, and by wrk's (the C "
        "ceiling). requestx-per-thread is requestx with a Client per thread (each thread then "
        "drives its own engine): shown for comparison, not counted as a peer.",
        "",
    ]
    if environment.get("load_warning"):
        lines += [f"**Warning:** {environment['load_warning']}", ""]
    for name, reason in sorted(missing.items()):
        lines.append(f"- {name}: missing ({reason})")
    if missing:
        lines.append("")
    for group, by_client in summary.items():
        keys = sorted({key for entries in by_client.values() for key in entries}, key=_column_order)
        unit = {"post-sweep": "bytes", "mixed": "request"}.get(group, "concurrency")
        lines += [f"## {GROUP_TITLES.get(group, group)}", ""]
        lines.append(f"| client \\ {unit} | " + " | ".join(_column_title(k) for k in keys) + " |")
        lines.append("| --- |" + " --- |" * len(keys))
        for client, entries in by_client.items():
            lines.append(
                f"| {client} | " + " | ".join(_cell_text(entries.get(k)) for k in keys) + " |"
            )
        ours = by_client.get("requestx", {})
        ratios = []
        for key in keys:
            peers = [
                entries[key]["rps"]
                for client, entries in by_client.items()
                if client != "requestx"
                and client not in OURS_BESIDE
                and key in entries
                and entries[key]["rps"]
            ]
            mine = ours.get(key, {}).get("rps")
            ratios.append(f"{mine / max(peers):.2f}×" if mine and peers else "—")
        lines.append("| **requestx ÷ best peer** | " + " | ".join(ratios) + " |")
        if group == "post-sweep":
            lines += ["", *_memory_and_errors(by_client, keys)]
        if group == "sync-get" and any(ceilings.values()):
            wrk = [ceilings.get(key) for key in keys]
            lines.append(
                "| wrk (C ceiling) | " + " | ".join(f"{w:,.0f}" if w else "—" for w in wrk) + " |"
            )
            shares = [
                f"{ours[k]['rps'] / w:.2f}×" if w and ours.get(k, {}).get("rps") else "—"
                for k, w in zip(keys, wrk)
            ]
            lines.append("| **requestx ÷ wrk** | " + " | ".join(shares) + " |")
        lines.append("")
    failures = [
        f"- {group} {key} {client}: {', '.join(sorted(set(entry['failed'])))}"
        for group, by_client in summary.items()
        for client, entries in by_client.items()
        for key, entry in entries.items()
        if entry["failed"]
    ]
    if failures:
        lines += ["## Failed runs", "", *failures, ""]
    return "\n".join(lines)


def charts(summary: Summary, out: Path) -> list[Path]:
    """One PNG per sweep: requests/s against concurrency or body size (log scale)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    for group, by_client in summary.items():
        columns = sorted({k for entries in by_client.values() for k in entries}, key=_column_order)
        if len(columns) < 2 or not all(isinstance(k, int) for k in columns):
            continue  # not a sweep: the table says it all
        figure, axes = plt.subplots(figsize=(8, 4.5), dpi=110)
        for client, entries in by_client.items():
            keys = sorted(k for k, e in entries.items() if e["rps"])
            if keys:
                style = {"linewidth": 3} if client == "requestx" else {"linewidth": 1.2}
                axes.plot(
                    keys, [entries[k]["rps"] for k in keys], marker="o", label=client, **style
                )
        axes.set_xscale("log")
        axes.set_xticks(columns, [f"{k:,}" for k in columns])
        axes.minorticks_off()
        axes.set_ylim(bottom=0)
        axes.set_xlabel("body bytes" if group == "post-sweep" else "concurrency")
        axes.set_ylabel("requests / s (median)")
        axes.set_title(GROUP_TITLES.get(group, group))
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8)
        figure.tight_layout()
        path = out / f"{group}.png"
        figure.savefig(path)
        plt.close(figure)
        written.append(path)
    return written


# --- the command line ---------------------------------------------------------------------


def run_h2(
    seconds: float, warmup: float, repeats: int, sequential: int, out: Path
) -> dict[str, Any]:
    """run_h2.py's parts A (throughput, `repeats` interleaved rounds) and C (latency), as its
    JSON report."""
    report = out / "h2.json"
    done = subprocess.run(
        [
            sys.executable, str(HERE / "run_h2.py"), "--parts", "A,C", "--seconds", str(seconds),
            "--warmup", str(warmup), "--repeats", str(repeats), "--sequential", str(sequential),
            "--json", str(report),
        ],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if not report.exists():
        return {"error": f"run_h2.py exited {done.returncode}: {done.stderr.strip()[-300:]}"}
    return dict(json.loads(report.read_text()))


def h2_markdown(h2: dict[str, Any]) -> str:
    """The HTTP/2 section of the report, from run_h2.py's JSON."""
    if "error" in h2:
        return f"## HTTP/2\n\nfailed: {h2['error']}\n"
    lines = ["## HTTP/2: 64 tasks on one connection, GET /json100 + json(), asyncio", ""]
    lines += ["| protocol | client | requests/s | CPU µs/request | connections |"]
    lines += ["| --- | --- | --- | --- | --- |"]
    for row in h2["throughput"]["results"]:
        if row.get("error"):
            lines.append(f"| {row['protocol']} | {row['client']} | failed: {row['error']} | | |")
            continue
        rps = f"{row['requests_per_second']:,.0f}"
        if len(row.get("runs", ())) > 1:
            rps += f" ±{row['spread'] * 100:.0f}%"
        lines.append(
            f"| {row['protocol']} | {row['client']} | {rps} | "
            f"{row['cpu_us_per_request']:.0f} | {row['connections']} |"
        )
    for name, reason in h2.get("skipped", {}).items():
        lines.append(f"| | {name} | missing: {reason} | | |")
    lines += ["", "## HTTP/2 latency: sequential requests on one h2c connection (µs)", ""]
    keys = ("min", "p50", "p95", "p99", "p99.9", "max")
    lines += ["| tool | " + " | ".join(keys) + " | requests |", "| --- |" + " --- |" * 7]
    for row in h2.get("latency", []):
        latency = row.get("latency_us") or {}
        cells = [f"{latency[k]:,.0f}" if latency.get(k) is not None else "-" for k in keys]
        lines.append(f"| {row['tool']} | " + " | ".join(cells) + f" | {row['requests']:,} |")
    return "\n".join(lines) + "\n"


LOADGEN_CONNECTIONS = 200
LOADGEN_TOOLS = {
    # (the report's name, the command before "-c N -d Ts URL")
    "python -m requestx.bench": ["-m", "requestx.bench", "--json"],
    "python -m requestx.bench --client": ["-m", "requestx.bench", "--json", "--client"],
}
WRK = "wrk -t1"


def run_loadgen(python: Path, url: str, seconds: float, repeats: int) -> dict[str, Any]:
    """requestx.bench's two ways and wrk at 200 connections, each round every tool once."""
    duration = max(1, round(seconds * 2))
    rounds: list[dict[str, Any]] = []
    for _ in range(repeats):
        row: dict[str, Any] = {}
        for name, arguments in LOADGEN_TOOLS.items():
            command = [str(python), *arguments, "-c", str(LOADGEN_CONNECTIONS)]
            command += ["-d", f"{duration}s", url]
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=duration + 60
                )
                result = json.loads(done.stdout)
                row[name] = {
                    "rps": result["requests_per_second"],
                    "cpu_us": result["cpu_us_per_request"],
                    "errors": result["errors"],
                }
            except (subprocess.TimeoutExpired, ValueError, KeyError) as exc:
                row[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        wrk = wrk_ceiling(url, LOADGEN_CONNECTIONS, duration)
        row[WRK] = {"rps": wrk} if wrk else {"error": "wrk is not installed"}
        rounds.append(row)
    return {"connections": LOADGEN_CONNECTIONS, "seconds": duration, "rounds": rounds}


def loadgen_markdown(loadgen: dict[str, Any]) -> str:
    """The load generator's section of the report: medians, every round, the ratio to wrk."""
    rounds = loadgen["rounds"]
    lines = [
        f"## Load generator: `python -m requestx.bench` and wrk, {loadgen['connections']} "
        f"connections, GET /get, {loadgen['seconds']} s per run",
        "",
        "| tool | requests/s (median) | every round | CPU µs/request (median) |",
        "| --- | --- | --- | --- |",
    ]
    medians: dict[str, float | None] = {}
    for name in [*LOADGEN_TOOLS, WRK]:
        runs = [row[name] for row in rounds]
        good = [run for run in runs if run.get("rps")]
        medians[name] = _median([run["rps"] for run in good])
        cpu = _median([run["cpu_us"] for run in good if run.get("cpu_us")])
        every = " / ".join(f"{run['rps']:,.0f}" if run.get("rps") else "failed" for run in runs)
        median = f"{medians[name]:,.0f}" if medians[name] else "—"
        failures = "; ".join(run["error"] for run in runs if run.get("error"))
        lines.append(
            f"| {name} | {median} | {every}{' (' + failures + ')' if failures else ''} | "
            f"{f'{cpu:.1f}' if cpu else '—'} |"
        )
    ours, ceiling = medians["python -m requestx.bench"], medians[WRK]
    if ours and ceiling:
        lines += ["", f"**requestx.bench ÷ wrk: {ours / ceiling:.2f}** (medians)"]
    return "\n".join(lines) + "\n"


def _csv(value: str, allowed: list[str], what: str) -> list[str]:
    items = [item.strip() for item in value.split(",") if item.strip()]
    unknown = [item for item in items if item not in allowed]
    if unknown or not items:
        raise argparse.ArgumentTypeError(f"unknown {what}: {unknown} (choose from {allowed})")
    return items


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("--full", action="store_true", help="every scenario (else quick)")
    groups = ["sync-get", "async-get", "post-sweep", "mixed", "async-json1m", "h2", "loadgen"]
    parser.add_argument(
        "--scenarios", type=lambda v: _csv(v, groups, "scenario"), default=groups,
        help=f"comma-separated subset of {','.join(groups)}",
    )  # fmt: skip
    parser.add_argument(
        "--peers", type=lambda v: _csv(v, list(PEERS), "client"), default=list(PEERS),
        help=f"comma-separated subset of {','.join(PEERS)}",
    )  # fmt: skip
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs per cell (3)")
    parser.add_argument("--seconds", type=float, default=None, help="per run (quick 0.5, full 2)")
    parser.add_argument("--warmup", type=float, default=0.2, help="per run (0.2)")
    parser.add_argument("--out", type=Path, default=None, help="(benchmarks/results/<time>)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.seconds is None:
        args.seconds = 2.0 if args.full else 0.5
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = args.out or HERE / "results" / stamp
    out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    cpus = os.cpu_count() or 1
    environment: dict[str, Any] = {
        "date": stamp,
        "machine": f"{platform.machine()}, {cpus} CPUs",
        "python": platform.python_version(),
        "repeats": args.repeats,
        "seconds": args.seconds,
        "load_average_at_start": load,
        "load_warning": (
            f"the 1-minute load average was {load:.2f} on {cpus} CPUs when the run started: "
            "something else was using the machine, and every figure is lower and noisier"
            if load > 0.5 * cpus
            else None
        ),
    }
    print("compare: setting up each client's environment (benchmarks/.venvs)", file=sys.stderr)
    pythons: dict[str, Path] = {}
    missing: dict[str, str] = {}
    for name in args.peers:
        try:
            pythons[name] = python_for(PEERS[name])
        except PeerMissing as exc:
            missing[name] = str(exc)
            print(f"compare: {exc}", file=sys.stderr)
    cells = plan(args.full, [name for name in args.peers if name in pythons], args.scenarios)
    with Nginx() as nginx:
        environment["server"] = f"nginx on 127.0.0.1 ({nginx.url})"
        ceilings: dict[int, float | None] = {}
        if "sync-get" in args.scenarios:
            for n in sorted({int(cell.key) for cell in cells if cell.group == "sync-get"}):
                ceilings[n] = wrk_ceiling(nginx.url + "/get", n, args.seconds * 2)
        outcomes = measure_all(cells, pythons, nginx.url, args, nginx.accepted_connections)
        loadgen: dict[str, Any] | None = None
        if "loadgen" in args.scenarios and "requestx" in pythons:
            print("compare: the load generator against wrk", file=sys.stderr)
            loadgen = run_loadgen(
                pythons["requestx"], nginx.url + "/get", args.seconds, args.repeats
            )
    summary = summarise(outcomes)
    report = markdown(summary, ceilings, missing, environment)
    if loadgen is not None:
        report += "\n" + loadgen_markdown(loadgen)
    h2: dict[str, Any] | None = None
    if "h2" in args.scenarios:
        print("compare: HTTP/2 (benchmarks/run_h2.py)", file=sys.stderr)
        h2 = run_h2(args.seconds, args.warmup, args.repeats, 50_000 if args.full else 5_000, out)
        report += "\n" + h2_markdown(h2)
    (out / "report.md").write_text(report)
    everything = {
        "environment": environment,
        "missing": missing,
        "ceilings": ceilings,
        "h2": h2,
        "loadgen": loadgen,
        "outcomes": [{"cell": asdict(o.cell), "runs": o.runs} for o in outcomes],
    }
    (out / "results.json").write_text(json.dumps(everything, indent=1))
    pictures = charts(summary, out)
    print(report)
    print(f"\ncompare: report {out / 'report.md'}, every run {out / 'results.json'}")
    for path in pictures:
        print(f"compare: chart {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
