#!/usr/bin/env bash
# Build the libcurl requestx links: pinned curl and nghttp2, static and position-independent,
# into a cache directory keyed by versions, flags and this script.
#
#   scripts/build_libcurl.sh [--cache DIR] [--source auto|upstream|registries] [--host TRIPLE]
#                            [--print-prefix]
#
#   --cache DIR     where builds and downloads are kept (default: $REQUESTX_LIBCURL_CACHE, else
#                   ${XDG_CACHE_HOME:-~/.cache}/requestx/libcurl)
#   --source S      upstream: release archives from the projects' own hosts; registries: the
#                   same releases as vendored by the Rust crates curl-sys and libnghttp2-sys,
#                   fetched with cargo from crates.io; auto (default): upstream, then registries
#   --host TRIPLE   cross-build for another platform with Debian's cross compilers:
#                   aarch64-linux-gnu (gcc-aarch64-linux-gnu; OpenSSL, zlib, brotli and zstd
#                   from Debian's arm64 -dev packages) or x86_64-w64-mingw32 (gcc-mingw-w64-x86-64;
#                   TLS by Schannel, zlib from libz-mingw-w64-dev, no brotli or zstd). Default:
#                   this machine (CC, else cc).
#   --print-prefix  print the install prefix for these pins and exit (nothing is built); the
#                   prefix exists only once a build has finished
#
# Pins and SHA-256 checksums: scripts/pinned-sources.txt (the only place versions live), fetched
# and checked by scripts/fetch_sources.sh.
# Patches: scripts/libcurl-patches/NAME-*.patch are applied (patch -p1 --fuzz=0, in name order)
# to the tree of NAME (curl or nghttp2) after its version is checked; each file says what it
# changes and why. Fuzz 0: every hunk's context must match exactly (an offset is allowed), so
# that after a version bump a hunk cannot land on code that changed around it; a patch that no
# longer applies stops the build and has to be remade against the new sources. They are part
# of the cache key, and build-info.txt lists them.
#
# Environment switches (each part of the cache key, so every combination has its own prefix,
# side by side in the cache, and each recorded in build-info.txt):
#   REQUESTX_LIBCURL_PATCHES=0  stock curl and nghttp2: no patch applied (the prefix's name
#                   says "stock"); unset or 1: the patches. The engine and libcurl tests pass
#                   against stock too, but for those of a patch's own effect, which skip.
#   REQUESTX_LIBCURL_SKIP_PATCHES=0008,0011  the series without the patches named (their
#                   numbers, or their file names without .patch, comma-separated; the prefix's
#                   name says "without-0008-0011"): to measure what one patch gains, as the
#                   difference from the whole series (docs/libcurl-patches.md), or to build a
#                   patch's broken variant in its place (scripts/check_patch_tests.sh). A name
#                   that matches no patch stops the build; so does a later patch that does not
#                   apply without the one left out. Ignored with REQUESTX_LIBCURL_PATCHES=0.
#   REQUESTX_LIBCURL_EXTRA_PATCH=FILE  one more patch, applied (fuzz 0) after the series: for
#                   scripts/check_patch_tests.sh's broken variants; its contents are part of the
#                   key, and the prefix's name says "extra-NAME". Not for shipping.
#   REQUESTX_LIBCURL_DEBUG=1    curl's own debug build (the prefix's name says "debug"): CMake
#                   Debug with ENABLE_DEBUG=ON, which defines DEBUGBUILD, so libcurl's
#                   DEBUGASSERTs are assert()s and abort on a broken invariant. In 8.22 that
#                   also turns on its memory tracking (CURL_MEMDEBUG: the allocations go
#                   through curl_dbg_malloc and friends, each with a small size header); there is
#                   no separate ENABLE_CURLDEBUG option any more. The tracking logs nothing
#                   unless curl_dbg_memdebug() names a log file, which nothing in requestx calls,
#                   and libcurl frees every block it allocates itself (the engine neither frees
#                   libcurl's memory nor hands it its own to free), so it is safe in a static,
#                   multi-threaded build. nghttp2 stays a release build. Not for shipping:
#                   scripts/test_libcurl_build.sh runs the engine tests against it.
# Every archive is checked against its pin before it is unpacked, and the unpacked tree's own
# version (curlver.h, nghttp2's CMakeLists.txt) must match too.
#
# What is built: libnghttp2 (library only) and libcurl with HTTP and HTTPS only (no ftp, file,
# ldap, ...), OpenSSL, nghttp2, zlib, brotli and zstd, the threaded resolver, unix sockets and
# proxies (http, https, socks), and the CA bundle/path detected for this platform. OpenSSL,
# zlib, brotli and zstd are static archives, so the built module needs none of their shared
# libraries: from REQUESTX_DEPS_PREFIX/lib where scripts/build_wheel_deps.sh built them there
# (wheels), else from the system (Debian: libssl-dev zlib1g-dev libbrotli-dev libzstd-dev).
# Linux targets (native, aarch64, musl) also get jemalloc, the engine's heap (csrc/heap.h says
# why): built with its symbols prefixed rxje_ and hidden, so it never replaces the process's
# malloc, and with one arena for every thread compiled in; its tree comes from the crate
# tikv-jemalloc-sys, whose tree has no configure script, so these builds need autoconf and make.
# CC and AR are honoured (scripts/build_wheel.sh --glibc sets them to zig's). The prefix ends
# up holding:
#   include/curl/*.h, lib/libcurl.a, lib/libnghttp2.a
#   include/jemalloc/jemalloc.h, lib/libjemalloc_pic.a   (Linux targets)
#   link-args.txt   what the extension adds to its link line, one argument per line
#   cflags.txt      what code including curl/curl.h adds to its compile line (Windows: the
#                   static-library defines), one argument per line; may be empty
#   build-info.txt  versions, sources and flags of this build
# Needs: cmake, ninja (or make), a C compiler, and cargo for --source registries; for Linux
# targets also cargo (jemalloc's crate), autoconf and make.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$repo/scripts/pinned-sources.txt"
# shellcheck source=scripts/fetch_sources.sh
. "$repo/scripts/fetch_sources.sh"
patch_dir="$repo/scripts/libcurl-patches"
cache="${REQUESTX_LIBCURL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/requestx/libcurl}"
source_mode=auto
print_prefix=0
host=""

