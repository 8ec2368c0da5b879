"""MultipartStream: differential tests against httpx 0.28, plus streaming behaviour."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import io
import os
import re
import tempfile
import typing
from pathlib import Path

import httpx
import pytest

from requestx._multipart import CHUNK_SIZE, MultipartStream

BOUNDARY = "XYZ-boundary"


# --- helpers -------------------------------------------------------------------------


def httpx_request(data: typing.Any, files: typing.Any, boundary: str = BOUNDARY) -> httpx.Request:
    return httpx.Request(
        "POST",
        "http://x/",
        data=data,
        files=files,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )


def httpx_body(data: typing.Any, files: typing.Any) -> tuple[bytes, dict[str, str]]:
    request = httpx_request(data, files)
    body = b"".join(typing.cast(typing.Iterable[bytes], request.stream))
    framing = {
        key: request.headers[key]
        for key in ("Content-Length", "Transfer-Encoding")
        if key in request.headers
    }
    return body, framing


def ours(data: typing.Any, files: typing.Any) -> MultipartStream:
    return MultipartStream(data, files, boundary=BOUNDARY.encode("ascii"))


def framing_of(stream: MultipartStream) -> dict[str, str]:
    return {k: v for k, v in stream.headers().items() if k != "Content-Type"}


class ReadOnly:
    """A file-like object with read() only: no seek, tell or fileno."""

    def __init__(self, data: bytes | str, step: int = 7) -> None:
        self._data = data
        self._pos = 0
        self._step = step

    def read(self, size: int = -1) -> bytes | str:
        if size is None or size < 0:
            size = len(self._data)
        size = min(size, self._step)
        chunk = self._data[self._pos : self._pos + size]
        self._pos += len(chunk)
        return chunk


class RecordingFile:
    """Wraps a binary file and records the size of every read()."""

    def __init__(self, raw: typing.BinaryIO) -> None:
        self.raw = raw
        self.name = raw.name
        self.reads: list[int] = []

    def read(self, size: int = -1) -> bytes:
        self.reads.append(size)
        return self.raw.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def tell(self) -> int:
        return self.raw.tell()

    def fileno(self) -> int:
        return self.raw.fileno()


_OPENED: list[typing.IO[typing.Any]] = []


def _open(path: str | Path, mode: str = "rb", **kwargs: typing.Any) -> typing.Any:
    """open() for the case factories; the files are closed after each test."""
    f = open(path, mode, **kwargs)  # noqa: SIM115
    _OPENED.append(f)
    return f


@pytest.fixture(autouse=True)
def _close_opened_files() -> typing.Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().close()


@pytest.fixture(scope="module")
def disk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("multipart")
    (d / "report.csv").write_bytes(b"a,b\r\n1,2\r\n")
    (d / "photo.png").write_bytes(bytes(range(256)) * 40)
    (d / "noext").write_bytes(b"\x00\x01\x02")
    (d / "empty.txt").write_bytes(b"")
    (d / "unicodé ü.json").write_bytes('{"k": "é"}'.encode())
    return d


# --- differential corpus: (data, files) factories, rebuilt for each library ----------

Factory = typing.Callable[[Path], typing.Tuple[typing.Any, typing.Any]]

CASES: dict[str, Factory] = {
    "one-text-field-one-bytes-file": lambda d: ({"a": "1"}, {"f": b"content"}),
    "files-only": lambda d: ({}, {"f": b"content"}),
    "text-fields": lambda d: ({"a": "x", "b": "", "c": "é ü 漢字"}, {"f": b"c"}),
    "numbers-bools-none": lambda d: (
        {"i": 1, "neg": -7, "fl": 2.5, "big": 10**30, "t": True, "f": False, "n": None},
        {"f": b"c"},
    ),
    "float-specials": lambda d: ({"nan": float("nan"), "inf": float("-inf")}, {"f": b"c"}),
    "bytes-field": lambda d: ({"raw": b"\x00\xff bytes"}, {"f": b"c"}),
    "list-values": lambda d: ({"l": ["a", 1, 2.5, True, None, b"b"], "x": "y"}, {"f": b"c"}),
    "tuple-values": lambda d: ({"t": ("a", "b")}, {"f": b"c"}),
    "empty-list": lambda d: ({"l": [], "x": "y"}, {"f": b"c"}),
    "str-file-content": lambda d: ({}, {"f": "text content é"}),
    "empty-bytes-file": lambda d: ({}, {"f": b""}),
    "bytesio": lambda d: ({}, {"f": io.BytesIO(b"from bytesio")}),
    "named-bytesio": lambda d: ({}, {"f": _named(io.BytesIO(b"{}"), "/some/dir/data.json")}),
    "disk-file": lambda d: ({}, {"f": _open(d / "report.csv", "rb")}),
    "disk-file-unbuffered": lambda d: ({}, {"f": _open(d / "photo.png", "rb", buffering=0)}),
    "disk-file-no-extension": lambda d: ({}, {"f": _open(d / "noext", "rb")}),
    "disk-file-empty": lambda d: ({}, {"f": _open(d / "empty.txt", "rb")}),
    "disk-file-unicode-name": lambda d: ({}, {"f": _open(d / "unicodé ü.json", "rb")}),
    "tuple2-bytes": lambda d: ({}, {"f": ("a.txt", b"hello")}),
    "tuple2-str": lambda d: ({}, {"f": ("a.html", "<p>é</p>")}),
    "tuple2-file": lambda d: ({}, {"f": ("renamed.bin", _open(d / "photo.png", "rb"))}),
    "tuple2-guess-png": lambda d: ({}, {"f": ("image.PNG", b"x")}),
    "tuple2-guess-targz": lambda d: ({}, {"f": ("a.tar.gz", b"x")}),
    "tuple2-unknown-extension": lambda d: ({}, {"f": ("a.unknownext", b"x")}),
    "tuple2-filename-none": lambda d: ({}, {"f": (None, b"no filename")}),
    "tuple2-filename-empty": lambda d: ({}, {"f": ("", b"empty filename")}),
    "tuple2-filename-path": lambda d: ({}, {"f": ("dir/sub/a.txt", b"x")}),
    "tuple3-content-type": lambda d: ({}, {"f": ("a.txt", b"x", "application/x-custom")}),
    "tuple3-content-type-none": lambda d: ({}, {"f": ("a.txt", b"x", None)}),
    "tuple3-filename-none-content-type": lambda d: ({}, {"f": (None, b"x", "text/csv")}),
    "tuple3-filename-none-none": lambda d: ({}, {"f": (None, b"x", None)}),
    "tuple3-file": lambda d: ({}, {"f": ("r.csv", _open(d / "report.csv", "rb"), "text/csv")}),
    "tuple4-headers": lambda d: (
        {},
        {"f": ("a.txt", b"x", "text/plain", {"X-Custom": "1", "X-Utf8": "é"})},
    ),
    "tuple4-empty-headers": lambda d: ({}, {"f": ("a.txt", b"x", None, {})}),
    "tuple4-content-type-header": lambda d: (
        {},
        {"f": ("a.txt", b"x", None, {"Content-Type": "x/from-header"})},
    ),
    "tuple4-content-type-header-lowercase": lambda d: (
        {},
        {"f": ("a.txt", b"x", "ignored/type", {"content-type": "x/y", "X-A": "b"})},
    ),
    "tuple4-header-containing-content-type": lambda d: (
        {},
        {"f": ("a.txt", b"x", "t/y", {"X-Content-Type-Options": "nosniff"})},
    ),
    "tuple4-filename-none": lambda d: ({}, {"f": (None, b"x", None, {"X-A": "1"})}),
    "non-ascii-names": lambda d: (
        {"naïve 名前": "v"},
        {"fïle": ("résumé 履歴.pdf", b"%PDF")},
    ),
    "escaped-names": lambda d: (
        {'q"uo\\te\r\n\t\x00\x1b\x1f\x7f ;=': "v"},
        {'f"\\\n': ('a"b\\c\nd\r\x1b.txt', b"x")},
    ),
    "several-files": lambda d: (
        {},
        {
            "a": ("a.txt", b"A"),
            "b": _open(d / "report.csv", "rb"),
            "c": io.BytesIO(b"C"),
            "d": "D",
        },
    ),
    "files-as-list-repeated-name": lambda d: (
        {},
        [("f", ("1.txt", b"1")), ("f", ("2.txt", b"2")), ("g", b"3")],
    ),
    "files-as-tuple-of-pairs": lambda d: ({}, (("f", b"1"), ("g", ("x.js", b"2")))),
    "data-and-files": lambda d: (
        {"user": "me", "tags": ["x", "y"], "n": 3},
        {
            "upload": ("photo.png", _open(d / "photo.png", "rb"), "image/png"),
            "notes": ("notes.txt", "some notes"),
        },
    ),
    "large-bytes-content": lambda d: ({"big": b"d" * 200_000}, {"f": b"f" * 300_000}),
    "read-only-filelike": lambda d: ({}, {"f": ReadOnly(b"unknown length " * 10)}),
    "read-only-filelike-str": lambda d: ({}, {"f": ReadOnly("text é " * 10)}),
    "read-only-mixed-with-known": lambda d: (
        {"a": "1"},
        {"known": b"k", "unknown": ("u.bin", ReadOnly(b"u" * 100))},
    ),
}


def _named(obj: io.BytesIO, name: str) -> io.BytesIO:
    obj.name = name  # type: ignore[attr-defined]
    return obj


@pytest.mark.parametrize("case", list(CASES))
def test_body_and_framing_match_httpx(case: str, disk: Path) -> None:
    expected_body, expected_framing = httpx_body(*CASES[case](disk))
    stream = ours(*CASES[case](disk))

    body = b"".join(stream)
    assert body == expected_body
    assert framing_of(stream) == expected_framing
    length = stream.get_content_length()
    if length is not None:
        assert length == len(body)


def test_known_length_equals_body_length(disk: Path) -> None:
    stream = ours(*CASES["data-and-files"](disk))
    body = b"".join(stream)
    assert stream.get_content_length() == len(body)
    assert stream.headers() == {
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
        "Content-Length": str(len(body)),
    }


def test_exact_bytes() -> None:
    stream = MultipartStream(
        {"a": "1", "b": [True, None]},
        {"f": ("x.txt", b"hi"), "g": (None, b"raw", None, {"X-K": "v"})},
        boundary=b"B",
    )
    assert b"".join(stream) == (
        b"--B\r\n"
        b'Content-Disposition: form-data; name="a"\r\n\r\n1\r\n'
        b"--B\r\n"
        b'Content-Disposition: form-data; name="b"\r\n\r\ntrue\r\n'
        b"--B\r\n"
        b'Content-Disposition: form-data; name="b"\r\n\r\n\r\n'
        b"--B\r\n"
        b'Content-Disposition: form-data; name="f"; filename="x.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\nhi\r\n"
        b"--B\r\n"
        b'Content-Disposition: form-data; name="g"\r\nX-K: v\r\n\r\nraw\r\n'
        b"--B--\r\n"
    )


def test_name_escaping() -> None:
    stream = MultipartStream({'a"b\\c\nd\x1be\x7fé': "v"}, {"f": b""}, boundary=b"B")
    body = b"".join(stream)
    assert b'name="a%22b\\\\c%0Ad\x1be\x7f\xc3\xa9"' in body


# --- boundary and headers -------------------------------------------------------------


def test_default_boundary_is_random_hex() -> None:
    a = MultipartStream({}, {"f": b"x"})
    b = MultipartStream({}, {"f": b"x"})
    assert re.fullmatch(rb"[0-9a-f]{32}", a.boundary)
    assert a.boundary != b.boundary
    assert a.content_type == "multipart/form-data; boundary=" + a.boundary.decode()
    body = b"".join(a)
    assert body.startswith(b"--" + a.boundary + b"\r\n")
    assert body.endswith(b"--" + a.boundary + b"--\r\n")


def test_explicit_boundary() -> None:
    stream = MultipartStream({"a": "1"}, {"f": b"x"}, boundary=b"my-boundary")
    assert stream.boundary == b"my-boundary"
    assert stream.content_type == "multipart/form-data; boundary=my-boundary"
    assert stream.headers()["Content-Type"] == "multipart/form-data; boundary=my-boundary"


def test_headers_never_have_both_length_and_chunked() -> None:
    known = MultipartStream({}, {"f": b"x"})
    unknown = MultipartStream({}, {"f": ReadOnly(b"x")})
    assert set(known.headers()) == {"Content-Type", "Content-Length"}
    assert set(unknown.headers()) == {"Content-Type", "Transfer-Encoding"}
    assert unknown.headers()["Transfer-Encoding"] == "chunked"


# --- streaming --------------------------------------------------------------------------


def test_large_file_is_streamed_in_64k_reads(tmp_path: Path) -> None:
    size = 5 * 1024 * 1024 + 123
    path = tmp_path / "big.bin"
    path.write_bytes(os.urandom(size))
    with open(path, "rb") as raw:
        recorder = RecordingFile(raw)
        stream = MultipartStream({"a": "1"}, {"f": recorder}, boundary=b"B")
        length = stream.get_content_length()
        assert recorder.reads == []  # the length comes from fstat, not from reading

        digest = hashlib.sha256()
        total = 0
        for chunk in stream:
            assert len(chunk) <= CHUNK_SIZE + 1024  # never the whole file at once
            digest.update(chunk)
            total += len(chunk)

    assert total == length
    assert recorder.reads, "the file was never read"
    assert all(0 < n <= 65536 for n in recorder.reads)
    assert max(recorder.reads) == 65536
    expected = hashlib.sha256(
        b"--B\r\n"
        b'Content-Disposition: form-data; name="a"\r\n\r\n1\r\n'
        b"--B\r\n"
        b'Content-Disposition: form-data; name="f"; filename="big.bin"\r\n'
        b"Content-Type: application/octet-stream\r\n\r\n" + path.read_bytes() + b"\r\n--B--\r\n"
    )
    assert digest.hexdigest() == expected.hexdigest()


def test_unknown_length_file_is_chunked() -> None:
    stream = MultipartStream({"a": "1"}, {"f": ReadOnly(b"abc" * 50)}, boundary=b"B")
    assert stream.get_content_length() is None
    headers = stream.headers()
    assert headers["Transfer-Encoding"] == "chunked"
    assert "Content-Length" not in headers
    assert b"abc" * 50 + b"\r\n--B--\r\n" in b"".join(stream)


def test_text_returning_filelike_is_utf8_encoded() -> None:
    stream = MultipartStream({}, {"f": ("t.txt", ReadOnly("é漢"))}, boundary=b"B")
    assert "é漢".encode() + b"\r\n--B--\r\n" in b"".join(stream)


def test_pipe_is_sent_chunked() -> None:
    # httpx trusts fstat's st_size for any file descriptor; for a pipe it is not a
    # length, so requestx sends a pipe chunked.
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"from a pipe")
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        stream = MultipartStream({}, {"f": ("p.txt", pipe)}, boundary=b"B")
        assert stream.get_content_length() is None
        assert stream.headers()["Transfer-Encoding"] == "chunked"
        assert b"\r\n\r\nfrom a pipe\r\n--B--\r\n" in b"".join(stream)


def test_gzip_file_length_is_of_the_decompressed_bytes(tmp_path: Path) -> None:
    # httpx takes fstat's size of the compressed file here and announces a wrong
    # Content-Length; requestx measures the stream itself.
    path = tmp_path / "data.gz"
    payload = b"0123456789" * 20_000
    with gzip.open(path, "wb") as g:
        g.write(payload)
    with gzip.open(path, "rb") as g:
        stream = MultipartStream({}, {"f": ("d.bin", g)}, boundary=b"B")
        body = b"".join(stream)
        assert payload + b"\r\n--B--\r\n" in body
        assert stream.get_content_length() in (None, len(body))
        assert b"".join(stream) == body


def test_temporary_files(tmp_path: Path) -> None:
    with tempfile.SpooledTemporaryFile(max_size=1000) as spooled:
        spooled.write(b"spooled")
        spooled.seek(0)
        stream = MultipartStream({}, {"f": ("s", spooled)}, boundary=b"B")
        body = b"".join(stream)
        assert stream.get_content_length() == len(body)
        assert b"\r\n\r\nspooled\r\n" in body
        assert not spooled._rolled  # type: ignore[attr-defined]  # still in memory
    with tempfile.NamedTemporaryFile(dir=tmp_path, suffix=".csv") as named:
        named.write(b"1,2")
        named.seek(0)
        stream = MultipartStream({}, {"f": named}, boundary=b"B")
        body = b"".join(stream)
        assert stream.get_content_length() == len(body)
        assert b"Content-Type: text/csv\r\n\r\n1,2\r\n" in body


def test_in_memory_body_is_one_chunk() -> None:
    stream = MultipartStream({"a": "1", "b": ["2", "3"]}, {"f": ("x", b"y" * 100)})
    chunks = list(stream)
    assert len(chunks) == 1
    assert len(chunks[0]) == stream.get_content_length()


# --- re-iteration (redirects, auth retries) ----------------------------------------------


@pytest.mark.parametrize(
    "case", ["disk-file", "bytesio", "several-files", "data-and-files", "large-bytes-content"]
)
def test_reiteration_gives_identical_bytes(case: str, disk: Path) -> None:
    stream = ours(*CASES[case](disk))
    first = b"".join(stream)
    second = b"".join(stream)
    third = b"".join(stream)
    assert first == second == third
    assert stream.get_content_length() == len(first)


def test_reiteration_after_partial_read_rewinds(disk: Path) -> None:
    with open(disk / "photo.png", "rb") as f:
        stream = MultipartStream({}, {"f": f}, boundary=b"B")
        full = b"".join(stream)
        iterator = iter(stream)
        next(iterator)
        next(iterator)  # part of the file has been read
        del iterator
        f.read(100)  # and the caller moved it further
        assert b"".join(stream) == full


def test_file_is_rewound_to_its_starting_position() -> None:
    # httpx seeks file objects to 0; requestx rewinds them to where they were when
    # the stream was built, so an upload can start part-way into a file.
    f = io.BytesIO(b"HEADERpayload")
    f.seek(6)
    stream = MultipartStream({}, {"f": ("p.bin", f)}, boundary=b"B")
    body = b"".join(stream)
    assert b"\r\n\r\npayload\r\n--B--\r\n" in body
    assert b"HEADER" not in body
    assert stream.get_content_length() == len(body)
    assert b"".join(stream) == body


def test_disk_file_started_part_way(disk: Path) -> None:
    with open(disk / "photo.png", "rb") as f:
        f.seek(1000)
        stream = MultipartStream({}, {"f": f}, boundary=b"B")
        body = b"".join(stream)
        assert stream.get_content_length() == len(body)
        assert (disk / "photo.png").read_bytes()[1000:] + b"\r\n--B--\r\n" in body


def test_unseekable_file_is_not_rewound() -> None:
    stream = MultipartStream({}, {"f": ("u", ReadOnly(b"once"))}, boundary=b"B")
    assert b"once" in b"".join(stream)
    assert b"once" not in b"".join(stream)  # as in httpx: nothing left to send


# --- async -----------------------------------------------------------------------------


async def _collect(stream: MultipartStream) -> list[bytes]:
    return [chunk async for chunk in stream]


@pytest.mark.parametrize("case", ["data-and-files", "several-files", "read-only-filelike"])
def test_async_iteration_equals_sync(case: str, disk: Path) -> None:
    sync_stream = ours(*CASES[case](disk))
    async_stream = ours(*CASES[case](disk))
    sync_chunks = list(sync_stream)
    async_chunks = asyncio.run(_collect(async_stream))
    assert async_chunks == sync_chunks
    # and async re-iteration rewinds too (for seekable inputs)
    if case != "read-only-filelike":
        assert asyncio.run(_collect(async_stream)) == sync_chunks


def test_async_large_file(tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(os.urandom(3 * CHUNK_SIZE + 5))
    with open(path, "rb") as f:
        stream = MultipartStream({}, {"f": f}, boundary=b"B")
        assert b"".join(asyncio.run(_collect(stream))) == b"".join(stream)


def test_close_is_a_no_op_and_leaves_files_open() -> None:
    f = io.BytesIO(b"x")
    stream = MultipartStream({}, {"f": f})
    stream.close()
    asyncio.run(stream.aclose())
    assert not f.closed
    assert b"".join(stream)


def test_callers_headers_mapping_is_not_modified() -> None:
    # httpx adds Content-Type to the caller's dict; requestx works on a copy.
    extra = {"X-A": "1"}
    stream = MultipartStream({}, {"f": ("a.txt", b"x", None, extra)}, boundary=b"B")
    assert extra == {"X-A": "1"}
    assert b"X-A: 1\r\nContent-Type: text/plain\r\n" in b"".join(stream)


# --- invalid input: the same exception type as httpx --------------------------------------


def _httpx_error(data: typing.Any, files: typing.Any) -> type[BaseException]:
    try:
        request = httpx_request(data, files)
        b"".join(typing.cast(typing.Iterable[bytes], request.stream))
    except Exception as exc:
        return type(exc)
    raise AssertionError("httpx accepted the input")


def _closed_file() -> typing.Any:
    f = io.BytesIO(b"x")
    f.close()
    return f


INVALID: dict[str, typing.Callable[[], typing.Tuple[typing.Any, typing.Any]]] = {
    "data-name-int": lambda: ({1: "x"}, {"f": b"x"}),
    "data-value-dict": lambda: ({"a": {"x": 1}}, {"f": b"x"}),
    "data-value-object": lambda: ({"a": object()}, {"f": b"x"}),
    "data-value-bytearray": lambda: ({"a": bytearray(b"x")}, {"f": b"x"}),
    "data-value-nested-list": lambda: ({"a": [[1]]}, {"f": b"x"}),
    "data-value-list-of-dicts": lambda: ({"a": ["ok", {}]}, {"f": b"x"}),
    "file-name-int": lambda: ({}, {1: b"x"}),
    "file-stringio": lambda: ({}, {"f": io.StringIO("text")}),
    "file-stringio-in-tuple": lambda: ({}, {"f": ("a.txt", io.StringIO("text"))}),
    "file-text-mode": lambda: ({}, {"f": _open(__file__, "r")}),
    "file-text-mode-in-tuple": lambda: ({}, {"f": ("a.py", _open(__file__, "r"), "text/x-python")}),
    "file-tuple-1": lambda: ({}, {"f": ("a",)}),
    "file-tuple-5": lambda: ({}, {"f": ("a", b"x", None, {}, 5)}),
    "file-tuple-headers-none": lambda: ({}, {"f": ("a", b"x", None, None)}),
    "file-filename-int": lambda: ({}, {"f": (5, b"x")}),
    "file-value-none": lambda: ({}, {"f": None}),
    "file-value-int": lambda: ({}, {"f": 5}),
    "file-value-bytearray": lambda: ({}, {"f": bytearray(b"x")}),
    "file-value-in-tuple-none": lambda: ({}, {"f": ("a.txt", None)}),
    "files-list-not-pairs": lambda: ({}, [("f", b"x", "extra")]),
    "file-closed": lambda: ({}, {"f": _closed_file()}),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_input_raises_like_httpx(case: str) -> None:
    expected = _httpx_error(*INVALID[case]())
    # requestx raises when the stream is built (httpx raises some of these only once
    # the body is sent), with the same exception type.
    with pytest.raises(expected):
        ours(*INVALID[case]())


def test_invalid_messages() -> None:
    with pytest.raises(TypeError, match="Invalid type for name. Expected str"):
        MultipartStream({1: "x"}, {})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="Invalid type for value. Expected primitive type"):
        MultipartStream({"a": {"b": 1}}, {})
    with pytest.raises(TypeError, match="require 'io.BytesIO', not 'io.StringIO'"):
        MultipartStream({}, {"f": io.StringIO("x")})  # type: ignore[dict-item]
    with open(__file__) as text_file, pytest.raises(TypeError, match="binary mode"):
        MultipartStream({}, {"f": text_file})  # type: ignore[dict-item]
