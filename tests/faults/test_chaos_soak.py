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
import typing
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
    assert set(report["live_objects"]) >= {"transfers", "easy_handles", "buffers", "decoders"}
    assert not any(report["live_objects"].values()), report["live_objects"]
    assert isinstance(report["rss_growth_mb"], float)
    assert all(report["checks"].values()) and report["ok"], report["checks"]
    assert "PASS  no POST seen twice" in done.stdout


def _soak_module() -> typing.Any:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run_chaos
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return run_chaos


def _passing_report() -> dict[str, typing.Any]:
    return {
        "settings": {"max_growth_mb": 5.0},
        "origin": {"posts_seen_twice": []},
        "rss_growth_mb": 1.0,
        "idle_cpu": 0.01,
        "fresh_ok": True,
        "live_objects": {"transfers": 0, "easy_handles": 0, "buffers": 0},
    }


def test_each_broken_requirement_fails_the_soak() -> None:
    """The verdict itself: a report that breaks one requirement is not ok, and names it."""
    chaos = _soak_module()

    def verdict(report: dict[str, typing.Any], tally: typing.Any = None) -> dict[str, bool]:
        tally = tally or chaos.Tally()
        result = chaos.summarize(report, tally, chaos.Stages(1))
        return {name: ok for name, ok in result["checks"].items() if not ok}

    assert verdict(_passing_report()) == {}
    report = _passing_report()
    report["origin"]["posts_seen_twice"] = ["asyncio-h1-post-7"]
    assert verdict(report) == {"no POST seen twice": False}
    for key, value, check in [
        ("rss_growth_mb", 6.0, "RSS growth < 5.0 MB"),
        ("idle_cpu", 0.2, "idle CPU < 5%"),
        ("fresh_ok", False, "fresh requests succeed"),
        ("live_objects", {"transfers": 1}, "no engine object left"),
        ("hung", ["asyncio-h2-get-3 (61 s)"], "no request lost or hung"),
    ]:
        assert verdict({**_passing_report(), key: value}) == {check: False}
    lost = chaos.Tally()
    lost.start("trio", "h2c", "get")  # issued, never ended
    assert verdict(_passing_report(), lost) == {"no request lost or hung": False}


def test_only_request_errors_and_cancellation_count_as_documented() -> None:
    import requestx

    chaos = _soak_module()
    assert chaos.classify(requestx.ReadTimeout("slow")) == ("ReadTimeout", "")
    assert chaos.classify(requestx.RemoteProtocolError("cut")) == ("RemoteProtocolError", "")
    outcome, failure = chaos.classify(RuntimeError("engine closed"))
    assert outcome == "RuntimeError" and failure.startswith("undocumented exception")
    outcome, failure = chaos.classify(chaos.Corrupt("corrupt: body of 3 bytes, 5 expected"))
    assert outcome == "corrupt" and failure
    tally = chaos.Tally()
    rid = tally.start("threads", "h1", "get")
    tally.end(rid, ("threads", "h1", "get"), *chaos.classify(ValueError("x")))
    report = chaos.summarize(_passing_report(), tally, chaos.Stages(1))
    assert report["checks"]["every exception documented, every answer right"] is False
    assert report["failures"] == {"undocumented exception": 1}
