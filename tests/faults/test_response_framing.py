"""Responses whose first lines are malformed raise RemoteProtocolError.

libcurl 8.22 reads `HTTP/1.1 2000 OK` as status 200 and `099` as 99; a status code is exactly
three digits (RFC 9112 section 4), so the engine refuses anything else. `Content-Length: +5` is
refused (libcurl's parser), and the response header block is capped by the client's
`max_header_bytes` (default 100 KiB, httpx's limit), with a message naming the option.

Each case runs on a canned raw socket, then a good request on the same client; the header
limit is also checked against hypercorn, which sends the block in one piece.
"""

from __future__ import annotations

from typing import Iterator

import anyio
import pytest

import requestx
from tests.servers import HypercornServer, RawServer
from tests.servers.canned import CannedServer

OK_BODY = b"Content-Length: 2\r\n\r\nok"


def _answers() -> dict[str, bytes]:
    return {
        "/ok": b"HTTP/1.1 200 OK\r\n" + OK_BODY,
        "/non-numeric": b"HTTP/1.1 abc OK\r\n" + OK_BODY,
        "/four-digits": b"HTTP/1.1 2000 OK\r\n" + OK_BODY,
        "/two-digits": b"HTTP/1.1 20 OK\r\n" + OK_BODY,
        "/below-100": b"HTTP/1.1 099 Odd\r\n" + OK_BODY,
        "/digit-suffix": b"HTTP/1.1 200x OK\r\n" + OK_BODY,
        "/no-code": b"HTTP/1.1 \r\n" + OK_BODY,
        "/plus-length": b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok",
        "/no-reason": b"HTTP/1.1 200\r\n" + OK_BODY,
    }


BAD = ["non-numeric", "four-digits", "two-digits", "below-100", "digit-suffix", "no-code"]


@pytest.fixture(scope="module")
def canned() -> Iterator[CannedServer]:
    with CannedServer(_answers()) as server:
        yield server


@pytest.mark.parametrize("path", [*BAD, "plus-length"])
def test_malformed_response_start_raises_remote_protocol_error(
    canned: CannedServer, path: str
) -> None:
    with requestx.Client(timeout=5) as client:
        with pytest.raises(requestx.RemoteProtocolError) as info:
            client.get(f"{canned.url}/{path}")
        assert info.value.request.url.path == f"/{path}"
        assert client.get(canned.url + "/ok").text == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("path", BAD)
async def test_malformed_status_line_async(canned: CannedServer, path: str) -> None:
    async with requestx.AsyncClient(timeout=5) as client:
        with anyio.fail_after(10):
            with pytest.raises(requestx.RemoteProtocolError):
                await client.get(f"{canned.url}/{path}")
            assert (await client.get(canned.url + "/ok")).text == "ok"


def test_a_three_digit_code_without_a_reason_is_fine(canned: CannedServer) -> None:
    with requestx.Client(timeout=5) as client:
        response = client.get(canned.url + "/no-reason")
    assert (response.status_code, response.text) == (200, "ok")


def test_header_limit_is_an_option(raw_server: RawServer) -> None:
    url = raw_server.url + "/huge-headers?kb=200"
    with (
        requestx.Client(timeout=5) as client,
        pytest.raises(requestx.RemoteProtocolError, match=r"102400 bytes \(max_header_bytes\)"),
    ):
        client.get(url)
    with requestx.Client(timeout=5, max_header_bytes=300 * 1024) as client:
        assert client.get(url).text == "ok"
    with requestx.Client(timeout=5, max_header_bytes=8 * 1024) as client:
        with pytest.raises(requestx.RemoteProtocolError, match=r"8192 bytes"):
            client.get(raw_server.url + "/huge-headers?kb=16")
        assert client.get(raw_server.url + "/ok").text == "ok"


def test_header_limit_against_hypercorn(server: HypercornServer) -> None:
    # 120 headers of 1 KiB: over the default, under a raised limit.
    url = server.url + "/large-headers?count=120&size=1024"
    with requestx.Client(timeout=5) as client:
        with pytest.raises(requestx.RemoteProtocolError, match="max_header_bytes"):
            client.get(url)
        assert client.get(server.url + "/echo").status_code == 200
    with requestx.Client(timeout=5, max_header_bytes=200 * 1024) as client:
        assert client.get(url).text == "large headers"


@pytest.mark.anyio
async def test_header_limit_async(raw_server: RawServer) -> None:
    async with requestx.AsyncClient(timeout=5, max_header_bytes=300 * 1024) as client:
        with anyio.fail_after(10):
            assert (await client.get(raw_server.url + "/huge-headers?kb=200")).text == "ok"
            with pytest.raises(requestx.RemoteProtocolError, match="max_header_bytes"):
                await client.get(raw_server.url + "/huge-headers?kb=400")


@pytest.mark.parametrize("bad", [0, -1, 1 << 31])
def test_header_limit_must_be_sensible(bad: int) -> None:
    with pytest.raises(ValueError, match="max_header_bytes"):
        requestx.Client(max_header_bytes=bad)
