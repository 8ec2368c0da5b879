"""The chaos soak (benchmarks/run_chaos.py) in smoke mode: a few seconds of 32 mixed requests at
a time, on asyncio, trio and blocking threads over HTTP/1.1, h2 and h2c, through the proxy that
resets, truncates, stalls, closes idle connections and forges GOAWAYs.

What could go wrong: a POST sent again after it may have reached the server, a request that
never ends, an exception outside `RequestError`, a wrong body returned as a success, an engine
thread that spins once the load stops, a client that no longer serves after the faults, an
engine object left alive. The soak checks each and exits 1 if one breaks; this runs it and reads
its report. The RSS limit is for long runs (the closing run is 600 s, after 60 s of warm-up): a
run this short has not warmed up, so the smoke run lifts it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

FAULTS = {
    "reset-before-request",
    "reset-before-response",
    "reset-mid-body",
    "truncate",
    "stall",
    "idle-close",
    "goaway",
}


@pytest.mark.timeout(150)
def test_the_chaos_soak_survives_its_faults(tmp_path: Path) -> None:
    report_path = tmp_path / "chaos.json"
    done = subprocess.run(
        [
            sys.executable, str(ROOT / "benchmarks/run_chaos.py"), "--seconds", "3",
            "--warmup", "1", "--concurrency", "32", "--max-growth-mb", "1000",
            "--json", str(report_path),
        ],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    report = json.loads(report_path.read_text())

    assert report["share"] == {"asyncio": 12, "trio": 12, "threads": 8}
    requests = report["requests"]
    assert requests["issued"] == requests["ended"] > 100
    # every kind ran, and most requests were answered in spite of the faults
    assert set(report["outcomes"]) == {"get", "post", "stream", "cancel"}
    for kind in ("get", "post", "stream"):
        assert report["outcomes"][kind].get("ok", 0) > 0, report["outcomes"]
    assert set(report["outcomes_by_runtime"]) == {"asyncio", "trio", "threads"}
    assert set(report["outcomes_by_protocol"]) == {"h1", "h2", "h2c"}
    # the proxy played faults, and names every kind it can play
    assert set(report["faults"]["faults"]) == FAULTS
    assert sum(report["faults"]["faults"].values()) > 0
    # what is required, as the report states it
    assert report["failures"] == {} and report["crashed"] == []
    assert report["posts_seen_twice"] == {} and report["origin"]["posts_seen_twice"] == []
    assert report["fresh_ok"] and report["fresh_failures"] == []
    assert report["idle_cpu"] < 0.05
    assert report["live_objects"] == {"transfers": 0, "easy_handles": 0, "buffers": 0}
    assert isinstance(report["rss_growth_mb"], float)
    assert all(report["checks"].values()) and report["ok"], report["checks"]
    assert "PASS  no POST seen twice" in done.stdout
