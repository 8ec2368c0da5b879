#!/usr/bin/env bash
# Static, position-independent OpenSSL, zlib, brotli and zstd for building requestx wheels:
# in images whose packages ship no static archives (manylinux_2_28 is AlmaLinux 8:
# openssl-devel and friends have .so files only), on macOS (no OpenSSL of its own), with
# zig's compiler for an older glibc (scripts/build_wheel.sh --glibc), and on Windows.
# scripts/build_libcurl.sh then links libcurl against them.
#
#   scripts/build_wheel_deps.sh [--prefix DIR] [--source auto|upstream|registries]
#                               [--install-tools] [--system-static] [--src NAME=DIR]...
#                               [--print-env]
#
#   --prefix DIR     where the libraries are installed (default: $REQUESTX_DEPS_PREFIX, else
#                    /opt/requestx-deps); DIR/lib and DIR/include
#   --source S       upstream: the release archives from the projects' own hosts; registries:
#                    the same releases as carried by crates.io crates and PyPI sdists (machines
#                    that reach only package registries); auto (default): upstream, then
#                    registries
#   --install-tools  as root: install the build tools with the system's package manager (dnf,
#                    yum, apk or apt-get); with --system-static on Alpine also the -static
#                    packages (openssl-libs-static zlib-static brotli-static zstd-static)
#   --system-static  use the system's static archive of a library where the compiler finds one
#                    (cc -print-file-name=libX.a), and build only the others
#   --src NAME=DIR   build NAME (openssl, zlib, brotli, zstd) from this unpacked tree instead
#                    of a pinned archive. Its version is read from the tree; a version other
#                    than the pin is built with a warning (the result is then not what the
#                    wheels ship)
#   --print-env      print the environment the later build steps need and exit
#
# What the later steps need (pyproject.toml's [tool.cibuildwheel.linux] sets the same):
#   REQUESTX_DEPS_PREFIX=DIR   scripts/build_libcurl.sh then links DIR/lib's archives (and
#                              gives curl's build DIR/include), where this script built them
#
# Pins: scripts/pinned-sources.txt, each archive with its SHA-256 (scripts/fetch_sources.sh
# fetches and checks them); an archive that does not match is refused. The script ends by
# compiling and running a program against the installed headers and archives, which fails if a
# header and its library disagree.
# CC, AR and CFLAGS are honoured: scripts/build_wheel.sh --glibc sets CC and AR to zig's, for
# an older glibc than this machine's.
# On Windows (Git Bash or MSYS2) it builds zlib, brotli and zstd only, with LLVM's clang
# (libcurl uses Schannel there, not OpenSSL).
# Needs: a C compiler, make and perl (OpenSSL's build), tar, and curl, wget, cargo or python3
# to download. --install-tools also installs cmake and autoconf, which scripts/build_libcurl.sh
# needs next (autoconf for the jemalloc it builds on Linux).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$repo/scripts/pinned-sources.txt"
# shellcheck source=scripts/fetch_sources.sh
. "$repo/scripts/fetch_sources.sh"

say() { echo "build_wheel_deps: $*" >&2; }
die() { echo "build_wheel_deps: error: $*" >&2; exit 1; }
# Associative arrays: bash 4 or newer (macOS's /bin/bash is 3.2; Homebrew's is current).
[ "${BASH_VERSINFO[0]}" -ge 4 ] || die "needs bash 4 or newer (macOS: brew install bash)"

prefix="${REQUESTX_DEPS_PREFIX:-/opt/requestx-deps}"
install_tools=0
system_static=0
print_env=0
source_mode=auto
declare -A src_override=()

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; prefix="$2"; shift ;;
        --source) [ $# -ge 2 ] || die "--source needs auto, upstream or registries"; source_mode="$2"; shift ;;
        --install-tools) install_tools=1 ;;
        --system-static) system_static=1 ;;
        --src)
            if [ $# -lt 2 ] || [[ "$2" != *=* ]]; then die "--src needs NAME=DIR"; fi
            case "${2%%=*}" in openssl|zlib|brotli|zstd) ;; *) die "--src: unknown library ${2%%=*}" ;; esac
            [ -d "${2#*=}" ] || die "--src: ${2#*=} is not a directory"
            src_override[${2%%=*}]="$(cd "${2#*=}" && pwd)"
            shift ;;
        --print-env) print_env=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
                       "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"

