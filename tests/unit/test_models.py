"""Request, Response, Cookies and body encoding: differential tests against httpx."""

from __future__ import annotations

import datetime
import doctest
import gzip
import importlib
import inspect
import io
import json
import pickle
import typing
import zlib
from http.cookiejar import CookieJar

import httpx
import pytest

from requestx._content import encode_json, encode_request
from requestx._exceptions import (
    CookieConflict,
    DecodingError,
    HTTPStatusError,
    LocalProtocolError,
    RequestNotRead,
    ResponseNotRead,
    StreamConsumed,
)
from requestx._hotpath import engine_response
from requestx._models import Cookies, Headers, Request, Response
from requestx._urls import URL

# --- Request -------------------------------------------------------------------------

REQUEST_CASES: list[tuple[str, str, dict[str, typing.Any]]] = [
    ("GET", "http://example.com/", {}),
    ("get", "https://example.com:8443/a?b=1", {}),
    ("HEAD", "http://[::1]:8080/", {}),
    ("POST", "http://h/", {}),
    ("PUT", "http://h/", {"content": b""}),
    ("PATCH", "http://h/", {"content": "text ü"}),
    ("DELETE", "http://h/", {"content": b"bytes"}),
    ("GET", "http://h/", {"content": b"body on a GET"}),
    ("POST", "http://h/", {"data": {"a": "1", "b": ["2", "3"], "c": True, "d": None}}),
    ("POST", "http://h/", {"data": {"q": "a b&c=d", "u": "ü"}}),
    ("POST", "http://h/", {"data": {}}),
    ("POST", "http://h/", {"json": {"a": 1, "b": [1.5, None, True], "c": "é"}}),
    ("POST", "http://h/", {"json": [1, "two", {"3": 4}]}),
    ("POST", "http://h/", {"json": "just a string"}),
    ("POST", "http://h/", {"json": 0}),
    ("POST", "http://h/", {"json": {"big": 2**70, 1: "int key"}}),
    ("POST", "http://h/", {"json": {"a": 1}, "headers": {"Content-Type": "application/x+json"}}),
    ("POST", "http://h/", {"content": b"x", "headers": {"Content-Length": "1"}}),
    ("GET", "http://h/", {"params": {"y": "2", "z": ["3", "4"]}}),
    ("GET", "http://h/", {"params": "a=1&b=2"}),
    ("GET", "http://h/", {"headers": {"Host": "override.example"}}),
    ("GET", "http://h/", {"headers": [("Accept", "a"), ("accept", "b")]}),
    ("GET", "http://müller.de/", {}),
    ("GET", "http://h/", {"cookies": {"session": "abc", "theme": "dark"}}),
    ("GET", "http://h/", {"cookies": [("a", "1")], "headers": {"X": "y"}}),
    ("GET", "http://h/", {"extensions": {"timeout": {"read": 1.0}}}),
]


def _request_view(request: typing.Any) -> tuple[typing.Any, ...]:
    return (
        request.method,
        str(request.url),
        request.headers.raw,
        request.content,
        request.extensions,
        repr(request),
    )


def test_request_with_a_users_chunked_header_gets_no_computed_length() -> None:
    # docs/differences.md: httpx's Request carries both framing headers here (and h11 sends
    # them); RFC 9112 section 6.2 forbids a sender to, so requestx keeps only the caller's.
    request = Request("POST", "http://h/", content=b"x", headers={"Transfer-Encoding": "chunked"})
    assert request.headers.get_list("transfer-encoding") == ["chunked"]
    assert "content-length" not in request.headers
    theirs = httpx.Request(
        "POST", "http://h/", content=b"x", headers={"Transfer-Encoding": "chunked"}
    )
    assert theirs.headers["content-length"] == "1"  # the difference, pinned


@pytest.mark.parametrize(("method", "url", "kwargs"), REQUEST_CASES)
def test_request_matches_httpx(method: str, url: str, kwargs: dict[str, typing.Any]) -> None:
    ours = Request(method, url, **kwargs)
    theirs = httpx.Request(method, url, **kwargs)
    assert _request_view(ours) == _request_view(theirs)
    assert ours.read() == theirs.read()
    assert list(ours.stream) == list(typing.cast(typing.Iterable[bytes], theirs.stream))


