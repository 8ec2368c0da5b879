"""Where the tests find the libcurl the extension was built with (scripts/build_libcurl.sh),
how to link a C test program against it, and whether it carries a given patch of requestx's."""

from __future__ import annotations

import os
import subprocess
import typing
from pathlib import Path

import pytest

import requestx
from tests.support.paths import ROOT

SCRIPT = ROOT / "scripts" / "build_libcurl.sh"


def prefix() -> Path | None:
    """The bundled build's prefix (include/, lib/, link-args.txt), or None when the tests run
    from a copy beside an installed wheel, without the script. Builds it when the cache is
    empty, as setup.py does."""
    if not SCRIPT.exists():
        return None
    out = subprocess.run(["bash", str(SCRIPT)], check=True, stdout=subprocess.PIPE, text=True)
    return Path(out.stdout.split()[-1])


def libcurl_flags() -> tuple[list[str], list[str]]:
    """The libcurl the extension links: the bundled build, or the system's when the extension
    was built with REQUESTX_SYSTEM_LIBCURL=1 (setup.py). Compiler flags, then linker flags;
    both with the content codecs csrc/decode.c calls (codec_flags)."""
    if os.environ.get("REQUESTX_SYSTEM_LIBCURL", "") not in ("", "0"):
        cflags, libs = [], ["-lcurl"]
        for package, define in _SYSTEM_CODECS:
            found_cflags = subprocess.run(["pkg-config", "--cflags", package], **_QUIET)
            found_libs = subprocess.run(["pkg-config", "--libs", package], **_QUIET)
            if found_libs.returncode == 0:
                cflags += found_cflags.stdout.split() + ([define] if define else [])
                libs += found_libs.stdout.split()
        return cflags, libs
    found = prefix()
    assert found is not None, "scripts/build_libcurl.sh is missing"
    return libcurl_flags_of(found)


def libcurl_flags_of(found: Path) -> tuple[list[str], list[str]]:
    """libcurl_flags() for the build in prefix `found` (a cross-build's too)."""
    archives = (found / "link-args.txt").read_text().split()
    return [f"-I{found}/include", *codec_flags(archives)], archives


# As setup.py's _CODECS and _decoder_cflags: each codec's archive name in link-args.txt, a
# header, and the define that compiles it into csrc/decode.c.
_CODECS = (("z", "zlib.h", ""), ("brotlidec", "brotli/decode.h", "-DRX_DECODE_BROTLI"),
           ("zstd", "zstd.h", "-DRX_DECODE_ZSTD"))  # fmt: skip
_SYSTEM_CODECS = (("zlib", ""), ("libbrotlidec", "-DRX_DECODE_BROTLI"),
                  ("libzstd", "-DRX_DECODE_ZSTD"))  # fmt: skip
_QUIET: dict[str, typing.Any] = {"capture_output": True, "text": True}


def codec_flags(archives: list[str]) -> list[str]:
    """The defines of the codecs among `archives`, and the include directory beside each
    (DIR/lib/libX.a -> DIR/include) that holds its header, outside the system's."""
    by_name = {Path(path).name.split(".")[0].removeprefix("lib"): Path(path) for path in archives}
    flags: list[str] = []
    for name, header, define in _CODECS:
        path = by_name.get(name)
        if path is None or path.suffix not in (".a", ".lib"):
            continue
        if define:
            flags.append(define)
        include = path.parent.parent / "include"
        if (include / header).exists() and str(include) not in (
            "/usr/include",
            "/usr/local/include",
        ):
            flags.append(f"-I{include}")
    return list(dict.fromkeys(flags))


def needs_patch(name: str) -> pytest.MarkDecorator:
    """Skip unless the linked libcurl carries requestx's patch NAME (scripts/libcurl-patches/
    NAME.patch): for tests that check the patch's own effect (a count that only the patch
    changes), which stock libcurl (REQUESTX_LIBCURL_PATCHES=0) or a system libcurl does not
    have. Tests that check behaviour the patch must keep run on every build."""
    return pytest.mark.skipif(
        name not in requestx.__libcurl__["patches"],
        reason=f"checks the effect of libcurl patch {name}, which the linked libcurl does not "
        "carry (stock: REQUESTX_LIBCURL_PATCHES=0, or a system libcurl)",
    )
