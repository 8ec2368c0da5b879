"""`read()` / `aread()` of a streamed response the engine saw no Content-Encoding on takes the
chunks as they come, without building a content decoder (which would parse the whole header
block to learn there is nothing to decode) or stacking iter_bytes() on iter_raw(). What must
not change:

- the body, `num_bytes_downloaded` and the closed state are what the general path gives;
- the headers decide, not the mark, once anybody could have changed them: a response hook
  that labels an unlabelled gzip body gets it decoded, one that removes the label gets the
  bytes as sent (httpx decodes by the headers at read time);
- `max_body_bytes` still stops the transfer.

Against nginx, hypercorn (HTTP/1.1 and h2c) and a raw socket server, blocking and async.
"""

from __future__ import annotations

import gzip
import typing

import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.canned import CannedServer
from tests.servers.nginx import Nginx, nginx_or_skip

BODY = b"stream me, " * 3000
GZIPPED = gzip.compress(BODY)


def _answer(*fields: str, body: bytes) -> bytes:
    head = "".join(f"{field}\r\n" for field in fields)
    return f"HTTP/1.1 200 OK\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


ANSWERS = {
    "/plain": _answer("Content-Type: text/plain", body=BODY),
    "/gzip-unlabelled": _answer("Content-Type: application/octet-stream", body=GZIPPED),
    "/gzip": _answer("Content-Encoding: gzip", body=GZIPPED),
}


@pytest.fixture(scope="module")
def canned() -> typing.Iterator[CannedServer]:
    with CannedServer(ANSWERS) as server:
        yield server


@pytest.fixture(scope="module")
def nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(encoded={"gz": ("gzip", GZIPPED)}) as server:
        yield server


def _label_gzip(response: requestx.Response) -> None:
    response.headers["Content-Encoding"] = "gzip"


def _unlabel(response: requestx.Response) -> None:
    del response.headers["Content-Encoding"]


# --- what the caller gets ----------------------------------------------------------------------


def test_a_plain_stream_reads_whole_from_nginx(nginx: Nginx) -> None:
    expected = bytes(range(256)) * 4096  # nginx's /big
    with requestx.Client() as client:
        for _ in range(3):  # and the connection is left fit for the next
            with client.stream("GET", nginx.url + "/big") as response:
                assert response.read() == expected
                assert response.num_bytes_downloaded == len(expected)
                assert response.is_closed and response.is_stream_consumed
            with client.stream("GET", nginx.url + "/encoded/gz") as response:
                assert response.read() == BODY
                assert response.num_bytes_downloaded == len(GZIPPED)


@pytest.mark.anyio
async def test_a_plain_stream_areads_whole_from_nginx(nginx: Nginx) -> None:
    async with requestx.AsyncClient() as client:
        for _ in range(3):
            async with client.stream("GET", nginx.url + "/get") as response:
                assert await response.aread() == b"Hello, world!"
                assert response.num_bytes_downloaded == 13
                assert response.is_closed
            async with client.stream("GET", nginx.url + "/encoded/gz") as response:
                assert await response.aread() == BODY


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "h2c"])
def test_a_plain_stream_reads_whole_from_hypercorn(server: HypercornServer, http2: bool) -> None:
    with requestx.Client(http1=not http2, http2=http2) as client:
        with client.stream("GET", server.url + "/bytes/200000") as response:
            body = response.read()
            assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")
        assert len(body) == 200000 == response.num_bytes_downloaded
        # The same bytes the general path (iter_bytes) hands out.
        with client.stream("GET", server.url + "/bytes/200000") as response:
            assert b"".join(response.iter_bytes()) == body


# --- the headers decide once a hook could have changed them --------------------------------------


def test_a_hook_that_labels_the_body_gets_it_decoded(canned: CannedServer) -> None:
    with requestx.Client(event_hooks={"response": [_label_gzip]}) as client:
        with client.stream("GET", canned.url + "/gzip-unlabelled") as response:
            assert response.read() == BODY
        with client.stream("GET", canned.url + "/gzip-unlabelled") as response:
            assert b"".join(response.iter_bytes()) == BODY
    # Without the hook: the bytes as sent.
    with requestx.Client() as client, client.stream("GET", canned.url + "/gzip-unlabelled") as r:
        assert r.read() == GZIPPED


@pytest.mark.anyio
async def test_an_async_hook_that_labels_the_body_gets_it_decoded(canned: CannedServer) -> None:
    async def label(response: requestx.Response) -> None:
        _label_gzip(response)

    hooks = {"response": [label]}
    url = canned.url + "/gzip-unlabelled"
    async with requestx.AsyncClient(event_hooks=hooks) as client, client.stream("GET", url) as r:
        assert await r.aread() == BODY
    url = canned.url + "/plain"
    async with requestx.AsyncClient() as client, client.stream("GET", url) as r:
        assert await r.aread() == BODY


def test_a_hook_that_removes_the_label_gets_the_bytes_as_sent(
    canned: CannedServer, server: HypercornServer
) -> None:
    with requestx.Client(event_hooks={"response": [_unlabel]}) as client:
        with client.stream("GET", canned.url + "/gzip") as response:
            assert response.read() == GZIPPED
        with client.stream("GET", server.url + "/gzip") as response:
            raw = response.read()
    assert gzip.decompress(raw)  # hypercorn's compressed document, left compressed


# --- limits ------------------------------------------------------------------------------------


def test_max_body_bytes_still_stops_a_plain_stream(
    canned: CannedServer, server: HypercornServer
) -> None:
    with requestx.Client(max_body_bytes=1000) as client:
        for url in (canned.url + "/plain", server.url + "/bytes/200000"):
            with client.stream("GET", url) as response:
                with pytest.raises(requestx.ResponseTooLarge):
                    response.read()
                assert response.is_closed
        assert client.get(server.url + "/json").json() == {"Hello": "world!"}  # still works