def test_request_with_url_object_and_headers_object() -> None:
    url = URL("http://h/x")
    headers = Headers({"A": "1"})
    request = Request("GET", url, headers=headers)
    assert request.url is url  # URLs are immutable: shared, not copied
    assert request.headers is not headers  # headers are mutable: copied
    request.headers["B"] = "2"
    assert "b" not in headers


def test_deprecated_raw_data_matches_httpx() -> None:
    with pytest.warns(DeprecationWarning):
        ours = Request("POST", "http://h/", data=b"raw")  # type: ignore[arg-type]
    with pytest.warns(DeprecationWarning):
        theirs = httpx.Request("POST", "http://h/", data=b"raw")  # type: ignore[arg-type]
    assert _request_view(ours) == _request_view(theirs)


def test_json_matches_stdlib_compact_encoding() -> None:
    values: list[typing.Any] = [
        {"a": 1, "nested": {"list": [1, 2.5, None, False]}},
        ["ü", "\u2028", "emoji 🎉", 'quote " and \\ backslash'],
        {"float": 0.1, "neg": -3, "max": 2**63 - 1},
    ]
    for value in values:
        expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert encode_json(value) == expected.encode()


def test_json_float_exponents_are_spelled_the_orjson_way() -> None:
    # A deliberate difference: orjson writes 1e-7 where the stdlib writes 1e-07.
    # Both are valid JSON for the same number.
    assert encode_json({"exp": 1e-7}) == b'{"exp":1e-7}'
    assert json.loads(encode_json({"exp": 1e-7})) == {"exp": 1e-7}


def test_json_nan_becomes_null() -> None:
    # A deliberate difference (orjson's behaviour): httpx raises ValueError here.
    assert encode_json([float("nan"), float("inf")]) == b"[null,null]"
    with pytest.raises(ValueError):
        httpx.Request("POST", "http://h/", json=[float("nan")])


def test_json_errors_match_httpx_for_unserialisable_values() -> None:
    with pytest.raises(TypeError):
        encode_json({"a": object()})
    with pytest.raises(TypeError):
        httpx.Request("POST", "http://h/", json={"a": object()})


def test_encode_request_returns_no_body_when_there_is_none() -> None:
    assert encode_request() == ([], None)
    assert encode_request(json={"a": 1}) == (
        [(b"Content-Length", b"7"), (b"Content-Type", b"application/json")],
        b'{"a":1}',
    )


def test_streamed_and_multipart_bodies_have_httpx_headers() -> None:
    import httpx

    boundary = {"Content-Type": "multipart/form-data; boundary=b0undary"}

    def cases() -> list[dict[str, typing.Any]]:  # fresh iterators and files for each side
        return [
            {"content": iter([b"a", b"b"])},
            {"content": io.BytesIO(b"file contents")},
            {"files": {"f": b"data"}, "headers": boundary},
            {
                "files": {"f": ("a.txt", b"data", "text/plain")},
                "data": {"k": "v"},
                "headers": boundary,
            },
        ]

    for ours_case, theirs_case in zip(cases(), cases()):
        ours = Request("POST", "http://h/", **ours_case)
        theirs = httpx.Request("POST", "http://h/", **theirs_case)
        assert ours.headers.multi_items() == theirs.headers.multi_items(), ours_case
        assert ours.read() == theirs.read(), ours_case
    # Empty files are ignored, as in httpx.
    assert Request("POST", "http://h/", files={}).content == b""


@pytest.mark.parametrize("method", ["GET /admin HTTP/1.1\r\n", "GET\n", "GE T", "", "GET\x00"])
def test_invalid_methods_are_rejected(method: str) -> None:
    with pytest.raises(LocalProtocolError):
        Request(method, "http://h/")


