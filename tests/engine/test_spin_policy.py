"""The blocking waiters' spin policy (csrc/spin.c), checked in C against imagined machines and
servers (tests/c/spin_test.c): waits spin on a machine where sleeping costs more than a spin,
not where it costs little, and a slow server pays for ever rarer probes only."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.bundled_libcurl import libcurl_flags
from tests.support.paths import ROOT


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc (a wheel's clean room has none)")
def test_spin_policy(tmp_path: Path) -> None:
    cflags, _ = libcurl_flags()  # transfer.h includes curl/curl.h; nothing is linked
    binary = tmp_path / "spin_test"
    sanitizers = "-fsanitize=address,undefined"
    sources = [ROOT / "tests/c/spin_test.c", ROOT / "csrc/spin.c", ROOT / "csrc/thread_posix.c"]
    built = subprocess.run(
        ["gcc", "-std=c11", "-D_GNU_SOURCE", "-g", "-O1", "-Wall", "-Wextra", "-Werror"]
        + [f"-I{ROOT / 'csrc'}", *cflags, sanitizers, "-fno-sanitize-recover=all"]
        + [*map(str, sources), "-o", str(binary), "-pthread"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "spin_test: all checks passed" in result.stdout