if [ "$print_env" = 1 ]; then
    printf 'export REQUESTX_DEPS_PREFIX=%q\n' "$prefix"
    exit 0
fi

# --- build tools ------------------------------------------------------------------------------
if [ "$install_tools" = 1 ]; then
    [ "$(id -u)" -eq 0 ] || die "--install-tools needs root"
    if command -v dnf >/dev/null 2>&1 || command -v yum >/dev/null 2>&1; then
        pm="$(command -v dnf || command -v yum)"
        # perl-core: OpenSSL's Configure needs modules (IPC::Cmd, ...) minimal perl lacks.
        # The compiler is the image's own (manylinux: gcc-toolset).
        say "installing build tools with $(basename "$pm")"
        "$pm" install -y -q perl-core cmake make patch tar xz autoconf >/dev/null
    elif command -v apk >/dev/null 2>&1; then
        tools=(perl cmake make patch linux-headers tar xz autoconf)
        if [ "$system_static" = 1 ]; then
            tools+=(openssl-dev openssl-libs-static zlib-dev zlib-static brotli-dev brotli-static
                    zstd-dev zstd-static)
        fi
        say "installing with apk: ${tools[*]}"
        apk add --no-cache -q "${tools[@]}" >/dev/null
    elif command -v apt-get >/dev/null 2>&1; then
        say "installing build tools with apt-get"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq perl cmake make patch tar xz-utils autoconf >/dev/null
    else
        die "--install-tools: no dnf, yum, apk or apt-get here"
    fi
fi

# Windows (Git Bash or MSYS2): LLVM's clang with MSVC's ABI, as scripts/build_libcurl.sh uses
# there, and no OpenSSL (libcurl uses Schannel).
case "$(uname -s)" in
    MINGW* | MSYS* | CYGWIN*) windows=1; cc="${CC:-clang}" ;;
    *) windows=0; cc="${CC:-cc}" ;;
esac
for tool in "$cc" tar; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (try --install-tools)"
done
jobs="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"