say() { echo "build_libcurl: $*" >&2; }
die() { echo "build_libcurl: error: $*" >&2; exit 1; }
# native_path PATH: PATH as the programs that read this script's output take it. In Git Bash
# or MSYS2 on Windows, /c/Users/... becomes C:/Users/...: setup.py, link.exe and cmake are
# Windows programs. Elsewhere PATH itself.
native_path() {
    if command -v cygpath >/dev/null 2>&1; then cygpath -m "$1"; else echo "$1"; fi
}
# Associative arrays: bash 4 or newer (macOS's /bin/bash is 3.2; Homebrew's is current).
[ "${BASH_VERSINFO[0]}" -ge 4 ] || die "needs bash 4 or newer (macOS: brew install bash)"

while [ $# -gt 0 ]; do
    case "$1" in
        --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache="$2"; shift ;;
        --source) [ $# -ge 2 ] || die "--source needs auto, upstream or registries"; source_mode="$2"; shift ;;
        --host) [ $# -ge 2 ] || die "--host needs a target triple"; host="$2"; shift ;;
        --print-prefix) print_prefix=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
                       "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
case "$source_mode" in auto|upstream|registries) ;; *) die "--source must be auto, upstream or registries" ;; esac
# switch NAME DEFAULT: the environment switch NAME as 0 or 1 (unset or empty: DEFAULT)
switch() {
    case "${!1:-$2}" in
        0|1) echo "${!1:-$2}" ;;
        *) die "$1 must be 0 or 1, not '${!1}'" ;;
    esac
}
with_patches="$(switch REQUESTX_LIBCURL_PATCHES 1)"
debug="$(switch REQUESTX_LIBCURL_DEBUG 0)"
mkdir -p "$cache"
cache="$(native_path "$(cd "$cache" && pwd)")"

curl_version="$(pinned_version curl)"
nghttp2_version="$(pinned_version nghttp2)"
jemalloc_version="$(pinned_version jemalloc)"

