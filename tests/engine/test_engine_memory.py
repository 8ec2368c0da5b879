"""The C engine under valgrind, AddressSanitizer and ThreadSanitizer, without Python in the way.

tests/c/engine_test.c drives csrc/ directly (requests, concurrency, cancel, timeouts, refused
connections, shutdown with a transfer in flight, streaming, fed uploads, h2c bursts) against the
suite's ASGI server, and the HTTP/2 gate's restart paths (a refused stream, a stream lost to
GOAWAY) against the scripted h2 server. tests/c/decode_test.c drives the content decoders
(csrc/decode.c) through tests/support/decode_vectors.py's bodies: valid, truncated, corrupt and
bombs, in every coding, fed and read in pieces of several sizes. valgrind
must report no invalid access and no definitely-lost block; the ASan+UBSan build must run
clean. Both builds compile csrc/ afresh, so they check the sources as they are now.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.servers import HypercornServer
from tests.servers.h2_scripted import ScriptedH2Server
from tests.support.bundled_libcurl import libcurl_flags
from tests.support.decode_vectors import vectors
from tests.support.paths import ROOT
from tests.support.sanitized import skip_under_asan

SOURCES = [str(ROOT / "tests/c/engine_test.c"), *map(str, sorted((ROOT / "csrc").glob("*.c")))]
DECODE_SOURCES = [
    str(ROOT / "tests/c/decode_test.c"),
    str(ROOT / "csrc/decode.c"),
    str(ROOT / "csrc/heap.c"),
]


def _compile(out: Path, *extra_flags: str, sources: list[str] = SOURCES) -> Path:
    cflags, libs = libcurl_flags()
    flags = ["-std=c11", "-D_GNU_SOURCE", "-g", "-O1", "-Wall", "-Wextra", "-Werror"]
    flags += ["-Wno-unused-parameter", f"-I{ROOT / 'csrc'}", *cflags, *extra_flags]
    built = subprocess.run(
        ["gcc", *flags, *sources, "-o", str(out), *libs, "-pthread"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return out


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _assert_passed(result: subprocess.CompletedProcess[str]) -> None:
    """All checks passed, on the platform layer REQUESTX_PLATFORM names (as for the suite)."""
    assert result.returncode == 0, result.stdout + result.stderr[-6000:]
    assert "all checks passed" in result.stdout
    platform = os.environ.get("REQUESTX_PLATFORM") or "linux"
    assert f"platform: {platform}\n" in result.stdout


@pytest.mark.timeout(240)  # the binary gets 180 s (_run); the suite's default 60 s is short
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@skip_under_asan
def test_engine_is_clean_under_valgrind(
    server: HypercornServer, h2_script: ScriptedH2Server, tmp_path: Path
) -> None:
    binary = _compile(tmp_path / "engine_test")
    result = _run(
        [
            "valgrind",
            "--quiet",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--error-exitcode=97",
            str(binary),
            server.url,
            h2_script.url,
        ]
    )
    _assert_passed(result)


@pytest.mark.timeout(240)
def test_engine_is_clean_under_asan(
    server: HypercornServer, h2_script: ScriptedH2Server, tmp_path: Path
) -> None:
    binary = _compile(tmp_path / "engine_test_asan", "-fsanitize=address,undefined")
    result = _run([str(binary), server.url, h2_script.url])
    _assert_passed(result)
    assert "runtime error" not in result.stderr  # UBSan reports but does not fail by default


@pytest.mark.timeout(300)
@skip_under_asan
def test_engine_threads_are_clean_under_tsan(
    server: HypercornServer, h2_script: ScriptedH2Server, tmp_path: Path
) -> None:
    # The loop thread, the submitting threads and the completion queue's drainers share the
    # command queue, the transfer's state word and streaming fields, and the queue's links:
    # ThreadSanitizer checks every such access for a data race. (libcurl itself is not
    # instrumented; only the loop thread calls it.)
    binary = _compile(tmp_path / "engine_test_tsan", "-fsanitize=thread")
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1")
    result = subprocess.run(
        [str(binary), server.url, h2_script.url],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    _assert_passed(result)
    assert "WARNING: ThreadSanitizer" not in result.stderr, result.stderr[-6000:]


@pytest.fixture(scope="module")
def decode_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("decode") / "vectors.bin"
    path.write_bytes(vectors())
    return path


def _run_decode_test(cmd: list[str], vectors_file: Path) -> subprocess.CompletedProcess[str]:
    with vectors_file.open("rb") as stdin:
        result = subprocess.run(cmd, stdin=stdin, capture_output=True, timeout=300)
    out = subprocess.CompletedProcess(
        cmd, result.returncode, result.stdout.decode(), result.stderr.decode(errors="replace")
    )
    assert out.returncode == 0, out.stdout + out.stderr[-6000:]
    assert "all checks passed" in out.stdout
    assert "codings: gzip deflate br zstd\n" in out.stdout  # this machine's build has all four
    assert "skipped (coding not built in): 0\n" in out.stdout
    return out


@pytest.mark.timeout(360)
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@skip_under_asan
def test_decoders_are_clean_under_valgrind(tmp_path: Path, decode_vectors: Path) -> None:
    binary = _compile(tmp_path / "decode_test", sources=DECODE_SOURCES)
    valgrind = ["valgrind", "--quiet", "--leak-check=full", "--errors-for-leak-kinds=definite"]
    _run_decode_test([*valgrind, "--error-exitcode=97", str(binary)], decode_vectors)


@pytest.mark.timeout(240)
def test_decoders_are_clean_under_asan(tmp_path: Path, decode_vectors: Path) -> None:
    flags = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined")
    binary = _compile(tmp_path / "decode_test_asan", *flags, sources=DECODE_SOURCES)
    result = _run_decode_test([str(binary)], decode_vectors)
    assert "runtime error" not in result.stderr
