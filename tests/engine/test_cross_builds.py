"""The C engine built for other machines and run there through an emulator, against this
machine's test servers on loopback: tests/c/engine_test.c (requests, concurrency, cancel,
timeouts, streaming, uploads, h2c bursts, the HTTP/2 gate's restarts) and the libcurl it links,
both cross-built by scripts/build_libcurl.sh --host.

* aarch64 Linux: Debian's gcc-aarch64-linux-gnu and arm64 -dev packages, run under
  qemu-aarch64-static (the linux and the posix platform layer);
* Windows x86_64: MinGW-w64, libcurl with Schannel, run under Wine (the windows layer).

tests/c/decode_test.c, the content decoders (csrc/decode.c), is cross-built and run the same
way, on tests/support/decode_vectors.py's bodies: with gzip, deflate, br and zstd on aarch64,
and gzip and deflate only with MinGW, whose libcurl build links no brotli or zstd (Debian has
no MinGW packages of them; the Windows wheels, built on Windows, link both).

Slow on a clean machine (two libcurl builds, then emulation), so not part of the default run:
`scripts/check_platforms.sh` runs this file (`pytest -m cross`); it installs the cross tools.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.servers import HypercornServer
from tests.servers.h2_scripted import ScriptedH2Server
from tests.support.bundled_libcurl import libcurl_flags_of
from tests.support.decode_vectors import vectors
from tests.support.paths import ROOT

pytestmark = pytest.mark.cross

SOURCES = [ROOT / "tests/c/engine_test.c", *sorted((ROOT / "csrc").glob("*.c"))]
DECODE_SOURCES = [ROOT / "tests/c/decode_test.c", ROOT / "csrc/decode.c", ROOT / "csrc/heap.c"]
FLAGS = ["-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]


def _libcurl_for(host: str) -> Path:
    out = subprocess.run(
        ["bash", str(ROOT / "scripts/build_libcurl.sh"), "--host", host],
        stdout=subprocess.PIPE,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, f"scripts/build_libcurl.sh --host {host} failed"
    return Path(out.stdout.split()[-1])


def _build(
    host: str, out: Path, cflags: list[str], libs: list[str], sources: list[Path] = SOURCES
) -> Path:
    prefix = _libcurl_for(host)
    curl_cflags, curl_libs = libcurl_flags_of(prefix)  # with the codecs' defines
    cflags = [*cflags, *(prefix / "cflags.txt").read_text().split(), *curl_cflags]
    libs = [*curl_libs, *libs]
    command = [f"{host}-gcc", *FLAGS, *cflags, f"-I{ROOT / 'csrc'}"]
    command += [*map(str, sources), "-o", str(out), *libs]
    built = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return out


def _check(result: subprocess.CompletedProcess[str], platform: str) -> None:
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    assert f"platform: {platform}\n" in result.stdout
    assert "all checks passed" in result.stdout


def _needs(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}: scripts/check_platforms.sh installs them")


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("platform", ["linux", "posix"])
def test_engine_on_aarch64_under_qemu(
    server: HypercornServer, h2_script: ScriptedH2Server, tmp_path: Path, platform: str
) -> None:
    _needs("aarch64-linux-gnu-gcc", "qemu-aarch64-static")
    # Static: Debian 12's qemu-user (7.2) hangs in pthread_create for a dynamically linked
    # program (a thread-less one runs), and the engine starts its loop thread first thing.
    binary = _build(
        "aarch64-linux-gnu", tmp_path / "engine_test", ["-D_GNU_SOURCE"], ["-pthread", "-static"]
    )
    assert b"ARM aarch64" in subprocess.run(["file", str(binary)], capture_output=True).stdout
    result = subprocess.run(
        ["qemu-aarch64-static", str(binary), server.url, h2_script.url],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, REQUESTX_PLATFORM=platform),
    )
    _check(result, platform)


@pytest.mark.timeout(1200)
def test_engine_on_windows_under_wine(
    server: HypercornServer, h2_script: ScriptedH2Server, tmp_path: Path
) -> None:
    _needs("x86_64-w64-mingw32-gcc", "wine")
    # WaitOnAddress (the windows latch) is in synchronization.lib; -static: no MinGW DLLs.
    binary = _build(
        "x86_64-w64-mingw32", tmp_path / "engine_test.exe", [], ["-lsynchronization", "-static"]
    )
    env = dict(os.environ, WINEPREFIX=str(tmp_path / "wine"), WINEDEBUG="-all")
    env.pop("REQUESTX_PLATFORM", None)
    result = subprocess.run(
        ["wine", str(binary), server.url, h2_script.url],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    _check(result, "windows")


def _check_decoders(command: list[str], codings: str, env: dict[str, str] | None = None) -> None:
    result = subprocess.run(
        command, input=vectors(), capture_output=True, timeout=900, env=env
    )  # fmt: skip
    stdout = result.stdout.decode().replace("\r\n", "\n")  # Wine's text mode
    stderr = result.stderr.decode(errors="replace")
    assert result.returncode == 0, stdout[-4000:] + stderr[-6000:]
    assert f"codings: {codings}\n" in stdout
    assert "all checks passed" in stdout


@pytest.mark.timeout(1200)
def test_decoders_on_aarch64_under_qemu(tmp_path: Path) -> None:
    _needs("aarch64-linux-gnu-gcc", "qemu-aarch64-static")
    binary = _build(
        "aarch64-linux-gnu", tmp_path / "decode_test", ["-D_GNU_SOURCE"], ["-static"],
        DECODE_SOURCES,
    )  # fmt: skip
    _check_decoders(["qemu-aarch64-static", str(binary)], "gzip deflate br zstd")


@pytest.mark.timeout(1200)
def test_decoders_on_windows_under_wine(tmp_path: Path) -> None:
    _needs("x86_64-w64-mingw32-gcc", "wine")
    binary = _build("x86_64-w64-mingw32", tmp_path / "decode_test.exe", [], ["-static"],
                    DECODE_SOURCES)  # fmt: skip
    env = dict(os.environ, WINEPREFIX=str(tmp_path / "wine"), WINEDEBUG="-all")
    _check_decoders(["wine", str(binary)], "gzip deflate", env)
