"""
requestx side by side with the other Python HTTP clients, the way a user would compare them:
every client against the same local nginx, in one run, with a Markdown report, a JSON file of
every measurement and PNG charts.

    python benchmarks/compare.py                 the quick subset (about 4 minutes; every
                                                 client, fewer columns: see *_QUICK below)
    python benchmarks/compare.py --full          every scenario below (about 35 minutes before
                                                 the scale cells, which are not yet timed)
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
  async-scale GET /json100 decoded with json() at 1,000 and 10,000 tasks on one client (--full,
              or --scale N,N), on asyncio, uvloop and trio: requests/s, CPU per request,
              connections, and the peak memory per request in flight; every client's pool
              holds N connections and every client gets the same 60 s request timeout
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
busy before the run started. It also names every peer that has a client of a table's kind
(blocking or async) but was not measured in it (not installed, not selected, or failed), so a
ratio to "the best peer" is never read as a win over a peer that was left out.

Open files: 10,000 connections need more than the usual 1,024 descriptors, in the client's
process and in nginx's. compare.py raises its RLIMIT_NOFILE to the hard limit (nginx inherits
it) and every async cell does the same (benchmarks/fdlimit.py); nginx gets worker_connections
and worker_rlimit_nofile for the largest scale cell (benchmarks/nginx.py). A scale cell that
the hard limit cannot hold is not run, and the report says why and what to raise.
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

from fdlimit import OpenFiles, raise_open_files, shortfall  # noqa: E402
from nginx import Nginx, headroom  # noqa: E402
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
# The scale cells (async-scale): this many tasks on one client, on every loop; none in the
# quick subset. Every client gets a pool of N connections and this request timeout (seconds):
# with 10,000 requests in flight one can wait longer than httpx's and requestx's default 5 s.
SCALE_FULL = (1_000, 10_000)
SCALE_QUICK: tuple[int, ...] = ()
SCALE_TIMEOUT = 60.0
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
# Seconds a cell may take beyond its warm-up and measurement: an async cell's own bounds
# (opening the client, the warm-up's grace, the drain, then stopping and closing: see
# async_workload.py) add up to 135 s.
CELL_TIMEOUT_EXTRA = 150.0
# A run that ended so is not repeated in later rounds: it would end so again.
FINAL_ERRORS = ("not run:", "warm-up did not finish", "timed out")


@dataclass(frozen=True)
class Cell:
    """One measurement's setting; `key` names the column it belongs to in its group."""

    group: str  # sync-get, async-get-<loop>, post-sweep, mixed, async-json1m, async-scale-<loop>
    key: int | str  # concurrency, payload bytes, or (mixed) the operation
    client: str
    kind: str  # sync or async
    operation: str  # sync: sync_cell.py's operation; async: the loop
    concurrency: int
    path: str = "/json100"  # async: what every request GETs
    timeout: float | None = None  # async: the client's request timeout (None: its default)


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


def plan(
    full: bool, clients: list[str], groups: list[str], scale: tuple[int, ...] | None = None
) -> list[Cell]:
    """The cells to run; `scale` replaces the async-scale group's numbers of tasks."""
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
    if "async-scale" in groups:
        for loop in LOOPS_FULL:
            for n in scale if scale is not None else SCALE_FULL if full else SCALE_QUICK:
                cells += [
                    Cell(f"async-scale-{loop}", n, c, "async", loop, n, timeout=SCALE_TIMEOUT)
                    for c in async_clients
                    if loop in ASYNC_LOOPS.get(c, ())
                ]
    return cells


