"""Request heads reach the server byte for byte, however long their lines.

libcurl builds every HTTP/1.1 request head line by line, and requestx's bundled libcurl appends
the request line, the custom header lines and the Connection line without its printf
(scripts/libcurl-patches/curl-0006-request-lines-without-printf.patch). These tests send heads
whose lines run from empty to tens of kilobytes, with printf conversions in the path, the query
and the values, with every method and a Connection header of the caller's, and compare what the
servers received: a raw-socket recorder (the exact bytes) and hypercorn (h11's parse of them).
Sync and async, plain path and general.
"""

from __future__ import annotations

import anyio
import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.recorder import RecordingServer

# Each value's length differs, so a run cut short or doubled shows in the bytes.
SIZES = (1, 2, 15, 16, 17, 255, 256, 1000, 4095, 4096, 8191, 30_000)
PATH = "/h/" + "p%25s" * 300 + "/%d"  # printf conversions, percent-encoded and not
QUERY = {"q": "%s%n%%" * 100, "empty": ""}


def _value(size: int) -> str:
    text = "%s-%d-%%-" + "".join(chr(0x21 + i % 94) for i in range(size))
    return text[:size]


def _headers() -> dict[str, str]:
    headers = {f"X-Size-{size}": _value(size) for size in SIZES}
    headers["X-Empty"] = ""  # libcurl's blank-header path
    headers["X-" + "N" * 200] = "long name"
    return headers


def _expected_head(request: requestx.Request) -> bytes:
    """What the wire must carry: the request line, then the request's headers in order, except
    that libcurl writes Connection last (it builds that header itself from the one given)."""
    target = request.url.raw_path
    lines = [request.method.encode() + b" " + target + b" HTTP/1.1"]
    fields = list(request.headers.raw)
    fields.sort(key=lambda field: field[0].lower() == b"connection")  # stable: only moves it
    lines += [name + b": " + value if value else name + b":" for name, value in fields]
    return b"\r\n".join(lines)


@pytest.mark.parametrize("path", ["plain", "general"])
def test_long_heads_arrive_byte_for_byte(recorder: RecordingServer, path: str) -> None:
    recorder.reset()
    with requestx.Client(timeout=10) as client:
        if path == "plain":  # the query in the URL string: the client's plain path
            url = recorder.url + PATH + "?" + str(requestx.QueryParams(QUERY))
            response = client.get(url, headers=_headers())
        else:  # params= takes the general path
            response = client.get(recorder.url + PATH, params=QUERY, headers=_headers())
        assert response.status_code == 200
    assert len(recorder.heads) == 1
    assert recorder.heads[0].raw == _expected_head(response.request)


@pytest.mark.parametrize(
    ("method", "body"),
    [
        ("GET", None),
        ("HEAD", None),
        ("DELETE", None),
        ("PURGE", None),
        ("POST", b"x=1"),
        ("PUT", b"%s" * 50),
        ("PATCH", b""),
        ("POST", None),
    ],
)
def test_every_method_arrives_byte_for_byte(
    recorder: RecordingServer, method: str, body: bytes | None
) -> None:
    """The request line names each method (custom ones too), and the framing headers the
    request carries are the ones sent; a Connection value of the caller's comes last."""
    recorder.reset()
    headers = {"X-Semi": "a;b", "X-Tail": "v;", "Connection": "keep-alive, x-custom"}
    headers["X-After"] = "%s%d"
    with requestx.Client(timeout=10) as client:
        for _ in range(2):  # the second on a handle kept from the first
            response = client.request(method, recorder.url + PATH, content=body, headers=headers)
            assert response.status_code == 200
    assert len(recorder.heads) == 2
    assert recorder.heads[0].raw == recorder.heads[1].raw == _expected_head(response.request)


@pytest.mark.anyio
async def test_long_heads_arrive_byte_for_byte_async(recorder: RecordingServer) -> None:
    recorder.reset()
    async with requestx.AsyncClient(timeout=10) as client:
        with anyio.fail_after(20):
            response = await client.get(recorder.url + PATH, params=QUERY, headers=_headers())
    assert response.status_code == 200
    assert len(recorder.heads) == 1
    assert recorder.heads[0].raw == _expected_head(response.request)


def test_long_heads_reach_hypercorn_intact(server: HypercornServer) -> None:
    with requestx.Client(timeout=10) as client:
        response = client.get(server.url + "/echo" + PATH[2:], params=QUERY, headers=_headers())
    assert response.status_code == 200
    seen = response.json()
    assert seen["raw_path"] == "/echo" + PATH[2:]
    assert seen["query"] == str(requestx.QueryParams(QUERY))
    received = [(name, value) for name, value in seen["headers"] if name.startswith("x-")]
    sent = [(name.lower(), value) for name, value in _headers().items()]
    assert received == sent
