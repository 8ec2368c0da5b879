"""
A load generator in the spirit of wrk and h2load, built on requestx's engine.

    python -m requestx.bench -c 64 -d 10 http://127.0.0.1:8080/
    python -m requestx.bench -c 100 -n 100000 --http2 --latency https://127.0.0.1:8443/
    python -m requestx.bench -m POST --data '{"a": 1}' -H 'Content-Type: application/json' URL
    python -m requestx.bench -e 1 -c 200 -d 10 --json URL       (one engine: one loop thread)
    python -m requestx.bench --client -c 64 -d 10 URL           (through AsyncClient.send)

By default the engines run the load themselves, as wrk's threads do: each keeps its share of
the `-c` connections busy with copies of one prepared request, starting the next copy as each
one's body is in, and no Python runs per request (`Engine.start_load`, csrc/load.h). `-e` engines
(one loop thread each; default one per CPU, at most one per connection) share a process, and
`-t` worker processes split the connections and requests between them.

`--client` sends every request through `AsyncClient.send` instead, from as many tasks as
connections on an event loop (`--loop`): what is measured is then requestx's Python client,
not the server.

It prints requests/s, transfer/s, CPU per request, errors by kind and, with `--latency`, the
latency distribution; `--json` prints the same as one JSON object. The exit status is 0 when
at least one request succeeded, 1 when none did, 2 for bad arguments.

Latency is measured per request from the moment it is handed to the engine (or the client)
until its body is in (wrk measures the same span on its side of the socket).
"""

from __future__ import annotations

import argparse
import array
import json
import math
import multiprocessing
import os
import sys
import time
import typing

__all__ = ["main", "run"]

_ERROR_KINDS = (
    # (exception class name in requestx, wrk's word for it); the first match wins
    ("ConnectTimeout", "timeout"),
    ("ReadTimeout", "timeout"),
    ("WriteTimeout", "timeout"),
    ("PoolTimeout", "timeout"),
    ("ConnectError", "connect"),
    ("ProxyError", "connect"),
    ("ReadError", "read"),
    ("RemoteProtocolError", "read"),
    ("WriteError", "write"),
)


class Settings(typing.NamedTuple):
    url: str
    connections: int
    duration: float | None  # seconds; None with `requests`
    requests: int | None  # total; None with `duration`
    method: str
    headers: list[tuple[str, str]]
    body: bytes | None
    http2: bool
    h2c: bool
    verify: bool | str
    timeout: float
    loop: str
    client: bool = False  # through AsyncClient.send on `loop`, else the engines run the load
    engines: int = 1  # per worker process, without `client`


def _error_kind(exc: BaseException) -> str:
    names = {cls.__name__ for cls in type(exc).__mro__}
    for name, kind in _ERROR_KINDS:
        if name in names:
            return kind
    return type(exc).__name__


def _client_options(settings: Settings, connections: int) -> dict[str, typing.Any]:
    """The client a worker (or one of its engines) uses: a pool of `connections`."""
    import requestx

    return {
        "limits": requestx.Limits(
            max_connections=connections, max_keepalive_connections=connections
        ),
        "http1": not settings.h2c,
        "http2": settings.http2 or settings.h2c,
        "verify": settings.verify,
        "timeout": settings.timeout,
        "headers": settings.headers,
        "trust_env": False,
    }


# --- one worker, the client's way: an event loop, a client, `connections` tasks --------------


async def _work(settings: Settings, share: int, budget: int | None) -> dict[str, typing.Any]:
    import requestx

    client = requestx.AsyncClient(**_client_options(settings, share))
    latencies = array.array("q")  # nanoseconds, one per completed request
    errors: dict[str, int] = {}
    counts = {"non_2xx_3xx": 0, "bytes": 0}
    remaining = [budget]
    deadline = None if settings.duration is None else time.perf_counter() + settings.duration
    # One request, built once and sent again and again, as wrk sends the same bytes: what is
    # measured is the client sending and receiving, not building requests.
    prepared = client.build_request(settings.method, settings.url, content=settings.body)
    send = client.send
    clock = time.perf_counter_ns

    async def one_connection() -> None:
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                return
            if remaining[0] is not None:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            started = clock()
            try:
                response = await send(prepared)
            except requestx.HTTPError as exc:
                kind = _error_kind(exc)
                errors[kind] = errors.get(kind, 0) + 1
                continue
            latencies.append(clock() - started)
            status = response.status_code
            if status < 200 or status >= 400:
                counts["non_2xx_3xx"] += 1
            counts["bytes"] += len(response.content) + len(response._raw_headers or b"")

    import anyio

    cpu_before = time.process_time()
    started = time.perf_counter()
    async with client, anyio.create_task_group() as group:
        for _ in range(share):
            group.start_soon(one_connection)
    elapsed = time.perf_counter() - started
    return {
        "elapsed": elapsed,
        "cpu_seconds": time.process_time() - cpu_before,  # every thread of this process
        "latencies": latencies.tobytes(),
        "errors": errors,
        "non_2xx_3xx": counts["non_2xx_3xx"],
        "bytes": counts["bytes"],
    }


