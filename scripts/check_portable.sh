#!/usr/bin/env bash
# The C engine compiled the ways this machine cannot run natively, so that nothing Linux-only
# or GNU-only slips into the code that macOS, the BSDs, musl and Windows build:
#
#   scripts/check_portable.sh
#
#   1. every portable file of csrc/ (all but platform_linux.c and the *_windows.c files) with
#      -std=c11 -D_POSIX_C_SOURCE=200809L and no _GNU_SOURCE, warnings as errors: what macOS
#      and the BSDs compile, checked against glibc's strict POSIX view;
#   2. all of csrc/ and tests/c/engine_test.c with musl-gcc (musllinux wheels);
#   3. all of csrc/ and tests/c/engine_test.c with MinGW-w64 for Windows (x86_64), against
#      the same libcurl headers: the Windows implementation's files compile, the others
#      compile to nothing there or build unchanged;
#   4. all of csrc/ and tests/c/engine_test.c for macOS (x86_64 and arm64) with zig's clang
#      and its macOS headers (scripts/zig_cc.sh): the Darwin branches (the relative condition
#      wait, no SOCK_CLOEXEC, no eventfd or epoll) compile. Compiled only; nothing here can
#      link or run them.
#
# Needs musl-tools and gcc-mingw-w64-x86-64 (scripts/bootstrap.sh --cross installs them) and
# the bundled libcurl's headers (scripts/build_libcurl.sh, cached). Prints one line per check;
# exits non-zero with the compiler's messages on the first failure.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

prefix="$(bash scripts/build_libcurl.sh | tail -n 1)"
include="$prefix/include"
warnings=(-Wall -Wextra -Werror -Wno-unused-parameter)
out="$(mktemp -d "${TMPDIR:-/tmp}/requestx-portable.XXXXXX")"
trap 'rm -rf "$out"' EXIT

# compile NAME COMPILER FLAGS... -- FILES...: each file to an object, all warnings fatal.
compile() {
    local name="$1" cc="$2"
    shift 2
    local flags=()
    while [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    command -v "$cc" >/dev/null || { echo "check_portable: $cc is missing (scripts/bootstrap.sh --cross)" >&2; exit 1; }
    for file in "$@"; do
        if ! "$cc" "${flags[@]}" -c "$file" -o "$out/$(basename "$file").o" 2>"$out/log"; then
            echo "check_portable: $name: $file does not compile:" >&2
            cat "$out/log" >&2
            exit 1
        fi
    done
    echo "check_portable: $name: $# files compile"
}

portable=()
for file in csrc/*.c; do
    case "$file" in
        csrc/platform_linux.c | csrc/*_windows.c) ;;
        *) portable+=("$file") ;;
    esac
done

compile "POSIX.1-2008 (no GNU extension)" gcc -std=c11 -D_POSIX_C_SOURCE=200809L \
    "${warnings[@]}" -Icsrc -I"$include" -- "${portable[@]}"
compile "musl" musl-gcc -std=c11 -D_GNU_SOURCE "${warnings[@]}" -Icsrc -I"$include" \
    -- csrc/*.c tests/c/engine_test.c
compile "Windows (MinGW-w64)" x86_64-w64-mingw32-gcc -std=c11 "${warnings[@]}" -DCURL_STATICLIB \
    -Icsrc -I"$include" -- csrc/*.c tests/c/engine_test.c
for target in x86_64-macos aarch64-macos; do
    zig="$(scripts/zig_cc.sh "$target")/cc"
    compile "macOS ($target, zig's clang)" "$zig" -std=c11 "${warnings[@]}" -Icsrc -I"$include" \
        -- csrc/*.c tests/c/engine_test.c
done
