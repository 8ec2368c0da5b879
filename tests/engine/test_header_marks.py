"""The engine notes, as the final response's header block arrives, whether it carries
Content-Encoding and Set-Cookie fields (`header_marks`, csrc/transfer.c); the transport then
decodes the body and feeds the cookie jar only when told to, instead of scanning every header
block in Python. A missed mark would lose a cookie or hand over a compressed body, so each
spelling is checked by what the caller gets, from a raw-socket server (any case, Set-Cookie2,
a 1xx block before the final one) and from hypercorn over HTTP/1.1 and HTTP/2 (lower-case
names), for buffered and streamed responses.
"""

from __future__ import annotations

import gzip
import typing

import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.canned import CannedServer

BODY = b'{"hello": "world"}' * 20
GZIPPED = gzip.compress(BODY)


def _answer(*fields: str, body: bytes = b"", interim: str = "") -> bytes:
    head = "".join(f"{field}\r\n" for field in fields)
    return (
        interim.encode()
        + f"HTTP/1.1 200 OK\r\n{head}Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )


ANSWERS = {
    "/upper-cookie": _answer("SET-COOKIE: upper=1; Path=/"),
    "/mixed-cookie": _answer("sEt-CoOkIe: mixed=2; Path=/"),
    "/cookie2-only": _answer("Set-Cookie2: v2=3; Version=1"),
    "/cookie-after-value": _answer("X-Note: set-cookie: not=one"),
    "/interim-cookie": _answer(
        "X-Final: 1", interim="HTTP/1.1 103 Early Hints\r\nSet-Cookie: early=4\r\n\r\n"
    ),
    "/interim-then-cookie": _answer(
        "Set-Cookie: final=5; Path=/",
        interim="HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n",
    ),
    "/upper-gzip": _answer("CONTENT-ENCODING: gzip", body=GZIPPED),
    "/interim-gzip": _answer(
        "Content-Encoding: gzip",
        body=GZIPPED,
        interim="HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n",
    ),
    "/plain": _answer("Content-Type: application/json", body=BODY),
}


@pytest.fixture(scope="module")
def canned() -> typing.Iterator[CannedServer]:
    with CannedServer(ANSWERS) as server:
        yield server


@pytest.mark.parametrize("stream", [False, True], ids=["buffered", "streamed"])
def test_cookie_fields_in_any_spelling_reach_the_jar(canned: CannedServer, stream: bool) -> None:
    with requestx.Client() as client:

        def get(path: str) -> None:
            if stream:
                with client.stream("GET", canned.url + path) as response:
                    response.read()
            else:
                client.get(canned.url + path)

        get("/upper-cookie")
        get("/mixed-cookie")
        get("/cookie-after-value")
        get("/interim-cookie")
        get("/interim-then-cookie")
        jar = {cookie.name: cookie.value for cookie in client.cookies.jar}
    # A 1xx block's Set-Cookie is not the response's; a value that mentions the name is no field.
    assert jar == {"upper": "1", "mixed": "2", "final": "5"}


def test_set_cookie2_is_handed_to_the_jar(canned: CannedServer) -> None:
    """http.cookiejar's default policy ignores RFC 2965 cookies; what matters is that the jar
    was asked (the general path gives it every Set-Cookie2 field)."""
    seen: list[list[str]] = []
    with requestx.Client() as client:
        original = client.cookies.jar.extract_cookies

        def spy(response: typing.Any, request: typing.Any) -> None:
            seen.append(response.info().get_all("Set-Cookie2") or [])
            original(response, request)

        client.cookies.jar.extract_cookies = spy  # type: ignore[method-assign]
        client.get(canned.url + "/cookie2-only")
        client.get(canned.url + "/plain")
    assert seen == [["v2=3; Version=1"]]


@pytest.mark.parametrize("path", ["/upper-gzip", "/interim-gzip"])
def test_content_encoding_in_any_spelling_is_decoded(canned: CannedServer, path: str) -> None:
    with requestx.Client() as client:
        response = client.get(canned.url + path)
        assert response.content == BODY
        with client.stream("GET", canned.url + path) as streamed:
            assert streamed.read() == BODY
        assert client.get(canned.url + "/plain").content == BODY


@pytest.mark.anyio
@pytest.mark.parametrize("http2", [False, True], ids=["http1", "h2c"])
async def test_marks_from_hypercorn(server: HypercornServer, http2: bool) -> None:
    async with requestx.AsyncClient(http1=not http2, http2=http2) as client:
        response = await client.get(server.url + "/headers/set?Set-Cookie=h%3D6")
        assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")
        assert client.cookies.get("h") == "6"
        response = await client.get(server.url + "/gzip")
        assert response.headers.get("content-encoding") == "gzip"
        assert response.json()