# --- one worker, the engines' way: `engines` engines each run their share of the load -------


def _wait_for_runs(runs: list[typing.Any]) -> None:
    """Until every load run has ended, 50 ms at a time so that Python runs signal handlers
    (Ctrl-C) between waits; each engine's loop thread runs its load meanwhile."""
    for run in runs:
        while not run.wait(0.05):
            pass


def _work_engines(settings: Settings, share: int, budget: int | None) -> dict[str, typing.Any]:
    import requestx
    from requestx._exceptions import exception_for_engine_error

    engines = max(1, min(settings.engines, share))
    connections = _split(share, engines)
    budgets: list[int | None] = [None] * engines
    if budget is not None:
        budgets = list(_split(budget, engines))
    # The clients only prepare the request and own the engines. An AsyncClient's engine keeps
    # every connection for the load; a blocking Client's keeps half for its blocking lanes
    # (Engine._reserve_lanes), which a load run does not use.
    clients = [requestx.AsyncClient(**_client_options(settings, count)) for count in connections]
    try:
        cpu_before = time.process_time()
        started = time.perf_counter()
        runs = []
        try:
            # Started inside the try, so that a Ctrl-C between two starts stops the runs
            # already going, as one during the wait does.
            for client, count, limit in zip(clients, connections, budgets):
                request = client.build_request(settings.method, settings.url, content=settings.body)
                transport = client._transport
                arguments = transport._engine_arguments(request, client._timeouts_for(request))
                runs.append(
                    transport._engine.start_load(
                        *arguments, count, limit or 0, settings.duration or 0.0
                    )
                )
            _wait_for_runs(runs)
        except BaseException:
            for run in runs:
                run.stop()
            _wait_for_runs(runs)
            raise
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu_before  # every thread of this process
        results = [run.results() for run in runs]
    finally:
        for client in clients:
            client._transport._close_engine()  # no event loop here to await aclose() on
    latencies = array.array("q")
    errors: dict[str, int] = {}
    for result in results:
        in_us = array.array("q")
        in_us.frombytes(result["latencies_us"])
        latencies.extend(value * 1000 for value in in_us)
        for code, count in result["errors"].items():
            kind = _error_kind(exception_for_engine_error(code, result["first_error"], request))
            errors[kind] = errors.get(kind, 0) + count
    return {
        "elapsed": elapsed,
        "cpu_seconds": cpu,
        "latencies": latencies.tobytes(),
        "errors": errors,
        "non_2xx_3xx": sum(result["non_2xx_3xx"] for result in results),
        "bytes": sum(result["bytes"] for result in results),
    }


def _run_worker(settings: Settings, share: int, budget: int | None) -> dict[str, typing.Any]:
    """One worker process's run: its engines, or the event loop `settings.loop` names."""
    if not settings.client:
        return _work_engines(settings, share, budget)
    import anyio

    backend, options = "asyncio", {}
    if settings.loop == "uvloop":
        options = {"use_uvloop": True}
    elif settings.loop == "trio":
        backend = "trio"
    return anyio.run(_work, settings, share, budget, backend=backend, backend_options=options)