def test_request_with_explicit_stream() -> None:
    request = Request("POST", "http://h/", stream=[b"a", b"b"], headers={"X": "1"})
    assert request.headers.raw == [(b"X", b"1")]  # no automatic headers
    with pytest.raises(RequestNotRead):
        _ = request.content
    assert request.read() == b"ab"
    assert request.content == b"ab"
    assert list(request.stream) == [b"ab"]


@pytest.mark.anyio
async def test_request_aread() -> None:
    async def chunks() -> typing.AsyncIterator[bytes]:
        yield b"a"
        yield b"b"

    request = Request("POST", "http://h/", stream=chunks())
    assert await request.aread() == b"ab"


def test_request_pickle() -> None:
    request = Request("POST", "http://h/", json={"a": 1}, extensions={"x": 1})
    copy = pickle.loads(pickle.dumps(request))
    assert _request_view(copy)[:4] == _request_view(request)[:4]
    assert copy.extensions == {}


# --- Response: hand-built ------------------------------------------------------------

RESPONSE_CASES: list[tuple[int, dict[str, typing.Any]]] = [
    (200, {}),
    (200, {"content": b"bytes"}),
    (200, {"content": "text ü"}),
    (201, {"text": "plain ü"}),
    (200, {"html": "<p>ü</p>"}),
    (200, {"json": {"a": [1, 2], "b": "é"}}),
    (204, {"headers": {"X": "y"}}),
    (200, {"content": b"x", "headers": {"Content-Length": "1"}}),
    (200, {"content": "caf\xe9".encode("latin-1"), "headers": {"Content-Type": "text/plain"}}),
    (
        200,
        {
            "content": "café".encode("latin-1"),
            "headers": {"Content-Type": "text/plain; charset=latin-1"},
        },
    ),
    (
        200,
        {
            "content": "café".encode("cp1252"),
            "headers": {"Content-Type": 'text/plain; charset="CP1252"'},
        },
    ),
    (200, {"content": b"x", "headers": {"Content-Type": "text/plain; charset=nonsense"}}),
    (200, {"content": b"x", "headers": {"Content-Type": "text/plain; charset="}}),
    (
        200,
        {
            "content": "ü".encode("utf-16"),
            "headers": {"Content-Type": "text/plain; Charset=UTF-16"},
        },
    ),
    (200, {"content": b"\xff\xfe broken utf8 \xc3"}),
    (200, {"content": b"x", "default_encoding": "latin-1"}),
    (200, {"content": "é".encode("latin-1"), "default_encoding": lambda b: "latin-1"}),
    (299, {}),
    (418, {}),
    (599, {}),
    (999, {}),
    (200, {"extensions": {"http_version": b"HTTP/2", "reason_phrase": b"Fine"}}),
    (200, {"extensions": {"reason_phrase": b""}}),
    (302, {"headers": {"Location": "/next"}}),
    (302, {}),
    (304, {"headers": {"Location": "/x"}}),
    (
        200,
        {"headers": {"Link": '<https://x/?page=2>; rel="next", <https://x/?page=9>; rel=last'}},
    ),
    (200, {"headers": {"Link": "<https://x/a>; title=no-rel"}}),
    (200, {"headers": {"Link": ""}}),
]


def _response_view(response: typing.Any) -> tuple[typing.Any, ...]:
    return (
        response.status_code,
        response.reason_phrase,
        response.http_version,
        response.headers.raw,
        response.content,
        response.text,
        response.encoding,
        response.charset_encoding,
        response.is_informational,
        response.is_success,
        response.is_redirect,
        response.is_client_error,
        response.is_server_error,
        response.is_error,
        response.has_redirect_location,
        response.links,
        response.num_bytes_downloaded,
        response.is_closed,
        response.is_stream_consumed,
        response.history,
        response.next_request,
        repr(response),
    )


