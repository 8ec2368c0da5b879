#!/usr/bin/env bash
# The tests against another build of the pinned libcurl than the one in place: stock libcurl
# (no requestx patch applied) and/or libcurl's own debug build, where every DEBUGASSERT is an
# assert() that aborts the process when one of libcurl's invariants is broken.
#
#   REQUESTX_LIBCURL_DEBUG=1 scripts/test_libcurl_build.sh [pytest arguments...]
#   REQUESTX_LIBCURL_PATCHES=0 scripts/test_libcurl_build.sh [pytest arguments...]
#
#   REQUESTX_LIBCURL_PATCHES=0   stock libcurl; unset or 1: with requestx's patches
#                   (scripts/libcurl-patches/), as shipped
#   REQUESTX_LIBCURL_DEBUG=1     libcurl's debug build (Debug, -O0, ENABLE_DEBUG=ON: DEBUGBUILD,
#                   with libcurl's memory tracking); unset or 0: the release build
#   REQUESTX_PYTHON=PATH         the interpreter to build and test with (a virtualenv that has
#                   the project's build and test dependencies); default: scripts/bootstrap.sh
#                   --valgrind --nginx, then this checkout's .venv/bin/python
#   default pytest arguments: tests/engine tests/libcurl (the C engine test and the engine-level
#                   Python tests)
#
# Two uses. scripts/test.sh runs the behaviour suite against stock libcurl with it: the patches
# are speed work, and no behaviour test may lean on one (a test of a patch's own effect skips
# on stock, naming the patch: tests/support/bundled_libcurl.needs_patch). And the debug build,
# patched and stock, is a target of its own (not in scripts/test.sh, for time): the first
# version of curl-0015-unchanged-pollset-skipped.patch (since dropped) aborted there in the first requests
# ("multi_ev.c:578: mev_assess: Assertion `!ps.n' failed."), where a release build, which
# compiles the assertions out, went on silently.
#
# The libcurl is scripts/build_libcurl.sh's for these switches, cached apart from the others
# (the first run builds it: about 40 s on 2 cores). The switches are exported for pytest too,
# so that the C programs the tests compile link the same build: tests/engine/test_engine_memory.py
# builds tests/c/engine_test.c and runs it under valgrind, ASan+UBSan and TSan
# (tests/support/bundled_libcurl.py asks build_libcurl.sh for the prefix, which answers from
# the environment).
#
# The extension is built into build/libcurl-<variant>/, not in place, and swapped in for the
# run (pytest puts the checkout first on sys.path, so the module must be there), as
# scripts/test_asan.sh does. Afterwards the in-place modules are put back (moved, so with their
# timestamps; removed if there were none), and so is setup.py's relink stamp
# (build/libcurl-build.txt), so the next normal build neither relinks nor links this libcurl;
# a run killed before it could do so is repaired by the next. Do not run the suite from this
# checkout while this runs: it would load the swapped module.
#
# A libcurl assertion kills pytest itself (the extension is in its process): the run then ends
# with SIGABRT, the assertion's message ("...: Assertion `...' failed.") and Python's
# tracebacks (faulthandler) on stderr, and no summary. (A C test program that aborts fails
# its pytest test instead.)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

if [ -n "${REQUESTX_PYTHON:-}" ]; then
    py="$REQUESTX_PYTHON"
else
    scripts/bootstrap.sh --valgrind --nginx
    py=.venv/bin/python
fi
patches="${REQUESTX_LIBCURL_PATCHES:-1}"
debug="${REQUESTX_LIBCURL_DEBUG:-0}"
case "$patches:$debug" in
    1:1) variant=debug ;;
    0:1) variant=stock-debug ;;
    0:0) variant=stock ;;
    1:0) echo "test_libcurl_build: the in-place build is the patched release one;" \
             "set REQUESTX_LIBCURL_PATCHES=0 and/or REQUESTX_LIBCURL_DEBUG=1" >&2; exit 2 ;;
    *) echo "test_libcurl_build: REQUESTX_LIBCURL_PATCHES and REQUESTX_LIBCURL_DEBUG take 0 or 1" >&2
       exit 2 ;;
esac
export REQUESTX_LIBCURL_PATCHES="$patches" REQUESTX_LIBCURL_DEBUG="$debug"
stage="build/libcurl-$variant"
stamp=build/libcurl-build.txt
say() { echo "test_libcurl_build: $*"; }

saved=build/libcurl-swap-saved # one place for every variant, so any run repairs a killed one
# restore: the in-place modules and stamp as they were before the swap. It works from what
# $saved holds, so it also repairs a run that was killed before it could restore.
# shellcheck disable=SC2317  # called by the trap
restore() {
    local name
    if [ -f "$saved/placed" ]; then
        while read -r name; do rm -f "requestx/$name"; done <"$saved/placed"
    fi
    for name in "$saved"/*.so; do
        if [ -e "$name" ]; then mv -f "$name" requestx/; fi
    done
    if [ -f "$saved/stamp" ]; then mv -f "$saved/stamp" "$stamp"; fi
    rm -rf "${saved:?}"
}
mkdir -p "$stage"
restore
mkdir -p "$saved"
[ -f "$stamp" ] && cp -p "$stamp" "$saved/stamp"
trap restore EXIT
say "building the extension against libcurl ($variant) into $stage"
rm -rf "${stage:?}/lib"
"$py" setup.py -q build_ext --build-lib "$stage/lib" \
    --build-temp "$stage/tmp" >"$stage/build.log" 2>&1 ||
    { cat "$stage/build.log" >&2; say "the build failed" >&2; exit 1; }

# Every extension module built is swapped (only _core links libcurl; the others come from the
# same build).
for so in "$stage"/lib/requestx/*.so; do
    name="$(basename "$so")"
    if [ -e "requestx/$name" ]; then mv "requestx/$name" "$saved/"; fi
    echo "$name" >>"$saved/placed"
    cp "$so" "requestx/$name"
done
[ -f "$saved/placed" ] || { say "no module in $stage/lib/requestx" >&2; exit 1; }

"$py" -c 'import os, requestx
info = requestx.__libcurl__
patches = info["patches"]
assert info["debug"] == (os.environ["REQUESTX_LIBCURL_DEBUG"] == "1"), info
assert bool(patches) == (os.environ["REQUESTX_LIBCURL_PATCHES"] == "1"), info
print("test_libcurl_build: libcurl", info["version"], "debug" if info["debug"] else "release",
      "build,", len(patches), "patches:", " ".join(patches) or "none (stock)")'

if [ $# -eq 0 ]; then set -- tests/engine tests/libcurl; fi
say "pytest $* (against libcurl: $variant)"
status=0
# --capture=sys: pytest captures Python's output but not the process's file descriptor 2, where
# assert() writes its message before the abort (with fd capture, the message would be lost
# with the capture file).
"$py" -m pytest -p no:cacheprovider --capture=sys "$@" || status=$?
if [ "$status" -gt 128 ]; then
    say "pytest was killed by signal $((status - 128)) ($(kill -l "$((status - 128))" 2>/dev/null || echo '?')):" \
        "a libcurl assertion aborts with SIGABRT; its message is above" >&2
fi
exit "$status"