# What the target is, and how cmake is told when it is not this machine.
cross=()
target_cflags=""
# target_os: linux, macos or windows (the native machine's, or --host's). On Windows the build
# runs in Git Bash or MSYS2 with LLVM's clang, whose objects and archives MSVC's link.exe (the
# extension's linker there) reads.
case "$host" in
    "")
        case "$(uname -s)" in
            Darwin) target_os=macos; cc="${CC:-cc}" ;;
            MINGW* | MSYS* | CYGWIN*) target_os=windows; cc="${CC:-clang}" ;;
            *) target_os=linux; cc="${CC:-cc}" ;;
        esac
        arch="$(uname -m)"
        command -v "$cc" >/dev/null 2>&1 || die "no C compiler ($cc); on Debian: apt-get install -y gcc" ;;
    aarch64-linux-gnu)
        target_os=linux
        cc="$host-gcc"
        arch=aarch64
        command -v "$cc" >/dev/null 2>&1 || die "no $cc; on Debian: apt-get install -y gcc-aarch64-linux-gnu"
        cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64) ;;
    x86_64-w64-mingw32)
        target_os=windows
        cc="$host-gcc"
        arch=x86_64
        command -v "$cc" >/dev/null 2>&1 || die "no $cc; on Debian: apt-get install -y gcc-mingw-w64-x86-64"
        cross=(-DCMAKE_SYSTEM_NAME=Windows -DCMAKE_SYSTEM_PROCESSOR=AMD64
               -DCMAKE_RC_COMPILER="$host-windres") ;;
    *) die "--host: $host is not one of aarch64-linux-gnu, x86_64-w64-mingw32" ;;
esac
tls=openssl
if [ "$target_os" = windows ]; then
    # Schannel: Windows' own TLS, verifying against the Windows certificate store (where a
    # machine's administrators put their CAs), with nothing to build or ship; libcurl calls
    # nghttp2 statically, not by DLL import.
    tls=schannel
    arch="$arch-windows"
    target_cflags="-DNGHTTP2_STATICLIB"
    if [ -z "$host" ]; then
        # The C runtime as a DLL, as Python and setup.py's clang-cl (/MD) use it: clang's
        # GNU-style driver would otherwise pick the static one (/MT), which cannot be mixed.
        target_cflags+=" -fms-runtime-lib=dll"
        cross+=(-DCMAKE_MSVC_RUNTIME_LIBRARY=MultiThreadedDLL)
    fi
fi
[ -n "$host" ] && cross+=(-DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER)

# --- static archives of the libraries libcurl calls -------------------------------------------
# REQUESTX_DEPS_PREFIX/lib first (scripts/build_wheel_deps.sh), else the compiler's own search
# path, which finds the system's on Debian and in manylinux/musllinux images alike.
deps_prefix="${REQUESTX_DEPS_PREFIX:-}"
if [ -n "$deps_prefix" ]; then
    [ -d "$deps_prefix/lib" ] || die "REQUESTX_DEPS_PREFIX=$deps_prefix has no lib/ (run scripts/build_wheel_deps.sh --prefix $deps_prefix)"
    deps_prefix="$(native_path "$(cd "$deps_prefix" && pwd)")"
fi
static_lib() {
    local path
    if [ -n "$deps_prefix" ] && [ -f "$deps_prefix/lib/lib$1.a" ]; then
        echo "$deps_prefix/lib/lib$1.a"
        return 0
    fi
    path="$("$cc" -print-file-name="lib$1.a" 2>/dev/null)"
    [ -f "$path" ] || return 1
    (cd "$(dirname "$path")" && echo "$(pwd -P)/$(basename "$path")")
}
declare -A system_lib
missing_dev=()
# Each as NAME:where-it-comes-from (a Debian package, or the script that builds it).
deps_script="scripts/build_wheel_deps.sh (then REQUESTX_DEPS_PREFIX)"
case "$host:$target_os" in
    :linux) wanted=(ssl:libssl-dev crypto:libssl-dev z:zlib1g-dev brotlidec:libbrotli-dev
                    brotlicommon:libbrotli-dev zstd:libzstd-dev) ;;
    :macos) wanted=(ssl crypto z brotlidec brotlicommon zstd) ;;
    :windows) wanted=(z brotlidec brotlicommon zstd) ;;
    aarch64-linux-gnu:*) wanted=(ssl:libssl-dev:arm64 crypto:libssl-dev:arm64 z:zlib1g-dev:arm64
                                 brotlidec:libbrotli-dev:arm64 brotlicommon:libbrotli-dev:arm64
                                 zstd:libzstd-dev:arm64) ;;
    x86_64-w64-mingw32:*) wanted=(z:libz-mingw-w64-dev) ;;