@pytest.mark.parametrize(("status", "kwargs"), RESPONSE_CASES)
def test_response_matches_httpx(status: int, kwargs: dict[str, typing.Any]) -> None:
    ours = Response(status, **kwargs)
    theirs = httpx.Response(status, **kwargs)
    assert _response_view(ours) == _response_view(theirs)
    assert list(ours.iter_bytes()) == list(theirs.iter_bytes())
    assert list(ours.iter_bytes(3)) == list(theirs.iter_bytes(3))
    assert list(ours.iter_text(2)) == list(theirs.iter_text(2))
    assert list(ours.iter_lines()) == list(theirs.iter_lines())


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1}',
        b"[1, 2.5, null]",
        b'"\\u00fc"',
        b"NaN",
        b"[Infinity, -Infinity]",
        b"18446744073709551615",
        b"-9223372036854775808",
        '{"utf16": "ü"}'.encode("utf-16"),
        '{"bom": 1}'.encode("utf-8-sig"),
    ],
)
def test_response_json_matches_httpx(body: bytes) -> None:
    ours, theirs = Response(200, content=body).json(), httpx.Response(200, content=body).json()
    assert json.dumps(ours) == json.dumps(theirs)


@pytest.mark.parametrize("body", [b"", b"{", b"nope", b'{"a": 1} trailing'])
def test_response_json_errors_match_httpx(body: bytes) -> None:
    with pytest.raises(json.JSONDecodeError):
        httpx.Response(200, content=body).json()
    with pytest.raises(json.JSONDecodeError):
        Response(200, content=body).json()


def test_response_json_beyond_64_bit_integers() -> None:
    # A deliberate difference: orjson reads integers beyond 64 bits as floats (the
    # stdlib keeps them exact). Passing any keyword argument selects the stdlib.
    body = b"123456789012345678901234567890"
    assert Response(200, content=body).json() == float(body)
    assert Response(200, content=body).json(parse_int=int) == int(body)


def test_response_json_kwargs_use_the_stdlib() -> None:
    response = Response(200, content=b'{"a": 1.5}')
    assert response.json(parse_float=str) == {"a": "1.5"}


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (100, {}),
        (301, {"Location": "https://x/"}),
        (303, {}),
        (404, {}),
        (500, {}),
        (503, {"Location": "/ignored"}),
        (600, {}),
    ],
)
def test_raise_for_status_matches_httpx(status: int, headers: dict[str, str]) -> None:
    ours = Response(status, headers=headers, request=Request("GET", "http://h/p?q=1"))
    theirs = httpx.Response(status, headers=headers, request=httpx.Request("GET", "http://h/p?q=1"))
    with pytest.raises(httpx.HTTPStatusError) as expected:
        theirs.raise_for_status()
    with pytest.raises(HTTPStatusError) as raised:
        ours.raise_for_status()
    assert str(raised.value) == str(expected.value)
    assert raised.value.response is ours
    assert raised.value.request is ours.request


def test_raise_for_status_success_and_missing_request() -> None:
    response = Response(200, request=Request("GET", "http://h/"))
    assert response.raise_for_status() is response
    with pytest.raises(RuntimeError):
        Response(200).raise_for_status()
    with pytest.raises(RuntimeError):
        _ = Response(200).request
    with pytest.raises(RuntimeError):
        _ = Response(200).url


def test_encoding_setter_rules_match_httpx() -> None:
    for cls in (Response, httpx.Response):
        response = cls(200, content="é".encode("latin-1"))
        response.encoding = "latin-1"
        assert response.text == "é"
        with pytest.raises(ValueError):
            response.encoding = "utf-8"


def test_elapsed() -> None:
    with pytest.raises(RuntimeError):
        _ = Response(200).elapsed
    response = Response(200)
    response.elapsed = datetime.timedelta(seconds=2)
    assert response.elapsed.total_seconds() == 2


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw-deflate", "gzip, deflate", "identity"])
def test_content_encoding_is_undone_like_httpx(coding: str) -> None:
    payload = b"hello " * 50
    body, header = payload, coding
    if coding == "gzip":
        body = gzip.compress(payload)
    elif coding == "deflate":
        body = zlib.compress(payload)
    elif coding == "raw-deflate":
        compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body, header = compressor.compress(payload) + compressor.flush(), "deflate"
    elif coding == "gzip, deflate":
        body = zlib.compress(gzip.compress(payload))
    headers = {"Content-Encoding": header}
    ours = Response(200, content=body, headers=headers)
    theirs = httpx.Response(200, content=body, headers=headers)
    assert ours.content == theirs.content == payload
    assert ours.num_bytes_downloaded == theirs.num_bytes_downloaded