def fit_open_files(cells: list[Cell], limits: OpenFiles) -> tuple[list[Cell], dict[str, str]]:
    """The cells whose connections fit under the open-file limit, in the client's process and
    in nginx's (which needs headroom: benchmarks/nginx.py), and why each other column is not
    run ("async-scale-asyncio 10,000" -> the reason)."""
    kept: list[Cell] = []
    dropped: dict[str, str] = {}
    for cell in cells:
        what = f"nginx's worker_connections {headroom(cell.concurrency):,} for them"
        problem = shortfall(
            headroom(cell.concurrency), limits, f"{cell.concurrency:,} tasks: {what}"
        )
        if problem is None:
            kept.append(cell)
        else:
            dropped[f"{cell.group} {cell.concurrency:,}"] = problem
    return kept, dropped


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
    command = [
        str(python), script, cell.client, cell.operation, str(cell.concurrency), url, *timing,
        cell.path, "--no-status",  # measure_all counts the connections from outside
    ]  # fmt: skip
    if cell.timeout is not None:
        command += ["--timeout", f"{cell.timeout:g}"]
    return command


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
                last = outcomes[cell].runs[-1:]
                if last and str(last[0].get("error") or "").startswith(FINAL_ERRORS):
                    progress.step(f"{cell.group} {cell.key} {cell.client} (not repeated)")
                    continue
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
    "async-scale-asyncio": "Async GET /json100 + json() at scale, tasks on one client: asyncio",
    "async-scale-uvloop": "Async GET /json100 + json() at scale, tasks on one client: uvloop",
    "async-scale-trio": "Async GET /json100 + json() at scale, tasks on one client: trio",
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
            # Async cells: peak RSS over idle RSS, per request in flight (async_workload.py).
            "rss_per_request_kib": _median(
                [
                    (run["rss_peak_kib"] - run["rss_idle_kib"]) / cell.concurrency
                    for run in outcome.ok_runs()
                    if run.get("rss_peak_kib") and run.get("rss_idle_kib")
                ]
            ),
            "rss_methods": sorted(
                {run["rss_method"] for run in outcome.runs if run.get("rss_method")}
            ),
            "settings": next((run["settings"] for run in outcome.runs if run.get("settings")), ""),
            "notes": sorted({run["note"] for run in outcome.runs if run.get("note")}),
        }
    return table


def _is_scale(group: str) -> bool:
    return group.startswith("async-scale-")


def _cell_text(entry: dict[str, Any] | None, memory: bool = False) -> str:
    if entry is None:
        return "—"
    if entry["rps"] is None:
        return "failed"
    spread = (entry["high"] - entry["low"]) / entry["rps"] * 100 if entry["rps"] else 0
    text = f"{entry['rps']:,.0f} ±{spread / 2:.0f}% · {entry['cpu_us']:.0f} µs"
    if entry.get("connections") is not None:
        text += f" · {entry['connections']:.0f} conn"
    if memory:
        per_request = entry.get("rss_per_request_kib")
        text += f" · {per_request:.1f} KiB/req" if per_request is not None else " · — KiB/req"
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


SYNC_GROUPS = ("sync-get", "post-sweep", "mixed")


def _group_loop(group: str) -> str:
    """The event loop of an async group: async-get-uvloop -> uvloop; async-json1m: asyncio."""
    return (
        group.rsplit("-", 1)[1] if group.startswith(("async-get-", "async-scale-")) else "asyncio"
    )


def unmeasured(
    summary: Summary, missing: dict[str, str], selected: list[str]
) -> dict[str, dict[str, str]]:
    """group -> {peer: why}: each peer that has a client of the group's kind (a blocking one
    for sync-get, post-sweep and mixed; an async one on the group's loop for the others) and
    no measured cell in that group. "requestx ÷ best peer" leaves such a peer out, so the
    report names it beside the table rather than let the ratio pass for a win over it."""
    left_out: dict[str, dict[str, str]] = {}
    for group, by_client in summary.items():
        if group in SYNC_GROUPS:
            expected = [name for name, peer in PEERS.items() if peer.sync]
        else:
            loop = _group_loop(group)
            expected = [
                name
                for name, peer in PEERS.items()
                if peer.asynchronous and loop in ASYNC_LOOPS.get(name, ())
            ]
        for name in expected:
            if name == "requestx" or name in OURS_BESIDE:
                continue
            if any(entry["rps"] for entry in by_client.get(name, {}).values()):
                continue
            if name in missing:
                why = f"could not be installed: {missing[name]}"
            elif name not in selected:
                why = "not selected with --peers"
            else:
                why = "every run failed (see Failed runs)"
            left_out.setdefault(group, {})[name] = why
    return left_out


