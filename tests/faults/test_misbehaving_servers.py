"""Servers that misbehave, and a network that refuses: a refused connection, connections closed
mid-response or before it, bad status lines, header blocks over the limit, a pooled connection
the server closed, and responses no conforming server sends (bad codings, bad chunk sizes,
conflicting or negative lengths, an empty answer), served verbatim by a canned server.

Every case raises the httpx exception class for it (never crashes, never hangs) and is followed
by a normal request on the same client, which must succeed: a failure must not poison the
client, its engine or its connection pool. Errors that come out of the engine carry the request
and are chained (`raise ... from`) to the engine's `EngineError`.

On servers that keep the connection open after a fault, each case also run against httpx:
tests/faults/test_socket_faults.py.
"""

from __future__ import annotations

import gzip
from typing import Iterator

import pytest

import requestx
from tests.servers import HypercornServer, RawServer
from tests.servers.canned import CannedServer
from tests.support.echo import still_works
from tests.support.errors import assert_engine_error
from tests.support.network import closed_port


def test_connection_refused(server: HypercornServer) -> None:
    url = f"http://127.0.0.1:{closed_port()}/path"
    with requestx.Client(timeout=5) as client:
        for _ in range(3):  # and again: a failed connect leaves nothing behind
            with pytest.raises(requestx.ConnectError) as info:
                client.get(url)
            assert_engine_error(info.value, url)
            assert isinstance(info.value, requestx.NetworkError)
        still_works(client, server)


@pytest.mark.parametrize(
    "scenario, errors",
    [
        ("close-mid-body", (requestx.RemoteProtocolError, requestx.ReadError)),
        ("close-no-response", (requestx.RemoteProtocolError,)),
        ("bad-status-line", (requestx.RemoteProtocolError,)),
        ("huge-headers", (requestx.RemoteProtocolError,)),
    ],
)
def test_misbehaving_server(
    raw_server: RawServer,
    server: HypercornServer,
    scenario: str,
    errors: tuple[type[Exception], ...],
) -> None:
    url = f"{raw_server.url}/{scenario}"
    with requestx.Client(timeout=5) as client:
        with pytest.raises(requestx.TransportError) as info:
            client.get(url)
        assert_engine_error(info.value, url)
        assert isinstance(info.value, errors), repr(info.value)
        assert client.get(raw_server.url + "/ok").text == "ok"
        still_works(client, server)


def test_huge_headers_are_refused_at_the_limit(raw_server: RawServer) -> None:
    # 90 KiB of headers is under the default 100 KiB limit (httpx's); 200 KiB and 1 MiB are
    # refused with a message naming the option, and the client recovers.
    with requestx.Client(timeout=5) as client:
        assert client.get(raw_server.url + "/huge-headers?kb=90").text == "ok"
        for kb in (200, 1024):
            url = raw_server.url + f"/huge-headers?kb={kb}"
            with pytest.raises(requestx.RemoteProtocolError, match="max_header_bytes") as info:
                client.get(url)
            assert_engine_error(info.value, url)
            assert "102400 bytes" in str(info.value)
            assert client.get(raw_server.url + "/ok").text == "ok"


def test_pooled_connection_closed_by_the_server_is_replaced(raw_server: RawServer) -> None:
    raw_server.reset_stats()
    with requestx.Client(timeout=5) as client:
        assert client.get(raw_server.url + "/ok-then-close").text == "ok"
        # The pooled connection is dead now; the client must notice and connect again.
        for _ in range(3):
            assert client.get(raw_server.url + "/ok").text == "ok"
    assert raw_server.connection_count() == 2


# Responses no conforming server sends, served verbatim.
_GZIP_DOC = gzip.compress(b"hello world " * 100)
_CANNED: dict[str, bytes] = {
    "/bad-gzip": (
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot gzip!!"
    ),
    "/bad-deflate": (
        b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: 4\r\n\r\nnope"
    ),
    "/bad-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    "/chunked-eof": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc",
    "/negative-length": b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nabc",
    "/conflicting-length": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde"
    ),
    "/no-colon": b"HTTP/1.1 200 OK\r\nBroken header line\r\nContent-Length: 2\r\n\r\nok",
    "/status-not-a-number": b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\nok",
    "/empty": b"",
    # Valid, if unusual: these must work.
    "/http10-until-close": b"HTTP/1.0 200 OK\r\n\r\nread until close",
    "/interim-100": (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nX-Final: 1\r\nContent-Length: 2\r\n\r\nok"
    ),
    "/latin1-header": b"HTTP/1.1 200 OK\r\nX-Name: caf\xe9\r\nContent-Length: 2\r\n\r\nok",
    "/gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: "
    + str(len(_GZIP_DOC)).encode()
    + b"\r\n\r\n"
    + _GZIP_DOC,
}


@pytest.fixture(scope="module")
def canned() -> Iterator[CannedServer]:
    with CannedServer(_CANNED) as running:
        yield running


@pytest.mark.parametrize(
    "path, error",
    [
        ("/bad-gzip", requestx.DecodingError),
        ("/bad-deflate", requestx.DecodingError),
        ("/bad-chunked", requestx.RemoteProtocolError),
        ("/chunked-eof", requestx.RemoteProtocolError),
        ("/negative-length", requestx.RemoteProtocolError),
        ("/conflicting-length", requestx.RemoteProtocolError),
        ("/no-colon", requestx.RemoteProtocolError),
        ("/status-not-a-number", requestx.RemoteProtocolError),
        ("/empty", requestx.RemoteProtocolError),
    ],
)
def test_malformed_responses(
    canned: CannedServer, server: HypercornServer, path: str, error: type[Exception]
) -> None:
    url = canned.url + path
    with requestx.Client(timeout=5) as client:
        with pytest.raises(requestx.RequestError) as info:
            client.get(url)
        assert isinstance(info.value, error), repr(info.value)
        if error is requestx.DecodingError:
            # Content decoding happens in Python (the engine hands bodies over as sent).
            assert info.value.request.url == requestx.URL(url)
            assert "Cannot decode" in str(info.value)
        else:
            assert_engine_error(info.value, url)
        assert client.get(canned.url + "/gzip").content == b"hello world " * 100
        still_works(client, server)


def test_unusual_but_valid_responses(canned: CannedServer) -> None:
    with requestx.Client(timeout=5) as client:
        response = client.get(canned.url + "/http10-until-close")
        assert response.http_version == "HTTP/1.0"
        assert response.content == b"read until close"
        response = client.get(canned.url + "/interim-100")
        assert response.status_code == 200
        assert response.headers["x-final"] == "1"
        assert response.content == b"ok"
        response = client.get(canned.url + "/latin1-header")
        assert response.headers.raw[0] == (b"X-Name", b"caf\xe9")
        assert response.headers["x-name"] == "caf\u00e9"  # decoded as latin-1, like httpx
