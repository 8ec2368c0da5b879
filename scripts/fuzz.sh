#!/usr/bin/env bash
# Run the fuzz targets (fuzz/README.md) for SECONDS each, one after another, under `nice`.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 60 seconds, every target)
#
# Targets: head (C, libFuzzer with AddressSanitizer and UndefinedBehaviorSanitizer: the HTTP/1
# response head, csrc/head.c), and, with atheris: url, headers, multipart, decoders, cookies
# (fuzz/python/<target>_fuzzer.py). Each starts from its seeds in fuzz/corpus/<target>/ (read,
# never written) and a work corpus of what earlier runs found in $FUZZ_DIR/corpus/<target>/
# (FUZZ_DIR: default ${TMPDIR:-/tmp}/requestx-fuzz); a crashing input goes to
# $FUZZ_DIR/crashes/<target>/, which the summary prints. To replay one:
#
#   $FUZZ_DIR/build/head_fuzzer CRASH_FILE
#   .venv/bin/python fuzz/python/url_fuzzer.py CRASH_FILE
#
# Exits 1 if any target found a crash, an uncaught exception, a leak, a sanitizer report or a
# broken property; 2 when clang with libFuzzer or atheris is missing (scripts/bootstrap.sh
# --fuzz installs both). PYTHON: the interpreter with requestx, atheris and httpx (default
# .venv/bin/python). FUZZ_SEED=N: libFuzzer's random seed (default: a new one each run);
# scripts/test.sh fixes it, so its short run explores the same inputs each time and fails only
# when the code changed what they do.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

all_targets=(head url headers multipart decoders cookies)
seconds="${1:-60}"
[ $# -gt 0 ] && shift
case "$seconds" in
    '' | *[!0-9]*) echo "fuzz: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for target in "${targets[@]}"; do
    case " ${all_targets[*]} " in
        *" $target "*) ;;
        *) echo "fuzz: unknown target '$target' (targets: ${all_targets[*]})" >&2; exit 2 ;;
    esac
done

python="${PYTHON:-$repo/.venv/bin/python}"
fuzz_dir="${FUZZ_DIR:-${TMPDIR:-/tmp}/requestx-fuzz}"
mkdir -p "$fuzz_dir/build"

# The C targets: clang's libFuzzer, ASan and UBSan (every UBSan report aborts: libFuzzer counts
# it as a crash). head.c calls curl_strnequal: linked from the bundled libcurl.
build_c() {
    local name="$1"; shift
    local newer
    newer="$(find "$@" csrc/*.h "${BASH_SOURCE[0]}" -newer "$fuzz_dir/build/$name" 2>/dev/null || true)"
    if [ -x "$fuzz_dir/build/$name" ] && [ -z "$newer" ]; then
        return 0 # built from these sources already
    fi
    if ! command -v clang >/dev/null 2>&1; then
        echo "fuzz: clang is missing (scripts/bootstrap.sh --fuzz installs it)" >&2
        exit 2
    fi
    local prefix
    prefix="$(scripts/build_libcurl.sh 2>/dev/null | tail -n 1)"
    local libs
    read -r -a libs <"$prefix/link-args.txt"
    clang -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -Icsrc -I"$prefix/include" "$@" -o "$fuzz_dir/build/$name" "${libs[@]}" -pthread
}

need_atheris() {
    if ! "$python" -c 'import atheris' >/dev/null 2>&1; then
        echo "fuzz: atheris is not installed in $python (scripts/bootstrap.sh --fuzz)" >&2
        exit 2
    fi
}

failed=()
summary=()
for target in "${targets[@]}"; do
    case "$target" in
        head)
            build_c head_fuzzer fuzz/c/head_fuzzer.c csrc/head.c csrc/token.c csrc/buffer.c csrc/heap.c
            command=("$fuzz_dir/build/head_fuzzer")
            ;;
        *)
            need_atheris
            command=("$python" "fuzz/python/${target}_fuzzer.py")
            ;;
    esac
    work="$fuzz_dir/corpus/$target"
    crashes="$fuzz_dir/crashes/$target"
    log="$fuzz_dir/$target.log"
    mkdir -p "$work" "$crashes"
    echo "fuzz: $target for ${seconds}s (log: $log)"
    status=0
    # -timeout: one input that runs for 10 s is a hang, reported as a crash.
    seed=()
    [ -n "${FUZZ_SEED:-}" ] && seed=(-seed="$FUZZ_SEED")
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" nice -n 10 "${command[@]}" ${seed[@]+"${seed[@]}"} \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$crashes/" "$work" "fuzz/corpus/$target" >"$log" 2>&1 || status=$?
    # libFuzzer's last status line ("#N DONE cov: C ft: F corp: ...") and its final stats.
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)"
    summary+=("$(printf '%-10s %10s runs  %-22s %s' "$target" "${runs:-?}" "${cov:-cov: ?}" \
        "$([ "$status" = 0 ] && echo ok || echo "FAILED (exit $status)")")")
    if [ "$status" != 0 ]; then
        failed+=("$target")
        echo "fuzz: $target FAILED (exit $status); the end of its log:" >&2
        tail -n 40 "$log" >&2
    fi
done

echo "fuzz: summary (${seconds}s a target)"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}; the inputs are in $fuzz_dir/crashes/<target>/" >&2
    exit 1
fi
echo "fuzz: no crash (crash inputs would be in $fuzz_dir/crashes/)"
