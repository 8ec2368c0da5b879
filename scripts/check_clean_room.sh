#!/usr/bin/env bash
# A wheel installed as a user would install it, on a machine that has nothing to build with:
# a minimal Debian made with debootstrap (python3, python3-venv and ca-certificates only: no
# compiler, no -dev package, no libcurl), where the wheel goes into a fresh virtualenv and
# scripts/smoke_wheel.py and the wheel's test subset run.
#
#   scripts/check_clean_room.sh 12|13 WHEEL [pytest arguments...]
#
#   12, 13   Debian 12 (bookworm, Python 3.11) or Debian 13 (trixie, Python 3.13); the wheel
#            must be built for that Python (scripts/build_wheel.sh, PYTHON=... for another)
#   WHEEL    the .whl file
#
# The root is made once, into ${REQUESTX_ROOTS:-/var/cache/requestx/roots}/debianN (about 280 MB,
# a minute or two), and reused; the script checks it still has no compiler and no libcurl. In
# the root it installs the wheel and the test tools from the package index, copies tests/,
# benchmarks/, pyproject.toml, setup.py, README.md, the libcurl pins and the check scripts into
# a folder without requestx/, and runs scripts/check_wheel.py --require-installed,
# scripts/smoke_wheel.py (GET, POST JSON, HTTP/2 over TLS, a streamed download) and pytest
# without tests/engine/test_engine_memory.py (it compiles csrc/; tests that need gcc or nginx skip).
# Needs root (debootstrap, chroot, mounts) and debootstrap (apt-get install -y debootstrap).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "check_clean_room: error: $*" >&2; exit 1; }
say() { echo "check_clean_room: $*" >&2; }

[ $# -ge 2 ] || die "usage: scripts/check_clean_room.sh 12|13 WHEEL [pytest arguments...]"
case "$1" in
    12) suite=bookworm ;;
    13) suite=trixie ;;
    *) die "Debian $1: only 12 and 13 are known" ;;
esac
release="$1"
wheel="$(realpath "$2")"
shift 2
[ -f "$wheel" ] || die "no wheel at $wheel"
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "needs debootstrap: apt-get install -y debootstrap"

root="${REQUESTX_ROOTS:-/var/cache/requestx/roots}/debian$release"
if [ ! -x "$root/usr/bin/python3" ]; then
    say "making a minimal Debian $release in $root (debootstrap $suite)"
    rm -rf "$root"
    mkdir -p "$root"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
        "$suite" "$root" http://deb.debian.org/debian >"$root.log" 2>&1 ||
        { tail -n 30 "$root.log" >&2; die "debootstrap failed"; }
fi
# What a clean room must not have: anything to build C with, or a libcurl.
for tool in gcc cc clang; do
    ! chroot "$root" sh -c "command -v $tool" >/dev/null || die "the root has $tool"
done
if chroot "$root" sh -c 'ls /usr/lib/*/libcurl* /usr/include/curl' >/dev/null 2>&1; then
    die "the root has a libcurl"
fi

work=/opt/rx-check
rm -rf "${root:?}$work"
mkdir -p "$root$work/suite/scripts"
cp "$wheel" "$root$work/"
cp -r "$repo/tests" "$repo/benchmarks" "$repo/pyproject.toml" "$repo/setup.py" "$repo/README.md" \
    "$root$work/suite/"
cp "$repo/scripts/pinned-sources.txt" "$repo/scripts/check_wheel.py" \
    "$repo/scripts/smoke_wheel.py" "$root$work/suite/scripts/"
find "$root$work/suite" -name __pycache__ -prune -exec rm -rf {} +
# What an installed Debian has and debootstrap leaves out: localhost in /etc/hosts (the
# installer writes it). pip reaches the package index with this machine's name resolution and
# certificate store.
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root$work/index-ca.pem"

mounted=()
cleanup() {
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" || true; done
}
trap cleanup EXIT
for fs in proc sys dev dev/pts; do
    mkdir -p "$root/$fs"
    case "$fs" in
        proc) mount -t proc proc "$root/proc" ;;
        *) mount --bind "/$fs" "$root/$fs" ;;
    esac
    mounted+=("$root/$fs")
done

say "Debian $release: $(chroot "$root" python3 --version), $(basename "$wheel")"
pytest_args=("$@")
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin LANG=C.UTF-8 \
    PIP_CERT="$work/index-ca.pem" PIP_DISABLE_PIP_VERSION_CHECK=1 \
    bash -euo pipefail -c '
        cd '"$work"'
        python3 -m venv venv
        venv/bin/pip install -q ./*.whl pytest pytest-timeout anyio trio uvloop hypercorn \
            trustme httpx brotli "backports.zstd; python_version < \"3.14\""
        cd suite
        ../venv/bin/python -c "import requestx, sys; print(\"installed:\", requestx.__file__)"
        ../venv/bin/python scripts/check_wheel.py --require-installed
        ../venv/bin/python scripts/smoke_wheel.py
        ../venv/bin/python -m pytest -p no:cacheprovider -q \
            --ignore=tests/engine/test_engine_memory.py "$@"
    ' clean-room ${pytest_args[@]+"${pytest_args[@]}"}