esac
for lib in "${wanted[@]}"; do
    name="${lib%%:*}"
    if path="$(static_lib "$name")"; then
        system_lib[$name]="$path"
    elif [ "$name" = "$lib" ]; then
        die "no static lib$name.a: build it with $deps_script"
    else
        missing_dev+=("${lib#*:}")
    fi
done
if [ ${#missing_dev[@]} -gt 0 ]; then
    die "static libraries missing; on Debian: apt-get install -y $(printf '%s\n' "${missing_dev[@]}" | sort -u | tr '\n' ' ')"
fi
# In link order (libcurl's dependencies after it, each before what it needs).
link_libs=()
for name in ssl crypto brotlidec brotlicommon zstd z; do
    [ -n "${system_lib[$name]:-}" ] && link_libs+=("${system_lib[$name]}")
done

# Everything that changes the result goes into the key: the pins, this script, the compiler,
# the flags the caller passes through the environment, and which static libraries were found
# (a different OpenSSL on the search path must not reuse a build made against another).
# A stock build leaves the patches out of its key: editing one does not rebuild it.
# REQUESTX_LIBCURL_SKIP_PATCHES: each entry must name a patch (a typo must not measure the
# whole series as if a patch were left out).
skip_list=()
IFS=, read -r -a skip_list <<<"${REQUESTX_LIBCURL_SKIP_PATCHES:-}"
skipped=()
# names_patch ENTRY FILE: whether ENTRY of REQUESTX_LIBCURL_SKIP_PATCHES names the patch FILE
# (curl-0008-x.patch: by 0008, curl-0008 or curl-0008-x)
names_patch() {
    local name number
    name="$(basename "$2" .patch)"
    number="${name#*-}"
    number="${number%%-*}"
    case "$1" in "$number" | "${name%%-*}-$number" | "$name") return 0 ;; esac
    return 1
}
# skips FILE: whether any entry names FILE
skips() {
    local entry
    for entry in ${skip_list[@]+"${skip_list[@]}"}; do
        names_patch "$entry" "$1" && return 0
    done
    return 1
}
patches=()
if [ "$with_patches" = 1 ]; then
    for file in "$patch_dir"/*.patch; do
        [ -f "$file" ] || continue
        if skips "$file"; then skipped+=("$(basename "$file" .patch)"); else patches+=("$file"); fi
    done
    for entry in ${skip_list[@]+"${skip_list[@]}"}; do
        found=0
        for file in "$patch_dir"/*.patch; do
            if names_patch "$entry" "$file"; then found=1; fi
        done
        [ "$found" = 1 ] || die "REQUESTX_LIBCURL_SKIP_PATCHES: '$entry' names no patch in $patch_dir"
    done
    extra="${REQUESTX_LIBCURL_EXTRA_PATCH:-}"
    if [ -n "$extra" ]; then
        [ -f "$extra" ] || die "REQUESTX_LIBCURL_EXTRA_PATCH: no file $extra"
        patches+=("$(cd "$(dirname "$extra")" && pwd)/$(basename "$extra")")
    fi
elif [ -n "${REQUESTX_LIBCURL_SKIP_PATCHES:-}${REQUESTX_LIBCURL_EXTRA_PATCH:-}" ]; then
    say "REQUESTX_LIBCURL_PATCHES=0: REQUESTX_LIBCURL_SKIP_PATCHES and _EXTRA_PATCH are ignored"
fi
key_input="$(cat "$pins" "${BASH_SOURCE[0]}" "$repo/scripts/fetch_sources.sh" ${patches[@]+"${patches[@]}"}
             command -v "$cc"; "$cc" --version | head -n 1; uname -m; echo "host=$host"
             echo "patches=$with_patches debug=$debug skipped=${skipped[*]+${skipped[*]}}"
             echo "CFLAGS=${CFLAGS:-} AR=${AR:-}"
             for name in "${!system_lib[@]}"; do
                 echo "$name $(sha256_of "${system_lib[$name]}")"
             done | sort)"
key="$(printf '%s' "$key_input" | sha256_of /dev/stdin | cut -c1-12)"
variant=""
[ "$with_patches" = 0 ] && variant+="-stock"
# Only the patches' numbers: curl-0008-one-clock-read-per-step -> 0008
[ ${#skipped[@]} -gt 0 ] && variant+="-without"
for name in ${skipped[@]+"${skipped[@]}"}; do
    number="${name#*-}"
    variant+="-${number%%-*}"
done
if [ "$with_patches" = 1 ] && [ -n "${REQUESTX_LIBCURL_EXTRA_PATCH:-}" ]; then
    variant+="-extra-$(basename "$REQUESTX_LIBCURL_EXTRA_PATCH" .patch)"
fi
[ "$debug" = 1 ] && variant+="-debug"
prefix="$cache/curl-$curl_version-nghttp2-$nghttp2_version-$arch$variant-$key"

if [ "$print_prefix" = 1 ]; then
    native_path "$prefix"
    exit 0
fi
if [ -f "$prefix/link-args.txt" ]; then
    say "cached: libcurl $curl_version with nghttp2 $nghttp2_version in $prefix"
    native_path "$prefix"
    exit 0
fi

# The engine's heap: jemalloc on Linux targets, the C library's malloc elsewhere (csrc/heap.h).
heap=libc
[ "$target_os" = linux ] && heap=jemalloc
tools=(cmake tar patch)
[ "$heap" = jemalloc ] && tools+=(autoconf make)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found; on Debian: apt-get install -y $tool"
done
generator=(-G "Unix Makefiles")
if command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
elif [ "$target_os:$host" = windows: ]; then
    die "ninja not found (Git Bash has no make): python -m pip install ninja"
fi
jobs="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"

# --- sources ----------------------------------------------------------------------------------
downloads="$cache/downloads"
mkdir -p "$downloads"
work="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fetch_source curl "$work/curl"
fetch_source nghttp2 "$work/nghttp2"
if [ "$heap" = jemalloc ]; then fetch_source jemalloc "$work/jemalloc"; fi

# The unpacked trees must be the pinned releases, whatever the archive's name said.
IFS=. read -r major minor patch <<<"$curl_version"
want_num="$(printf '0x%02x%02x%02x' "$major" "$minor" "$patch")"
got_num="$(awk '$2 == "LIBCURL_VERSION_NUM" { print $3 }' "$work/curl/include/curl/curlver.h")"
[ "$got_num" = "$want_num" ] ||
    die "the curl sources are version $got_num, not $want_num ($curl_version); refusing them"
got_ng="$(sed -n 's/^project(nghttp2 VERSION \([0-9.]*\).*/\1/p' "$work/nghttp2/CMakeLists.txt")"
[ "$got_ng" = "$nghttp2_version" ] ||
    die "the nghttp2 sources are version ${got_ng:-unknown}, not $nghttp2_version; refusing them"

for file in ${patches[@]+"${patches[@]}"}; do
    name="$(basename "$file")"
    tree="$work/${name%%-*}"
    [ -d "$tree" ] || die "$name: no source tree ${name%%-*} to patch (curl or nghttp2)"
    say "applying $name"
    patch -d "$tree" -p1 --fuzz=0 --forward --batch --quiet <"$file" >"$work/patch.log" 2>&1 ||
        { cat "$work/patch.log" >&2; die "$name does not apply to the pinned sources (with fuzz 0)"; }
done
[ "$with_patches" = 1 ] || say "REQUESTX_LIBCURL_PATCHES=0: stock sources, no patch applied"

# --- build ------------------------------------------------------------------------------------
stage="$work/prefix"
# One section per function and object, so that the extension's link (setup.py, --gc-sections)
# drops what requestx never calls: curl_easy_perform above all, which must not be in the engine
# (requests run on the loop thread's multi handle; scripts/test.sh checks the built extension).
common=(${cross[@]+"${cross[@]}"} -DCMAKE_C_COMPILER="$cc"
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON
        -DCMAKE_C_FLAGS="${CFLAGS:-} $target_cflags -ffunction-sections -fdata-sections"
        -DCMAKE_INSTALL_PREFIX="$stage" -DCMAKE_INSTALL_LIBDIR=lib
        -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON)
[ -n "${AR:-}" ] && common+=(-DCMAKE_AR="$(command -v "$AR")")

# installed_lib NAME: the static library cmake installed into the stage (libNAME.a; with the
# MSVC ABI on Windows, NAME.lib or libNAME.lib)
installed_lib() {
    local candidate
    for candidate in "lib$1.a" "$1.lib" "lib$1.lib" "$1_static.lib"; do
        [ -f "$stage/lib/$candidate" ] && { echo "$stage/lib/$candidate"; return 0; }
    done
    die "$1: no static library in $stage/lib after the build"
}

say "building nghttp2 $nghttp2_version (static, library only)"
cmake -S "$work/nghttp2" -B "$work/nghttp2-build" "${generator[@]}" "${common[@]}" \
    -DENABLE_LIB_ONLY=ON -DENABLE_DOC=OFF -DENABLE_FAILMALLOC=OFF -DBUILD_TESTING=OFF \
    -DWITH_LIBXML2=OFF -DWITH_JEMALLOC=OFF >"$work/nghttp2.log" 2>&1 ||
    { tail -n 40 "$work/nghttp2.log" >&2; die "nghttp2: cmake failed"; }
cmake --build "$work/nghttp2-build" --parallel "$jobs" --target install >>"$work/nghttp2.log" 2>&1 ||
    { tail -n 40 "$work/nghttp2.log" >&2; die "nghttp2: build failed"; }

if [ "$heap" = jemalloc ]; then
    say "building jemalloc $jemalloc_version (static, prefixed rxje_, one arena)"
    # The crate's tree has neither configure nor a VERSION file; its version (the pin's
    # tikv-jemalloc-sys@0.7.1+5.3.1-0-g81034ce...) names the upstream tag and commit, which
    # jemalloc.h then reports (JEMALLOC_VERSION).
    jemalloc_where="$(pin jemalloc crate | cut -d' ' -f3)"
    jemalloc_where="${jemalloc_where%%:*}"
    jemalloc_full="${jemalloc_where#*+}"
    [ "${jemalloc_full%%-*}" = "$jemalloc_version" ] ||
        die "the jemalloc crate's tree is $jemalloc_full, not $jemalloc_version; refusing it"
    (cd "$work/jemalloc" && autoconf) >"$work/jemalloc.log" 2>&1 ||
        { tail -n 40 "$work/jemalloc.log" >&2; die "jemalloc: autoconf failed"; }
    # Prefixed, private and unexported: rxje_malloc and friends, and rxje_-prefixed internals,
    # so that nothing of it meets another allocator in the process (the extension's version
    # script hides them all again). General-dynamic TLS: the extension is loaded by dlopen,
    # after the static TLS block is laid out. No libdl: nothing to look up at run time.
    # narenas:1: one arena shared by every thread that allocates for the engine (csrc/heap.h).
    # 64 KiB pages on aarch64: a build for 4 KiB pages refuses to start on a 64 KiB-page kernel
    # (some arm64 distributions), and the larger setting works on both.
    jemalloc_options=(--with-jemalloc-prefix=rxje_ --with-private-namespace=rxje_
                      --without-export --disable-initial-exec-tls --disable-libdl --disable-cxx
                      --disable-doc --disable-shared --enable-static --with-malloc-conf=narenas:1
                      --with-version="$jemalloc_full" --prefix="$stage")
    [ -n "$host" ] && jemalloc_options+=(--host="$host")
    [ "$arch" = aarch64 ] && jemalloc_options+=(--with-lg-page=16)
    jemalloc_env=(CC="$cc" CFLAGS="${CFLAGS:-} -fPIC -fvisibility=hidden -ffunction-sections -fdata-sections")
    [ -n "${AR:-}" ] && jemalloc_env+=(AR="$AR")
    mkdir -p "$work/jemalloc-build"
    (cd "$work/jemalloc-build" && env "${jemalloc_env[@]}" "$work/jemalloc/configure" "${jemalloc_options[@]}" &&
        make -j"$jobs" build_lib_static && make install_lib_static install_include) \
        >>"$work/jemalloc.log" 2>&1 || { tail -n 40 "$work/jemalloc.log" >&2; die "jemalloc: build failed"; }
    [ -f "$stage/lib/libjemalloc_pic.a" ] || die "jemalloc: no lib/libjemalloc_pic.a after the build"
fi

# TLS and decoders. Cross builds name each library: cmake's own search would find this
# machine's.
# Each library is named by the archive found above, so that curl's build links exactly what
# link-args.txt lists (cmake's own search could find a shared library, or this machine's when
# cross-building). Headers: the deps prefix's, Debian's multiarch /usr/include for arm64,
# MinGW's own; otherwise cmake finds the system's.
include_dir=""
case "$host" in
    aarch64-linux-gnu) include_dir=/usr/include ;;
    x86_64-w64-mingw32) include_dir="$(dirname "${system_lib[z]}")/../include" ;;
