#!/usr/bin/env bash
# Build the libcurl requestx links: pinned curl and nghttp2, static and position-independent,
# into a cache directory keyed by versions, flags and this script.
#
#   scripts/build_libcurl.sh [--cache DIR] [--source auto|upstream|crates] [--host TRIPLE]
#                            [--print-prefix]
#
#   --cache DIR     where builds and downloads are kept (default: $REQUESTX_LIBCURL_CACHE, else
#                   ${XDG_CACHE_HOME:-~/.cache}/requestx/libcurl)
#   --source S      upstream: release archives from the projects' own hosts; crates: the same
#                   releases as vendored by the Rust crates curl-sys and libnghttp2-sys, fetched
#                   with cargo from crates.io; auto (default): upstream, then crates
#   --host TRIPLE   cross-build for another platform with Debian's cross compilers:
#                   aarch64-linux-gnu (gcc-aarch64-linux-gnu; OpenSSL, zlib, brotli and zstd
#                   from Debian's arm64 -dev packages) or x86_64-w64-mingw32 (gcc-mingw-w64-x86-64;
#                   TLS by Schannel, zlib from libz-mingw-w64-dev, no brotli or zstd). Default:
#                   this machine (CC, else cc).
#   --print-prefix  print the install prefix for these pins and exit (nothing is built); the
#                   prefix exists only once a build has finished
#
# Pins and SHA-256 checksums: scripts/libcurl-sources.txt (the only place versions live).
# Patches: scripts/libcurl-patches/NAME-*.patch are applied (patch -p1, in name order) to the
# tree of NAME (curl or nghttp2) after its version is checked; each file says what it changes
# and why. They are part of the cache key, and build-info.txt lists them.
# Every archive is checked against its pin before it is unpacked, and the unpacked tree's own
# version (curlver.h, nghttp2's CMakeLists.txt) must match too.
#
# What is built: libnghttp2 (library only) and libcurl with HTTP and HTTPS only (no ftp, file,
# ldap, ...), OpenSSL, nghttp2, zlib, brotli and zstd, the threaded resolver, unix sockets and
# proxies (http, https, socks), and the CA bundle/path detected for this platform. OpenSSL,
# zlib, brotli and zstd come from the system (Debian: libssl-dev zlib1g-dev libbrotli-dev
# libzstd-dev); the extension links their static archives, so the built module needs none of
# their shared libraries. The prefix ends up holding:
#   include/curl/*.h, lib/libcurl.a, lib/libnghttp2.a
#   link-args.txt   what the extension adds to its link line, one argument per line
#   cflags.txt      what code including curl/curl.h adds to its compile line (Windows: the
#                   static-library defines), one argument per line; may be empty
#   build-info.txt  versions, sources and flags of this build
# Needs: cmake, ninja (or make), a C compiler, and cargo for --source crates.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$repo/scripts/libcurl-sources.txt"
patch_dir="$repo/scripts/libcurl-patches"
cache="${REQUESTX_LIBCURL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/requestx/libcurl}"
source_mode=auto
print_prefix=0
host=""

say() { echo "build_libcurl: $*" >&2; }
die() { echo "build_libcurl: error: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache="$2"; shift ;;
        --source) [ $# -ge 2 ] || die "--source needs auto, upstream or crates"; source_mode="$2"; shift ;;
        --host) [ $# -ge 2 ] || die "--host needs a target triple"; host="$2"; shift ;;
        --print-prefix) print_prefix=1 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
                       "${BASH_SOURCE[0]}"; exit 0 ;;
        *) die "unknown option: $1 (try --help)" ;;
    esac
    shift
done
case "$source_mode" in auto|upstream|crates) ;; *) die "--source must be auto, upstream or crates" ;; esac
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

