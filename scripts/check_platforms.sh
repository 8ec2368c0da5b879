#!/usr/bin/env bash
# The C engine on the machines this one can emulate: cross-built libcurl and engine test, run
# under qemu (aarch64 Linux) and Wine (Windows x86_64) against this machine's test servers.
#
#   scripts/check_platforms.sh [pytest arguments...]
#
# Installs what it needs first (as root: gcc-aarch64-linux-gnu, qemu-user-static, Debian's
# arm64 -dev packages of OpenSSL, zlib, brotli and zstd, gcc-mingw-w64-x86-64,
# libz-mingw-w64-dev and wine64; otherwise it prints the apt-get command), then runs
# tests/engine/test_cross_builds.py (`pytest -m cross`). About 4 minutes on a clean machine (two
# libcurl builds, cached after that), 2 minutes after. Not part of scripts/test.sh, which compiles
# the same sources for musl and Windows (scripts/check_portable.sh) but runs nothing emulated.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

scripts/bootstrap.sh --nginx --cross
packages=(gcc-aarch64-linux-gnu qemu-user-static libc6-dev:arm64 libssl-dev:arm64 zlib1g-dev:arm64
          libbrotli-dev:arm64 libzstd-dev:arm64 libz-mingw-w64-dev wine64)
missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "check_platforms: missing packages; run this, then again:" >&2
        echo "    sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "check_platforms: installing ${missing[*]}"
    dpkg --add-architecture arm64
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi
exec .venv/bin/python -m pytest -m cross tests/engine/test_cross_builds.py "$@"