# --- which libraries to build -----------------------------------------------------------------
# A static archive the compiler finds outside our prefix, for --system-static.
system_archive() {
    local path
    path="$(readlink -f "$(LIBRARY_PATH='' "$cc" -print-file-name="lib$1.a")")"
    [ -f "$path" ] && [[ "$path" != "$prefix"/* ]] && echo "$path"
}
# linkable_into_shared_object NAME ARCHIVE...: whether the parts of these archives libcurl uses
# can go into a shared object, linked the way setup.py links them. A distribution may compile
# its static archives as position-dependent (or -fPIE) code, which a shared object cannot hold.
linkable_into_shared_object() {
    local name="$1" probe symbols symbol
    shift
    case "$name" in
        openssl) symbols="OPENSSL_init_ssl SSL_CTX_new SSL_connect X509_STORE_load_file EVP_sha256" ;;
        zlib) symbols="zlibVersion inflateInit2_ inflate inflateEnd" ;;
        brotli) symbols="BrotliDecoderCreateInstance BrotliDecoderDecompressStream" ;;
        zstd) symbols="ZSTD_createDStream ZSTD_decompressStream ZSTD_freeDStream" ;;
    esac
    probe="$(mktemp -d "${TMPDIR:-/tmp}/requestx-pic.XXXXXX")"
    {
        for symbol in $symbols; do echo "extern void $symbol(void);"; done
        echo "void *requestx_probe[] = {"
        for symbol in $symbols; do echo "    (void *)$symbol,"; done
        echo "};"
    } >"$probe/probe.c"
    if "$cc" -shared -fPIC -o "$probe/probe.so" "$probe/probe.c" "$@" \
            -Wl,--no-undefined -ldl -pthread >"$probe/log" 2>&1; then
        rm -rf "$probe"
        return 0
    fi
    grep -m2 -i 'relocation\|undefined\|error' "$probe/log" >&2 || true
    rm -rf "$probe"
    return 1
}
declare -A archives=([openssl]="ssl crypto" [zlib]="z" [brotli]="brotlidec brotlicommon"
                     [zstd]="zstd")
to_build=()
for name in openssl zlib brotli zstd; do
    [ "$name" = openssl ] && [ "$windows" = 1 ] && continue
    if [ "$system_static" = 1 ] && [ -z "${src_override[$name]:-}" ]; then
        found=()
        for lib in ${archives[$name]}; do
            path="$(system_archive "$lib")" && found+=("$path")
        done
        if [ ${#found[@]} -eq "$(wc -w <<<"${archives[$name]}")" ]; then
            if linkable_into_shared_object "$name" "${found[@]}"; then
                say "$name: using the system's static archives (${found[*]})"
                continue
            fi
            say "$name: the system's static archives cannot be linked into a shared object; building it"
        fi
    fi
    to_build+=("$name")
done

# The prefix is reused when the same scripts, pins, compiler (the command and what it says it
# is: a zig wrapper names its target in its path) and sources built it.
stamp_input="$(cat "${BASH_SOURCE[0]}" "$pins" "$repo/scripts/fetch_sources.sh"
               command -v "$cc"; "$cc" --version | head -n 1; uname -m
               echo "CFLAGS=${CFLAGS:-} AR=${AR:-} build=${to_build[*]}"
               for name in "${!src_override[@]}"; do echo "src $name=${src_override[$name]}"; done)"
stamp="$(printf '%s' "$stamp_input" | sha256sum | cut -c1-16)"
ar="${AR:-ar}"
if [ -f "$prefix/.requestx-deps-$stamp" ]; then
    say "up to date: $prefix"
    exit 0
fi

downloads="${REQUESTX_DEPS_DOWNLOADS:-$prefix/downloads}"
mkdir -p "$downloads" "$prefix/lib" "$prefix/include"
work="$(mktemp -d "${TMPDIR:-/tmp}/requestx-deps.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# source_tree NAME: an unpacked tree of NAME in $work/NAME (a pinned archive, checked, or the
# --src tree, copied so that the build does not write into it)
source_tree() {
    if [ -n "${src_override[$1]:-}" ]; then
        cp -a "${src_override[$1]}" "$work/$1"
    else
        fetch_source "$1" "$work/$1"
    fi
}

# tree_version NAME DIR: the version the unpacked tree says it is
tree_version() {
    case "$1" in
        openssl) awk -F= '$1 == "MAJOR" { a = $2 } $1 == "MINOR" { b = $2 } $1 == "PATCH" { c = $2 }
                          END { print a "." b "." c }' "$2/VERSION.dat" ;;
        zlib) sed -n 's/^#define ZLIB_VERSION "\([0-9.]*\)".*/\1/p' "$2/zlib.h" ;;
        brotli) awk '$1 != "#define" { next } $2 == "BROTLI_VERSION_MAJOR" { a = $3 }
                     $2 == "BROTLI_VERSION_MINOR" { b = $3 } $2 == "BROTLI_VERSION_PATCH" { c = $3 }
                     END { print a "." b "." c }' \
                    "$2/c/common/version.h" ;;
        zstd) awk '$1 != "#define" { next } $2 == "ZSTD_VERSION_MAJOR" { a = $3 }
                   $2 == "ZSTD_VERSION_MINOR" { b = $3 } $2 == "ZSTD_VERSION_RELEASE" { c = $3 }
                   END { print a "." b "." c }' \
                  "$2/lib/zstd.h" ;;
    esac
}

check_version() {  # check_version NAME: the tree must be the pinned version
    local version got
    version="$(pinned_version "$1")"
    got="$(tree_version "$1" "$work/$1" 2>/dev/null || true)"
    if [ "$got" = "$version" ]; then
        [ -n "${src_override[$1]:-}" ] && say "$1 $version: from ${src_override[$1]}"
    elif [ -n "${src_override[$1]:-}" ]; then
        say "WARNING: $1 from ${src_override[$1]} is version ${got:-unknown}, not the pinned $version"
    else
        die "the $1 archive holds version ${got:-unknown}, not $version; refusing it"
    fi
    echo "$1 ${got:-unknown} ${src_override[$1]:-source $source_mode}" >>"$work/deps-info.txt"
}

