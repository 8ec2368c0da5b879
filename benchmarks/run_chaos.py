"""Chaos soak: load held and faults survived.

    python benchmarks/run_chaos.py --seconds 600 [--concurrency 256] [--json PATH]

`--concurrency` requests at a time (256 by default: 3/8 as asyncio tasks, 3/8 as trio tasks,
1/4 on blocking threads, all in this process) go through a fault-injecting TCP proxy to a
hypercorn origin, both on loopback in child processes (`chaos_servers.py` says what each does
and which faults the proxy plays). Each request picks at random:

- a protocol: HTTP/1.1, HTTP/2 over TLS (h2), or cleartext HTTP/2 with prior knowledge (h2c);
  each runtime has one client per protocol (`Limits(100, 100)`, read timeout 2 s);
- a kind: `get` (0 to 512 KiB, the body checked byte for byte), `post` (0 to 256 KiB; the
  origin's length and CRC of what it read checked), `stream` (1 MiB streamed, abandoned after
  the first chunk), `cancel` (cancelled after 0 to 50 ms: asyncio `Task.cancel()`, a trio
  cancel scope, or for a blocking thread a per-request timeout of 20 to 100 ms).

Every request carries an id (`?id=`) that the origin counts. The run has a warm-up (`--warmup`,
a fifth of `--seconds` by default, at most 60 s), then `--seconds` of load; between them and
after, the load stops while the resident set size is read. Then, with the clients still open,
the process's CPU use over 2 s of doing nothing; then, faults off, fresh requests over every
protocol from every runtime; then the clients close. Required (exit status 1 otherwise):

- no POST seen twice by the origin;
- every request issued ended with a response or an exception (none lost, none hung: each
  runtime must finish within 60 s of the deadline, each request within 60 s);
- every exception a `requestx.RequestError` (or the cancellation itself), every answer
  complete and correct;
- RSS growth under `--max-growth-mb` (5) from the end of warm-up to the end of the load;
- idle CPU under 5 % (no engine thread spinning);
- the fresh requests all succeed; no engine object (transfer, easy handle, buffer) left alive.

It prints progress to stderr, a table to stdout and, with `--json PATH`, everything as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import itertools
import json
import multiprocessing
import os
import random
import sys
import tempfile
import threading
import time
import typing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import chaos_servers  # noqa: E402
from chaos_servers import PATTERN, READ_TIMEOUT  # noqa: E402
from process_memory import c_heap_free, c_heap_in_use, rss_bytes  # noqa: E402

PATTERN_VIEW = memoryview(PATTERN)  # compared with a body without copying a slice of it
PROTOCOLS = ("h1", "h2", "h2c")
KINDS = {"get": 40, "post": 30, "stream": 15, "cancel": 15}
HANG_SECONDS = 60.0  # a request in flight longer than this is hung; so is a runtime draining
IDLE_SECONDS = 2.0
REST_SETTLE_SECONDS = 1.5  # engine.c gives the heap back after IDLE_GIVE_BACK_US (1 s) parked
MAX_IDLE_CPU = 0.05
RUNTIMES = ("asyncio", "trio", "threads")


class Corrupt(Exception):
    """An answer that came back but is wrong (short, altered, a bad status)."""


def at_rest(stage: str, load_seconds: float, ended: int) -> dict[str, typing.Any]:
    from requestx import _core

    heap, free = c_heap_in_use(), c_heap_free()
    engine = _core.heap_stats()  # None when the engine's heap is the C library's malloc
    return {
        "stage": stage,
        "load_s": load_seconds,
        "requests_ended": ended,
        "rss_mb": round(rss_bytes() / 2**20, 1),
        "c_heap_in_use_mb": None if heap is None else round(heap / 2**20, 1),
        "c_heap_free_mb": None if free is None else round(free / 2**20, 1),
        "engine_heap_in_use_mb": None if engine is None else round(engine["allocated"] / 2**20, 1),
        "engine_heap_resident_mb": None if engine is None else round(engine["resident"] / 2**20, 1),
        "python_blocks": sys.getallocatedblocks(),
    }


def growth_at_rest(rests: list[dict[str, typing.Any]], key: str) -> float | None:
    """A reading's change from the first rest point to the last; None where it was not read."""
    first, last = rests[0].get(key), rests[-1].get(key)
    return None if first is None or last is None else round(last - first, 1)


