#!/usr/bin/env bash
# The main job: requestx side by side with other clients against a local nginx that the
# benchmarks start themselves. From a fresh Debian 12 machine.
#
#   scripts/bench.sh                      the comparison (benchmarks/compare.py), quick subset,
#                                         about 5 minutes (more the first time: each peer's
#                                         virtual environment is made): requestx vs httpx,
#                                         requests, urllib3, pycurl, curl_cffi, niquests,
#                                         aiohttp and pyreqwest, wrk as the ceiling, and
#                                         python -m requestx.bench against wrk; ends by
#                                         printing where the report, the JSON and the charts are
#   scripts/bench.sh compare [arguments]  the same with its arguments (--full: every scenario)
#   scripts/bench.sh all                  the three focused benchmarks below, one after another
#   scripts/bench.sh sync  [arguments]    only benchmarks/run_sync.py, with its arguments
#   scripts/bench.sh async [arguments]    only benchmarks/run_async.py, with its arguments
#   scripts/bench.sh h2    [arguments]    only benchmarks/run_h2.py, with its arguments
#
#   e.g.  scripts/bench.sh compare --full
#         scripts/bench.sh compare --peers requestx,pycurl,pyreqwest --scenarios sync-get
#         scripts/bench.sh sync --seconds 1 --scenarios get
#         scripts/bench.sh async --concurrency 1,64 --loops uvloop --json async.json
#         scripts/bench.sh h2 --seconds 1 --parts A,B --protocols h2
#
# With all three, the exit status is the worst of them (0 ok, 1 a measurement failed, 2 no run).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

which=compare
case "${1:-}" in
    compare|all|sync|async|h2) which="$1"; shift ;;
    -h|--help) usage; exit 0 ;;
    "") ;;
    *) echo "bench: say which benchmark takes '$*': scripts/bench.sh compare|sync|async|h2 $*" >&2
       echo >&2; usage >&2; exit 2 ;;
esac

scripts/bootstrap.sh --bench
py=.venv/bin/python
"$py" setup.py -q build_ext --inplace >/dev/null

if [ "$which" = compare ]; then
    exec "$py" benchmarks/compare.py "$@"
fi
if [ "$which" != all ]; then
    exec "$py" "benchmarks/run_$which.py" "$@"
fi
status=0
for bench in sync async h2; do
    [ "$bench" = sync ] || echo
    rc=0
    "$py" "benchmarks/run_$bench.py" || rc=$?
    if [ "$rc" -gt "$status" ]; then status=$rc; fi
done
exit "$status"