def _peak_source(methods: list[str]) -> str:
    """How the async cells read their peak RSS (async_workload.py), in words."""
    said = {
        "VmHWM": "The peak is VmHWM in /proc/self/status, reset to the current RSS through "
        "/proc/self/clear_refs just before the tasks start, so it is the run's own peak.",
        "ru_maxrss": "The peak is getrusage's ru_maxrss, the process's peak since it started "
        "(/proc/self/clear_refs could not be written): it can hide growth below an earlier "
        "peak.",
    }
    return " ".join(said.get(method, method) for method in methods)


def _settings_section(summary: Summary, environment: dict[str, Any]) -> list[str]:
    """How each client was made: the blocking drivers, and the scale cells' settings per
    number of tasks; then the open-file limit and nginx's settings of the scale cells."""
    blocking: dict[str, str] = {}
    scale: dict[str, dict[int, str]] = {}
    for group, by_client in summary.items():
        for client, entries in by_client.items():
            for key, entry in entries.items():
                if not entry.get("settings"):
                    continue
                if group in SYNC_GROUPS:
                    blocking.setdefault(client, entry["settings"])
                elif _is_scale(group):
                    scale.setdefault(client, {}).setdefault(int(key), entry["settings"])
    lines: list[str] = []
    if blocking:
        lines += ["## How each blocking client was made", "", "| client | made with |"]
        lines += ["| --- | --- |"]
        lines += [f"| {client} | `{made}` |" for client, made in blocking.items()]
        lines.append("")
    if scale or environment.get("scale_not_run"):
        sizes = sorted({n for by_size in scale.values() for n in by_size})
        lines += [
            "## Settings of the scale cells",
            "",
            "Every client's connection limit is the number of tasks, so no request waits for "
            "a connection because of a limit (how many connections a client does open is its "
            "pool's choice: `conn` in the tables; a pool that hands a request the first "
            "connection to come free rather than a new one opens fewer), and every client has "
            f"the same {SCALE_TIMEOUT:g} s request timeout (with 10,000 requests in flight, one "
            "can wait longer than the 5 s some libraries default to); everything else is the "
            "library's default. KiB/req is the "
            "process's peak RSS during the run (warm-up included) less its RSS with the client "
            "made and no task started, divided by the number of tasks: the memory one request "
            "in flight costs, the benchmark's own task included (the same for every client on "
            "a loop). " + _peak_source(environment.get("rss_methods") or []),
            "",
        ]
        if scale:
            lines.append("| client | " + " | ".join(f"{n:,} tasks" for n in sizes) + " |")
            lines.append("| --- |" + " --- |" * len(sizes))
            for client, by_size in scale.items():
                made = [f"`{by_size[n]}`" if n in by_size else "—" for n in sizes]
                lines.append(f"| {client} | " + " | ".join(made) + " |")
            lines.append("")
        files = environment.get("open_files") or {}
        limits = environment.get("nginx_limits") or {}
        text = (
            f"Open files: RLIMIT_NOFILE raised to the hard limit, {files.get('soft', 0):,} "
            f"(hard {files.get('hard', 0):,}), in compare.py (nginx inherits it) and in every "
            f"async cell. nginx: worker_connections {limits.get('worker_connections', 0):,}"
        )
        if "worker_rlimit_nofile" in limits:
            text += (
                f", worker_rlimit_nofile {limits['worker_rlimit_nofile']:,}, listen backlog "
                f"{limits['listen_backlog']:,}"
            )
        lines += [text + ".", ""]
        for column, why in (environment.get("scale_not_run") or {}).items():
            lines.append(f"- **{column} not run:** {why}")
        if environment.get("scale_not_run"):
            lines.append("")
    return lines


