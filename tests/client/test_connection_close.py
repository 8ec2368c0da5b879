"""A caller's `Connection: close` is honoured (RFC 9112 section 9.6).

A client that sends `close` must send no further request on that connection: a server that
honours the header closes its socket after answering, and a request sent after it would race
that close. The recording server here keeps every connection open whatever the header says, so
only the client can have closed one. It records which connection each request came on and
which connections the client closed.

The test sends two requests with `Connection: close` and then two without. Each `close`
request must get a connection of its own that the client closes after it. The two without
share one kept-alive connection. This is checked for the blocking client, `client.stream()`,
the async client on every loop, and the top-level functions, with the header given per
request or set on the client. A server's own `Connection: close` keeps working: the next
request goes out on a new connection.
"""

from __future__ import annotations

import time
import typing

import pytest

import requestx
from tests.servers.recorder import RecordingServer

CLOSE = {"Connection": "close"}
SETTLE_SECONDS = 5.0  # how long a client's close may take to reach the server


@pytest.fixture
def recorder() -> typing.Iterator[RecordingServer]:
    """A server of the test's own: connections are numbered from 1 and none is left over from
    another test (conftest's is shared by the module)."""
    with RecordingServer() as running:
        yield running


def _closed_soon(recorder: RecordingServer, connections: set[int]) -> set[int]:
    """The connections among `connections` the client has closed, waiting (bounded) for the
    close to arrive."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while not connections <= recorder.closed_by_client and time.monotonic() < deadline:
        time.sleep(0.01)
    return connections & recorder.closed_by_client


def _check(recorder: RecordingServer) -> None:
    """Two `close` requests, then two plain ones: three connections, the first two closed by
    the client, the last serving both plain requests and still open (the client is too)."""
    seen = [(head.target, head.connection, head.header("connection")) for head in recorder.heads]
    assert seen == [
        ("/close-1", 1, "close"),
        ("/close-2", 2, "close"),
        ("/plain-1", 3, "keep-alive"),
        ("/plain-2", 3, "keep-alive"),
    ]
    assert _closed_soon(recorder, {1, 2}) == {1, 2}
    assert 3 not in recorder.closed_by_client


def test_blocking_client(recorder: RecordingServer) -> None:
    with requestx.Client() as client:
        for path in ("/close-1", "/close-2"):
            assert client.get(recorder.url + path, headers=CLOSE).text == "ok"
        for path in ("/plain-1", "/plain-2"):
            assert client.get(recorder.url + path).text == "ok"
        _check(recorder)


def test_every_method_and_a_body(recorder: RecordingServer) -> None:
    """A POST with a body and a HEAD: handles with other options than a plain GET's."""
    with requestx.Client() as client:
        client.post(recorder.url + "/close-1", content=b"abc", headers=CLOSE)
        client.head(recorder.url + "/close-2", headers={"connection": "Keep-Alive, CLOSE"})
        client.post(recorder.url + "/plain-1", content=b"abc")
        client.get(recorder.url + "/plain-2")
    seen = [(head.target, head.connection) for head in recorder.heads]
    assert seen == [("/close-1", 1), ("/close-2", 2), ("/plain-1", 3), ("/plain-2", 3)]
    assert _closed_soon(recorder, {1, 2}) == {1, 2}


def test_streamed_responses(recorder: RecordingServer) -> None:
    with requestx.Client() as client:
        for path in ("/close-1", "/close-2"):
            with client.stream("GET", recorder.url + path, headers=CLOSE) as response:
                assert response.read() == b"ok"
        for path in ("/plain-1", "/plain-2"):
            with client.stream("GET", recorder.url + path) as response:
                assert response.read() == b"ok"
        _check(recorder)


@pytest.mark.anyio
async def test_async_client(recorder: RecordingServer) -> None:
    async with requestx.AsyncClient() as client:
        for path in ("/close-1", "/close-2"):
            assert (await client.get(recorder.url + path, headers=CLOSE)).text == "ok"
        for path in ("/plain-1", "/plain-2"):
            assert (await client.get(recorder.url + path)).text == "ok"
        _check(recorder)


def test_top_level_functions(recorder: RecordingServer) -> None:
    """`requestx.get` shares one engine between calls: a `close` request's connection must not
    be left in its pool for the next call."""
    for path in ("/close-1", "/close-2"):
        assert requestx.get(recorder.url + path, headers=CLOSE).text == "ok"
    seen = [(head.target, head.connection) for head in recorder.heads]
    assert seen == [("/close-1", 1), ("/close-2", 2)]
    assert _closed_soon(recorder, {1, 2}) == {1, 2}


def test_a_client_header_closes_every_connection(recorder: RecordingServer) -> None:
    with requestx.Client(headers=CLOSE) as client:
        for _ in range(3):
            client.get(recorder.url + "/x")
    assert [head.connection for head in recorder.heads] == [1, 2, 3]
    assert _closed_soon(recorder, {1, 2, 3}) == {1, 2, 3}


@pytest.mark.parametrize(
    "value", ["keep-alive", "closed", "close-ish", "x-close", "upgrade"], ids=lambda v: v
)
def test_other_connection_values_keep_the_connection(recorder: RecordingServer, value: str) -> None:
    """Only the token `close` closes: a value that merely contains the letters does not."""
    with requestx.Client() as client:
        for _ in range(3):
            client.get(recorder.url + "/x", headers={"Connection": value})
    assert [head.connection for head in recorder.heads] == [1, 1, 1]


def test_the_servers_own_close_is_honoured(recorder: RecordingServer) -> None:
    with requestx.Client() as client:
        responses: list[typing.Any] = [
            client.get(recorder.url + "/server-closes"),
            client.get(recorder.url + "/after"),
            client.get(recorder.url + "/after"),
        ]
    assert [r.text for r in responses] == ["ok"] * 3
    assert [head.connection for head in recorder.heads] == [1, 2, 2]
