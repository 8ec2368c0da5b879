"""The libcurl inside requestx: the pinned build, with what the engine relies on.

The default build links the libcurl that scripts/build_libcurl.sh builds from the pins in
scripts/pinned-sources.txt, statically; REQUESTX_SYSTEM_LIBCURL=1 links a system one instead
(at or above setup.py's floor), and then only the floor and the features are checked.
`__libcurl__` also says which of requestx's patches the build carries (none for stock libcurl,
REQUESTX_LIBCURL_PATCHES=0) and whether it is libcurl's debug build (REQUESTX_LIBCURL_DEBUG=1).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import requestx
from requestx import _core
from tests.support.paths import ROOT
from tests.support.sanitized import UNDER_ASAN

SYSTEM_LIBCURL = os.environ.get("REQUESTX_SYSTEM_LIBCURL", "") not in ("", "0")


def _pinned_version(name: str) -> str:
    for line in (ROOT / "scripts/pinned-sources.txt").read_text().splitlines():
        fields = line.split()
        if fields and fields[0] == name:
            return fields[1]
    raise AssertionError(f"no {name} pin in scripts/pinned-sources.txt")


def test_http2_brotli_and_zstd_are_built_in() -> None:
    info = requestx.__libcurl__
    assert info["http2"] and info["nghttp2"]
    assert info["brotli"] and info["zstd"] and info["libz"]
    assert info["async_dns"]  # the threaded resolver: a slow DNS lookup does not block the loop
    assert info["ssl"] and info["ssl"].startswith("OpenSSL/")


@pytest.mark.skipif(SYSTEM_LIBCURL, reason="built against the system libcurl")
def test_the_linked_libcurl_is_the_pinned_release() -> None:
    info = requestx.__libcurl__
    assert info["version"].split("-")[0] == _pinned_version("curl")
    assert set(info["protocols"]) == {"http", "https"}  # nothing else compiled in


def test_the_linked_libcurl_is_at_or_above_the_floor() -> None:
    setup_py = (ROOT / "setup.py").read_text()
    floor = re.search(r"LIBCURL_FLOOR = \((\d+), (\d+), (\d+)\)", setup_py)
    assert floor is not None
    wanted = tuple(int(part) for part in floor.groups())
    num = requestx.__libcurl__["version_num"]
    assert (num >> 16, (num >> 8) & 0xFF, num & 0xFF) >= wanted


def _patch_names() -> tuple[str, ...]:
    """The patches build_libcurl.sh applies: the series in name order, less those
    REQUESTX_LIBCURL_SKIP_PATCHES names (by number or name), then REQUESTX_LIBCURL_EXTRA_PATCH."""
    folder = ROOT / "scripts/libcurl-patches"
    skipped = set(filter(None, os.environ.get("REQUESTX_LIBCURL_SKIP_PATCHES", "").split(",")))

    def kept(name: str) -> bool:
        number = name.split("-")[1]
        return not skipped & {number, name.split("-")[0] + "-" + number, name}

    names = sorted(path.name.removesuffix(".patch") for path in folder.glob("*.patch"))
    extra = os.environ.get("REQUESTX_LIBCURL_EXTRA_PATCH", "")
    return (*filter(kept, names), *([Path(extra).name.removesuffix(".patch")] if extra else []))


# A prefix given to setup.py by hand was built with whatever switches its maker used.
by_hand = pytest.mark.skipif(
    "REQUESTX_LIBCURL_PREFIX" in os.environ, reason="REQUESTX_LIBCURL_PREFIX: a build by hand"
)


@by_hand
@pytest.mark.skipif(
    not (ROOT / "scripts/libcurl-patches").is_dir(), reason="no scripts/ beside the tests"
)
def test_patches_are_the_ones_the_build_applied() -> None:
    # setup.py compiles the list from the linked build's build-info.txt: every patch of
    # scripts/libcurl-patches/ in name order, none for stock libcurl (REQUESTX_LIBCURL_PATCHES=0,
    # which the tests run with when the extension was built with it) or a system one.
    patches = requestx.__libcurl__["patches"]
    assert isinstance(patches, tuple)
    if SYSTEM_LIBCURL or os.environ.get("REQUESTX_LIBCURL_PATCHES") == "0":
        assert patches == ()
    else:
        assert patches == _patch_names()
        assert all(re.fullmatch(r"[a-z0-9]+-\d{4}-[a-z0-9-]+", name) for name in patches)


@by_hand
@pytest.mark.skipif(SYSTEM_LIBCURL, reason="built against the system libcurl")
def test_debug_build_only_when_asked_for() -> None:
    # REQUESTX_LIBCURL_DEBUG=1: libcurl's debug build (scripts/test_libcurl_build.sh), whose
    # assertions abort; never otherwise.
    wanted = os.environ.get("REQUESTX_LIBCURL_DEBUG") == "1"
    assert requestx.__libcurl__["debug"] is wanted


def test_the_engine_heap_is_the_pinned_jemalloc_on_linux() -> None:
    # csrc/heap.h: the bundled Linux builds take the engine's, libcurl's and OpenSSL's memory
    # from the jemalloc scripts/build_libcurl.sh builds; the C library's malloc elsewhere, with
    # a system libcurl, in ASan builds, and with REQUESTX_ENGINE_HEAP=libc (setup.py).
    heap = requestx.__libcurl__["heap"]
    stats = _core.heap_stats()
    libc = (
        not sys.platform.startswith("linux")
        or SYSTEM_LIBCURL
        or UNDER_ASAN
        or os.environ.get("REQUESTX_ENGINE_HEAP") == "libc"
    )
    if libc:
        assert heap == "libc"
        assert stats is None
    else:
        assert heap == f"jemalloc {_pinned_version('jemalloc')}"
        assert stats is not None
        # libcurl's global state and every engine made so far live there already.
        assert 0 < stats["allocated"] <= stats["resident"]


def test_info_is_read_only() -> None:
    with pytest.raises(TypeError):
        requestx.__libcurl__["http2"] = False  # type: ignore[index]


@pytest.mark.skipif(SYSTEM_LIBCURL, reason="built against the system libcurl")
def test_no_shared_libcurl_is_loaded() -> None:
    # In a fresh interpreter, so that nothing else the test run imported (pycurl, say) counts.
    code = "import requestx, sys; sys.stdout.write(open('/proc/self/maps').read())"
    maps = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    loaded = {line.split()[-1] for line in maps.splitlines() if "/" in line}
    assert not [path for path in loaded if "libcurl" in os.path.basename(path)]
    assert not [path for path in loaded if "libnghttp2" in os.path.basename(path)]
    assert any("requestx/_core" in path for path in loaded)  # the extension was looked at
