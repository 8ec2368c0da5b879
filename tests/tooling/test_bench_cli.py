"""
`python -m requestx.bench`, the load generator: run as a user runs it (a subprocess) against
nginx and hypercorn, with what it reports checked against what the servers counted. Both
ways of running the load: the engines' own (the default, `Engine.start_load`) and `--client`
(every request through `AsyncClient.send` on an event loop).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import typing

import pytest

from requestx import bench
from tests.servers import RawServer
from tests.servers.hypercorn_server import HypercornServer
from tests.servers.nginx import Nginx, nginx_or_skip

# How each test runs the load: the engines' way (one and two engines), or through the client.
MODES = {
    "engine": [],
    "two-engines": ["-e", "2"],
    "client": ["--client", "--loop", "asyncio"],
}


@pytest.fixture(scope="module")
def nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(http2=True, log=True) as server:
        yield server


def _bench(*arguments: str) -> tuple[int, dict[str, typing.Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "requestx.bench", "--json", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stderr == "", done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("mode", MODES)
def test_a_counted_run_against_nginx(nginx: Nginx, mode: str) -> None:
    before = len(nginx.requested_uris())
    code, result = _bench(*MODES[mode], "-c", "8", "-n", "500", nginx.url + "/get?bench")
    assert code == 0
    assert result["requests"] == 500 and result["errors"] == {}
    assert nginx.requested_uris()[before:].count("/get?bench") == 500
    latency = result["latency_us"]
    assert 0 < latency["min"] <= latency["percentiles"]["50"] <= latency["percentiles"]["99"]
    assert latency["percentiles"]["99.9"] <= latency["max"]
    # Every response is 13 bytes of body plus its header block.
    assert result["bytes_read"] > 500 * 13
    assert result["cpu_us_per_request"] > 0
    assert result["through"] == ("AsyncClient.send" if mode == "client" else "engine")


@pytest.mark.parametrize("mode", MODES)
def test_a_counted_run_against_hypercorn(server: HypercornServer, mode: str) -> None:
    server.reset_stats()
    code, result = _bench(*MODES[mode], "-c", "6", "-n", "300", server.url + "/echo")
    assert code == 0 and result["requests"] == 300 and result["errors"] == {}
    assert server.request_count() == 300
    assert server.connection_count() <= 6  # kept alive, one per "connection" at most


@pytest.mark.parametrize("mode", MODES)
def test_every_connection_asked_for_is_used(server: HypercornServer, mode: str) -> None:
    # Answers that take 0.2 s keep all six copies in flight at once: six connections, not the
    # part of them a blocking client keeps for its lanes (test_blocking_lanes).
    server.reset_stats()
    code, result = _bench(*MODES[mode], "-c", "6", "-n", "12", server.url + "/slow?delay=0.2")
    assert code == 0 and result["requests"] == 12 and result["errors"] == {}
    assert server.connection_count() == 6


def test_a_timed_run_with_two_processes(nginx: Nginx) -> None:
    code, result = _bench("-t", "2", "-c", "4", "-d", "0.5", nginx.url + "/get")
    assert code == 0
    assert result["processes"] == 2 and result["connections"] == 4
    assert result["requests"] > 0 and result["errors"] == {}
    assert 0.5 <= result["duration_seconds"] < 5


@pytest.mark.parametrize(
    "how", [[], ["--client", "--loop", "uvloop"], ["--client", "--loop", "trio"]]
)
def test_post_with_headers_reaches_the_server(server: HypercornServer, how: list[str]) -> None:
    server.reset_stats()
    code, result = _bench(
        *how, "-n", "20", "-c", "2", "--data", '{"a": 1}',
        "-H", "Content-Type: application/json", "-H", "X-Bench: yes", server.url + "/echo",
    )  # fmt: skip
    assert code == 0 and result["requests"] == 20
    assert result["method"] == "POST"
    assert server.request_count() == 20


def test_the_request_the_engines_send_is_the_one_asked_for(server: HypercornServer) -> None:
    # /echo answers with what it received; the engines keep no bodies, so ask the server how
    # many bytes came back: a POST echo of the body and headers is larger than a GET's.
    code, get = _bench("-n", "10", "-c", "2", server.url + "/echo")
    assert code == 0
    code, post = _bench(
        "-n", "10", "-c", "2", "--data", "x" * 1000, "-H", "X-Bench: yes", server.url + "/echo"
    )
    assert code == 0
    assert post["bytes_read"] - get["bytes_read"] >= 10 * 1000


def test_http2_over_tls(nginx: Nginx) -> None:
    code, result = _bench(
        "--http2", "--cacert", nginx.ca_file, "-c", "16", "-n", "200", nginx.tls_url + "/get"
    )
    assert code == 0 and result["requests"] == 200 and result["protocol"] == "h2 (ALPN)"


@pytest.mark.parametrize("mode", ["engine", "client"])
def test_h2c(nginx: Nginx, mode: str) -> None:
    before = len(nginx.requested_uris())
    code, result = _bench(*MODES[mode], "--h2c", "-c", "8", "-n", "100", nginx.h2c_url + "/get")
    assert code == 0 and result["requests"] == 100
    assert len(nginx.requested_uris()) - before == 100


@pytest.mark.parametrize("mode", ["engine", "client"])
def test_errors_are_counted_by_kind(mode: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, result = _bench(*MODES[mode], "-c", "2", "-n", "10", f"http://127.0.0.1:{port}/")
    assert code == 1  # not one request succeeded
    assert result["requests"] == 0
    assert result["errors"] == {"connect": 10}


@pytest.mark.parametrize("mode", ["engine", "client"])
def test_timeouts_are_counted_by_kind(raw_server: RawServer, mode: str) -> None:
    # The raw server reads each request and never answers: every request times out.
    code, result = _bench(
        *MODES[mode], "-c", "2", "-n", "4", "--timeout", "200ms", raw_server.url + "/stall"
    )
    assert code == 1 and result["requests"] == 0
    assert result["errors"] == {"timeout": 4}


def _where_it_hangs(process: subprocess.Popen[str]) -> str:
    """The Python stacks of a process started with -X faulthandler, which dumps them on
    SIGABRT, then dies."""
    process.send_signal(signal.SIGABRT)
    _, stderr = process.communicate(timeout=10)
    return stderr[-6000:]


def test_ctrl_c_stops_a_long_run_promptly(nginx: Nginx) -> None:
    # Python's own Ctrl-C handler set in the child: a process started in the background by a
    # non-interactive shell (`scripts/test.sh &`) has SIGINT ignored, Python then leaves it
    # so, and the child would inherit that.
    with_ctrl_c = (
        "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "runpy.run_module('requestx.bench', run_name='__main__', alter_sys=True)"
    )
    bench_process = subprocess.Popen(
        [
            *(sys.executable, "-X", "faulthandler", "-c", with_ctrl_c),
            *("-c", "32", "-d", "60", nginx.url + "/get"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1.5)  # the engines are running the load
        sent = time.monotonic()
        bench_process.send_signal(signal.SIGINT)
        try:
            bench_process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("still running 10 s after Ctrl-C:\n" + _where_it_hangs(bench_process))
        assert time.monotonic() - sent < 3
        assert bench_process.returncode == 130
    finally:
        bench_process.kill()
        bench_process.communicate()


@pytest.mark.parametrize("mode", ["engine", "client"])
def test_non_2xx_responses_are_counted(server: HypercornServer, mode: str) -> None:
    code, result = _bench(*MODES[mode], "-c", "2", "-n", "10", server.url + "/status/503")
    assert code == 0 and result["requests"] == 10 and result["non_2xx_3xx"] == 10


def test_the_text_report(nginx: Nginx) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "requestx.bench",
            "-c",
            "2",
            "-n",
            "50",
            "--latency",
            nginx.url + "/get",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    for expected in ("Requests/sec:", "Transfer/sec:", "CPU/request:", "99.9%", "50 requests in"):
        assert expected in done.stdout


@pytest.mark.parametrize(
    "arguments",
    [
        ["-c", "0", "http://127.0.0.1/"],
        ["-d", "soon", "http://127.0.0.1/"],
        ["-H", "no colon", "x"],
    ],
)
def test_bad_arguments_exit_2(arguments: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        bench.main(arguments)
    assert info.value.code == 2


def test_durations_and_shares() -> None:
    assert bench._duration("500ms") == 0.5
    assert bench._duration("2m") == 120
    assert bench._duration("10") == 10
    assert bench._split(10, 3) == [4, 3, 3]
    assert bench._percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert bench._percentile([], 0.5) is None
