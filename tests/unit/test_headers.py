"""Headers: differential tests against httpx (and h11 for parsing), strict validation."""

from __future__ import annotations

import pickle
import typing

import httpx
import pytest

from requestx._exceptions import LocalProtocolError
from requestx._models import Headers, Request

HEADER_INPUTS: list[typing.Any] = [
    None,
    {},
    {"Accept": "text/html", "X-Custom": "1"},
    {b"Accept": b"text/html", b"X-Bytes": b"\xff"},
    [("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("Accept", "x")],
    [(b"Vary", b"Accept"), (b"VARY", b"Cookie"), (b"Empty", b"")],
    [("Authorization", "Bearer x"), ("Proxy-Authorization", "Basic y"), ("a", "b")],
    [("Authorization", "x"), ("authorization", "y")],
    [(b"X-Utf8", "ü".encode()), (b"Y", b"plain")],
    [(b"X-Latin1", "é".encode("latin-1")), (b"X-Utf8", "ü".encode())],
    [("Content-Type", "text/plain; charset=utf-8"), ("Link", "<a>, <b>")],
]


def _views(headers: typing.Any) -> tuple[typing.Any, ...]:
    return (
        headers.raw,
        list(headers.keys()),
        list(headers.values()),
        list(headers.items()),
        headers.multi_items(),
        len(headers),
        list(headers),
        dict(headers),
        headers.encoding,
        repr(headers),
        headers.get("accept"),
        headers.get("ACCEPT", "default"),
        headers.get("missing", "default"),
        headers.get_list("set-cookie"),
        headers.get_list("vary", split_commas=True),
        headers.get_list("link", split_commas=True),
        "accept" in headers,
        "Set-Cookie" in headers,
        "missing" in headers,
        headers == headers.copy(),
        headers.copy().raw,
    )


@pytest.mark.parametrize("value", HEADER_INPUTS)
def test_headers_match_httpx(value: typing.Any) -> None:
    assert _views(Headers(value)) == _views(httpx.Headers(value))


@pytest.mark.parametrize("value", HEADER_INPUTS)
def test_headers_copied_from_headers_match_httpx(value: typing.Any) -> None:
    assert _views(Headers(Headers(value))) == _views(httpx.Headers(httpx.Headers(value)))


def test_explicit_encoding_matches_httpx() -> None:
    pairs = [("X-Name", "ü")]
    ours, theirs = Headers(pairs, encoding="utf-8"), httpx.Headers(pairs, encoding="utf-8")
    assert _views(ours) == _views(theirs)
    ours.encoding = theirs.encoding = "iso-8859-1"
    assert _views(ours) == _views(theirs)


MUTATIONS: list[tuple[str, tuple[typing.Any, ...]]] = [
    ("__setitem__", ("accept", "application/json")),
    ("__setitem__", ("Set-Cookie", "only")),
    ("__setitem__", ("New", "value")),
    ("__delitem__", ("set-cookie",)),
    ("__delitem__", ("ACCEPT",)),
    ("update", ({"Accept": "a", "Z": "z"},)),
    ("update", ([("set-cookie", "c=3"), ("set-cookie", "d=4")],)),
    ("update", (None,)),
    ("setdefault", ("accept", "ignored")),
    ("setdefault", ("fresh", "used")),
    ("pop", ("set-cookie",)),
    ("pop", ("missing", "fallback")),
    ("clear", ()),
]


@pytest.mark.parametrize(("method", "args"), MUTATIONS)
def test_mutations_match_httpx(method: str, args: tuple[typing.Any, ...]) -> None:
    start = [("Accept", "text/html"), ("Set-Cookie", "a=1"), ("X", "y"), ("set-cookie", "b=2")]
    ours, theirs = Headers(start), httpx.Headers(start)
    assert getattr(ours, method)(*args) == getattr(theirs, method)(*args)
    assert _views(ours) == _views(theirs)


def test_missing_keys_raise_key_error() -> None:
    headers = Headers({"a": "1"})
    with pytest.raises(KeyError):
        headers["b"]
    with pytest.raises(KeyError):
        del headers["b"]


def test_equality_with_other_shapes() -> None:
    headers = Headers([("A", "1"), ("b", "2")])
    assert headers == {"a": "1", "B": "2"}
    assert headers == [("b", "2"), ("a", "1")]
    assert headers == httpx.Headers({"a": "1", "b": "2"}).raw
    assert headers != {"a": "1"}
    assert headers != 1
    assert headers != {"a": "1\r\n"}  # an invalid value is just unequal


def test_non_ascii_names_without_encoding_raise_like_httpx() -> None:
    with pytest.raises(UnicodeEncodeError):
        httpx.Headers({"X": "ü"})
    with pytest.raises(UnicodeEncodeError):
        Headers({"X": "ü"})


def test_value_types_are_checked() -> None:
    with pytest.raises(TypeError):
        Headers({"X": 1})  # type: ignore[arg-type]


def test_lookup_with_unencodable_key_is_a_miss() -> None:
    headers = Headers({"a": "1"})
    assert headers.get("ü") is None
    assert "ü" not in headers


def test_bytes_keys_are_accepted_for_lookup() -> None:
    headers = Headers({"Content-Type": "text/plain"})
    assert headers.get(b"content-type") == "text/plain"  # type: ignore[arg-type]
    assert typing.cast(typing.Any, b"CONTENT-TYPE") in headers


def test_headers_pickle() -> None:
    headers = Headers([("A", "1"), ("a", "2")])
    assert pickle.loads(pickle.dumps(headers)).raw == headers.raw
    lazy = Headers._from_raw_block(b"HTTP/1.1 200 OK\r\nA: 1\r\n\r\n")
    assert pickle.loads(pickle.dumps(lazy)).raw == [(b"A", b"1")]


# --- Strict validation ---------------------------------------------------------------

BAD_VALUES = ["a\r\nX-Injected: 1", "a\rb", "a\nb", "a\x00b", "\r\n", "\n"]
BAD_NAMES = ["X-A\r\n", "X\nA", "X\x00", "X:A", "X A", "X\tA", "", " X", "X "]


@pytest.mark.parametrize("value", BAD_VALUES)
def test_bad_values_are_rejected_everywhere(value: str) -> None:
    with pytest.raises(LocalProtocolError):
        Headers({"X-A": value})
    with pytest.raises(LocalProtocolError):
        Headers([(b"X-A", value.encode())])
    with pytest.raises(LocalProtocolError):
        Headers()["X-A"] = value
    with pytest.raises(LocalProtocolError):
        Headers().update({"X-A": value})
    with pytest.raises(LocalProtocolError):
        Headers().setdefault("X-A", value)
    with pytest.raises(LocalProtocolError):
        Request("GET", "http://h/", headers={"X-A": value})


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_rejected_everywhere(name: str) -> None:
    with pytest.raises(LocalProtocolError):
        Headers({name: "v"})
    with pytest.raises(LocalProtocolError):
        Headers([(name.encode(), b"v")])
    with pytest.raises(LocalProtocolError):
        Headers()[name] = "v"
    with pytest.raises(LocalProtocolError):
        Request("GET", "http://h/", headers=[(name, "v")])


def test_rejection_leaves_headers_unchanged() -> None:
    headers = Headers({"A": "1"})
    with pytest.raises(LocalProtocolError):
        headers["A"] = "2\r\n"
    assert headers.raw == [(b"A", b"1")]


def test_httpx_is_lax_where_we_are_strict() -> None:
    # Documents why the checks exist: httpx accepts these at construction time.
    assert httpx.Headers({"X-A": "a\r\nX-Injected: 1"})["x-a"] == "a\r\nX-Injected: 1"


# --- Raw header blocks ---------------------------------------------------------------


def _h11_headers(block: bytes) -> list[tuple[bytes, bytes]]:
    """How h11 (httpx's HTTP/1.1 parser) reads the same response head."""
    h11 = pytest.importorskip("h11")
    connection = h11.Connection(h11.CLIENT)
    connection.send(h11.Request(method="GET", target="/", headers=[("Host", "h")]))
    connection.receive_data(block)
    while True:
        event = connection.next_event()
        if isinstance(event, h11.Response):
            return list(event.headers.raw_items())


VALID_BLOCKS = [
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nA:1\r\nB:   spaced   \r\nC:\r\nD: \t tabbed\t\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nSET-COOKIE: c=3\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Fold: first\r\n  second\r\n\tthird\r\nY: z\r\n\r\n",
    b"HTTP/1.1 404 Not Found\nBare: lf\nOther: x\n\n",
    b"HTTP/1.0 200 OK\r\nX: a:b:c\r\nY: http://h:80/\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX-Bytes: \xff\xfe\r\nX-Utf8: \xc3\xbc\r\n\r\n",
    b"HTTP/1.1 500 Error: with colon\r\nA: 1\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\n\r\n",
]


@pytest.mark.parametrize("block", VALID_BLOCKS)
def test_raw_block_parsing_matches_h11(block: bytes) -> None:
    assert Headers._from_raw_block(block).raw == _h11_headers(block)


@pytest.mark.parametrize("block", VALID_BLOCKS)
def test_raw_block_views_match_httpx(block: bytes) -> None:
    ours = Headers._from_raw_block(block)
    theirs = httpx.Headers(_h11_headers(block))
    assert _views(ours) == _views(theirs)


def test_raw_block_is_parsed_lazily() -> None:
    headers = Headers._from_raw_block(b"HTTP/1.1 200 OK\r\nA: 1\r\n\r\n")
    assert headers._list is None
    assert headers.encoding == "ascii"  # an ASCII block needs no parse for this
    assert headers._list is None
    assert headers["a"] == "1"
    assert headers._list == [(b"A", b"a", b"1")]


def test_http2_status_line_and_no_final_crlf() -> None:
    headers = Headers._from_raw_block(b"HTTP/2 200 \r\ncontent-type: text/html\r\nx-a: 1")
    assert headers.raw == [(b"content-type", b"text/html"), (b"x-a", b"1")]


def test_interim_responses_are_dropped() -> None:
    block = (
        b"HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n"
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
    )
    assert Headers._from_raw_block(block).raw == [(b"Content-Type", b"text/plain")]


def test_proxy_connect_response_is_dropped() -> None:
    block = (
        b"HTTP/1.1 200 Connection established\r\nProxy-Agent: squid\r\n\r\n"
        b"HTTP/2 200 \r\nserver: origin\r\n\r\n"
    )
    assert Headers._from_raw_block(block).raw == [(b"server", b"origin")]


def test_trailers_after_the_final_block_are_ignored() -> None:
    block = b"HTTP/1.1 200 OK\r\nA: 1\r\n\r\nX-Trailer: t\r\n\r\n"
    assert Headers._from_raw_block(block).raw == [(b"A", b"1")]


def test_lone_cr_does_not_split_a_header() -> None:
    # A line ends at LF only; otherwise "X: a\rEvil: 1" would become two headers.
    headers = Headers._from_raw_block(b"HTTP/1.1 200 OK\r\nX: a\rEvil: 1\r\n\r\n")
    assert headers.raw == [(b"X", b"a\rEvil: 1")]
    assert "evil" not in headers


def test_a_folded_line_is_stripped_as_a_first_line_is() -> None:
    # Found by fuzz/python/headers_fuzzer.py: a CR after the fold's space was kept, and a
    # fold of whitespace only left a space at the end.
    block = b"HTTP/1.1 200 OK\r\nX: \ra\r\n \rb\r\n\r\n"
    assert Headers._from_raw_block(block).raw == [(b"X", b"a b")]
    block = b"HTTP/1.1 200 OK\r\nX: a\r\n \t\r\n\r\n"  # a fold of whitespace only
    assert Headers._from_raw_block(block).raw == [(b"X", b"a")]


def test_malformed_lines_are_skipped() -> None:
    block = b"HTTP/1.1 200 OK\r\n  leading fold\r\nno colon here\r\nA: 1\r\n\r\n"
    assert Headers._from_raw_block(block).raw == [(b"A", b"1")]


def test_empty_and_status_only_blocks() -> None:
    assert Headers._from_raw_block(b"").raw == []
    assert Headers._from_raw_block(b"HTTP/1.1 200 OK\r\n\r\n").raw == []
    assert len(Headers._from_raw_block(b"HTTP/1.1 200 OK\r\n")) == 0


def test_block_without_status_line_is_all_headers() -> None:
    assert Headers._from_raw_block(b"A: 1\r\nB: 2\r\n").raw == [(b"A", b"1"), (b"B", b"2")]


def test_lazy_headers_support_mutation() -> None:
    headers = Headers._from_raw_block(b"HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n")
    headers["a"] = "3"
    del headers["B"]
    headers["C"] = "4"
    assert headers.raw == [(b"a", b"3"), (b"C", b"4")]


def test_copy_of_unparsed_block_is_independent() -> None:
    original = Headers._from_raw_block(b"HTTP/1.1 200 OK\r\nA: 1\r\n\r\n")
    copy = original.copy()
    copy["A"] = "2"
    assert original["a"] == "1" and copy["a"] == "2"


def test_from_trusted_list() -> None:
    headers = Headers._from_trusted_list([(b"User-Agent", b"x"), (b"Accept", b"*/*")])
    assert headers.raw == [(b"User-Agent", b"x"), (b"Accept", b"*/*")]
    assert headers["user-agent"] == "x"
    assert headers == httpx.Headers({"User-Agent": "x", "Accept": "*/*"}).raw