esac
[ -n "$deps_prefix" ] && include_dir="$deps_prefix/include"
features=()
if [ "$tls" = openssl ]; then
    features+=(-DCURL_USE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=ON
               -DOPENSSL_SSL_LIBRARY="${system_lib[ssl]}" -DOPENSSL_CRYPTO_LIBRARY="${system_lib[crypto]}")
    [ -n "$include_dir" ] && features+=(-DOPENSSL_INCLUDE_DIR="$include_dir")
else
    # Schannel verifies against the Windows certificate store: no bundle file to look for.
    features+=(-DCURL_USE_OPENSSL=OFF -DCURL_USE_SCHANNEL=ON -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none)
fi
features+=(-DCURL_ZLIB=ON -DZLIB_USE_STATIC_LIBS=ON -DZLIB_LIBRARY="${system_lib[z]}")
[ -n "$include_dir" ] && features+=(-DZLIB_INCLUDE_DIR="$include_dir")
if [ -n "${system_lib[zstd]:-}" ]; then
    features+=(-DCURL_BROTLI=ON -DCURL_ZSTD=ON -DBROTLIDEC_LIBRARY="${system_lib[brotlidec]}"
               -DBROTLICOMMON_LIBRARY="${system_lib[brotlicommon]}" -DZSTD_LIBRARY="${system_lib[zstd]}")
    [ -n "$include_dir" ] && features+=(-DBROTLI_INCLUDE_DIR="$include_dir" -DZSTD_INCLUDE_DIR="$include_dir")
