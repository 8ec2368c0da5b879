"""scripts/check_wheel.py's glibc check: the ELF reading it rests on, and that it refuses.

A manylinux wheel promises to load on any glibc at or above its tag's; the check reads the
GLIBC_x.y versions the extension needs from its ELF version-needs section. Here that reading is
compared with binutils' own (objdump), on the extension this suite imports.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import requestx._core
from tests.support.paths import ROOT

EXTENSION = Path(requestx._core.__file__ or "")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="ELF and glibc symbol versions are Linux's"
)


def _check_wheel() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheel", ROOT / "scripts/check_wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs binutils' objdump")
def test_the_glibc_versions_read_match_objdump() -> None:
    dynamic = subprocess.run(
        ["objdump", "-T", str(EXTENSION)], check=True, capture_output=True, text=True
    ).stdout
    expected = {
        tuple(int(part) for part in found.split("."))
        for found in re.findall(r"\(?GLIBC_(\d+(?:\.\d+)+)\)?\s", dynamic)
    }
    needed = _check_wheel().glibc_versions_needed(EXTENSION)
    assert needed, "the extension needs no GLIBC version at all?"
    assert needed == expected


def _check_wheel_with_bound(bound: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts/check_wheel.py"), "--max-glibc", bound],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_bound_below_what_the_extension_needs_fails() -> None:
    needed = max(_check_wheel().glibc_versions_needed(EXTENSION))
    shown = ".".join(map(str, needed))

    too_old = f"{needed[0]}.{needed[1] - 1}"
    result = _check_wheel_with_bound(too_old)
    assert result.returncode == 1
    assert f"newer than {too_old}: " in result.stderr and shown in result.stderr

    exact = f"{needed[0]}.{needed[1]}"
    result = _check_wheel_with_bound(exact)
    assert f"glibc: needs GLIBC_{shown}; allowed: {exact}" in result.stdout
    assert "newer than" not in result.stderr
