#!/usr/bin/env bash
# The C engine compiled the ways this machine cannot run natively, so that nothing Linux-only
# or GNU-only slips into the code that macOS, the BSDs, musl and Windows build:
#
#   scripts/check_portable.sh
#
#   1. every portable file of csrc/ (all but platform_linux.c and the *_windows.c files) with
#      -std=c11 -D_POSIX_C_SOURCE=200809L and no _GNU_SOURCE, warnings as errors: what macOS
#      and the BSDs compile, checked against glibc's strict POSIX view;
#   2. all of csrc/, tests/c/engine_test.c and tests/c/decode_test.c with musl-gcc
#      (musllinux wheels);
#   3. the same with MinGW-w64 for Windows (x86_64), against the same libcurl headers: the
#      Windows implementation's files compile, the others compile to nothing there or build
#      unchanged;
#   4. the same for macOS (x86_64 and arm64) with zig's clang
#      and its macOS headers (scripts/zig_cc.sh): the Darwin branches (the relative condition
#      wait, no SOCK_CLOEXEC, no eventfd or epoll) compile. Compiled only; nothing here can
#      link or run them.
#
# csrc/decode.c is compiled with every coding (RX_DECODE_BROTLI, RX_DECODE_ZSTD) in all four,
# against this machine's zlib, brotli and zstd headers (plain C, the same for every target).
#
# Needs musl-tools and gcc-mingw-w64-x86-64 (scripts/bootstrap.sh --cross installs them), the
# bundled libcurl's headers (scripts/build_libcurl.sh, cached) and zlib1g-dev, libbrotli-dev and
# libzstd-dev. Prints one line per check; exits non-zero with the compiler's messages on the
# first failure.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

prefix="$(bash scripts/build_libcurl.sh | tail -n 1)"
include="$prefix/include"
warnings=(-Wall -Wextra -Werror -Wno-unused-parameter)
out="$(mktemp -d "${TMPDIR:-/tmp}/requestx-portable.XXXXXX")"
trap 'rm -rf "$out"' EXIT

# The codecs' headers alone, in a folder of their own: musl's, MinGW's and zig's compilers do
# not look in /usr/include (which holds glibc's headers too).
codecs="$out/codec-headers"
mkdir -p "$codecs"
for header in zlib.h zconf.h brotli zstd.h zstd_errors.h; do
    [ -e "/usr/include/$header" ] ||
        { echo "check_portable: /usr/include/$header is missing (zlib1g-dev, libbrotli-dev, libzstd-dev)" >&2; exit 1; }
    ln -s "/usr/include/$header" "$codecs/$header"
done
codec_flags=(-I"$codecs" -DRX_DECODE_BROTLI -DRX_DECODE_ZSTD)

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
    "${warnings[@]}" "${codec_flags[@]}" -Icsrc -I"$include" -- "${portable[@]}"
compile "musl" musl-gcc -std=c11 -D_GNU_SOURCE "${warnings[@]}" "${codec_flags[@]}" -Icsrc -I"$include" \
    -- csrc/*.c tests/c/engine_test.c tests/c/decode_test.c
compile "Windows (MinGW-w64)" x86_64-w64-mingw32-gcc -std=c11 "${warnings[@]}" "${codec_flags[@]}" \
    -DCURL_STATICLIB -Icsrc -I"$include" -- csrc/*.c tests/c/engine_test.c tests/c/decode_test.c
for target in x86_64-macos aarch64-macos; do
    zig="$(scripts/zig_cc.sh "$target")/cc"
    compile "macOS ($target, zig's clang)" "$zig" -std=c11 "${warnings[@]}" "${codec_flags[@]}" \
        -Icsrc -I"$include" -- csrc/*.c tests/c/engine_test.c tests/c/decode_test.c
done