def _worker_entry(settings: Settings, share: int, budget: int | None, conn: typing.Any) -> None:
    try:
        conn.send(_run_worker(settings, share, budget))
    except BaseException as exc:  # reported to the parent, which fails the run
        conn.send({"failed": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


def _split(total: int, parts: int) -> list[int]:
    """`total` as `parts` near-equal shares: 10 in 3 -> [4, 3, 3]."""
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]


def run(settings: Settings, processes: int = 1) -> dict[str, typing.Any]:
    """Run the load and return the figures `main` prints (also what `--json` prints)."""
    shares = _split(settings.connections, processes)
    budgets: list[int | None] = [None] * processes
    if settings.requests is not None:
        budgets = list(_split(settings.requests, processes))
    wall_started = time.perf_counter()
    if processes == 1:
        parts = [_run_worker(settings, shares[0], budgets[0])]
    else:
        context = multiprocessing.get_context("spawn")  # no engine thread is forked
        pipes, workers = [], []
        for share, budget in zip(shares, budgets):
            receiver, sender = context.Pipe(duplex=False)
            worker = context.Process(target=_worker_entry, args=(settings, share, budget, sender))
            worker.start()
            sender.close()
            pipes.append(receiver)
            workers.append(worker)
        parts = [pipe.recv() for pipe in pipes]
        for worker in workers:
            worker.join()
        failed = [part["failed"] for part in parts if "failed" in part]
        if failed:
            raise RuntimeError("a worker process failed: " + "; ".join(failed))
    return _summarise(settings, processes, parts, time.perf_counter() - wall_started)


def _summarise(
    settings: Settings, processes: int, parts: list[dict[str, typing.Any]], wall: float
) -> dict[str, typing.Any]:
    latencies = array.array("q")
    errors: dict[str, int] = {}
    for part in parts:
        latencies.frombytes(part["latencies"])
        for kind, count in part["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    completed = len(latencies)
    elapsed = max(part["elapsed"] for part in parts)
    cpu = sum(part["cpu_seconds"] for part in parts)
    transferred = sum(part["bytes"] for part in parts)
    ordered = sorted(latencies)
    micro = [value / 1000 for value in ordered]
    mean = sum(micro) / completed if completed else 0.0
    stdev = math.sqrt(sum((v - mean) ** 2 for v in micro) / completed) if completed else 0.0
    return {
        "url": settings.url,
        "connections": settings.connections,
        "processes": processes,
        "engines": None if settings.client else settings.engines,
        "through": "AsyncClient.send" if settings.client else "engine",
        "protocol": "h2c" if settings.h2c else ("h2 (ALPN)" if settings.http2 else "HTTP/1.1"),
        "loop": settings.loop if settings.client else None,
        "method": settings.method,
        "duration_seconds": elapsed,
        "requests": completed,
        "requests_per_second": completed / elapsed if elapsed else 0.0,
        "bytes_read": transferred,
        "bytes_per_second": transferred / elapsed if elapsed else 0.0,
        "cpu_seconds": cpu,
        "cpu_us_per_request": cpu / completed * 1e6 if completed else None,
        "non_2xx_3xx": sum(part["non_2xx_3xx"] for part in parts),
        "errors": errors,
        "latency_us": {
            "min": micro[0] if micro else None,
            "mean": mean if micro else None,
            "stdev": stdev if micro else None,
            "max": micro[-1] if micro else None,
            "percentiles": {
                label: _percentile(micro, fraction)
                for label, fraction in (
                    ("50", 0.50),
                    ("75", 0.75),
                    ("90", 0.90),
                    ("95", 0.95),
                    ("99", 0.99),
                    ("99.9", 0.999),
                )
            },
        },
        "wall_seconds": wall,
    }


def _percentile(ordered: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile of sorted values (None for no values)."""
    if not ordered:
        return None
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


# --- the command line ---------------------------------------------------------------------


def _duration(text: str) -> float:
    """wrk's durations: "10", "10s", "500ms", "2m", "1h"."""
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for suffix in ("ms", "s", "m", "h"):
        if text.endswith(suffix):
            number, scale = text[: -len(suffix)], units[suffix]
            break
    else:
        number, scale = text, 1.0
    try:
        value = float(number) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (say 10s, 500ms, 2m)") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"the duration must be positive, not {text!r}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _header(text: str) -> tuple[str, str]:
    name, colon, value = text.partition(":")
    if not colon or not name.strip():
        raise argparse.ArgumentTypeError(f"a header is 'Name: value', not {text!r}")
    return name.strip(), value.strip()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m requestx.bench",
        description="HTTP load generator on requestx (in the spirit of wrk and h2load).",
    )
    parser.add_argument("url", help="the URL every request goes to")
    parser.add_argument("-c", "--connections", type=_positive, default=10, help="(10)")
    length = parser.add_mutually_exclusive_group()
    length.add_argument(
        "-d", "--duration", type=_duration, help="how long to run: 10s, 500ms, 2m (10s)"
    )
    length.add_argument("-n", "--requests", type=_positive, help="how many requests in all")
    parser.add_argument("-t", "--processes", type=_positive, default=1, help="worker processes (1)")
    parser.add_argument(
        "-e",
        "--engines",
        type=_positive,
        default=None,
        help="engines (loop threads) per process (one per CPU)",
    )
    parser.add_argument(
        "--client",
        action="store_true",
        help="send each request through AsyncClient.send on an event loop (measures the client)",
    )
    parser.add_argument("-m", "--method", default=None, help="(GET, or POST with --data)")
    parser.add_argument("--data", help="request body; @FILE reads it from a file", default=None)
    parser.add_argument(
        "-H", "--header", type=_header, action="append", default=[], help="'Name: value'"
    )
    protocol = parser.add_mutually_exclusive_group()
    protocol.add_argument(
        "--http2", action="store_true", help="HTTP/2 by ALPN over https (else HTTP/1.1)"
    )
    protocol.add_argument("--h2c", action="store_true", help="HTTP/2 over http, prior knowledge")
    parser.add_argument("--cacert", help="CA bundle to verify the server with")
    parser.add_argument("-k", "--insecure", action="store_true", help="do not verify TLS")
    parser.add_argument("--timeout", type=_duration, default=10.0, help="per request (10s)")
    parser.add_argument(
        "--loop",
        choices=("asyncio", "uvloop", "trio"),
        default=None,
        help="with --client (uvloop if installed)",
    )
    parser.add_argument("--latency", action="store_true", help="print the latency distribution")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    body: bytes | None = None
    if args.data is not None:
        if args.data.startswith("@"):
            with open(args.data[1:], "rb") as file:
                body = file.read()
        else:
            body = args.data.encode()
    loop = args.loop
    if loop is None:
        try:
            import uvloop  # noqa: F401
        except ImportError:
            loop = "asyncio"
        else:
            loop = "uvloop"
    verify: bool | str = False if args.insecure else (args.cacert or True)
    return Settings(
        url=args.url,
        connections=args.connections,
        duration=None if args.requests else (args.duration or 10.0),
        requests=args.requests,
        method=(args.method or ("POST" if body is not None else "GET")).upper(),
        headers=list(args.header),
        body=body,
        http2=args.http2,
        h2c=args.h2c,
        verify=verify,
        timeout=args.timeout,
        loop=loop,
        client=args.client,
        engines=args.engines or os.cpu_count() or 1,
    )


def _ms(microseconds: float | None) -> str:
    if microseconds is None:
        return "-"
    if microseconds >= 1_000_000:
        return f"{microseconds / 1_000_000:.2f}s"
    if microseconds >= 1000:
        return f"{microseconds / 1000:.2f}ms"
    return f"{microseconds:.0f}us"


def _size(count: float) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.2f}{unit}"
    return f"{count:.0f}B"


def _report(result: dict[str, typing.Any], latency: bool) -> str:
    lines = []
    what = f"{result['requests']:,} requests" if result["requests"] else "no requests"
    lines.append(f"Running {result['duration_seconds']:.2f}s test @ {result['url']}")
    how = (
        f"{result['engines']} engine(s) per process"
        if result["through"] == "engine"
        else f"AsyncClient.send on {result['loop']}"
    )
    lines.append(
        f"  {result['processes']} process(es), {how}, {result['connections']} connections, "
        f"{result['protocol']}, {result['method']}"
    )
    stats = result["latency_us"]
    lines.append(
        f"  Latency  avg {_ms(stats['mean'])}  stdev {_ms(stats['stdev'])}  max {_ms(stats['max'])}"
    )
    if latency:
        lines.append("  Latency distribution")
        for label, value in stats["percentiles"].items():
            lines.append(f"    {label + '%':>6}  {_ms(value)}")
    lines.append(
        f"  {what} in {result['duration_seconds']:.2f}s, {_size(result['bytes_read'])} read"
    )
    if result["non_2xx_3xx"]:
        lines.append(f"  Non-2xx or 3xx responses: {result['non_2xx_3xx']:,}")
    if result["errors"]:
        kinds = ", ".join(f"{kind} {count:,}" for kind, count in sorted(result["errors"].items()))
        lines.append(f"  Errors: {kinds}")
    cpu = result["cpu_us_per_request"]
    lines.append(f"Requests/sec: {result['requests_per_second']:>12,.2f}")
    lines.append(f"Transfer/sec: {_size(result['bytes_per_second']):>12}")
    lines.append(f"CPU/request:  {'-' if cpu is None else f'{cpu:.1f}us':>12}  (client processes)")
    return "\n".join(lines)


def main(argv: typing.Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = _settings(args)
    try:
        result = run(settings, args.processes)
    except KeyboardInterrupt:
        return 130
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(_report(result, args.latency))
    return 0 if result["requests"] else 1


if __name__ == "__main__":
    # The module runs as __main__; requestx itself is imported inside the workers.
    sys.exit(main())
