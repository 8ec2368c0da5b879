#!/usr/bin/env bash
# Do the tests of libcurl's patches catch a broken patch? For each deliberately broken variant
# in scripts/libcurl-patches/broken/, build libcurl with the whole series and that variant on
# top, build the extension against it, and run the test the variant names: it must FAIL.
#
#   scripts/check_patch_tests.sh [--keep] [FILTER...]
#
#   FILTER    only the variants whose file name contains one of these (e.g. 0002 reset)
#   --keep    keep the scratch copy (its path is printed) instead of removing it
#   REQUESTX_PYTHON=PATH  the interpreter to build and test with (default: .venv/bin/python),
#             which needs the project's build and test dependencies
#
# Each file of broken/ is a small diff on the patched sources (applied with fuzz 0 after the
# series, through build_libcurl.sh's REQUESTX_LIBCURL_EXTRA_PATCH) whose header says which
# patch it breaks and which test must catch it:
#   Breaks: curl-0016-idle-connections-ahead
#   Test: tests/libcurl/test_pool_reuse_under_load.py[::test_name]
# First the intact series is built and every test named must PASS (a test failing anyway
# would prove nothing); then each variant in turn: its test must fail (pytest's exit status 1).
# The script exits 1 if a test failed on the intact series, if a broken variant passed its test
# ("NOT CAUGHT"), or if a variant could not be built or its test could not run; else 0.
#
# Nothing in the checkout is touched: the work happens in a scratch copy of it (the files git
# knows and the untracked ones it does not ignore, plus the generated requestx/*.c), under
# ${TMPDIR:-/tmp}, where the extension is built in place for each variant. Each variant's
# libcurl is cached by build_libcurl.sh like any other build (its prefix's name says
# "extra-<variant>"), so a second run rebuilds only the extension; the first builds libcurl once
# per variant, a few minutes each on 2 cores. Not part of scripts/test.sh or CI: run it after
# changing a patch or its tests (docs/libcurl-patches.md).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
py="${REQUESTX_PYTHON:-$repo/.venv/bin/python}"
[ -x "$py" ] || { echo "check_patch_tests: no $py (run scripts/bootstrap.sh or set REQUESTX_PYTHON)" >&2; exit 2; }
keep=0
filters=()
for arg in "$@"; do
    case "$arg" in
        --keep) keep=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
                       "${BASH_SOURCE[0]}"; exit 0 ;;
        *) filters+=("$arg") ;;
    esac
done
say() { echo "check_patch_tests: $*"; }

variants=()
for file in scripts/libcurl-patches/broken/*.patch; do
    [ -f "$file" ] || continue
    if [ ${#filters[@]} -gt 0 ]; then
        wanted=0
        for filter in "${filters[@]}"; do
            case "$(basename "$file")" in *"$filter"*) wanted=1 ;; esac
        done
        [ "$wanted" = 1 ] || continue
    fi
    variants+=("$file")
done
[ ${#variants[@]} -gt 0 ] || { say "no broken variant matches ${filters[*]:-anything}" >&2; exit 2; }

# field FILE NAME: the value of the header line "NAME: value" of a broken variant
field() { sed -n "s/^$2: //p" "$1" | head -n 1; }
tests=()
for file in "${variants[@]}"; do
    breaks="$(field "$file" Breaks)"
    test="$(field "$file" Test)"
    if [ -z "$breaks" ] || [ -z "$test" ]; then say "$file: no Breaks: or Test: line" >&2; exit 2; fi
    [ -f "scripts/libcurl-patches/$breaks.patch" ] ||
        { say "$file breaks $breaks, which is not in the series" >&2; exit 2; }
    [ -f "${test%%::*}" ] || { say "$file: no test file ${test%%::*}" >&2; exit 2; }
    tests+=("$test")
done

work="$(mktemp -d "${TMPDIR:-/tmp}/requestx-check-patch-tests.XXXXXX")"
if [ "$keep" = 1 ]; then
    say "scratch copy: $work (kept)"
else
    trap 'rm -rf "$work"' EXIT
fi
# The checkout as it is, uncommitted changes included; the generated C (ignored by git) too, with
# its timestamps, so that Cython runs only if a .pyx is newer.
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' path; do
    [ -e "$path" ] && printf '%s\0' "$path"
done | tar --null -T - -cf - | tar -xf - -C "$work"
for generated in requestx/*.c; do
    [ -e "$work/$generated" ] || cp -p "$generated" "$work/$generated"
done

# build VARIANT-FILE|"": the extension in the copy, against the series (plus the variant)
build() {
    local log="$work/build.log"
    if ! (cd "$work" && REQUESTX_LIBCURL_EXTRA_PATCH="$1" "$py" setup.py -q build_ext --inplace \
            >"$log" 2>&1); then
        tail -n 30 "$log" >&2
        return 1
    fi
}

# run VARIANT-FILE|"" TEST...: pytest in the copy; its exit status. The variant is in pytest's
# environment too: tests that compile C against the bundled libcurl ask build_libcurl.sh for
# its prefix (tests/support/bundled_libcurl.py), which must be the variant's, as the module's is.
run() {
    local status=0 extra="$1"
    shift
    (cd "$work" && REQUESTX_LIBCURL_EXTRA_PATCH="$extra" timeout 900 "$py" -m pytest \
        -p no:cacheprovider -q -x "$@" >"$work/pytest.log" 2>&1) || status=$?
    return "$status"
}

say "the intact series: building"
build "" || { say "the intact series does not build" >&2; exit 1; }
mapfile -t unique < <(printf '%s\n' "${tests[@]}" | sort -u)
say "the intact series: ${unique[*]} must pass"
if ! run "" "${unique[@]}"; then
    tail -n 30 "$work/pytest.log"
    say "a test fails with the intact series: fix that first" >&2
    exit 1
fi

failed=0
results=()
for file in "${variants[@]}"; do
    name="$(basename "$file" .patch)"
    test="$(field "$file" Test)"
    say "$name: building"
    if ! build "$repo/$file"; then
        results+=("ERROR       $name (does not build or apply)")
        failed=1
        continue
    fi
    # The variant must be what the module links (build_libcurl.sh lists it among the patches).
    if ! (cd "$work" && "$py" -c 'import sys, requestx
sys.exit(sys.argv[1] not in requestx.__libcurl__["patches"])' "$name"); then
        results+=("ERROR       $name (the module does not link it)")
        failed=1
        continue
    fi
    say "$name: $test must fail"
    status=0
    run "$repo/$file" "$test" || status=$?
    case "$status" in
        1) results+=("caught      $name by $test") ;;
        0) results+=("NOT CAUGHT  $name: $test passes")
           failed=1 ;;
        *) tail -n 20 "$work/pytest.log"
           results+=("ERROR       $name: $test could not run (pytest exit $status)")
           failed=1 ;;
    esac
done
say "results:"
printf '  %s\n' "${results[@]}"
if [ "$failed" = 1 ]; then
    say "some broken variant went through its test, or could not be checked" >&2
fi
exit "$failed"