def test_broken_content_encoding_raises_decoding_error() -> None:
    with pytest.raises(httpx.DecodingError):
        httpx.Response(200, content=b"not gzip", headers={"Content-Encoding": "gzip"})
    with pytest.raises(DecodingError):
        Response(200, content=b"not gzip", headers={"Content-Encoding": "gzip"})


def test_streamed_hand_built_response() -> None:
    response = Response(200, content=iter([b"ab", b"cd"]))
    assert response.headers["transfer-encoding"] == "chunked"
    assert not response.is_stream_consumed
    with pytest.raises(ResponseNotRead):
        _ = response.content
    assert response.read() == b"abcd"
    assert response.is_closed and response.is_stream_consumed
    theirs = httpx.Response(200, content=iter([b"ab", b"cd"]))
    theirs.read()
    assert response.num_bytes_downloaded == theirs.num_bytes_downloaded == 4
    with pytest.raises(StreamConsumed):
        list(response.iter_raw())


def test_iter_raw_on_unread_stream() -> None:
    response = Response(200, stream=[b"abc", b"def"])
    assert list(response.iter_raw(4)) == [b"abcd", b"ef"]
    assert response.is_closed


@pytest.mark.anyio
async def test_async_reading() -> None:
    async def chunks() -> typing.AsyncIterator[bytes]:
        yield b'{"a": '
        yield b"1}"

    response = Response(200, content=chunks())
    assert await response.aread() == b'{"a": 1}'
    assert response.json() == {"a": 1}
    assert [chunk async for chunk in response.aiter_bytes(3)] == [b'{"a', b'": ', b"1}"]
    assert [line async for line in response.aiter_lines()] == ['{"a": 1}']
    assert [text async for text in response.aiter_text()] == ['{"a": 1}']
    await response.aclose()


def test_response_cookies_match_httpx() -> None:
    headers = [("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=2; Domain=h.example")]
    ours = Response(200, headers=headers, request=Request("GET", "http://h.example/"))
    theirs = httpx.Response(200, headers=headers, request=httpx.Request("GET", "http://h.example/"))
    assert dict(ours.cookies) == dict(theirs.cookies) == {"a": "1", "b": "2"}
    assert repr(ours.cookies) == repr(theirs.cookies)


def test_response_pickle() -> None:
    response = Response(200, json={"a": 1}, request=Request("GET", "http://h/"))
    copy = pickle.loads(pickle.dumps(response))
    assert _response_view(copy)[:6] == _response_view(response)[:6]
    assert copy.json() == {"a": 1}
    assert copy.is_closed


# --- Response: from the engine -------------------------------------------------------

BLOCK = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
    b"Content-Length: 17\r\nSet-Cookie: s=1; Path=/\r\n\r\n"
)


def _engine_response(
    body: typing.Any = b'{"hello":"world"}',
    block: bytes = BLOCK,
    status: int = 200,
    version: str = "HTTP/1.1",
) -> Response:
    request = Request("GET", "http://h.example/p")
    return engine_response(request, (status, version, block, body, 0.0125, 0), None)


def test_engine_response_basics() -> None:
    response = _engine_response()
    assert response.status_code == 200
    assert response.reason_phrase == "OK"
    assert response.http_version == "HTTP/1.1"
    assert response.extensions == {"http_version": b"HTTP/1.1", "reason_phrase": b"OK"}
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.encoding == "utf-8"
    assert response.text == '{"hello":"world"}'
    assert response.json() == {"hello": "world"}
    assert response.url == "http://h.example/p"
    assert response.elapsed == datetime.timedelta(seconds=0.0125)
    assert response.history == []
    assert response.next_request is None
    assert response.is_closed and response.is_stream_consumed
    assert response.num_bytes_downloaded == 17
    assert response.cookies["s"] == "1"
    assert response.read() == b'{"hello":"world"}'
    assert repr(response) == "<Response [200 OK]>"
    response.close()


