"""What waiting for an answer costs on this machine: sleeping against spinning, in C.

A blocking requestx caller spins through a short answer instead of sleeping (csrc/spin.h), so
its CPU per request is the round trip. Whether that is more or less CPU than a client that
sleeps (pycurl) depends on the machine: on one where waking a sleeping thread is cheap,
sleeping wins; where it is slow (virtual machines that halt idle vCPUs), sleeping costs as
much CPU as the whole answer, and a third of the rate. This measures it without any HTTP
client in the way: benchmarks/wake_cost.c, compiled here, makes sequential keep-alive
requests to a local nginx and waits each of three ways (see the C file), in interleaved
rounds; the table gives medians of requests/s and CPU µs per request.

    .venv/bin/python benchmarks/wake_cost.py                 # 5 rounds of 20,000 requests
    .venv/bin/python benchmarks/wake_cost.py --rounds 3 --requests 50000 --naps 10,30

Needs a C compiler (cc) and nginx, as the other benchmarks do. docs/performance.md
("Where a blocking c=1 request's CPU goes") has this machine's figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from nginx import Nginx  # noqa: E402


def compile_probe(work: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        sys.exit("wake_cost.py needs a C compiler: apt-get install gcc")
    binary = work / "wake_cost"
    subprocess.run([compiler, "-O2", "-o", str(binary), str(HERE / "wake_cost.c")], check=True)
    return binary


def measure(binary: Path, port: int, mode: str, requests: int) -> dict[str, float]:
    out = subprocess.run(
        [str(binary), str(port), "/get", mode, str(requests)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    result: dict[str, float] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--naps", default="10,20,40", help="nap lengths in µs, comma-separated")
    parser.add_argument("--json", type=Path, help="also write every run to this file")
    args = parser.parse_args()
    modes = ["sleep", "spin", *(f"nap:{int(n)}" for n in args.naps.split(",") if n)]
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    with Nginx() as server, tempfile.TemporaryDirectory(prefix="rx-wake-") as work:
        binary = compile_probe(Path(work))
        for round_ in range(args.rounds):
            order = modes[round_ % len(modes) :] + modes[: round_ % len(modes)]
            for mode in order:
                runs[mode].append(measure(binary, server.port, mode, args.requests))
    print(f"{args.rounds} interleaved rounds of {args.requests:,} requests (medians)\n")
    print("| wait | requests/s | CPU µs/request | answered during the nap |")
    print("| --- | --- | --- | --- |")
    for mode in modes:
        rate = statistics.median(r["requests_per_second"] for r in runs[mode])
        cpu = statistics.median(r["cpu_us_per_request"] for r in runs[mode])
        napped = statistics.median(r["answered_during_nap"] for r in runs[mode])
        share = f"{napped:.0%}" if mode.startswith("nap:") else "—"
        print(f"| {mode} | {rate:,.0f} | {cpu:.1f} | {share} |")
    if args.json is not None:
        args.json.write_text(json.dumps({"requests": args.requests, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
