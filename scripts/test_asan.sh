#!/usr/bin/env bash
# The Python test suite against an extension built with AddressSanitizer + UndefinedBehavior-
# Sanitizer (REQUESTX_ASAN=1), so that the engine, the bindings and libcurl's callbacks are
# checked while real clients drive them, not only by the C engine test.
#
#   scripts/test_asan.sh [pytest arguments...]      (default: the whole suite)
#
# The sanitized extension is built into build/asan/ and swapped in for the in-place one for
# the run (pytest puts the repository first on sys.path, so it must be there); the in-place
# build is put back afterwards, with its timestamp, and scripts/test.sh rebuilds if a
# sanitized one was ever left behind. Python itself is not instrumented, so the ASan runtime
# is preloaded, and leak detection is off (the interpreter keeps memory on purpose at exit;
# the engine's own leaks are valgrind's job, tests/engine/test_engine_memory.py). Any ASan or UBSan
# report fails the run.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

scripts/bootstrap.sh --valgrind --nginx
py=.venv/bin/python
stage=build/asan

echo "test_asan: building the extension with ASan + UBSan into $stage"
rm -rf "$stage"
mkdir -p "$stage"
"$py" setup.py -q build_ext --inplace >/dev/null # the normal build, to put back afterwards
REQUESTX_ASAN=1 "$py" setup.py -q build_ext --build-lib "$stage/lib" --build-temp "$stage/tmp" \
    >/dev/null
# Every extension module is swapped: the engine's bridge, the compiled hot path and the
# default-headers rule.
inplace=(requestx/_core.*.so requestx/_hotpath.*.so requestx/_default_headers.*.so)
for so in "${inplace[@]}"; do mv "$so" "$stage/$(basename "$so").normal"; done
# shellcheck disable=SC2317  # called by the trap
restore() { for so in "${inplace[@]}"; do mv -f "$stage/$(basename "$so").normal" "$so"; done; }
trap restore EXIT
for so in "${inplace[@]}"; do cp "$stage/lib/$so" "$so"; done

asan_runtime="$(gcc -print-file-name=libasan.so)"
ubsan_runtime="$(gcc -print-file-name=libubsan.so)"
report="$repo/$stage/sanitizer"
export LD_PRELOAD="$asan_runtime:$ubsan_runtime"
export REQUESTX_TEST_ASAN=1 # tests/support/sanitized.py: memory figures and child sanitizers skip
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:log_path=$report"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$report"

"$py" -c 'import requestx._core as c, requestx._hotpath as h, requestx._default_headers as d
import subprocess
for m in (c, h, d): assert b"libasan" in subprocess.check_output(["ldd", m.__file__]), m'
echo "test_asan: pytest (requestx built with ASan + UBSan)"
status=0
"$py" -m pytest -p no:cacheprovider "$@" || status=$?
if compgen -G "$report.*" >/dev/null; then
    echo "test_asan: sanitizer reports:" >&2
    cat "$report".* >&2
    exit 1
fi
exit "$status"
