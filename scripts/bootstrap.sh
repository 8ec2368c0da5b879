#!/usr/bin/env bash
# Set up a development environment for requestx on Debian 12 (or a close relative).
#
#   scripts/bootstrap.sh [--bench] [--nginx] [--tinyproxy] [--valgrind] [--shellcheck] [--fuzz]
#                        [--cross] [--venv DIR]
#
#   --bench      also install nginx-light, nghttp2-client (h2load), wrk and the benchmark extras
#                (.[bench])
#   --nginx      also install nginx-light (the tests use it as an HTTP/2 server that answers
#                before reading request bodies)
#   --tinyproxy  also install tinyproxy-bin (the proxy tests run against it as well as their own)
#   --valgrind   also install valgrind
#   --shellcheck also install shellcheck (the test command checks scripts/*.sh with it)
#   --fuzz       also install clang, whose libFuzzer and sanitizers build the C fuzz targets
#                (scripts/fuzz.sh; atheris, for the Python ones, is in the test extra)
#   --cross      also install musl-tools and gcc-mingw-w64-x86-64 (scripts/check_portable.sh
#                compiles the engine for musl and Windows with them)
#   --venv DIR   virtualenv location (default: <repo>/.venv)
#   PYTHON=...   interpreter to build the virtualenv from (default: python3)
#
# Idempotent: installs only the system packages that are missing (as root: `apt-get update`
# once, then `apt-get install -y`; otherwise it prints the sudo command and exits 1), reuses a
# working virtualenv made by the same Python, and installs requestx in editable mode unless
# that virtualenv already has it as pyproject.toml and setup.py ask (REQUESTX_REINSTALL=1:
# always).
# Build dependencies (setuptools, Cython) go into the virtualenv and pip runs with
# --no-build-isolation, so rebuilding the extension does not download them again.
set -euo pipefail

start_dir="$PWD"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
venv="$repo/.venv"
bench=0
nginx=0
tinyproxy=0
valgrind=0
shellcheck=0
fuzz=0
cross=0