def engine_threads() -> int:
    python_threads = {thread.native_id for thread in threading.enumerate()}
    return sum(1 for tid in os.listdir("/proc/self/task") if int(tid) not in python_threads)


def log_size(rng: random.Random, top: int) -> int:
    """0 now and then, else log-uniform in [1, top]: many small bodies, some large."""
    return 0 if rng.random() < 0.05 else int(2 ** rng.uniform(0, top.bit_length() - 1))


# --- bookkeeping ------------------------------------------------------------------------------


class Tally:
    """What the driver issued and how each request ended, shared by every runtime."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids = itertools.count()
        self.issued = 0
        self.ended = 0
        self.outcomes: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
        self.failures: collections.Counter[str] = collections.Counter()
        self.examples: list[str] = []
        self.inflight: dict[str, tuple[float, str]] = {}
        self.fresh_failures: list[str] = []
        # What each POST's caller got, by request number, for a POST the origin saw twice:
        # a code per request, allocated up front so that it does not grow the process.
        self.post_outcomes = bytearray(1 << 22)
        self.codes: dict[str, int] = {"?": 0}

    def post_outcome(self, rid: str) -> str:
        try:
            code = self.post_outcomes[int(rid.rsplit("-", 1)[1])]
        except (ValueError, IndexError):
            return "?"
        return next((name for name, n in self.codes.items() if n == code), "?")

    def start(self, runtime: str, protocol: str, kind: str) -> str:
        rid = f"{runtime}-{protocol}-{kind}-{next(self.ids)}"
        with self.lock:
            self.issued += 1
            self.inflight[rid] = (time.monotonic(), f"{runtime} {protocol} {kind}")
        return rid

    def end(self, rid: str, key: tuple[str, str, str], outcome: str, failure: str = "") -> None:
        with self.lock:
            self.ended += 1
            self.inflight.pop(rid, None)
            self.outcomes[(*key, outcome)] += 1
            if key[2] == "post":
                number = int(rid.rsplit("-", 1)[1])
                if number < len(self.post_outcomes):
                    self.post_outcomes[number] = self.codes.setdefault(outcome, len(self.codes))
            if failure:
                self.failures[failure.split(":", 1)[0]] += 1
                if len(self.examples) < 20:
                    self.examples.append(f"{rid} {' '.join(key)}: {failure}")

    def hung(self, older_than: float) -> list[str]:
        now = time.monotonic()
        with self.lock:
            return [
                f"{rid} {what} ({now - started:.0f} s)"
                for rid, (started, what) in self.inflight.items()
                if now - started > older_than
            ]

    def snapshot(self) -> tuple[int, int]:
        with self.lock:
            return self.issued, self.ended


class Stages:
    """The main thread opens each stage; each participant says when it is done with it."""

    def __init__(self, participants: int) -> None:
        self.participants = participants
        self.cond = threading.Condition()
        self.opened: dict[str, float] = {}  # stage -> deadline
        self.done: collections.Counter[str] = collections.Counter()
        self.crashed: list[str] = []

    def open(self, stage: str, deadline: float = 0.0) -> None:
        with self.cond:
            self.opened[stage] = deadline
            self.cond.notify_all()

    def wait_open(self, stage: str) -> float:
        with self.cond:
            self.cond.wait_for(lambda: stage in self.opened)
            return self.opened[stage]

    def finish(self, stage: str) -> None:
        with self.cond:
            self.done[stage] += 1
            self.cond.notify_all()

    def wait_done(self, stage: str, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(
                lambda: self.done[stage] >= self.participants, timeout=timeout
            )


# --- one request --------------------------------------------------------------------------------


def check_get(response: typing.Any, size: int) -> str:
    if response.status_code != 200:
        raise Corrupt(f"corrupt: status {response.status_code}")
    if PATTERN_VIEW[:size] != response.content:  # a view: the check copies nothing
        raise Corrupt(f"corrupt: body of {len(response.content)} bytes, {size} expected")
    return "ok"


def check_post(response: typing.Any, body: bytes) -> str:
    import zlib

    if response.status_code != 200:
        raise Corrupt(f"corrupt: status {response.status_code}")
    answer = response.json()
    if answer != {"length": len(body), "crc": zlib.crc32(body)}:
        raise Corrupt(f"corrupt: the origin read {answer}, sent {len(body)} bytes")
    return "ok"


def classify(exc: BaseException) -> tuple[str, str]:
    """(outcome, failure): failure is empty for an exception of the documented classes."""
    import requestx

    name = type(exc).__name__
    if isinstance(exc, Corrupt):
        return "corrupt", str(exc)
    if isinstance(exc, requestx.RequestError):
        return name, ""
    return name, f"undocumented exception: {name}: {exc}"


async def one_async(
    client: typing.Any, base: str, kind: str, rid: str, rng: random.Random, backend: str
) -> str:
    if kind == "get":
        size = log_size(rng, 512 * 1024)
        return check_get(await client.get(f"{base}/data?id={rid}&size={size}"), size)
    if kind == "post":
        start, length = rng.randrange(1024), log_size(rng, 256 * 1024)
        body = PATTERN[start : start + length]
        return check_post(await client.post(f"{base}/post?id={rid}", content=body), body)
    if kind == "stream":
        async with client.stream("GET", f"{base}/data?id={rid}&size={1 << 20}") as response:
            async for _ in response.aiter_bytes():
                break
        return "ok"
    url = rng.choice([f"{base}/slow?id={rid}&delay=0.2", f"{base}/data?id={rid}&size={1 << 20}"])
    after = rng.uniform(0, 0.05)
    if backend == "trio":
        import trio

        with trio.move_on_after(after) as scope:
            await client.get(url)
        return "cancelled" if scope.cancelled_caught else "done-before-cancel"
    task = asyncio.ensure_future(client.get(url))
    await asyncio.sleep(after)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return "cancelled"
    return "done-before-cancel"


def one_blocking(client: typing.Any, base: str, kind: str, rid: str, rng: random.Random) -> str:
    if kind == "get":
        size = log_size(rng, 512 * 1024)
        return check_get(client.get(f"{base}/data?id={rid}&size={size}"), size)
    if kind == "post":
        start, length = rng.randrange(1024), log_size(rng, 256 * 1024)
        body = PATTERN[start : start + length]
        return check_post(client.post(f"{base}/post?id={rid}", content=body), body)
    if kind == "stream":
        with client.stream("GET", f"{base}/data?id={rid}&size={1 << 20}") as response:
            for _ in response.iter_bytes():
                break
        return "ok"
    # no cancelling a blocking call from outside: a short timeout ends it instead
    client.get(f"{base}/slow?id={rid}&delay=0.5", timeout=rng.uniform(0.02, 0.1))
    return "done-before-cancel"


# --- the runtimes -------------------------------------------------------------------------------


class Soak:
    def __init__(self, args: argparse.Namespace, bases: dict[str, str], ca_file: str) -> None:
        self.args = args
        self.bases = bases
        self.ca_file = ca_file
        self.tally = Tally()
        quarter = args.concurrency // 4
        self.share = {
            "asyncio": (args.concurrency - quarter) // 2,
            "trio": args.concurrency - quarter - (args.concurrency - quarter) // 2,
            "threads": quarter,
        }
        self.stages = Stages(2 + self.share["threads"])
        # The load is cut into segments of --rest-every seconds; after each, every worker
        # ends its request and the process is measured at rest.
        segments = max(1, round(args.seconds / args.rest_every)) if args.rest_every else 1
        self.segment_seconds = args.seconds / segments
        self.load_stages = ["warmup"] + [f"load-{n + 1}" for n in range(segments)]
        self.blocking: dict[str, typing.Any] = {}
        self.kinds = list(KINDS)
        self.weights = list(KINDS.values())

    def client_options(self) -> dict[str, dict[str, typing.Any]]:
        import requestx

        common = {
            "timeout": requestx.Timeout(5.0, read=READ_TIMEOUT),
            "limits": requestx.Limits(max_connections=100, max_keepalive_connections=100),
            "verify": self.ca_file,
        }
        return {
            "h1": {**common},
            "h2": {**common, "http2": True},
            "h2c": {**common, "http1": False, "http2": True},
        }

    def draw(self, rng: random.Random) -> tuple[str, str]:
        return rng.choice(PROTOCOLS), rng.choices(self.kinds, self.weights)[0]

    def run_async(self, backend: str) -> None:
        import anyio

        try:
            anyio.run(self._async_main, backend, backend=backend)
        except BaseException as exc:  # a runtime that dies is a failure, reported
            self.stages.crashed.append(f"{backend}: {type(exc).__name__}: {exc}")
            for stage in (*self.load_stages, "fresh"):
                self.stages.finish(stage)

    async def _async_main(self, backend: str) -> None:
        import anyio
        import anyio.to_thread

        import requestx

        clients = {p: requestx.AsyncClient(**o) for p, o in self.client_options().items()}
        rng = random.Random(f"{self.args.seed}-{backend}")
        tally = self.tally
        try:
            for stage in self.load_stages:
                deadline = await anyio.to_thread.run_sync(self.stages.wait_open, stage)

                async def worker(seed: int, deadline: float = deadline) -> None:
                    wrng = random.Random(seed)
                    while time.monotonic() < deadline:
                        protocol, kind = self.draw(wrng)
                        rid = tally.start(backend, protocol, kind)
                        key = (backend, protocol, kind)
                        try:
                            base = self.bases[protocol]
                            outcome = await one_async(
                                clients[protocol], base, kind, rid, wrng, backend
                            )
                        except Exception as exc:
                            tally.end(rid, key, *classify(exc))
                        else:
                            tally.end(rid, key, outcome)

                async with anyio.create_task_group() as group:
                    for _ in range(self.share[backend]):
                        group.start_soon(worker, rng.randrange(1 << 30))
                self.stages.finish(stage)
            await anyio.to_thread.run_sync(self.stages.wait_open, "fresh")
            for protocol, client in clients.items():
                await self._fresh_async(backend, protocol, client)
        finally:
            for client in clients.values():
                await client.aclose()
        self.stages.finish("fresh")

    async def _fresh_async(self, backend: str, protocol: str, client: typing.Any) -> None:
        base = self.bases[protocol]
        for n in range(3):
            what = f"{backend} {protocol} fresh #{n}"
            try:
                check_get(await client.get(f"{base}/data?id=fresh&size=1000"), 1000)
                body = PATTERN[:5000]
                url = f"{base}/post?id={backend}-{protocol}-fresh-{n}"
                check_post(await client.post(url, content=body), body)
            except Exception as exc:
                self.tally.fresh_failures.append(f"{what}: {type(exc).__name__}: {exc}")

    def start_blocking(self) -> list[threading.Thread]:
        import requestx

        self.blocking = {p: requestx.Client(**o) for p, o in self.client_options().items()}
        threads = [
            threading.Thread(target=self._thread_main, args=(n,), daemon=True, name=f"chaos-{n}")
            for n in range(self.share["threads"])
        ]
        for thread in threads:
            thread.start()
        return threads

    def _thread_main(self, n: int) -> None:
        rng = random.Random(f"{self.args.seed}-thread-{n}")
        tally = self.tally
        try:
            for stage in self.load_stages:
                deadline = self.stages.wait_open(stage)
                while time.monotonic() < deadline:
                    protocol, kind = self.draw(rng)
                    rid = tally.start("threads", protocol, kind)
                    key = ("threads", protocol, kind)
                    try:
                        outcome = one_blocking(
                            self.blocking[protocol], self.bases[protocol], kind, rid, rng
                        )
                    except Exception as exc:
                        tally.end(rid, key, *classify(exc))
                    else:
                        tally.end(rid, key, outcome)
                self.stages.finish(stage)
            self.stages.wait_open("fresh")
            if n == 0:
                for protocol, client in self.blocking.items():
                    self._fresh_blocking(protocol, client)
        except BaseException as exc:
            self.stages.crashed.append(f"thread {n}: {type(exc).__name__}: {exc}")
            for stage in (*self.load_stages, "fresh"):
                self.stages.finish(stage)
            return
        self.stages.finish("fresh")

    def _fresh_blocking(self, protocol: str, client: typing.Any) -> None:
        base = self.bases[protocol]
        for n in range(3):
            try:
                check_get(client.get(f"{base}/data?id=fresh&size=1000"), 1000)
                body = PATTERN[:5000]
                check_post(
                    client.post(f"{base}/post?id=threads-{protocol}-fresh-{n}", content=body), body
                )
            except Exception as exc:
                self.tally.fresh_failures.append(
                    f"threads {protocol} fresh #{n}: {type(exc).__name__}: {exc}"
                )


# --- the run ------------------------------------------------------------------------------------


class Child:
    def __init__(self, target: typing.Any, *args: typing.Any) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child_conn = context.Pipe()
        self.process = context.Process(target=target, args=(child_conn, *args), daemon=True)
        self.process.start()
        if not self.conn.poll(30):
            raise RuntimeError(f"{target.__name__} did not start")
        self.ports: dict[str, int] = self.conn.recv()

    def ask(self, message: str) -> typing.Any:
        self.conn.send(message)
        if not self.conn.poll(30):
            raise RuntimeError(f"no answer to {message!r}")
        return self.conn.recv()

    def stop(self) -> None:
        with contextlib.suppress(OSError, RuntimeError, EOFError):
            self.ask("stop")
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()


def progress(message: str) -> None:
    print(f"run_chaos [{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace, workdir: Path) -> dict[str, typing.Any]:
    from tests.support.tls import TLSFiles

    tls = TLSFiles(workdir)
    origin = Child(chaos_servers.origin_main, tls.cert_file)
    proxy = Child(chaos_servers.proxy_main, origin.ports, args.seed)
    try:
        bases = {
            "h1": f"http://127.0.0.1:{proxy.ports['plain']}",
            "h2c": f"http://127.0.0.1:{proxy.ports['plain']}",
            "h2": f"https://127.0.0.1:{proxy.ports['tls']}",
        }
        return drive(args, Soak(args, bases, tls.ca_file), origin, proxy)
    finally:
        proxy.stop()
        origin.stop()


def drive(
    args: argparse.Namespace, soak: Soak, origin: Child, proxy: Child
) -> dict[str, typing.Any]:
    from requestx import _core

    stages, tally = soak.stages, soak.tally
    threads = soak.start_blocking()
    for backend in ("asyncio", "trio"):
        threading.Thread(target=soak.run_async, args=(backend,), daemon=True).start()
    hung: list[str] = []
    rss: dict[str, int] = {}
    rss_samples: list[float] = []  # every 10 s, under load (so with bodies in flight)
    rests: list[dict[str, typing.Any]] = []  # at the end of the warm-up and of each segment
    started = time.monotonic()
    load_seconds = 0.0
    for stage in soak.load_stages:
        seconds = args.warmup if stage == "warmup" else soak.segment_seconds
        deadline = time.monotonic() + seconds
        stages.open(stage, deadline)
        while not stages.wait_done(stage, timeout=10.0):
            now = time.monotonic()
            issued, ended = tally.snapshot()
            rss_now = rss_bytes() / 2**20
            rss_samples.append(round(rss_now, 1))
            progress(
                f"{stage}: {issued:,} issued, {ended:,} ended, {now - started:.0f} s, "
                f"RSS {rss_now:.1f} MB"
            )
            hung = tally.hung(HANG_SECONDS)
            if hung or now > deadline + HANG_SECONDS:
                hung = hung or [f"{stage} not over {HANG_SECONDS:.0f} s after its deadline"]
                break
        if hung:
            break
        if stage != "warmup":
            load_seconds += time.monotonic() - (deadline - seconds)
        gc.collect()
        # At rest means idle: an engine parked for a second gives its heap's free pages back
        # (csrc/heap.h), as it does whenever a service goes quiet; both readings wait for it.
        time.sleep(REST_SETTLE_SECONDS)
        rest = at_rest(stage, round(load_seconds, 1), tally.snapshot()[1])
        rests.append(rest)
        rss["warmup" if stage == "warmup" else "load"] = rss_bytes()
        progress(f"{stage} over, at rest: {rest}")
    settings = {**vars(args), "json": args.json and str(args.json)}
    report: dict[str, typing.Any] = {"settings": settings, "share": soak.share}
    if hung:
        report["hung"] = hung + tally.hung(HANG_SECONDS)[:20]
        report["faults"] = proxy.ask("stats")
        report["origin"] = origin.ask("stats")
        return summarize(report, tally, stages)

    # idle, the clients still open: nothing should run
    proxy.ask("faults off")
    time.sleep(chaos_servers.STALL_SECONDS + 0.5)  # stalled links end; new ones are clean
    threads_idle = engine_threads()
    cpu_before, wall_before = time.process_time(), time.monotonic()
    time.sleep(IDLE_SECONDS)
    idle_cpu = (time.process_time() - cpu_before) / (time.monotonic() - wall_before)
    progress(f"idle: {idle_cpu:.1%} CPU, {threads_idle} engine threads")

    stages.open("fresh")
    fresh_done = stages.wait_done("fresh", timeout=HANG_SECONDS)
    for client in soak.blocking.values():
        client.close()
    for thread in threads:
        thread.join(1)
    gc.collect()
    report.update(
        {
            "load_seconds": round(load_seconds, 1),
            "rss_warm_mb": round(rss["warmup"] / 2**20, 1),
            "rss_end_mb": round(rss["load"] / 2**20, 1),
            "rss_growth_mb": round((rss["load"] - rss["warmup"]) / 2**20, 2),
            "rss_samples_mb": rss_samples,
            "at_rest": rests,
            # Not checked, for telling a leak from memory malloc keeps: growth of what malloc
            # has handed out, of what it keeps free, and of Python's allocated blocks, over the
            # same span as RSS.
            "c_heap_growth_mb": growth_at_rest(rests, "c_heap_in_use_mb"),
            "c_heap_free_growth_mb": growth_at_rest(rests, "c_heap_free_mb"),
            "engine_heap": _core.libcurl_info()["heap"],
            "engine_heap_resident_growth_mb": growth_at_rest(rests, "engine_heap_resident_mb"),
            "python_blocks_growth": rests[-1]["python_blocks"] - rests[0]["python_blocks"],
            "idle_cpu": round(idle_cpu, 4),
            "idle_engine_threads": threads_idle,
            "fresh_ok": fresh_done and not tally.fresh_failures,
            "fresh_failures": tally.fresh_failures + ([] if fresh_done else ["fresh: hung"]),
            "live_objects": _core.live_objects(),
            "faults": proxy.ask("stats"),
            "origin": origin.ask("stats"),
        }
    )
    return summarize(report, tally, stages)


def summarize(report: dict[str, typing.Any], tally: Tally, stages: Stages) -> dict[str, typing.Any]:
    outcomes: dict[str, dict[str, int]] = collections.defaultdict(collections.Counter)
    by_runtime: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    by_protocol: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for (runtime, protocol, kind, outcome), n in tally.outcomes.items():
        outcomes[kind][outcome] += n
        by_runtime[runtime][outcome] += n
        by_protocol[protocol][outcome] += n
    issued, ended = tally.snapshot()
    report.update(
        {
            "requests": {"issued": issued, "ended": ended},
            "outcomes": {k: dict(sorted(v.items())) for k, v in sorted(outcomes.items())},
            "outcomes_by_runtime": {k: dict(sorted(v.items())) for k, v in by_runtime.items()},
            "outcomes_by_protocol": {k: dict(sorted(v.items())) for k, v in by_protocol.items()},
            "failures": dict(tally.failures),
            "failure_examples": tally.examples,
            "crashed": stages.crashed,
        }
    )
    args = report["settings"]
    origin = report.get("origin", {})
    checks = {
        "no POST seen twice": not origin.get("posts_seen_twice", ["(origin not asked)"]),
        "no request lost or hung": issued == ended and not report.get("hung"),
        "every exception documented, every answer right": not tally.failures and not stages.crashed,
        f"RSS growth < {args['max_growth_mb']} MB": report.get("rss_growth_mb", 1e9)
        < args["max_growth_mb"],
        f"idle CPU < {MAX_IDLE_CPU:.0%}": report.get("idle_cpu", 1.0) < MAX_IDLE_CPU,
        "fresh requests succeed": bool(report.get("fresh_ok")),
        "no engine object left": not any(report.get("live_objects", {"?": 1}).values()),
    }
    report["posts_seen_twice"] = {
        rid: tally.post_outcome(rid) for rid in origin.get("posts_seen_twice", [])
    }
    report["checks"] = checks
    report["ok"] = all(checks.values())
    return report


def print_table(report: dict[str, typing.Any]) -> None:
    settings, share = report["settings"], report["share"]
    requests = report["requests"]
    seconds = report.get("load_seconds") or settings["seconds"]
    print(
        f"chaos soak: {seconds} s of load after {settings['warmup']} s of warm-up, "
        f"{settings['concurrency']} at a time (asyncio {share['asyncio']}, trio {share['trio']}, "
        f"threads {share['threads']}), HTTP/1.1 + h2 + h2c through the fault proxy"
    )
    print(f"requests: {requests['issued']:,} issued, {requests['ended']:,} ended")
    print()
    columns = sorted({o for row in report["outcomes"].values() for o in row})
    width = max([8, *map(len, columns)])
    print(f"{'kind':<8}" + "".join(f"{c:>{width + 2}}" for c in columns))
    for kind, row in report["outcomes"].items():
        print(f"{kind:<8}" + "".join(f"{row.get(c, 0):>{width + 2},}" for c in columns))
    print()
    for title, table in (
        ("by protocol", report["outcomes_by_protocol"]),
        ("by runtime", report["outcomes_by_runtime"]),
    ):
        for name, row in sorted(table.items()):
            ok = row.get("ok", 0) + row.get("cancelled", 0) + row.get("done-before-cancel", 0)
            total = sum(row.values())
            print(f"{title:<12} {name:<8} {total:>9,} requests, {total - ok:>7,} raised")
    faults = report.get("faults", {})
    if faults:
        print()
        print("faults injected: " + ", ".join(f"{k} {v:,}" for k, v in faults["faults"].items()))
        print(f"  by protocol: {faults['faults_by_protocol']}")
        print(f"  proxied connections: {faults['connections']}")
        print(f"  GOAWAYs the origin sent itself on h2c: {faults['origin_goaways_seen_h2c']}")
    origin = report.get("origin", {})
    if origin:
        print(
            f"origin: {origin['requests']:,} requests, {origin['distinct_ids']:,} ids, "
            f"seen twice: {origin['seen_twice'] or 'none'}"
        )
    if "rss_growth_mb" in report:
        print(
            f"RSS {report['rss_warm_mb']} MB after warm-up, {report['rss_end_mb']} MB at the end "
            f"({report['rss_growth_mb']:+} MB); idle CPU {report['idle_cpu']:.1%} "
            f"({report['idle_engine_threads']} engine threads); live objects "
            f"{report['live_objects']}"
        )
        print(
            f"over the same span: C heap in use {report['c_heap_growth_mb']:+} MB, free in "
            f"malloc's arenas {report.get('c_heap_free_growth_mb', 0):+} MB, Python blocks "
            f"{report['python_blocks_growth']:+,} (MALLOC_ARENA_MAX="
            f"{os.environ.get('MALLOC_ARENA_MAX', 'unset')}); the engine's heap is "
            f"{report['engine_heap']}"
            + (
                ""
                if report["engine_heap_resident_growth_mb"] is None
                else f", its resident pages {report['engine_heap_resident_growth_mb']:+} MB"
            )
        )
    for rest in report.get("at_rest", []):
        print(
            f"  at rest after {rest['stage']:<8} {rest['load_s']:>6} s of load, "
            f"{rest['requests_ended']:>9,} requests: RSS {rest['rss_mb']} MB, C heap in use "
            f"{rest['c_heap_in_use_mb']} MB (free {rest.get('c_heap_free_mb')} MB), "
            + (
                ""
                if rest.get("engine_heap_in_use_mb") is None
                else f"engine heap {rest['engine_heap_in_use_mb']} MB in use "
                f"({rest['engine_heap_resident_mb']} MB resident), "
            )
            + f"{rest['python_blocks']:,} Python blocks"
        )
    for rid, outcome in list(report["posts_seen_twice"].items())[:20]:
        print(f"  ! POST {rid} reached the origin twice; its caller got: {outcome}")
    for line in report.get("hung", []) + report["crashed"] + report.get("fresh_failures", []):
        print(f"  ! {line}")
    for line in report["failure_examples"]:
        print(f"  ! {line}")
    print()
    for name, ok in report["checks"].items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="load after warm-up")
    parser.add_argument("--warmup", type=float, default=None, help="default: seconds/5, <= 60")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--max-growth-mb", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument(
        "--rest-every", type=float, default=60.0, help="a rest point every S s of load (0: none)"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.warmup is None:
        args.warmup = min(60.0, max(1.0, args.seconds / 5))
    if args.concurrency < 4:
        parser.error("--concurrency must be at least 4")
    with tempfile.TemporaryDirectory(prefix="requestx-chaos-") as workdir:
        report = run(args, Path(workdir))
    print_table(report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
    sys.stdout.flush()
    if report.get("hung"):
        os._exit(1)  # a hung request's thread may never return: do not wait for it
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