pic_cflags="-O2 -fPIC ${CFLAGS:-}"
# With MSVC's ABI clang rejects -fPIC, and the C runtime must be the DLL one Python uses (/MD).
[ "$windows" = 1 ] && pic_cflags="-O2 -fms-runtime-lib=dll ${CFLAGS:-}"

build_openssl() {
    local dir="$work/openssl"
    # no-shared: archives only; no-module: providers (default, legacy) built into libcrypto, so
    # nothing is loaded from a directory at run time. OPENSSLDIR is where OpenSSL looks for
    # openssl.cnf; /usr/local/ssl (its default) is absent on most systems, so the wheel does not
    # read a distribution's openssl.cnf written for another OpenSSL build. libcurl passes its
    # own CA file/path, so OPENSSLDIR's certs are not used for verification.
    # shellcheck disable=SC2086  # CFLAGS words are separate Configure arguments
    (cd "$dir" && ./Configure --prefix="$prefix" --libdir=lib --openssldir=/usr/local/ssl \
        no-shared no-module no-tests no-apps no-docs no-comp -fPIC ${CFLAGS:-}) \
        >"$work/openssl.log" 2>&1 || { tail -n 30 "$work/openssl.log" >&2; die "openssl: Configure failed"; }
    make -C "$dir" -j"$jobs" build_libs >>"$work/openssl.log" 2>&1 ||
        { tail -n 30 "$work/openssl.log" >&2; die "openssl: build failed"; }
    make -C "$dir" install_dev >>"$work/openssl.log" 2>&1 ||
        { tail -n 30 "$work/openssl.log" >&2; die "openssl: install failed"; }
}