die() { echo "bootstrap: error: $*" >&2; exit 1; }
say() { echo "bootstrap: $*"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --bench) bench=1 ;;
        --nginx) nginx=1 ;;
        --tinyproxy) tinyproxy=1 ;;
        --valgrind) valgrind=1 ;;
        --shellcheck) shellcheck=1 ;;
        --fuzz) fuzz=1 ;;
        --cross) cross=1 ;;
        --venv) [ $# -ge 2 ] || die "--venv needs a directory"; venv="$(realpath -m "$2")"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
                       "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown option: $1 (try --help)" ;;
    esac
    shift
done

command -v "$python" >/dev/null 2>&1 || die "$python not found (set PYTHON=/path/to/python3)"

# --- system packages --------------------------------------------------------------------------
# The bundled libcurl (scripts/build_libcurl.sh) is built with cmake and ninja and links the
# static archives of OpenSSL, zlib, brotli and zstd from their -dev packages; the jemalloc it
# builds beside it (the engine's heap) needs autoconf and make.
packages=(gcc make autoconf patch pkg-config cmake ninja-build libssl-dev zlib1g-dev libbrotli-dev
          libzstd-dev)
# Where upstream hosts cannot be reached, curl's and nghttp2's sources come from their Rust
# crates, fetched with cargo (rustup's, when there is one; else Debian's).
command -v cargo >/dev/null 2>&1 || packages+=(cargo)
# A Debian system Python needs python3-venv for `-m venv` and python3-dev for Python.h; a
# pyenv/conda/self-built Python brings both, so ask for them only when they are missing.
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    packages+=(python3-venv)
fi
if ! "$python" -c 'import os, sysconfig; p = sysconfig.get_paths()["include"]
raise SystemExit(not os.path.exists(os.path.join(p, "Python.h")))' >/dev/null 2>&1; then
    packages+=(python3-dev)
fi
# nghttp2-client: h2load, run_h2.py's C baseline; wrk: the C baseline for requestx.bench
[ "$bench" = 1 ] && packages+=(nginx-light nghttp2-client wrk)
[ "$nginx" = 1 ] && [ "$bench" = 0 ] && packages+=(nginx-light)
[ "$tinyproxy" = 1 ] && packages+=(tinyproxy-bin)
[ "$valgrind" = 1 ] && packages+=(valgrind)
[ "$shellcheck" = 1 ] && packages+=(shellcheck)
# Debian 12's clang (14) brings libFuzzer and the sanitizer runtimes (libclang-rt-14-dev).
[ "$fuzz" = 1 ] && packages+=(clang)
[ "$cross" = 1 ] && packages+=(musl-tools gcc-mingw-w64-x86-64)

if command -v dpkg-query >/dev/null 2>&1; then
    missing=()
    for pkg in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" -eq 0 ]; then
            say "installing system packages: ${missing[*]}"
            export DEBIAN_FRONTEND=noninteractive
            apt-get update -qq >/dev/null || die "apt-get update failed"
            apt-get install -y -qq "${missing[@]}" >/dev/null || die "apt-get install failed"
        else
            echo "bootstrap: missing system packages; run this, then bootstrap again:" >&2
            echo "    sudo apt-get install -y ${missing[*]}" >&2
            exit 1
        fi
    fi
else
    say "no dpkg here: not checking system packages (need: ${packages[*]})"
fi

# --- virtualenv -------------------------------------------------------------------------------
# Reuse the virtualenv only if it runs and was made from the same Python version; a venv left
# by another interpreter (or a moved checkout) would build an extension for the wrong ABI.
want="$("$python" -c 'import sys; print(sys.version.split()[0])')"
have="$("$venv/bin/python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
    [ -n "$have" ] && say "recreating $venv (Python $have -> $want)"
    [ -z "$have" ] && say "creating $venv with Python $want"
    rm -rf "$venv"
    "$python" -m venv "$venv" || die "could not create the virtualenv at $venv"
fi
# pip's own -q does not silence the build backend's warnings: keep all of it in a log and show
# the end of the log only when a step fails.
log="$(mktemp "${TMPDIR:-/tmp}/requestx-bootstrap.XXXXXX")"
trap 'rm -f "$log"' EXIT
pip_install() {
    local what="$1"; shift
    if ! "$venv/bin/python" -m pip --disable-pip-version-check install "$@" >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        die "$what failed (pip output above)"
    fi
}
extras="test"
[ "$bench" = 1 ] && extras="test,bench"

# The pip steps are skipped when this virtualenv already holds what they would install: a
# stamp names the Python, the files that decide the dependencies (and this script) and the
# extras installed. Anything else, or REQUESTX_REINSTALL=1, runs them (about 10 s).
stamp="$venv/.requestx-bootstrap"
inputs="$(cat "$repo/pyproject.toml" "$repo/setup.py" "${BASH_SOURCE[0]}" | sha256sum | cut -d' ' -f1)"
installed_extras=""
if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$want $inputs" ]; then
    installed_extras="$(sed -n 2p "$stamp")"
fi
up_to_date=1
for extra in ${extras//,/ }; do
    case ",$installed_extras," in *",$extra,"*) ;; *) up_to_date=0 ;; esac
done
[ "${REQUESTX_REINSTALL:-0}" = 1 ] && up_to_date=0

if [ "$up_to_date" = 0 ]; then
    rm -f "$stamp"
    pip_install "upgrading pip" --upgrade pip
    pip_install "installing the build tools" "setuptools>=77" wheel "Cython>=3.0"
fi

# The pinned libcurl, built once into its cache (seconds when cached); setup.py links it.
"$repo/scripts/build_libcurl.sh" >/dev/null || die "building the bundled libcurl failed"

cd "$repo"
if [ "$up_to_date" = 0 ]; then
    say "installing requestx (editable, .[$extras]) and building the extension"
    pip_install "pip install -e '.[$extras]'" --no-build-isolation -e ".[$extras]"
    printf '%s %s\n%s\n' "$want" "$inputs" "$extras" >"$stamp"
else
    say "requestx (.[$installed_extras]) is installed in ${venv#"$start_dir"/} as these files ask (REQUESTX_REINSTALL=1 installs again)"
fi
say "done: activate with  . ${venv#"$start_dir"/}/bin/activate"
