#!/usr/bin/env bash
# The main job: requestx side by side with httpx, requests and pycurl against a local nginx
# that the benchmark starts itself. From a fresh Debian 12 machine.
#
#   scripts/bench.sh [benchmarks/run_sync.py arguments...]   (try --help)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

scripts/bootstrap.sh --bench
py=.venv/bin/python
"$py" setup.py -q build_ext --inplace >/dev/null
exec "$py" benchmarks/run_sync.py "$@"