else
    features+=(-DCURL_BROTLI=OFF -DCURL_ZSTD=OFF)
fi

# The debug build: curl's CMakeLists refuses ENABLE_DEBUG in any configuration but Debug
# (-g, unoptimized; this later -DCMAKE_BUILD_TYPE replaces common's Release), and would name
# the archive libcurl-d.a there: the empty postfix keeps it libcurl.a.
curl_debug=()
[ "$debug" = 1 ] && curl_debug=(-DCMAKE_BUILD_TYPE=Debug -DENABLE_DEBUG=ON -DCMAKE_DEBUG_POSTFIX=)
say "building curl $curl_version (static, http and https only${host:+, for $host}$([ "$debug" = 1 ] && echo ', debug'))"
# Perl is switched off: it only builds docs, and the crate's tree has no docs/ folder. The
# headers API (curl_easy_header) is off: the engine parses the header block itself, and with
# the API on, libcurl stored every response header line again (allocations per line).
cmake -S "$work/curl" -B "$work/curl-build" "${generator[@]}" "${common[@]}" \
    ${curl_debug[@]+"${curl_debug[@]}"} -DCMAKE_DISABLE_FIND_PACKAGE_Perl=ON \
    -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF \
    -DBUILD_LIBCURL_DOCS=OFF -DBUILD_MISC_DOCS=OFF -DENABLE_CURL_MANUAL=OFF \
    -DHTTP_ONLY=ON -DCURL_DISABLE_NETRC=ON -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON \
    -DCURL_DISABLE_HEADERS_API=ON \
    -DUSE_NGHTTP2=ON -DNGHTTP2_INCLUDE_DIR="$stage/include" \
    -DNGHTTP2_LIBRARY="$(installed_lib nghttp2)" \
    -DENABLE_THREADED_RESOLVER=ON -DENABLE_ARES=OFF -DENABLE_UNIX_SOCKETS=ON \
    -DUSE_LIBIDN2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
    -DCURL_USE_GSSAPI=OFF -DUSE_NGTCP2=OFF -DUSE_QUICHE=OFF -DUSE_HTTPSRR=OFF \
    -DCURL_USE_PKGCONFIG=OFF -DCURL_CA_BUNDLE=auto -DCURL_CA_PATH=auto "${features[@]}" \
    >"$work/curl.log" 2>&1 || { tail -n 40 "$work/curl.log" >&2; die "curl: cmake failed"; }
