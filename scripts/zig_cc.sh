#!/usr/bin/env bash
# A C compiler for another target than this machine: zig's clang, with the headers and libraries
# of every glibc version, musl and macOS, from the PyPI package ziglang (pinned below).
#
#   scripts/zig_cc.sh TARGET      e.g. x86_64-linux-gnu.2.28, aarch64-linux-gnu.2.28, x86_64-macos
#
# Installs ziglang into a virtualenv of its own (once), writes `cc`, `ar` and `ranlib` wrappers
# for TARGET into a folder whose name holds zig's version and the target (the build scripts key
# their caches on the compiler's path), and prints that folder. Used by
# scripts/build_wheel.sh --glibc (manylinux wheels) and scripts/check_portable.sh (the engine
# compiled for macOS).
#
#   PYTHON=...                 the interpreter for zig's virtualenv (default: python3)
#   REQUESTX_TOOLCHAIN_CACHE   where both live (default: ${XDG_CACHE_HOME:-~/.cache}/requestx/toolchain)
set -euo pipefail

# Pinned so that a wheel build is repeatable; ziglang's wheels carry the whole toolchain.
zig_version=0.17.1

die() { echo "zig_cc: error: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: scripts/zig_cc.sh TARGET (e.g. x86_64-linux-gnu.2.28)"
target="$1"
[[ "$target" =~ ^[a-z0-9_]+-[a-z]+(-[a-z]+)?(\.[0-9.]+)?$ ]] || die "$target is not a zig target"

toolchain="${REQUESTX_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/requestx/toolchain}"
zig_env="$toolchain/zig-$zig_version"
if ! "$zig_env/bin/python" -m ziglang version >/dev/null 2>&1; then
    echo "zig_cc: installing ziglang $zig_version into $zig_env" >&2
    rm -rf "$zig_env"
    mkdir -p "$toolchain"
    "${PYTHON:-python3}" -m venv "$zig_env" || die "could not make a virtualenv in $zig_env"
    "$zig_env/bin/python" -m pip --disable-pip-version-check install -q "ziglang==$zig_version" ||
        die "could not install ziglang $zig_version"
fi

wrappers="$toolchain/zig-$zig_version-$target"
mkdir -p "$wrappers"
# UBSan is off: zig's clang turns it on for builds without -O, and a wheel must not trap.
printf '#!/bin/sh\nexec %q -m ziglang cc -target %q -fno-sanitize=undefined "$@"\n' \
    "$zig_env/bin/python" "$target" >"$wrappers/cc.part"
for tool in ar ranlib; do
    printf '#!/bin/sh\nexec %q -m ziglang %s "$@"\n' "$zig_env/bin/python" "$tool" >"$wrappers/$tool.part"
done
for tool in cc ar ranlib; do
    chmod +x "$wrappers/$tool.part"
    mv "$wrappers/$tool.part" "$wrappers/$tool"
done
echo "$wrappers"