build_zlib() {
    # zlib's library is a fixed list of C files: compiled here directly, with what its
    # ./configure would turn on for Linux (unistd.h, stdarg.h, large files, hidden internals).
    local dir="$work/zlib" obj="$work/zlib-obj" name
    mkdir -p "$obj"
    sed -i -e 's/^#if HAVE_UNISTD_H-0.*/#if 1/' -e 's/^#if HAVE_STDARG_H-0.*/#if 1/' \
        -e 's/^#ifdef HAVE_UNISTD_H.*/#if 1/' -e 's/^#ifdef HAVE_STDARG_H.*/#if 1/' "$dir/zconf.h"
    if grep -Eq '^#if(def)? HAVE_(UNISTD|STDARG)_H' "$dir/zconf.h" ||
       [ "$(grep -c '^#if 1' "$dir/zconf.h")" -lt 2 ]; then
        die "zlib: zconf.h is not laid out as expected; cannot configure it"
    fi
    for name in adler32 crc32 deflate infback inffast inflate inftrees trees zutil compress \
                uncompr gzclose gzlib gzread gzwrite; do
        # shellcheck disable=SC2086
        "$cc" $pic_cflags -D_LARGEFILE64_SOURCE=1 -DHAVE_HIDDEN -I"$dir" \
            -c "$dir/$name.c" -o "$obj/$name.o" || die "zlib: compiling $name.c failed"
    done
    rm -f "$prefix/lib/libz.a"
    "$ar" rcs "$prefix/lib/libz.a" "$obj"/*.o
    install -m 644 "$dir/zlib.h" "$dir/zconf.h" "$prefix/include/"
}

build_brotli() {
    # libcurl only decodes: libbrotlicommon and libbrotlidec, which are the C files of
    # c/common and c/dec (what brotli's CMake compiles for those two targets).
    local dir="$work/brotli" part file
    for part in common dec; do
        mkdir -p "$work/brotli-$part"
        for file in "$dir/c/$part"/*.c; do
            # shellcheck disable=SC2086
            "$cc" $pic_cflags -I"$dir/c/include" -c "$file" \
                -o "$work/brotli-$part/$(basename "$file" .c).o" || die "brotli: compiling $file failed"
        done
    done
    rm -f "$prefix/lib/libbrotlicommon.a" "$prefix/lib/libbrotlidec.a"
    "$ar" rcs "$prefix/lib/libbrotlicommon.a" "$work/brotli-common"/*.o
    "$ar" rcs "$prefix/lib/libbrotlidec.a" "$work/brotli-dec"/*.o
    mkdir -p "$prefix/include/brotli"
    install -m 644 "$dir/c/include/brotli"/*.h "$prefix/include/brotli/"
}

build_zstd() {
    # Decompression is all libcurl uses: zstd's common and decompress sources, compiled here
    # directly (no legacy formats, no threads), as zlib and brotli are. The assembly Huffman
    # decoder is ELF-only in its own guard, so it is empty on macOS and Windows.
    local dir="$work/zstd/lib" obj="$work/zstd-obj" file
    mkdir -p "$obj"
    for file in "$dir"/common/*.c "$dir"/decompress/*.c "$dir"/decompress/*.S; do
        [ -f "$file" ] || continue
        # shellcheck disable=SC2086
        "$cc" $pic_cflags -DXXH_NAMESPACE=ZSTD_ -DZSTD_LEGACY_SUPPORT=0 -I"$dir" -I"$dir/common" \
            -c "$file" -o "$obj/$(basename "$file").o" || die "zstd: compiling $file failed"
    done
    rm -f "$prefix/lib/libzstd.a"
    "$ar" rcs "$prefix/lib/libzstd.a" "$obj"/*.o
    install -m 644 "$dir/zstd.h" "$dir/zstd_errors.h" "$prefix/include/"
}

: >"$work/deps-info.txt"
for name in ${to_build[@]+"${to_build[@]}"}; do
    source_tree "$name"
    check_version "$name"
    say "building $name (static, PIC) into $prefix"
    "build_$name"
done

# --- check: headers and archives agree --------------------------------------------------------
# The archives scripts/build_libcurl.sh will take (with REQUESTX_DEPS_PREFIX set): ours where
# this script built them, else the system's.
export CPATH="$prefix/include${CPATH:+:$CPATH}"
link=()
libs=(ssl crypto brotlidec brotlicommon zstd z)
[ "$windows" = 1 ] && libs=(brotlidec brotlicommon zstd z)
for lib in "${libs[@]}"; do
    path="$prefix/lib/lib$lib.a"
    [ -f "$path" ] || path="$(system_archive "$lib")" || die "no lib$lib.a in $prefix/lib or on the compiler's path"
    say "lib$lib.a: $path"
    link+=("$path")
done
cat >"$work/check.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#ifndef NO_OPENSSL
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#endif
#include <zlib.h>
#include <brotli/decode.h>
#include <zstd.h>
int main(void)
{
    unsigned b = BrotliDecoderVersion();
#ifndef NO_OPENSSL
    printf("%s; ", OpenSSL_version(OPENSSL_VERSION));
    if (OpenSSL_version_num() != OPENSSL_VERSION_NUMBER) {
        fprintf(stderr, "OpenSSL's header does not match its library\n");
        return 1;
    }
#endif
    printf("zlib %s; brotli %u.%u.%u; zstd %s\n", zlibVersion(), b >> 24, (b >> 12) & 0xfff,
           b & 0xfff, ZSTD_versionString());
    if (strcmp(zlibVersion(), ZLIB_VERSION) != 0 || ZSTD_versionNumber() != ZSTD_VERSION_NUMBER) {
        fprintf(stderr, "a header does not match its library\n");
        return 1;
    }
    return 0;
}
EOF
check_flags=(-ldl -pthread)
[ "$windows" = 1 ] && check_flags=(-DNO_OPENSSL)
"$cc" -o "$work/check" "$work/check.c" "${link[@]}" "${check_flags[@]}" ||
    die "the check program does not link against these libraries"
versions="$("$work/check")" || die "headers and libraries disagree"
say "check: $versions"

{
    echo "# scripts/build_wheel_deps.sh, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    cat "$work/deps-info.txt"
    echo "linked: $versions"
} >"$prefix/deps-info.txt"
rm -f "$prefix"/.requestx-deps-*
touch "$prefix/.requestx-deps-$stamp"
say "done: $prefix (add it to the environment: $0 --prefix $prefix --print-env)"
