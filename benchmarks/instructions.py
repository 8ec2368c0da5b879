"""User-space instructions per request: a measure of requestx's own cost that noise cannot move.

On a shared 2-CPU machine, requests/s and CPU µs per request move by ±20 % between runs, so a
change worth 5 % needs many interleaved rounds to show, if it shows at all. valgrind's
callgrind counts the instructions a process executes: runs of one build agree within about 1 %
(sync within 3 %: how often a blocking caller's wait loop turns depends on timing). This runs
a workload twice under callgrind, with N1 and N2 requests, and divides the difference by
N2 - N1: start-up, imports and warm-up cancel out, and what is left is what one more request
costs in user space (Python, the extension, libcurl, libc; the kernel's share is not counted,
and neither is the server's).

    .venv/bin/python benchmarks/instructions.py                  # every workload
    .venv/bin/python benchmarks/instructions.py sync uvloop --top 25

Workloads, each against a local nginx started here (benchmarks/nginx.py):

    loadgen   python -m requestx.bench -c 10: the engine and libcurl alone, no Python per request
    sync      client.get(url).json(), sequential, one Client
    asyncio   await client.get(url) + json(), 64 tasks on one AsyncClient
    uvloop    the same on uvloop

`--top K` adds, per workload, the K functions whose own instructions per request are highest
(the difference of the two runs, function by function). To compare two builds, run this in
each (or with PYTHONPATH pointing at a copy of the other build's `requestx/`): every workload
imports the requestx that PYTHONPATH names first, else this checkout's, else an installed one,
and the first line printed says which it measured and the libcurl patches it carries.

Needs valgrind (`apt-get install valgrind`). Slow by nature: callgrind runs code about 50
times slower, so the defaults (1,000 and 4,000 requests) take a minute or so per workload.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nginx import Nginx  # noqa: E402

WORKLOADS = ("loadgen", "sync", "asyncio", "uvloop")
TASKS = 64
LOADGEN_CONNECTIONS = 10


def _timeout(timeout: float | None) -> dict[str, float]:
    return {} if timeout is None else {"timeout": timeout}


def run_workload(name: str, url: str, requests: int, timeout: float | None) -> None:
    """The workload itself, in the process callgrind watches."""
    import requestx

    if name == "sync":
        with requestx.Client(**_timeout(timeout)) as client:
            for _ in range(requests):
                client.get(url).json()
        return

    async def tasks() -> None:
        left = requests
        async with requestx.AsyncClient(**_timeout(timeout)) as client:

            async def worker() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    (await client.get(url)).json()

            await asyncio.gather(*(worker() for _ in range(TASKS)))

    if name == "uvloop":
        import uvloop

        uvloop.run(tasks())
    else:
        asyncio.run(tasks())


def command(name: str, base_url: str, requests: int, timeout: float | None) -> list[str]:
    if name == "loadgen":
        load = ["-c", str(LOADGEN_CONNECTIONS), "-n", str(requests), base_url + "/get"]
        if timeout is not None:
            load += ["--timeout", f"{timeout}s"]
        return [sys.executable, "-m", "requestx.bench", *load]
    child = [sys.executable, str(Path(__file__).resolve()), "--child", name]
    return [
        *child,
        base_url + "/json100",
        str(requests),
        "default" if timeout is None else str(timeout),
    ]


ROOT = Path(__file__).resolve().parent.parent


def child_env() -> dict[str, str]:
    """The environment of the measured processes: every workload imports the same requestx,
    the one PYTHONPATH names first, else this checkout's (ROOT), else an installed one. The
    scripts run by path put benchmarks/ first on sys.path, where no requestx is, and
    `python -m requestx.bench` puts its working directory first, so the children run in a
    scratch directory (callgrind's cwd below) and find ROOT through PYTHONPATH: without that,
    loadgen measured the requestx of whatever directory it was started from, and the others an
    editable install's, whatever PYTHONPATH said. For the same reason PYTHONPATH's entries are
    made absolute here: a relative one (`PYTHONPATH=build/without-0009-pkg`, as
    docs/libcurl-patches.md has it) would be looked up from the scratch directory, find
    nothing, and leave the children on this checkout's requestx."""
    paths = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(ROOT)])}


