"""Where the tests find the libcurl the extension was built with (scripts/build_libcurl.sh),
how to link a C test program against it, and whether it carries a given patch of requestx's."""

from __future__ import annotations

import os
import subprocess
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
    was built with REQUESTX_SYSTEM_LIBCURL=1 (setup.py). Compiler flags, then linker flags."""
    if os.environ.get("REQUESTX_SYSTEM_LIBCURL", "") not in ("", "0"):
        return [], ["-lcurl"]
    found = prefix()
    assert found is not None, "scripts/build_libcurl.sh is missing"
    archives = (found / "link-args.txt").read_text().split()
    return [f"-I{found}/include"], archives


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