# --- pins -------------------------------------------------------------------------------------
# pin NAME KIND -> "version sha256 where" from the pins file
pin() {
    awk -v n="$1" -v k="$2" '$1 == n && $3 == k { print $2, $4, $5; found = 1; exit }
                             END { if (!found) exit 1 }' "$pins" || die "no $2 pin for $1 in $pins"
}
read -r curl_version _ _ < <(pin curl tarball)
read -r nghttp2_version _ _ < <(pin nghttp2 tarball)

# What the target is, and how cmake is told when it is not this machine.
cross=()
target_cflags=""
case "$host" in
    "")
        cc="${CC:-cc}"
        arch="$(uname -m)"
        tls=openssl
        command -v "$cc" >/dev/null 2>&1 || die "no C compiler ($cc); on Debian: apt-get install -y gcc" ;;
    aarch64-linux-gnu)
        cc="$host-gcc"
        arch=aarch64
        tls=openssl
        command -v "$cc" >/dev/null 2>&1 || die "no $cc; on Debian: apt-get install -y gcc-aarch64-linux-gnu"
        cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64) ;;
    x86_64-w64-mingw32)
        cc="$host-gcc"
        arch=x86_64-windows
        tls=schannel
        command -v "$cc" >/dev/null 2>&1 || die "no $cc; on Debian: apt-get install -y gcc-mingw-w64-x86-64"
        cross=(-DCMAKE_SYSTEM_NAME=Windows -DCMAKE_SYSTEM_PROCESSOR=AMD64
               -DCMAKE_RC_COMPILER="$host-windres")
        target_cflags="-DNGHTTP2_STATICLIB" ;; # libcurl calls nghttp2 statically, not by DLL import
    *) die "--host: $host is not one of aarch64-linux-gnu, x86_64-w64-mingw32" ;;
esac
[ -n "$host" ] && cross+=(-DCMAKE_C_COMPILER="$cc" -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER)

# --- static archives of the system libraries ----------------------------------------------
# The compiler's own search path finds them, on Debian and in manylinux/musllinux images alike.
static_lib() {
    local path
    path="$(readlink -f "$("$cc" -print-file-name="lib$1.a")")"
    [ -f "$path" ] || return 1
    echo "$path"
}
declare -A system_lib
missing_dev=()
case "$host" in
    "") wanted=(ssl:libssl-dev crypto:libssl-dev z:zlib1g-dev brotlidec:libbrotli-dev
                brotlicommon:libbrotli-dev zstd:libzstd-dev) ;;
    aarch64-linux-gnu) wanted=(ssl:libssl-dev:arm64 crypto:libssl-dev:arm64 z:zlib1g-dev:arm64
                               brotlidec:libbrotli-dev:arm64 brotlicommon:libbrotli-dev:arm64
                               zstd:libzstd-dev:arm64) ;;
    x86_64-w64-mingw32) wanted=(z:libz-mingw-w64-dev) ;;
