#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: set-up, build, lint, type-check, tests.
#
#   scripts/test.sh [pytest arguments...]
#
# Installs what is missing (system packages as root, else prints the apt-get command; Python
# packages into .venv), rebuilds the extension if sources changed, then runs ruff, mypy, the
# portability compiles (scripts/check_portable.sh), builds and checks the manylinux_2_28 wheel
# (scripts/build_wheel.sh --glibc 2.28 --no-tests) and runs pytest (which includes the C engine
# under valgrind, AddressSanitizer and ThreadSanitizer) once per platform layer: Linux's own
# (epoll, eventfd) and the portable POSIX one that macOS and the BSDs run
# (REQUESTX_PLATFORM=posix). REQUESTX_TEST_PLATFORMS="linux" (or "posix") runs one of them.
# Then the behaviour suite (tests/client, tests/faults, tests/security, tests/libcurl) runs once
# more against stock libcurl, none of requestx's patches applied
# (scripts/test_libcurl_build.sh): the patches are speed work on a correct client, and no
# behaviour may lean on one. REQUESTX_TEST_STOCK_LIBCURL=0 leaves that run out. Arguments
# given to this script go to every pytest run.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

scripts/bootstrap.sh --valgrind --nginx --tinyproxy --shellcheck --fuzz --cross
py=.venv/bin/python

echo "test: building the extension"
# An extension left sanitized by an interrupted scripts/test_asan.sh loads only with the ASan
# runtime preloaded: rebuild it.
for so in requestx/*.so; do
    if [ -e "$so" ] && ldd "$so" | grep -q libasan; then rm -f "$so"; fi
done
"$py" setup.py -q build_ext --inplace >/dev/null
echo "test: ruff, shellcheck"
"$py" -m ruff check requestx tests benchmarks scripts setup.py fuzz
"$py" -m ruff format --check requestx tests benchmarks scripts setup.py fuzz
shellcheck scripts/*.sh .ci/run
# Every request runs on the loop thread's multi handle: a blocking easy-perform in the engine
# would take the loop (and every other request) hostage.
if grep -n 'curl_easy_perform' csrc/*.c csrc/*.h; then
    echo "test: csrc/ must not call curl_easy_perform (requests go through the multi handle)" >&2
    exit 1
fi
# ... nor link it: the bundled libcurl's copy is dropped at link time (setup.py, --gc-sections).
for so in requestx/_core*.so; do
    if [ -z "${REQUESTX_SYSTEM_LIBCURL:-}" ] && nm "$so" | grep -w 'curl_easy_perform'; then
        echo "test: $so links curl_easy_perform (the bundled libcurl was not section-collected)" >&2
        exit 1
    fi
done
echo "test: mypy"
"$py" -m mypy
# Every fuzz target briefly (fuzz/README.md): its seeds and what earlier runs found still pass,
# and a few seconds of new inputs, from a fixed seed so that a run on unchanged code explores
# what the last one did. Under a minute.
echo "test: fuzz targets, 4 s each (FUZZ_SEED=1 scripts/fuzz.sh 4)"
FUZZ_SEED=1 PYTHON="$py" scripts/fuzz.sh 4
echo "test: portability (scripts/check_portable.sh)"
scripts/check_portable.sh
# The wheel a user on an older Linux installs: built for glibc 2.28 with zig's compiler, then
# auditwheel must tag it manylinux_2_28, check_wheel.py must find no symbol past GLIBC_2.28,
# and the smoke script must pass against it from a fresh virtualenv.
echo "test: the manylinux_2_28 wheel (scripts/build_wheel.sh --glibc 2.28 --no-tests)"
scripts/build_wheel.sh --glibc 2.28 --no-tests --out "${TMPDIR:-/tmp}/requestx-wheel-ci"
for platform in ${REQUESTX_TEST_PLATFORMS:-linux posix}; do
    echo "test: pytest on the $platform platform layer (REQUESTX_PLATFORM=$platform)"
    REQUESTX_PLATFORM="$platform" "$py" -m pytest "$@"
done
if [ "${REQUESTX_TEST_STOCK_LIBCURL:-1}" != 0 ]; then
    echo "test: the behaviour suite against stock libcurl (scripts/test_libcurl_build.sh)"
    [ $# -gt 0 ] || set -- tests/client tests/faults tests/security tests/libcurl
    REQUESTX_LIBCURL_PATCHES=0 REQUESTX_LIBCURL_DEBUG=0 REQUESTX_PYTHON="$py" \
        scripts/test_libcurl_build.sh "$@"
fi
