"""
Decompression bombs: a body of about 1 MB or less that decodes to 1 GiB of zeros, in each
content coding (tests/support/bombs.py), must not make the client's memory grow with it.

Measured before the fix: one decoded chunk of 200 MiB, and peak RSS up by 376-731 MiB
for a stream read with iter_bytes() and abandoned after 10 MB. Required: every decoded
chunk bounded (chunk_size when given, at most MAX_PIECE = 1 MiB otherwise), peak RSS
growth under 30 MB, and a client option (max_body_bytes) that caps a body read whole.

The content decoders are checked alone, under tracemalloc; then end to end, in a child
process (tests/support/bomb_client.py) whose peak RSS is the client's alone, against hypercorn,
nginx and a raw socket server sending the bomb chunked, on each of blocking, asyncio and
trio, each case followed by a good request on the same client.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
import typing

import pytest

import requestx
from requestx._decoders import MAX_PIECE, decode_all, decoder_for
from tests.servers import HypercornServer
from tests.servers.canned import CannedServer
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.support.bombs import bomb
from tests.support.paths import ROOT
from tests.support.sanitized import UNDER_ASAN

CODINGS = ["gzip", "deflate", "br", "zstd"]  # all decoded in C (tests/unit/test_decoders.py)
RSS_LIMIT_KIB = 30 * 1024  # the required bound on peak RSS growth (above)


def _traced_peak(action: typing.Callable[[], object]) -> int:
    """The peak of Python allocations (bytes) while `action` runs, above what was there."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        action()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


# --- The decoders alone -------------------------------------------------------------------


@pytest.mark.parametrize("coding", CODINGS)
def test_a_whole_bomb_in_one_piece_decodes_a_bounded_piece_at_a_time(coding: str) -> None:
    body = bomb(coding)
    assert len(body) < 1_100_000
    sizes: list[int] = []

    def read_ten_pieces() -> None:
        pieces = decoder_for([coding]).pieces(body)
        for piece in pieces:
            sizes.append(len(piece))
            if len(sizes) == 10:
                break
        pieces.close()  # abandoned midway, as a caller who stops reading

    peak = _traced_peak(read_ten_pieces)
    assert len(sizes) == 10 and max(sizes) <= MAX_PIECE and sum(sizes) >= 5 * MAX_PIECE
    # A piece or two (the C decoder reads the input where it is, and its own state is not
    # Python's to count): megabytes, where the whole is 1 GiB.
    assert peak < 8 * MAX_PIECE, f"{peak / 2**20:.1f} MiB held to decode 10 pieces"


@pytest.mark.parametrize("coding", CODINGS)
def test_a_bomb_decodes_in_full_to_its_size_without_a_large_piece(coding: str) -> None:
    """(A 64 MiB one: the 1 GiB ones take seconds to decode in full.)"""
    decoder = decoder_for([coding])
    total = largest = 0
    for piece in [*decoder.pieces(bomb(coding, 64 * 2**20)), *decoder.flush_pieces()]:
        total += len(piece)
        largest = max(largest, len(piece))
    assert total == 64 * 2**20 and largest <= MAX_PIECE


@pytest.mark.parametrize("coding", CODINGS)
def test_decode_all_stops_at_max_size(coding: str) -> None:
    def decode() -> None:
        with pytest.raises(requestx.ResponseTooLarge, match=r"max_body_bytes \(10485760 bytes\)"):
            decode_all(bomb(coding), [coding], max_size=10 * 2**20)

    # What was decoded up to the limit (10 MiB) and a byte more: nowhere near the whole.
    assert _traced_peak(decode) < 10 * 2**20 + 6 * MAX_PIECE


def test_a_bomb_under_two_codings_is_bounded_too() -> None:
    """gzip, then br over it: each piece br yields goes through gzip before the next."""
    brotli = pytest.importorskip("brotli", reason="compressing the test body needs brotli")

    body = brotli.compress(bomb("gzip"))
    decoder = decoder_for(["gzip", "br"])
    sizes = []
    for piece in decoder.pieces(body):
        sizes.append(len(piece))
        if len(sizes) == 20:
            break
    assert len(sizes) == 20 and max(sizes) <= MAX_PIECE


# --- End to end, peak RSS of a client process ----------------------------------------------


def _chunked(body: bytes) -> bytes:
    pieces = [body[start : start + 16384] for start in range(0, len(body), 16384)]
    framed = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces)
    return framed + b"0\r\n\r\n"


@pytest.fixture(scope="module")
def raw_bomb_server() -> typing.Iterator[CannedServer]:
    """A raw socket server: the bombs chunked, without a length; closes after each answer."""
    answers = {"/ok": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"}
    for coding in CODINGS:
        answers[f"/bomb/{coding}"] = (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: "
            + coding.encode()
            + b"\r\nConnection: close\r\n\r\n"
            + _chunked(bomb(coding))
        )
    with CannedServer(answers) as canned:
        yield canned


@pytest.fixture(scope="module")
def nginx_bomb_server() -> typing.Iterator[Nginx]:
    encoded = {f"bomb-{coding}": (coding, bomb(coding)) for coding in CODINGS}
    with nginx_or_skip(encoded=encoded) as server:
        yield server


def _urls(kind: str, request: pytest.FixtureRequest) -> tuple[str, str]:
    """The bomb URL prefix (the coding is appended) and a good URL, on server `kind`."""
    if kind == "hypercorn":
        server: HypercornServer = request.getfixturevalue("server")
        return server.url + "/bomb/", server.url + "/"
    if kind == "nginx":
        ng: Nginx = request.getfixturevalue("nginx_bomb_server")
        return ng.url + "/encoded/bomb-", ng.url + "/get"
    canned: CannedServer = request.getfixturevalue("raw_bomb_server")
    return canned.url + "/bomb/", canned.url + "/ok"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["blocking", "asyncio", "trio"])
@pytest.mark.parametrize("server_kind", ["hypercorn", "nginx", "raw"])
def test_bombs_end_to_end_stay_small(
    server_kind: str, mode: str, request: pytest.FixtureRequest
) -> None:
    bomb_url, ok_url = _urls(server_kind, request)
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.bomb_client", mode, bomb_url, ok_url, *CODINGS],
        capture_output=True, text=True, timeout=110, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    reports = json.loads(result.stdout.strip().splitlines()[-1])
    print(json.dumps(reports, indent=1))
    assert [(r["coding"], r["kind"]) for r in reports] == [
        (coding, kind) for coding in CODINGS for kind in ("stream", "chunked", "capped")
    ]
    for report in reports:
        assert report["next_status"] == 200, report  # the client still works
        if not UNDER_ASAN:  # ASan's quarantine keeps freed memory (tests/support/sanitized.py)
            assert report["peak_growth_kib"] < RSS_LIMIT_KIB, report
        if report["kind"] == "capped":
            assert report["outcome"] == "ResponseTooLarge", report
            continue
        assert report["outcome"] == "abandoned", report
        assert 10 * 2**20 <= report["read"] < 20 * 2**20, report
        if report["kind"] == "chunked":
            assert report["chunk_sizes"] == [65536], report
        else:
            assert report["largest_chunk"] <= MAX_PIECE, report
