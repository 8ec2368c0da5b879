#!/usr/bin/env bash
# httpx's own test suite against requestx, through the import alias `httpx -> requestx`, beside
# the same files against httpx itself; prints a per-file table. A measurement for closing notes
# (issue 13), not part of .ci/run.
#
#   scripts/httpx_suite.sh HTTPX_CHECKOUT [pytest arguments...]
#
# HTTPX_CHECKOUT is a git checkout of https://github.com/encode/httpx the caller provides, at tag
# 0.28.1 (its tests are copied to a temporary directory and run from there; nothing of httpx is
# copied into this repository). Files that import httpx's private modules (`httpx._...`) test
# internals requestx does not have and are skipped. The tests' own dependencies (uvicorn,
# chardet, cryptography, trustme) are installed into the project's virtualenv.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
checkout="${1:?usage: scripts/httpx_suite.sh HTTPX_CHECKOUT [pytest arguments...]}"
shift
[ -d "$checkout/tests" ] || { echo "httpx_suite: $checkout has no tests/ directory" >&2; exit 2; }
tag="$(git -C "$checkout" describe --tags --exact-match 2>/dev/null || echo "not a tag")"
[ "$tag" = "0.28.1" ] || echo "httpx_suite: warning: $checkout is at $tag, not 0.28.1" >&2

"$repo/scripts/bootstrap.sh" >/dev/null
py="$repo/.venv/bin/python"
"$py" -m pip --disable-pip-version-check install -q "uvicorn==0.32.1" "chardet==5.2.0" \
    "cryptography" "trustme" "httpx==0.28.1" "h2" "socksio" "zstandard"

work="$(mktemp -d "${TMPDIR:-/tmp}/httpx-suite.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$checkout/tests" "$work/tests"
# The alias, loaded by pytest before httpx's conftest imports httpx.
cat >"$work/requestx_as_httpx.py" <<'EOF'
import sys

import requestx

sys.modules["httpx"] = requestx
EOF

cd "$work"
mapfile -t files < <(
    find tests -name 'test_*.py' | sort | while read -r file; do
        grep -qE '(import|from) httpx\._[a-z]|httpx\._[a-z_]+\.' "$file" || echo "$file"
    done
)
echo "httpx_suite: ${#files[@]} files use only public names" >&2

# Only loopback here: the tests httpx marks `network` (example.com) and the connect timeout
# test (a SYN to 10.255.255.1) are left out, for both clients.
offline=(-m "not network" --deselect tests/test_timeouts.py::test_connect_timeout)

run() {  # run LABEL [extra pytest arguments...]: junit XML in $work/LABEL.xml
    local label="$1"; shift
    PYTHONPATH="$work" timeout 1800 "$py" -m pytest -q -p no:cacheprovider -p no:randomly \
        --timeout=60 -o addopts="" --junitxml="$work/$label.xml" "${offline[@]}" "$@" "${files[@]}" \
        >"$work/$label.log" 2>&1 || true
    tail -n 1 "$work/$label.log" >&2
}
run httpx "$@"
run requestx -p requestx_as_httpx "$@"

"$py" - "$work/requestx.xml" "$work/httpx.xml" <<'EOF'
import collections
import sys
import xml.etree.ElementTree as ET


def per_file(path):
    counts = collections.defaultdict(lambda: [0, 0])  # file -> [passed, total]
    for case in ET.parse(path).iter("testcase"):
        name = case.get("classname", "").split(".")
        file = "/".join(part for part in name if not part[:1].isupper()) + ".py"
        outcome = {child.tag for child in case}
        if "skipped" in outcome:
            continue
        counts[file][1] += 1
        if not outcome & {"failure", "error"}:
            counts[file][0] += 1
    return counts


ours, theirs = per_file(sys.argv[1]), per_file(sys.argv[2])
print("| file | requestx | httpx |")
print("| --- | --- | --- |")
total = [0, 0, 0, 0]
for file in sorted(set(ours) | set(theirs)):
    a, b = ours.get(file, [0, 0]), theirs.get(file, [0, 0])
    total = [total[0] + a[0], total[1] + a[1], total[2] + b[0], total[3] + b[1]]
    print(f"| {file} | {a[0]} / {a[1]} | {b[0]} / {b[1]} |")
print(f"| **all** | {total[0]} / {total[1]} | {total[2]} / {total[3]} |")
EOF