cmake --build "$work/curl-build" --parallel "$jobs" --target install >>"$work/curl.log" 2>&1 ||
    { tail -n 40 "$work/curl.log" >&2; die "curl: build failed"; }

ca_bundle="$(sed -n 's/^#define CURL_CA_BUNDLE "\(.*\)"/\1/p' "$work/curl-build/lib/curl_config.h")"
ca_path="$(sed -n 's/^#define CURL_CA_PATH "\(.*\)"/\1/p' "$work/curl-build/lib/curl_config.h")"

# The extension's link line, in dependency order: libcurl, then what it calls, then the
# system's libraries. (The archives are found first: a die inside "$(...)" below would end
# only that subshell.)
curl_archive="$(installed_lib curl)"
nghttp2_archive="$(installed_lib nghttp2)"
{
    native_path "$curl_archive"
    native_path "$nghttp2_archive"
    for path in "${link_libs[@]}"; do native_path "$path"; done
    if [ "$heap" = jemalloc ]; then printf '%s\n' "$stage/lib/libjemalloc_pic.a" -lm; fi
    case "$host:$target_os" in
        x86_64-w64-mingw32:*) printf '%s\n' -lws2_32 -lcrypt32 -lsecur32 -lbcrypt -liphlpapi -ladvapi32 ;;
        :windows) printf '%s\n' ws2_32.lib crypt32.lib secur32.lib bcrypt.lib iphlpapi.lib advapi32.lib ;;
        # What curl's CMakeLists adds on macOS: proxy settings (SystemConfiguration) and the
        # CoreFoundation calls its resolver makes.
        :macos) printf '%s\n' -framework CoreFoundation -framework CoreServices \
                    -framework SystemConfiguration -lpthread ;;
        *) printf '%s\n' -ldl -lpthread ;;
    esac
} | sed "s|$stage|$(native_path "$prefix")|" >"$stage/link-args.txt"
# A static libcurl and nghttp2 on Windows: their headers would otherwise declare DLL imports.
# With jemalloc, the define that makes it the engine's heap (csrc/heap.c).
{
    if [ "$target_os" = windows ]; then
        printf '%s\n' -DCURL_STATICLIB -DNGHTTP2_STATICLIB
    fi
    if [ "$heap" = jemalloc ]; then echo -DRX_HEAP_JEMALLOC; fi
} >"$stage/cflags.txt"
{
    echo "curl $curl_version ($(grep -m1 'LIBCURL_VERSION ' "$work/curl/include/curl/curlver.h" | cut -d'"' -f2))"
    echo "nghttp2 $nghttp2_version"
    echo "heap $([ "$heap" = jemalloc ] && echo "jemalloc $jemalloc_full" || echo "libc")"
    echo "source $source_mode"
    # REQUESTX_LIBCURL_PATCHES and REQUESTX_LIBCURL_DEBUG as this build had them. setup.py reads
    # the "patch" lines below (the extension reports them: requestx.__libcurl__["patches"]).
    echo "patches $([ "$with_patches" = 1 ] && echo applied || echo "none (stock, REQUESTX_LIBCURL_PATCHES=0)")"
    echo "debug $([ "$debug" = 1 ] && echo "on (ENABLE_DEBUG: DEBUGASSERT, memory tracking)" || echo off)"
    for file in ${patches[@]+"${patches[@]}"}; do
        echo "patch $(basename "$file") $(sha256_of "$file" | cut -c1-12)"
    done
    # REQUESTX_LIBCURL_SKIP_PATCHES: the patches of the series that were left out
    for name in ${skipped[@]+"${skipped[@]}"}; do echo "skipped $name"; done
    echo "ca_bundle ${ca_bundle:-none}"
    echo "ca_path ${ca_path:-none}"
    echo "host ${host:-native} ($target_os, $arch), TLS by $tls"
    for name in "${!system_lib[@]}"; do echo "system lib$name.a ${system_lib[$name]}"; done | sort
    echo "key $key"
    grep -E '^-- (Protocols|Features|Enabled SSL backends):' "$work/curl.log" | sed 's/^-- //'
} >"$stage/build-info.txt"

rm -rf "$prefix"
mv "$stage" "$prefix"
say "built libcurl $curl_version with nghttp2 $nghttp2_version into $prefix"
say "CA bundle: ${ca_bundle:-none}; CA path: ${ca_path:-none}"
native_path "$prefix"