esac
for lib in "${wanted[@]}"; do
    name="${lib%%:*}"
    if path="$(static_lib "$name")"; then
        system_lib[$name]="$path"
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
patches=()
for file in "$patch_dir"/*.patch; do [ -f "$file" ] && patches+=("$file"); done
key_input="$(cat "$pins" "${BASH_SOURCE[0]}" ${patches[@]+"${patches[@]}"}
             "$cc" --version | head -n 1; uname -m; echo "host=$host"
             echo "CFLAGS=${CFLAGS:-}"
             for name in "${!system_lib[@]}"; do
                 stat -c '%n %s %Y' "${system_lib[$name]}"
             done | sort)"
key="$(printf '%s' "$key_input" | sha256sum | cut -c1-12)"
prefix="$cache/curl-$curl_version-nghttp2-$nghttp2_version-$arch-$key"

if [ "$print_prefix" = 1 ]; then
    echo "$prefix"
    exit 0
fi
if [ -f "$prefix/link-args.txt" ]; then
    say "cached: libcurl $curl_version with nghttp2 $nghttp2_version in $prefix"
    echo "$prefix"
    exit 0
fi

for tool in cmake tar sha256sum patch; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found; on Debian: apt-get install -y $tool"
done
generator=(-G "Unix Makefiles")
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
jobs="$(nproc 2>/dev/null || echo 2)"

# --- sources ----------------------------------------------------------------------------------
downloads="$cache/downloads"
mkdir -p "$downloads"
work="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

verify() {  # verify FILE SHA256
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    [ "$got" = "$2" ] || { say "checksum mismatch for $1: expected $2, got $got"; return 1; }
}

download() {  # download URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --connect-timeout 15 --max-time 300 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -T 60 -O "$2" "$1"
    else
        python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$1" "$2"
    fi
}

# from_upstream NAME DEST: the release archive, unpacked into DEST
from_upstream() {
    local version sha url file
    read -r version sha url < <(pin "$1" tarball)
    file="$downloads/$(basename "$url")"
    if ! { [ -f "$file" ] && verify "$file" "$sha"; }; then
        say "downloading $url"
        download "$url" "$file.part" 2>/dev/null || { rm -f "$file.part"; return 1; }
        mv "$file.part" "$file"
        verify "$file" "$sha" || { rm -f "$file"; return 1; }
    fi
    mkdir -p "$2"
    tar -xf "$file" -C "$2" --strip-components=1
    say "$1 $version: $(basename "$file") (sha256 ok)"
}

# from_crate NAME DEST: the tree vendored in the pinned crate, unpacked into DEST
from_crate() {
    local version sha where crate folder file project
    read -r version sha where < <(pin "$1" crate)
    crate="${where%%:*}"      # curl-sys@0.4.91+curl-8.22.0
    folder="${where#*:}"      # curl
    file="$downloads/${crate/@/-}.crate"
    if ! { [ -f "$file" ] && verify "$file" "$sha"; }; then
        command -v cargo >/dev/null 2>&1 || die "cargo not found (needed for --source crates)"
        say "fetching the crate $crate with cargo"
        # A throwaway manifest whose only job is to make cargo download (and check against
        # the registry's checksum) the exact crate version.
        project="$work/fetch-$1"
        mkdir -p "$project"
        printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n[dependencies]\n%s = { version = "=%s", default-features = false }\n' \
            "${crate%%@*}" "${crate#*@}" >"$project/Cargo.toml"
        : >"$project/lib.rs"
        (cd "$project" && cargo fetch --quiet) || return 1
        local cargo_home="${CARGO_HOME:-$HOME/.cargo}" found
        found="$(find "$cargo_home/registry/cache" -name "${crate/@/-}.crate" -print -quit)"
        [ -n "$found" ] || { say "cargo fetched $crate but its .crate file is not in $cargo_home"; return 1; }
        cp "$found" "$file.part" && mv "$file.part" "$file"
        verify "$file" "$sha" || { rm -f "$file"; return 1; }
    fi
    mkdir -p "$2"
    tar -xzf "$file" -C "$2" --strip-components=2 "${crate/@/-}/$folder"
    say "$1 $version: from the crate ${crate/@/ } (sha256 ok)"
}

fetch_source() {  # fetch_source NAME DEST
    case "$source_mode" in
        upstream) from_upstream "$1" "$2" || die "could not get $1 from upstream" ;;
        crates) from_crate "$1" "$2" || die "could not get $1 from its crate" ;;
        auto)
            from_upstream "$1" "$2" && return 0
            say "$1: upstream not reachable or not matching; trying its crate"
            rm -rf "$2"
            from_crate "$1" "$2" || die "could not get $1 from upstream or from its crate" ;;
    esac
}

fetch_source curl "$work/curl"
fetch_source nghttp2 "$work/nghttp2"

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
    patch -d "$tree" -p1 --forward --batch --quiet <"$file" >"$work/patch.log" 2>&1 ||
        { cat "$work/patch.log" >&2; die "$name does not apply to the pinned sources"; }
done

# --- build ------------------------------------------------------------------------------------
stage="$work/prefix"
# One section per function and object, so that the extension's link (setup.py, --gc-sections)
# drops what requestx never calls: curl_easy_perform above all, which must not be in the engine
# (requests run on the loop thread's multi handle; scripts/test.sh checks the built extension).
common=("${cross[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON
        -DCMAKE_C_FLAGS="${CFLAGS:-} $target_cflags -ffunction-sections -fdata-sections"
        -DCMAKE_INSTALL_PREFIX="$stage" -DCMAKE_INSTALL_LIBDIR=lib
        -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON)

say "building nghttp2 $nghttp2_version (static, library only)"
cmake -S "$work/nghttp2" -B "$work/nghttp2-build" "${generator[@]}" "${common[@]}" \
    -DENABLE_LIB_ONLY=ON -DENABLE_DOC=OFF -DENABLE_FAILMALLOC=OFF -DBUILD_TESTING=OFF \
    -DWITH_LIBXML2=OFF -DWITH_JEMALLOC=OFF >"$work/nghttp2.log" 2>&1 ||
    { tail -n 40 "$work/nghttp2.log" >&2; die "nghttp2: cmake failed"; }
cmake --build "$work/nghttp2-build" --parallel "$jobs" --target install >>"$work/nghttp2.log" 2>&1 ||
    { tail -n 40 "$work/nghttp2.log" >&2; die "nghttp2: build failed"; }

# TLS and decoders. Cross builds name each library: cmake's own search would find this
# machine's.
features=()
if [ "$tls" = openssl ]; then
    features+=(-DCURL_USE_OPENSSL=ON -DOPENSSL_USE_STATIC_LIBS=ON)
    [ -n "$host" ] && features+=(-DOPENSSL_SSL_LIBRARY="${system_lib[ssl]}"
                                 -DOPENSSL_CRYPTO_LIBRARY="${system_lib[crypto]}")
else
    # Schannel verifies against the Windows certificate store: no bundle file to look for.
    features+=(-DCURL_USE_OPENSSL=OFF -DCURL_USE_SCHANNEL=ON -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none)
fi
features+=(-DCURL_ZLIB=ON -DZLIB_USE_STATIC_LIBS=ON)
case "$host" in  # Debian's arm64 headers are multiarch, in /usr/include; MinGW's are its own
    aarch64-linux-gnu) features+=(-DZLIB_LIBRARY="${system_lib[z]}" -DZLIB_INCLUDE_DIR=/usr/include) ;;
    x86_64-w64-mingw32) features+=(-DZLIB_LIBRARY="${system_lib[z]}"
                                   -DZLIB_INCLUDE_DIR="$(dirname "${system_lib[z]}")/../include") ;;
esac
if [ -n "${system_lib[zstd]:-}" ]; then
    features+=(-DCURL_BROTLI=ON -DCURL_ZSTD=ON)
    [ -n "$host" ] && features+=(-DBROTLIDEC_LIBRARY="${system_lib[brotlidec]}"
                                 -DBROTLICOMMON_LIBRARY="${system_lib[brotlicommon]}"
                                 -DZSTD_LIBRARY="${system_lib[zstd]}")
else
    features+=(-DCURL_BROTLI=OFF -DCURL_ZSTD=OFF)
fi

say "building curl $curl_version (static, http and https only${host:+, for $host})"
# Perl is switched off: it only builds docs, and the crate's tree has no docs/ folder. The
# headers API (curl_easy_header) is off: the engine parses the header block itself, and with
# the API on, libcurl stored every response header line again (allocations per line).
cmake -S "$work/curl" -B "$work/curl-build" "${generator[@]}" "${common[@]}" \
    -DCMAKE_DISABLE_FIND_PACKAGE_Perl=ON \
    -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=OFF \
    -DBUILD_LIBCURL_DOCS=OFF -DBUILD_MISC_DOCS=OFF -DENABLE_CURL_MANUAL=OFF \
    -DHTTP_ONLY=ON -DCURL_DISABLE_NETRC=ON -DCURL_DISABLE_LDAP=ON -DCURL_DISABLE_LDAPS=ON \
    -DCURL_DISABLE_HEADERS_API=ON \
    -DUSE_NGHTTP2=ON -DNGHTTP2_INCLUDE_DIR="$stage/include" \
    -DNGHTTP2_LIBRARY="$stage/lib/libnghttp2.a" \
    -DENABLE_THREADED_RESOLVER=ON -DENABLE_ARES=OFF -DENABLE_UNIX_SOCKETS=ON \
    -DUSE_LIBIDN2=OFF -DCURL_USE_LIBPSL=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
    -DCURL_USE_GSSAPI=OFF -DUSE_NGTCP2=OFF -DUSE_QUICHE=OFF -DUSE_HTTPSRR=OFF \
    -DCURL_USE_PKGCONFIG=OFF -DCURL_CA_BUNDLE=auto -DCURL_CA_PATH=auto "${features[@]}" \
    >"$work/curl.log" 2>&1 || { tail -n 40 "$work/curl.log" >&2; die "curl: cmake failed"; }
cmake --build "$work/curl-build" --parallel "$jobs" --target install >>"$work/curl.log" 2>&1 ||
    { tail -n 40 "$work/curl.log" >&2; die "curl: build failed"; }

ca_bundle="$(sed -n 's/^#define CURL_CA_BUNDLE "\(.*\)"/\1/p' "$work/curl-build/lib/curl_config.h")"
ca_path="$(sed -n 's/^#define CURL_CA_PATH "\(.*\)"/\1/p' "$work/curl-build/lib/curl_config.h")"

# The extension's link line, in dependency order: libcurl, then what it calls.
{
    echo "$stage/lib/libcurl.a"
    echo "$stage/lib/libnghttp2.a"
    printf '%s\n' "${link_libs[@]}"
    if [ "$host" = x86_64-w64-mingw32 ]; then
        printf '%s\n' -lws2_32 -lcrypt32 -lsecur32 -lbcrypt -liphlpapi -ladvapi32
    else
        printf '%s\n' -ldl -lpthread
    fi
} | sed "s|$stage|$prefix|" >"$stage/link-args.txt"
# A static libcurl and nghttp2 on Windows: their headers would otherwise declare DLL imports.
if [ "$host" = x86_64-w64-mingw32 ]; then
    printf '%s\n' -DCURL_STATICLIB -DNGHTTP2_STATICLIB
fi >"$stage/cflags.txt"
{
    echo "curl $curl_version ($(grep -m1 'LIBCURL_VERSION ' "$work/curl/include/curl/curlver.h" | cut -d'"' -f2))"
    echo "nghttp2 $nghttp2_version"
    echo "source $source_mode"
    for file in ${patches[@]+"${patches[@]}"}; do
        echo "patch $(basename "$file") $(sha256sum "$file" | cut -c1-12)"
    done
    echo "ca_bundle ${ca_bundle:-none}"
    echo "ca_path ${ca_path:-none}"
    echo "host ${host:-native} ($arch), TLS by $tls"
    for name in "${!system_lib[@]}"; do echo "system lib$name.a ${system_lib[$name]}"; done | sort
    echo "key $key"
    grep -E '^-- (Protocols|Features|Enabled SSL backends):' "$work/curl.log" | sed 's/^-- //'
} >"$stage/build-info.txt"

rm -rf "$prefix"
mv "$stage" "$prefix"
say "built libcurl $curl_version with nghttp2 $nghttp2_version into $prefix"
say "CA bundle: ${ca_bundle:-none}; CA path: ${ca_path:-none}"
echo "$prefix"
