#!/usr/bin/env bash
# The C engine test and the engine-level Python tests against libcurl's own debug build, where
# every DEBUGASSERT in libcurl is an assert() that aborts the process when one of libcurl's
# invariants is broken. A release build (what requestx ships) compiles them out, so a patch
# that breaks an invariant goes on silently there; here the first request that reaches the
# broken assertion aborts (the first version of curl-0015-unchanged-pollset-skipped.patch, since
# dropped, did in the first requests: "multi_ev.c:578: mev_assess: Assertion `!ps.n' failed.").
#
#   scripts/test_libcurl_debug.sh [pytest arguments...]   (default: tests/engine tests/libcurl)
#
#   REQUESTX_LIBCURL_PATCHES=0   against stock libcurl's debug build (no patch applied); unset
#                   or 1: with requestx's patches (scripts/libcurl-patches/), as shipped
#   REQUESTX_PYTHON=PATH         the interpreter to build and test with (a virtualenv that has
#                   the project's build and test dependencies, e.g. another checkout's
#                   .venv/bin/python); default: scripts/bootstrap.sh --valgrind --nginx, then
#                   this checkout's .venv/bin/python
#
# The debug libcurl is scripts/build_libcurl.sh's with REQUESTX_LIBCURL_DEBUG=1 (Debug, -O0,
# ENABLE_DEBUG=ON: DEBUGBUILD, with libcurl's memory tracking), cached apart from the release
# builds; the first run builds it (about 40 s on 2 cores). REQUESTX_LIBCURL_DEBUG=1 is
# exported for pytest too, so that the C programs the tests compile link the same debug
# build: tests/engine/test_engine_memory.py builds tests/c/engine_test.c and runs it under
# valgrind, ASan+UBSan and TSan (tests/support/bundled_libcurl.py asks build_libcurl.sh for
# the prefix, which answers from the environment).
#
# The extension is built into build/libcurl-debug/, not in place, and swapped in for the run
# (pytest puts the checkout first on sys.path, so the module must be there), as
# scripts/test_asan.sh does. Afterwards the in-place modules are put back (moved, so with
# their timestamps; removed if there were none), and so is setup.py's relink stamp
# (build/libcurl-build.txt), so the next normal build neither relinks nor links the debug
# libcurl; a run killed before it could do so is repaired by the next. Do not run the suite from this checkout while this runs: it would load the debug
# module.
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
stage=build/libcurl-debug
stamp=build/libcurl-build.txt
say() { echo "test_libcurl_debug: $*"; }

saved="$stage/saved"
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
say "building the extension against libcurl's debug build (REQUESTX_LIBCURL_PATCHES=${REQUESTX_LIBCURL_PATCHES:-1}) into $stage"
rm -rf "${stage:?}/lib"
REQUESTX_LIBCURL_DEBUG=1 "$py" setup.py -q build_ext --build-lib "$stage/lib" \
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

"$py" -c 'import requestx
info = requestx.__libcurl__
assert info["debug"], "the module in place is not linked against a debug libcurl"
patches = info["patches"]
print("test_libcurl_debug: libcurl", info["version"], "debug build,", len(patches), "patches:",
      " ".join(patches) or "none (stock)")'

if [ $# -eq 0 ]; then set -- tests/engine tests/libcurl; fi
say "pytest $* (against the debug libcurl)"
status=0
# --capture=sys: pytest captures Python's output but not the process's file descriptor 2, where
# assert() writes its message before the abort (with fd capture, the message would be lost
# with the capture file).
REQUESTX_LIBCURL_DEBUG=1 "$py" -m pytest -p no:cacheprovider --capture=sys "$@" || status=$?
if [ "$status" -gt 128 ]; then
    say "pytest was killed by signal $((status - 128)) ($(kill -l "$((status - 128))" 2>/dev/null || echo '?')):" \
        "a libcurl assertion aborts with SIGABRT; its message is above" >&2
fi
exit "$status"
