"""
The benchmarks still run: each script of `scripts/bench.sh` (and the pytest-benchmark suite) in
a smoke mode — a fraction of a second per cell, requestx and httpx only (the peers the test
environment has) — checked for a clean exit and a JSON report whose requestx cells made
requests without errors. No speed is asserted: speed lives in the benchmarks themselves
(`docs/performance.md`), never in timed tests.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import typing
from pathlib import Path

import pytest

import requestx
from tests.servers.nginx import nginx_or_skip
from tests.support.paths import ROOT
from tests.support.sanitized import skip_under_asan

BENCHMARKS = ROOT / "benchmarks"


@pytest.fixture(autouse=True)
def _needs_nginx() -> None:
    nginx_or_skip()  # the benchmarks start their own; this only skips (or fails on CI) without


def _run(script: str, tmp_path: Path, *arguments: str) -> dict[str, typing.Any]:
    report = tmp_path / f"{script}.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *arguments, "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return typing.cast(dict[str, typing.Any], json.loads(report.read_text()))


def _requestx_cells(report: dict[str, typing.Any]) -> list[dict[str, typing.Any]]:
    cells = [cell for cell in report["results"] if cell.get("client") == "requestx"]
    assert cells, report
    return cells


def test_sync_benchmark_runs(tmp_path: Path) -> None:
    report = _run(
        "run_sync.py", tmp_path, "--seconds", "0.2", "--warmup", "0.05",
        "--clients", "requestx,httpx", "--scenarios", "get,post-c10",
    )  # fmt: skip
    for cell in _requestx_cells(report):
        assert cell["error"] is None and cell["requests"] > 0 and cell["cpu_us_per_request"] > 0


def test_async_benchmark_runs(tmp_path: Path) -> None:
    report = _run(
        "run_async.py", tmp_path, "--seconds", "0.2", "--warmup", "0.05",
        "--clients", "requestx,httpx", "--loops", "asyncio,trio", "--concurrency", "1,8",
    )  # fmt: skip
    cells = _requestx_cells(report)
    assert {cell["loop"] for cell in cells} == {"asyncio", "trio"}
    for cell in cells:
        assert cell["error"] is None and cell["requests"] > 0


def test_h2_benchmark_runs(tmp_path: Path) -> None:
    report = _run(
        "run_h2.py", tmp_path, "--seconds", "0.2", "--warmup", "0.05", "--parts", "A,B,C",
        "--clients", "requestx", "--requests", "200", "--sequential", "200",
        "--sequential-warmup", "20", "--concurrency", "8",
    )  # fmt: skip
    assert report  # parts B and C have their own shapes: a clean exit and a report suffice


def test_h2_throughput_repeats_report_medians(tmp_path: Path) -> None:
    """--repeats: each cell runs once a round, and its row holds the median of its runs."""
    report = _run(
        "run_h2.py", tmp_path, "--seconds", "0.2", "--warmup", "0.05", "--parts", "A",
        "--clients", "requestx", "--protocols", "h2,h2c", "--repeats", "3", "--concurrency", "8",
    )  # fmt: skip
    rows = report["throughput"]["results"]
    assert [row["protocol"] for row in rows] == ["h2", "h2c"]
    for row in rows:
        runs = row["runs"]
        assert len(runs) == 3 and row["failed_runs"] == 0 and row["error"] is None
        rates = sorted(run["requests_per_second"] for run in runs)
        assert row["requests_per_second"] == rates[1]
        assert row["requests"] == sum(run["requests"] for run in runs)
        assert row["spread"] == pytest.approx((rates[2] - rates[0]) / 2 / rates[1])


def test_pytest_benchmark_suite_runs(tmp_path: Path) -> None:
    pytest.importorskip("pytest_benchmark")
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            str(BENCHMARKS / "test_bench_sync.py"), str(BENCHMARKS / "test_bench_async.py"),
            "--benchmark-disable", "-k", "requestx",
        ],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout


def test_the_comparison_runs(tmp_path: Path) -> None:
    """benchmarks/compare.py, requestx alone (no peer environments are made in the suite):
    a report, every run in JSON, and charts when matplotlib is installed."""
    out = tmp_path / "report"
    done = subprocess.run(
        [
            sys.executable, str(BENCHMARKS / "compare.py"), "--peers", "requestx",
            "--repeats", "2", "--seconds", "0.2", "--warmup", "0.05", "--out", str(out),
            # h2 is run_h2.py, smoke-tested above (its peers need the bench extras)
            "--scenarios", "sync-get,async-get,post-sweep,mixed,async-json1m",
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = (out / "report.md").read_text()
    for title in ("threads sharing one client", "asyncio", "uvloop", "body size", "1 MiB"):
        assert title in report
    assert "| requestx |" in report and "failed" not in report
    runs = json.loads((out / "results.json").read_text())["outcomes"]
    # sync-get, async-get (asyncio at 1 and 64 tasks, uvloop at 64), post-sweep, mixed and
    # async-json1m columns
    assert len(runs) == 3 + 2 + 1 + 3 + 2 + 1
    assert all(len(o["runs"]) == 2 and not o["runs"][0].get("error") for o in runs)
    # Connections are counted at nginx for every run: requestx keeps them alive, so a run at
    # concurrency N opens at most N (plus none for the later runs of a warm process: each run
    # is a new process, so it opens its own).
    for outcome in runs:
        cell = outcome["cell"]
        for run in outcome["runs"]:
            assert 1 <= run["connections"] <= max(cell["concurrency"], 1), (cell, run)
    assert " conn |" in report
    # The payload sweep also reports each client's peak memory and failed requests.
    assert "peak memory" in report and " MiB · 0 (0%)" in report
    sweep = [o for o in runs if o["cell"]["group"] == "post-sweep"]
    assert all(run["errors"] == 0 and run["max_rss_kib"] > 0 for o in sweep for run in o["runs"])
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "sync-get.png").stat().st_size > 1000
    assert str(out / "report.md") in done.stdout


def test_the_comparison_runs_the_load_generator_against_wrk(tmp_path: Path) -> None:
    """compare.py's `loadgen` scenario: requestx.bench both ways, and wrk when installed."""
    out = tmp_path / "report"
    done = subprocess.run(
        [
            sys.executable, str(BENCHMARKS / "compare.py"), "--peers", "requestx",
            "--repeats", "1", "--seconds", "0.5", "--scenarios", "loadgen", "--out", str(out),
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    loadgen = json.loads((out / "results.json").read_text())["loadgen"]
    (row,) = loadgen["rounds"]
    for tool in ("python -m requestx.bench", "python -m requestx.bench --client"):
        assert row[tool]["rps"] > 0 and row[tool]["errors"] == {}, row
    report = (out / "report.md").read_text()
    assert "## Load generator" in report
    if shutil.which("wrk"):
        assert row["wrk -t1"]["rps"] > 0
        assert "requestx.bench ÷ wrk" in report


def test_the_comparison_runs_the_scale_cells(tmp_path: Path) -> None:
    """compare.py's async-scale group, at 50 and 200 tasks instead of 1,000 and 10,000, on
    every loop: each cell completes and reports every field (requests/s, CPU per request,
    connections, peak memory per request in flight, the client's settings), and the report
    gives the open-file limit and nginx's settings. No speed is asserted."""
    out = tmp_path / "report"
    done = subprocess.run(
        [
            sys.executable, str(BENCHMARKS / "compare.py"), "--peers", "requestx",
            "--scenarios", "async-scale", "--scale", "50,200", "--repeats", "1",
            "--seconds", "0.2", "--warmup", "0.05", "--out", str(out),
        ],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    outcomes = results["outcomes"]
    assert sorted((o["cell"]["group"], o["cell"]["key"]) for o in outcomes) == [
        (f"async-scale-{loop}", n) for loop in ("asyncio", "trio", "uvloop") for n in (50, 200)
    ]
    for outcome in outcomes:
        n = outcome["cell"]["concurrency"]
        (run,) = outcome["runs"]
        assert run["error"] is None and run["requests"] > 0 and run["cpu_seconds"] > 0, run
        assert 1 <= run["connections"] <= n, run
        assert run["rss_method"] in ("VmHWM", "ru_maxrss"), run
        assert run["rss_peak_kib"] >= run["rss_idle_kib"] > 0, run
        assert run["timeout"] == 60 and f"max_connections={n}" in run["settings"], run
        assert run["open_files"] >= n, run
    environment = results["environment"]
    assert environment["open_files"]["soft"] >= 200 and environment["scale_not_run"] == {}
    assert environment["nginx_limits"]["worker_connections"] >= 200
    report = (out / "report.md").read_text()
    for loop in ("asyncio", "uvloop", "trio"):
        assert f"at scale, tasks on one client: {loop}" in report
    rows = [line for line in report.splitlines() if line.startswith("| requestx | ")]
    scale_rows = [row for row in rows if "conn ·" in row]
    assert len(scale_rows) == 3 and all(row.count(" KiB/req") == 2 for row in scale_rows), rows
    assert "## Settings of the scale cells" in report and "Open files: RLIMIT_NOFILE" in report
    assert "timeout=60" in report and "failed" not in report


def test_the_report_names_peers_it_did_not_measure() -> None:
    """A peer with a client of a table's kind that the table does not measure is named beside
    the table, with the reason, and the ratio row says it is to the best peer measured."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import compare
    finally:
        sys.path.remove(str(BENCHMARKS))
    entry: dict[str, typing.Any] = {
        "rps": 1000.0, "low": 900.0, "high": 1100.0, "cpu_us": 50.0, "connections": 10,
        "failed": [],
    }  # fmt: skip
    summary = {
        "sync-get": {"requestx": {10: dict(entry)}, "pycurl": {10: dict(entry)}},
        "async-get-trio": {"requestx": {64: dict(entry)}, "httpx": {64: dict(entry)}},
    }
    selected = [name for name in compare.PEERS if name != "niquests"]
    missing = {"pyreqwest": "pyreqwest: pip install failed: no wheel"}
    left_out = compare.unmeasured(summary, missing, selected)
    # Every other peer with a blocking client, pyreqwest's among them; on trio every async
    # peer runs (httpx, measured here), so nothing is left out of that table.
    assert set(left_out) == {"sync-get"}
    assert left_out["sync-get"]["pyreqwest"].startswith("could not be installed")
    assert left_out["sync-get"]["niquests"] == "not selected with --peers"
    assert left_out["sync-get"]["httpx"] == "every run failed (see Failed runs)"
    assert (
        "pycurl" not in left_out["sync-get"] and "requestx-per-thread" not in left_out["sync-get"]
    )
    environment = {
        "date": "now", "machine": "m", "python": "3", "server": "s", "repeats": 1, "seconds": 1,
    }  # fmt: skip
    report = compare.markdown(summary, {}, missing, environment, left_out)
    assert "**Not a full comparison:**" in report
    assert "| **requestx ÷ best measured peer** | 1.00× |" in report
    assert "Not measured here, though each has a blocking client:** httpx" in report
    assert "pyreqwest (could not be installed" in report
    assert "| **requestx ÷ best peer** | 1.00× |" in report  # the trio table is complete


def test_every_peer_with_a_driver_is_marked_so() -> None:
    """peers.py's sync/asynchronous flags say which tables a peer belongs in: they must match
    the drivers that exist, or a peer's client would silently be left out of a table."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import async_clients
        import clients
        from peers import PEERS
    finally:
        sys.path.remove(str(BENCHMARKS))
    for name, peer in PEERS.items():
        assert peer.sync == (name in clients.DRIVERS), name
        assert peer.asynchronous == (name in async_clients.DRIVERS), name
    assert PEERS["pyreqwest"].sync and PEERS["pyreqwest"].asynchronous


def _limited(code: str, open_files: int) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter whose RLIMIT_NOFILE (soft and hard) is `open_files`."""
    prologue = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({open_files}, {open_files}))\n"
        f"sys.path.insert(0, {str(BENCHMARKS)!r})\n"
    )
    return subprocess.run(
        [sys.executable, "-c", prologue + code], capture_output=True, text=True, timeout=60
    )


def test_a_hard_limit_too_low_for_the_connections_is_said_plainly() -> None:
    """Under a hard open-file limit of 1,024, nginx asked for 10,000 connections refuses to
    start, and a cell of 5,000 tasks does not run, each saying what limit it needs."""
    done = _limited(
        "from nginx import Nginx\n"
        "try:\n"
        "    Nginx(connections=10_000).start()\n"
        "except RuntimeError as exc:\n"
        "    print(exc)\n",
        1024,
    )
    assert "nginx cannot hold 10,000 connections" in done.stdout, done.stdout + done.stderr
    assert "RLIMIT_NOFILE is 1,024 (hard limit 1,024)" in done.stdout
    done = _limited(
        "import async_workload\n"
        "async_workload.main(['requestx', 'asyncio', '5000', 'http://127.0.0.1:9', '0.1'])\n",
        1024,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"].startswith("not run: 5,000 connections need an open-file limit of")
    assert result["requests"] == 0 and result["open_files"] == 1024


def test_nginx_holds_thousands_of_connections() -> None:
    """Nginx(connections=N): worker_connections with headroom, worker_rlimit_nofile and the
    listen backlog in its config, under the open-file limit raised to the hard limit."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import fdlimit
    finally:
        sys.path.remove(str(BENCHMARKS))
    if not fdlimit.raise_open_files().allows(2_000 + 2_000 // 8 + 64):
        pytest.skip("the hard open-file limit is too low for 2,000 connections")
    with nginx_or_skip(connections=2_000) as server:
        assert server.run_dir is not None
        config = (server.run_dir / "nginx.conf").read_text()
        limits = server.limits
        assert limits["worker_connections"] == 2_000 + 2_000 // 8 + 64
        assert f"worker_connections {limits['worker_connections']};" in config
        assert f"worker_rlimit_nofile {limits['worker_rlimit_nofile']};" in config
        assert f" backlog={limits['listen_backlog']};" in config
    with nginx_or_skip() as server:  # the default is unchanged
        assert server.limits == {"worker_connections": 1024}


def test_a_cell_whose_loop_never_comes_back_is_ended_with_what_it_knows() -> None:
    """async_workload.py's watchdog: a client that holds the event loop (as a pool doing O(N)
    work per request does at 10,000 tasks) keeps the loop from reaching any timeout of its
    own; the cell still ends, within its bound, and says how far it got."""
    code = (
        "import time\n"
        "import async_clients, async_workload\n"
        "class Hog(async_clients.AsyncDriver):\n"
        "    name = 'hog'\n"
        "    @classmethod\n"
        "    async def open(cls, concurrency, timeout=None):\n"
        "        return cls(None)\n"
        "    @classmethod\n"
        "    def settings(cls, concurrency, timeout=None):\n"
        "        return 'Hog()'\n"
        "    async def get_json(self, url):\n"
        "        time.sleep(0.01)  # and never yields to the loop\n"
        "async_workload.DRIVERS['hog'] = Hog\n"
        "async_workload.OPEN_TIMEOUT = async_workload.WARMUP_GRACE = 0.2\n"
        "async_workload.DRAIN_TIMEOUT = async_workload.TEARDOWN_TIMEOUT = 0.2\n"
        "async_workload.main(['hog', 'asyncio', '20', 'http://127.0.0.1:9', '0.1', '0.1'])\n"
    )
    started = time.monotonic()
    done = _limited(code, 4096)
    assert time.monotonic() - started < 30
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["error"].startswith("the cell did not end within 1 s"), result
    assert result["error"].endswith("1 of 20 tasks had an answer"), result
    assert result["settings"] == "Hog()"


def test_timed_runs_count_failed_requests_and_go_on() -> None:
    """workload.run_timed counts the calls that raise (the error rate of the payload sweep)
    instead of ending the run at the first one."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from workload import run_timed
    finally:
        sys.path.remove(str(BENCHMARKS))
    calls = [0]

    def flaky() -> None:
        calls[0] += 1
        if calls[0] > 20 and calls[0] % 3 == 0:  # the warm-up (20 calls) succeeds
            raise ConnectionError("refused")

    measured = run_timed([flaky], 0.05, 0.0)
    assert measured.errors > 0 and measured.requests > measured.errors
    assert measured.requests + measured.errors == calls[0] - 20
    assert measured.error == "ConnectionError: refused"


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
@skip_under_asan  # valgrind cannot run an AddressSanitizer build
@pytest.mark.timeout(240)
def test_instructions_per_request_runs() -> None:
    """benchmarks/instructions.py: two callgrind runs of a workload, the difference per
    request, and the costliest functions. Small runs (about 20 s, start-up under callgrind):
    only the form and a plausible range are checked."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "instructions.py"), "sync", "--requests", "10", "30",
         "--top", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    which, *lines = done.stdout.splitlines()
    # what was measured: this checkout's requestx (the tests import it too)
    assert which.startswith(f"requestx {Path(requestx.__file__).parent}, libcurl patches: "), which
    assert len(lines) == 3, done.stdout
    name, count, *rest = lines[0].split()
    assert name == "sync" and rest == ["instructions", "per", "request"], lines[0]
    # a GET through the whole client: tens of thousands of instructions, not a few, not millions
    assert 10_000 < int(count.replace(",", "")) < 1_000_000, lines[0]
    for row in lines[1:]:
        cost, function = row.split(maxsplit=1)
        assert int(cost.replace(",", "")) > 0 and function, row


def test_instructions_measures_the_requestx_a_relative_pythonpath_names(tmp_path: Path) -> None:
    """The measured children run in a scratch directory: a relative PYTHONPATH entry (how
    docs/libcurl-patches.md points at a variant's build) must still reach them."""
    variant = tmp_path / "variant-pkg" / "requestx"
    variant.mkdir(parents=True)
    (variant / "__init__.py").write_text("__libcurl__ = {'patches': ['a', 'b']}\n")
    probe = (
        f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); import instructions; "
        "print(instructions.describe_requestx())"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": "variant-pkg"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"requestx {variant.resolve()}, libcurl patches: 2"


def test_wake_cost_probe_runs(tmp_path: Path) -> None:
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    report = _run("wake_cost.py", tmp_path, "--rounds", "1", "--requests", "300", "--naps", "10")
    assert set(report["runs"]) == {"sleep", "spin", "nap:10"}
    for runs in report["runs"].values():
        (run,) = runs
        assert run["requests_per_second"] > 0 and run["cpu_us_per_request"] > 0
        assert 0 <= run["answered_during_nap"] <= 1


def test_decode_gzip_benchmark_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "decode_gzip.py"), "--rounds", "1", "--seconds", "0.2",
         "--warmup", "0.05", "--parse"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [line.split()[:3] for line in done.stdout.splitlines() if "x10" in line]
    assert [row[2] for row in rows] == ["python", "c", "none"] * 2, done.stdout
