"""Streamed request bodies: iterators, async iterators, file objects and multipart `files=`.

The suite's ASGI server answers /upload-digest with the length and SHA-256 of the body it
received (hashed as it arrives) and the framing headers it saw, so these tests check every
byte without the server holding the body. Each behaviour runs on the blocking client and,
through the anyio plugin, on asyncio, uvloop and trio.
"""

from __future__ import annotations

import hashlib
import io
import os
import typing

import httpx
import pytest

import requestx
from requestx._multipart import MultipartStream
from tests.servers import HypercornServer

PIECE = 100_000


def _pieces(count: int, byte: bytes = b"z") -> typing.Iterator[bytes]:
    for _ in range(count):
        yield byte * PIECE


async def _apieces(count: int, byte: bytes = b"a") -> typing.AsyncIterator[bytes]:
    for _ in range(count):
        yield byte * PIECE


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _ReadRecorder(io.BytesIO):
    """A file object that remembers the sizes it was asked to read."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads: list[int] = []

    def read(self, size: int | None = -1) -> bytes:
        self.reads.append(-1 if size is None else size)
        return super().read(size)


# --- blocking client --------------------------------------------------------------------------


def test_generator_body_is_sent_chunked(client: requestx.Client) -> None:
    seen = client.post("/upload-digest", content=_pieces(30)).json()
    assert seen["length"] == 30 * PIECE
    assert seen["sha256"] == _sha(b"z" * 30 * PIECE)
    assert seen["transfer_encoding"] == "chunked" and seen["content_length"] is None


def test_iterator_with_content_length_is_not_chunked(client: requestx.Client) -> None:
    headers = {"Content-Length": str(5 * PIECE)}
    seen = client.put("/upload-digest", content=_pieces(5), headers=headers).json()
    assert seen["method"] == "PUT" and seen["length"] == 5 * PIECE
    assert seen["content_length"] == str(5 * PIECE) and seen["transfer_encoding"] is None


@pytest.mark.parametrize("declared", [3 * PIECE, 5 * PIECE], ids=["longer", "shorter"])
def test_body_not_matching_its_content_length_is_refused(
    client: requestx.Client, declared: int
) -> None:
    headers = {"Content-Length": str(declared)}
    with pytest.raises(requestx.LocalProtocolError, match="Content-Length") as caught:
        client.post("/upload-digest", content=_pieces(4), headers=headers)
    assert caught.value.request.url.path == "/upload-digest"
    assert client.get("/json").json() == {"Hello": "world!"}
    assert client._engine.stats()["running"] == 0


def test_file_on_disk_is_streamed_with_its_length(
    client: requestx.Client, tmp_path: typing.Any
) -> None:
    data = os.urandom(3 * 1024 * 1024)
    path = tmp_path / "upload.bin"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        seen = client.post("/upload-digest", content=handle).json()
    assert seen["length"] == len(data) and seen["sha256"] == _sha(data)
    assert seen["content_length"] == str(len(data)) and seen["transfer_encoding"] is None


def test_file_objects_are_read_in_pieces(client: requestx.Client) -> None:
    recorder = _ReadRecorder(b"r" * 1_000_000)
    seen = client.post("/upload-digest", content=recorder).json()
    assert seen["length"] == 1_000_000
    assert recorder.reads and max(recorder.reads) <= 64 * 1024


def test_multipart_files_and_data_match_httpx_bytes(client: requestx.Client) -> None:
    content = os.urandom(300_000)
    headers = {"Content-Type": "multipart/form-data; boundary=requestx-test-boundary"}

    def files() -> dict[str, typing.Any]:
        return {
            "upload": ("data.bin", io.BytesIO(content), "application/x-thing"),
            "notes": ("notes.txt", b"hello"),
        }

    data = {"field": "value", "many": ["1", "2"]}
    seen = client.post("/upload-digest", data=data, files=files(), headers=headers).json()
    expected = httpx.Request("POST", "http://x/", data=data, files=files(), headers=headers)
    body = b"".join(expected.stream)  # type: ignore[arg-type]
    assert seen["sha256"] == _sha(body) and seen["length"] == len(body)
    assert seen["content_length"] == expected.headers["content-length"]
    assert seen["content_type"] == headers["Content-Type"]


def test_multipart_from_disk_is_not_read_whole(client: requestx.Client) -> None:
    recorder = _ReadRecorder(b"f" * 2_000_000)
    seen = client.post("/upload-digest", files={"f": ("big.bin", recorder)}).json()
    assert seen["length"] > 2_000_000
    assert max(recorder.reads) <= 64 * 1024


def test_307_redirect_replays_a_file_body_but_not_a_generator(client: requestx.Client) -> None:
    url = "/redirect/307?to=/upload-digest"
    seen = client.post(url, content=io.BytesIO(b"q" * 5000), follow_redirects=True).json()
    assert seen["length"] == 5000 and seen["sha256"] == _sha(b"q" * 5000)
    with pytest.raises(requestx.StreamConsumed):
        client.post(url, content=_pieces(2), follow_redirects=True)


def test_a_failing_generator_cancels_the_request(client: requestx.Client) -> None:
    def broken() -> typing.Iterator[bytes]:
        yield b"x" * PIECE
        raise ValueError("the source broke")

    with pytest.raises(ValueError, match="the source broke"):
        client.post("/upload-digest", content=broken())
    assert client.get("/json").status_code == 200
    assert client._engine.stats()["running"] == 0


def test_non_bytes_chunks_are_a_type_error(client: requestx.Client) -> None:
    with pytest.raises(TypeError, match="bytes, not str"):
        client.post("/upload-digest", content=iter(["text"]))


def test_async_iterator_in_a_sync_client_is_refused(client: requestx.Client) -> None:
    with pytest.raises(RuntimeError, match="sync Client"):
        client.post("/upload-digest", content=_apieces(1))


def test_streamed_request_and_streamed_response_together(client: requestx.Client) -> None:
    with client.stream("POST", "/upload-digest", content=_pieces(10)) as response:
        response.read()
        seen = response.json()
    assert seen is not None and seen["length"] == 10 * PIECE


def test_request_read_collects_a_streamed_body() -> None:
    request = requestx.Request("POST", "http://127.0.0.1/", content=_pieces(3))
    with pytest.raises(requestx.RequestNotRead):
        _ = request.content
    assert request.read() == b"z" * 3 * PIECE
    assert request.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in request.headers


def test_multipart_stream_headers_never_carry_both_framings() -> None:
    class Unsized:
        def read(self, size: int = -1) -> bytes:
            return b""

    known = MultipartStream({}, {"f": ("a", b"abc")}).headers()
    unknown = MultipartStream({}, {"f": ("a", Unsized())}).headers()  # type: ignore[dict-item]
    assert "Content-Length" in known and "Transfer-Encoding" not in known
    assert unknown.get("Transfer-Encoding") == "chunked" and "Content-Length" not in unknown


# --- async clients -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_generator_upload(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        seen = (await client.post("/upload-digest", content=_apieces(30))).json()
        assert seen["length"] == 30 * PIECE and seen["sha256"] == _sha(b"a" * 30 * PIECE)
        assert seen["transfer_encoding"] == "chunked"
        files = {"f": ("x.bin", io.BytesIO(b"m" * 200_000))}
        seen = (await client.post("/upload-digest", files=files)).json()
        assert seen["length"] > 200_000 and seen["content_type"].startswith("multipart/")
        async with client.stream("POST", "/upload-digest", content=_apieces(5)) as response:
            assert (await response.aread()).startswith(b"{")


@pytest.mark.anyio
async def test_async_length_mismatch_and_wrong_iterator_kind(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        with pytest.raises(requestx.LocalProtocolError):
            headers = {"Content-Length": "10"}
            await client.post("/upload-digest", content=_apieces(1), headers=headers)
        with pytest.raises(RuntimeError, match="AsyncClient"):
            await client.post("/upload-digest", content=_pieces(1))
        assert (await client.get("/json")).status_code == 200
        assert client._engine.stats()["running"] == 0


FORM_TEXTS = ["", "plain", "A-Z_a.z~0-9", "two words", "a+b=c&d", "100%", "naïve", "日本", "/?#[]@"]


@pytest.mark.parametrize("name", [*FORM_TEXTS, b"raw bytes", 42])
def test_form_bodies_are_what_urlencode_and_httpx_make(name: typing.Any) -> None:
    """_encode_form skips quoting for text that needs none; every other field goes through
    quote_plus, so the body is byte for byte urlencode's (and httpx's)."""
    from urllib.parse import urlencode

    from requestx._content import encode_request

    data = {name: FORM_TEXTS, "flag": True, "none": None, "n": 1.5}
    _, body = encode_request(data=data)
    expected = urlencode(
        [(name, text) for text in FORM_TEXTS] + [("flag", "true"), ("none", ""), ("n", "1.5")]
    )
    assert body == expected.encode("ascii")
    assert body == httpx.Request("POST", "http://x/", data=data).content