def markdown(
    summary: Summary,
    ceilings: dict[int, float | None],
    missing: dict[str, str],
    environment: dict[str, Any],
    left_out: dict[str, dict[str, str]] | None = None,
) -> str:
    """The report. `left_out` (unmeasured()): peers a table does not measure, named beside it."""
    left_out = left_out or {}
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
        "than the concurrency means the client did not keep its connections alive); in the "
        "scale tables, · median KiB of peak memory per request in flight. The last "
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
    if left_out:
        names = sorted({name for peers in left_out.values() for name in peers})
        lines += [
            f"**Not a full comparison:** {', '.join(names)} "
            f"{'has' if len(names) == 1 else 'have'} a client of the kind that "
            f"{len(left_out)} of the tables below measure{'s' if len(left_out) == 1 else ''}, "
            'but not in them (each of those tables says who and why): their "requestx ÷ best '
            'peer" is to the best peer measured, and wins nothing over the others.',
            "",
        ]
    for group, by_client in summary.items():
        keys = sorted({key for entries in by_client.values() for key in entries}, key=_column_order)
        unit = {"post-sweep": "bytes", "mixed": "request"}.get(group, "concurrency")
        lines += [f"## {GROUP_TITLES.get(group, group)}", ""]
        lines.append(f"| client \\ {unit} | " + " | ".join(_column_title(k) for k in keys) + " |")
        lines.append("| --- |" + " --- |" * len(keys))
        for client, entries in by_client.items():
            cells = [_cell_text(entries.get(k), memory=_is_scale(group)) for k in keys]
            lines.append(f"| {client} | " + " | ".join(cells) + " |")
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
        label = "requestx ÷ best measured peer" if group in left_out else "requestx ÷ best peer"
        lines.append(f"| **{label}** | " + " | ".join(ratios) + " |")
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
        if group in left_out:
            kind = "a blocking client" if group in SYNC_GROUPS else "an async client"
            names = "; ".join(f"{name} ({why})" for name, why in left_out[group].items())
            lines += [
                "",
                f"**Not measured here, though each has {kind}:** {names}. The ratio is to the "
                "best peer measured: no cell of this table is won against them.",
            ]
        if group == "post-sweep":
            lines += ["", *_memory_and_errors(by_client, keys)]
        lines.append("")
    lines += _settings_section(summary, environment)
    failures = [
        f"- {group} {key} {client}: {', '.join(sorted(set(entry['failed'])))}"
        for group, by_client in summary.items()
        for client, entries in by_client.items()
        for key, entry in entries.items()
        if entry["failed"]
    ]
    notes = [
        f"- {group} {key} {client}: {', '.join(entry['notes'])}"
        for group, by_client in summary.items()
        for client, entries in by_client.items()
        for key, entry in entries.items()
        if entry.get("notes")
    ]
    if failures:
        lines += ["## Failed runs", "", *failures, ""]
    if notes:
        lines += ["## Runs ended before their client closed", "", *notes, ""]
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


def _sizes(value: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(item) for item in value.split(",") if item.strip())
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected numbers of tasks like 1000,10000: {value!r}")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("--full", action="store_true", help="every scenario (else quick)")
    groups = [
        "sync-get", "async-get", "post-sweep", "mixed", "async-json1m", "async-scale", "h2",
        "loadgen",
    ]  # fmt: skip
    parser.add_argument(
        "--scenarios", type=lambda v: _csv(v, groups, "scenario"), default=groups,
        help=f"comma-separated subset of {','.join(groups)}",
    )  # fmt: skip
    parser.add_argument(
        "--scale", type=_sizes, default=None, metavar="N,N",
        help="tasks in the async-scale cells (--full: 1000,10000; quick: none)",
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
    cells = plan(
        args.full, [name for name in args.peers if name in pythons], args.scenarios, args.scale
    )
    # Thousands of connections: the open-file limit up to the hard limit (nginx, started
    # below, inherits it); columns it cannot hold are left out, and the report says why.
    open_files = raise_open_files()
    cells, not_run = fit_open_files(cells, open_files)
    environment["open_files"] = {"soft": open_files.soft, "hard": open_files.hard}
    environment["scale_not_run"] = not_run
    for column, why in not_run.items():
        print(f"compare: {column} not run: {why}", file=sys.stderr)
    most = max((cell.concurrency for cell in cells), default=0)
    with Nginx(connections=most) as nginx:
        environment["server"] = f"nginx on 127.0.0.1 ({nginx.url})"
        environment["nginx_limits"] = nginx.limits
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
    environment["rss_methods"] = sorted(
        {method for o in outcomes for run in o.runs for method in [run.get("rss_method")] if method}
    )
    left_out = unmeasured(summary, missing, args.peers)
    report = markdown(summary, ceilings, missing, environment, left_out)
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
        "left_out": left_out,
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