def test_engine_response_is_lazy() -> None:
    response = _engine_response()
    assert response._headers is None  # headers are parsed on first use only
    assert response._content is None
    assert response._extensions is None


def test_engine_json_parses_the_buffer_without_copying() -> None:
    buffer = memoryview(bytearray(b'{"a": [1, 2]}')).toreadonly()
    response = _engine_response(body=buffer)
    assert response.json() == {"a": [1, 2]}
    assert response._content is None  # no bytes copy was made
    assert response.content == b'{"a": [1, 2]}'
    assert type(response.content) is bytes
    assert response._body is response.content  # the engine buffer is released


def test_engine_json_fallback_and_kwargs() -> None:
    assert _engine_response(body=memoryview(b"[NaN]")).json()[0] != 0  # NaN via stdlib
    assert _engine_response(body=memoryview(b'{"x": 1.5}')).json(parse_float=str) == {"x": "1.5"}


def test_engine_reason_phrase_for_http2_and_empty_reasons() -> None:
    # HTTP/2 has no status line: the standard phrase, as httpx. HTTP/1.1 without a reason: the
    # empty reason the server sent, as httpx.
    http2 = _engine_response(block=b"HTTP/2 404 \r\n\r\n", status=404, version="HTTP/2")
    assert http2.reason_phrase == "Not Found"
    assert "reason_phrase" not in http2.extensions
    assert _engine_response(block=b"HTTP/1.1 404\r\n\r\n", status=404).reason_phrase == ""
    assert _engine_response(block=b"HTTP/1.1 404 \r\n\r\n", status=404).reason_phrase == ""
    custom = _engine_response(block=b"HTTP/1.1 200 Very Fine \r\n\r\n")
    assert custom.reason_phrase == "Very Fine"
    assert _engine_response(block=b"HTTP/2 200 \r\n\r\n", version="HTTP/2").http_version == "HTTP/2"


def test_engine_response_after_interim_responses() -> None:
    block = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nLocation: /new\r\n\r\n"
    response = _engine_response(block=block, status=201)
    assert response.reason_phrase == "Created"
    assert response.headers.raw == [(b"Location", b"/new")]


def test_engine_error_response() -> None:
    block = b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://h.example/new\r\n\r\n"
    response = _engine_response(block=block, status=301, body=b"")
    assert response.has_redirect_location
    with pytest.raises(HTTPStatusError) as raised:
        response.raise_for_status()
    assert "Redirect location: 'https://h.example/new'" in str(raised.value)
    assert response.text == ""


def test_engine_response_pickle() -> None:
    response = _engine_response(body=memoryview(b'{"a": 1}'))
    copy = pickle.loads(pickle.dumps(response))
    assert copy.json() == {"a": 1}
    assert copy.headers.raw == response.headers.raw
    assert copy.reason_phrase == "OK"


def test_engine_response_attributes_are_settable() -> None:
    response = _engine_response()
    previous = _engine_response()
    response.history = [previous]
    response.headers = Headers({"X": "1"})
    response.request = Request("GET", "http://other/")
    response.extensions = {"http_version": b"HTTP/1.1"}
    response.default_encoding = "latin-1"
    assert response.history == [previous]
    assert response.headers["x"] == "1"
    assert response.url == "http://other/"


# --- Cookies -------------------------------------------------------------------------


def _cookie_view(cookies: typing.Any) -> tuple[typing.Any, ...]:
    return (dict(cookies), len(cookies), bool(cookies), sorted(cookies), repr(cookies))