def describe_requestx() -> str:
    """Which requestx the workloads import, and the libcurl patches it carries."""
    probe = "import requestx; print(requestx.__file__, len(requestx.__libcurl__['patches']))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=child_env(),
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return f"requestx {Path(out[0]).parent}, libcurl patches: {out[1]}"


def callgrind(argv: list[str], out_file: str) -> int:
    """Run argv under callgrind; the total instructions it executed."""
    # One hash seed for every run: dict and set layouts then repeat, and two runs of one build
    # agree to the instruction. Layout still moves between builds: CPython's method cache is
    # indexed by type version and by the name's address, so an unrelated change that shifts
    # allocations can move a count by about 2 % (measured: the same three `__module__`
    # assignments, written as a loop or one by one, 73,709 vs 71,920 for sync). Compare
    # builds over several changes, not one count against another.
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "-q", *argv],
        env={**child_env(), "PYTHONHASHSEED": "0"},
        cwd=os.path.dirname(out_file),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=1800,
    )
    text = Path(out_file).read_text(errors="replace")
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no instruction total in {out_file}")
    return int(found.group(1))


def own_instructions(out_file: str) -> dict[str, int]:
    """Instructions spent in each function itself (callgrind_annotate's table)."""
    table = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", out_file],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    costs: dict[str, int] = {}
    for line in table.splitlines():
        row = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S.*)", line)
        if row is None or row.group(2).endswith(("PROGRAM TOTALS", "annotated", "x)")):
            continue  # totals, callgrind_annotate's own lines, calls (inclusive costs)
        name = row.group(2).split(" [")[0].rsplit(":", 1)[-1]
        costs[name] = costs.get(name, 0) + int(row.group(1).replace(",", ""))
    return costs


def measure(
    name: str, base_url: str, small: int, large: int, top: int, work: str, timeout: float | None
) -> None:
    files = [os.path.join(work, f"{name}.{n}.out") for n in (small, large)]
    totals = [
        callgrind(command(name, base_url, n, timeout), f) for n, f in zip((small, large), files)
    ]
    per_request = (totals[1] - totals[0]) / (large - small)
    print(f"{name:8} {per_request:>10,.0f} instructions per request", flush=True)
    if top:
        before, after = own_instructions(files[0]), own_instructions(files[1])
        rows = sorted(((after.get(k, 0) - before.get(k, 0)) / (large - small), k) for k in after)
        for cost, function in rows[::-1][:top]:
            print(f"{'':8} {cost:>10,.0f}  {function}")


def main() -> None:
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        timeout = None if sys.argv[5] == "default" else float(sys.argv[5])
        run_workload(sys.argv[2], sys.argv[3], int(sys.argv[4]), timeout)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", help=f"some of {', '.join(WORKLOADS)} (all)")
    parser.add_argument("--requests", type=int, nargs=2, default=(1000, 4000), metavar=("N1", "N2"))
    parser.add_argument("--top", type=int, default=0, help="list the K costliest functions")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="each request's timeout (default: the client's, 5 s; requestx.bench's 10 s). Under "
        "callgrind on a busy machine a request can take longer; a longer timeout runs the same "
        "code, so the counts stay comparable",
    )
    args = parser.parse_args()
    small, large = args.requests
    unknown = set(args.workloads) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(sorted(unknown))}: choose from {WORKLOADS}")
    if not 0 < small < large:
        parser.error("--requests N1 N2 needs 0 < N1 < N2")
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py needs valgrind: apt-get install valgrind")
    print(describe_requestx(), flush=True)
    with Nginx() as server, tempfile.TemporaryDirectory(prefix="rx-instr-") as work:
        for name in args.workloads or WORKLOADS:
            measure(name, server.url, small, large, args.top, work, args.timeout)


if __name__ == "__main__":
    main()
