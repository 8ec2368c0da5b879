"""Caller-supplied framing headers are checked before any byte goes out.

A Content-Length that disagrees with the body, or one that is not a plain number, used to go
on the wire as given: the server then reads part of the body as the next request (request
smuggling) or waits for bytes that never come. A `Transfer-Encoding: chunked` header with an
in-memory body made requestx send both framing headers (RFC 9112 section 6.2: a sender MUST
NOT). Now: `LocalProtocolError` before anything is sent (the server counts no request), the
client stays usable, and a chunked request carries exactly one framing header.

Checked against the raw test server (which counts requests per path) and hypercorn (h11),
and byte for byte on a capturing socket.
"""

from __future__ import annotations

import socket
import threading
from typing import Iterator

import anyio
import pytest

import requestx
from tests.servers import HypercornServer, RawServer

BAD_LENGTHS = ["3", "10", "abc", "-1", "+5", "5 5", "5 ", "0x5", "1e1", ""]


@pytest.mark.parametrize("value", BAD_LENGTHS)
def test_mismatched_content_length_is_refused_before_sending(
    raw_server: RawServer, value: str
) -> None:
    raw_server.reset_stats()
    with requestx.Client(timeout=5) as client:
        if value == "5 ":
            # Surrounding whitespace is allowed by the grammar (and stripped): this one is fine.
            response = client.post(
                raw_server.url + "/framing", content=b"12345", headers={"Content-Length": value}
            )
            assert response.status_code == 404  # the raw server's answer to an unknown path
            assert raw_server.requests_seen("framing") == 1
            return
        with pytest.raises(requestx.LocalProtocolError, match="Content-Length"):
            client.post(
                raw_server.url + "/framing", content=b"12345", headers={"Content-Length": value}
            )
        assert raw_server.requests_seen("framing") == 0  # nothing reached the server
        assert client.get(raw_server.url + "/ok").text == "ok"
        assert raw_server.connection_count() == 1  # the pool was not disturbed either


def test_content_length_on_a_bodiless_request_must_be_zero(raw_server: RawServer) -> None:
    raw_server.reset_stats()
    with requestx.Client(timeout=5) as client:
        with pytest.raises(requestx.LocalProtocolError, match="does not match"):
            client.get(raw_server.url + "/framing", headers={"Content-Length": "5"})
        assert raw_server.requests_seen("framing") == 0
        assert client.get(raw_server.url + "/framing", headers={"Content-Length": "0"}).status_code
        assert raw_server.requests_seen("framing") == 1


def test_conflicting_copies_of_content_length_are_refused(raw_server: RawServer) -> None:
    raw_server.reset_stats()
    with requestx.Client(timeout=5) as client:
        headers = [("Content-Length", "5"), ("Content-Length", "6")]
        with pytest.raises(requestx.LocalProtocolError, match="Invalid request Content-Length"):
            client.post(raw_server.url + "/framing", content=b"12345", headers=headers)
        assert raw_server.requests_seen("framing") == 0


def test_a_matching_content_length_is_sent_once(server: HypercornServer) -> None:
    with requestx.Client(timeout=5) as client:
        response = client.post(
            server.url + "/echo", content=b"12345", headers={"Content-Length": "5"}
        )
        seen = response.json()
        assert seen["body"] == "12345"
        assert [v for n, v in seen["headers"] if n == "content-length"] == ["5"]
        assert not [v for n, v in seen["headers"] if n == "transfer-encoding"]


@pytest.mark.parametrize(
    "headers",
    [
        {"Transfer-Encoding": "chunked", "Content-Length": "5"},
        {"Transfer-Encoding": "gzip"},
        {"Transfer-Encoding": "gzip, chunked"},
    ],
)
def test_unsendable_transfer_encodings_are_refused(
    raw_server: RawServer, headers: dict[str, str]
) -> None:
    raw_server.reset_stats()
    with requestx.Client(timeout=5) as client:
        with pytest.raises(requestx.LocalProtocolError):
            client.post(raw_server.url + "/framing", content=b"12345", headers=headers)
        assert raw_server.requests_seen("framing") == 0
        assert client.get(raw_server.url + "/ok").text == "ok"


@pytest.mark.anyio
async def test_async_client_refuses_bad_framing_too(raw_server: RawServer) -> None:
    raw_server.reset_stats()
    async with requestx.AsyncClient(timeout=5) as client:
        with anyio.fail_after(10):
            with pytest.raises(requestx.LocalProtocolError):
                await client.post(
                    raw_server.url + "/framing", content=b"12345", headers={"Content-Length": "3"}
                )
            assert (await client.get(raw_server.url + "/ok")).text == "ok"
    assert raw_server.requests_seen("framing") == 0


@pytest.fixture
def capturing_socket() -> Iterator[tuple[str, list[bytes]]]:
    """A one-shot server that keeps every byte of one request (chunked or not), then answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(10)
    captured: list[bytes] = []

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while not (data.endswith(b"\r\n0\r\n\r\n") or _complete_by_length(data)):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            captured.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/", captured
    listener.close()
    thread.join(5)


def _complete_by_length(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"transfer-encoding":
            return False
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return True


def test_user_chunked_with_a_bytes_body_sends_one_framing_header(
    capturing_socket: tuple[str, list[bytes]],
) -> None:
    url, captured = capturing_socket
    with requestx.Client(timeout=5) as client:
        response = client.post(url, content=b"12345", headers={"Transfer-Encoding": "chunked"})
    assert response.text == "ok"
    (wire,) = captured
    head, _, body = wire.partition(b"\r\n\r\n")
    names = [line.split(b":")[0].lower() for line in head.split(b"\r\n")[1:]]
    assert names.count(b"transfer-encoding") == 1
    assert b"content-length" not in names
    assert body == b"5\r\n12345\r\n0\r\n\r\n"


def test_user_chunked_is_accepted_by_hypercorn(server: HypercornServer) -> None:
    with requestx.Client(timeout=5) as client:
        seen = client.post(
            server.url + "/echo", content=b"12345", headers={"Transfer-Encoding": "chunked"}
        ).json()
    assert seen["body"] == "12345"
    assert not [v for n, v in seen["headers"] if n == "content-length"]