@pytest.mark.parametrize(
    "value",
    [None, {}, {"a": "1", "b": "2"}, [("a", "1"), ("c", "3")]],
)
def test_cookies_match_httpx(value: typing.Any) -> None:
    ours, theirs = Cookies(value), httpx.Cookies(value)
    assert _cookie_view(ours) == _cookie_view(theirs)
    for cookies in (ours, theirs):
        cookies.set("d", "4", domain="example.org", path="/x")
        cookies["e"] = "5"
    assert _cookie_view(ours) == _cookie_view(theirs)
    assert ours.get("d", domain="example.org") == theirs.get("d", domain="example.org")
    for cookies in (ours, theirs):
        cookies.delete("d")
        del cookies["e"]
    assert _cookie_view(ours) == _cookie_view(theirs)
    assert _cookie_view(Cookies(ours)) == _cookie_view(httpx.Cookies(theirs))


def test_cookie_conflict_and_missing() -> None:
    cookies = Cookies()
    cookies.set("a", "1", domain="x.example")
    cookies.set("a", "2", domain="y.example")
    with pytest.raises(CookieConflict):
        cookies.get("a")
    assert cookies.get("a", domain="y.example") == "2"
    with pytest.raises(KeyError):
        Cookies()["missing"]


def test_cookies_clear_and_update() -> None:
    cookies = Cookies({"a": "1"})
    cookies.set("b", "2", domain="x.example")
    cookies.clear(domain="x.example")
    assert dict(cookies) == {"a": "1"}
    cookies.update({"c": "3"})
    assert dict(cookies) == {"a": "1", "c": "3"}
    cookies.clear()
    assert not cookies and len(cookies) == 0
    with pytest.raises(ValueError):
        cookies.clear(path="/")


def test_set_cookie_header_matches_httpx() -> None:
    ours, theirs = Request("GET", "http://h.example/"), httpx.Request("GET", "http://h.example/")
    Cookies({"a": "1", "b": "2"}).set_cookie_header(ours)
    httpx.Cookies({"a": "1", "b": "2"}).set_cookie_header(theirs)
    assert ours.headers.raw == theirs.headers.raw


def test_empty_jar_is_cheap_and_correct() -> None:
    cookies = Cookies()
    assert not cookies and len(cookies) == 0
    request = Request("GET", "http://h/")
    cookies.set_cookie_header(request)
    assert "cookie" not in request.headers
    # A jar emptied by clear() keeps empty nested dicts: still correctly empty.
    cookies.set("a", "1", domain="h.local")
    cookies.delete("a")
    assert not cookies and len(cookies) == 0
    cookies.set_cookie_header(request)
    assert "cookie" not in request.headers


def test_cookies_wrap_a_given_jar() -> None:
    jar = CookieJar()
    cookies = Cookies(jar)
    cookies["a"] = "1"
    assert cookies.jar is jar and len(jar) == 1


def test_extract_cookies_skips_responses_without_set_cookie() -> None:
    cookies = Cookies()
    response = _engine_response(block=b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
    cookies.extract_cookies(response)
    assert not cookies
    cookies.extract_cookies(_engine_response())
    assert dict(cookies) == {"s": "1"}


# --- Documentation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "module_name",
    [
        "requestx._urls",
        "requestx._models",
        "requestx._content",
        "requestx._config",
        "requestx._status_codes",
    ],
)
def test_docstring_examples_run(module_name: str) -> None:
    module = importlib.import_module(module_name)
    flags = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL
    runner = doctest.DocTestRunner(optionflags=flags)
    for test in _DefinedInModuleFinder().find(module):
        runner.run(test)
    failures, attempted = runner.summarize(verbose=False)
    assert attempted > 0 and failures == 0


class _DefinedInModuleFinder(doctest.DocTestFinder):
    """doctest's finder, taking a public class as the module's own when its methods are
    defined there: public classes say `__module__ == "requestx"` (they print as
    `requestx.X`), which doctest alone reads as defined elsewhere."""

    def _from_module(self, module: typing.Any, object: typing.Any) -> bool:  # noqa: A002
        if inspect.isclass(object) and object.__module__ == "requestx":
            return any(
                getattr(getattr(member, "__code__", None), "co_filename", None) == module.__file__
                for member in vars(object).values()
            )
        return bool(super()._from_module(module, object))
