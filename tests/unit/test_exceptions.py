"""The exception tree, the engine error table, and status codes (vs httpx and curl.h)."""

from __future__ import annotations

import inspect
import pathlib
import re

import httpx
import pytest

from requestx import _exceptions as exceptions
from requestx._exceptions import (
    ENGINE_ERRORS,
    ConnectError,
    ConnectTimeout,
    DecodingError,
    HTTPError,
    LocalProtocolError,
    PoolTimeout,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    RequestError,
    TransportError,
    UnsupportedProtocol,
    WriteError,
    WriteTimeout,
    exception_for_engine_error,
    request_context,
)
from requestx._models import Request
from requestx._status_codes import codes
from tests.support import bundled_libcurl
from tests.support.public_names import REQUESTX_ONLY_NAMES

# --- The class tree ------------------------------------------------------------------


def test_same_public_names_as_httpx() -> None:
    httpx_names = set(httpx._exceptions.__all__)
    assert set(exceptions.__all__) == httpx_names | REQUESTX_ONLY_NAMES


@pytest.mark.parametrize("name", sorted(httpx._exceptions.__all__))
def test_class_tree_matches_httpx(name: str) -> None:
    ours = getattr(exceptions, name)
    theirs = getattr(httpx, name)
    ours_bases = [cls.__name__ for cls in ours.__mro__]
    theirs_bases = [cls.__name__ for cls in theirs.__mro__]
    assert ours_bases == theirs_bases


def test_tree_in_docstring_lists_every_class() -> None:
    doc = exceptions.__doc__ or ""
    for name in exceptions.__all__:
        assert re.search(rf"[*x+\-·] {name}\b", doc), name


def test_request_property() -> None:
    error = HTTPError("boom")
    with pytest.raises(RuntimeError):
        _ = error.request
    request = Request("GET", "http://h/")
    error.request = request
    assert error.request is request
    assert RequestError("boom", request=request).request is request
    with pytest.raises(RuntimeError):
        _ = TransportError("boom").request


def test_stream_errors_are_runtime_errors_with_messages() -> None:
    for cls in (
        exceptions.StreamConsumed,
        exceptions.StreamClosed,
        exceptions.ResponseNotRead,
        exceptions.RequestNotRead,
    ):
        error = cls()
        assert isinstance(error, RuntimeError) and str(error)


def test_request_context_attaches_the_request() -> None:
    request = Request("GET", "http://h/")
    with pytest.raises(ReadError) as raised, request_context(request):
        raise ReadError("x")
    assert raised.value.request is request
    with pytest.raises(ValueError), request_context(request):
        raise ValueError("not a RequestError: untouched")


# --- Engine errors -------------------------------------------------------------------

EXPECTED_CLASSES: list[tuple[int, type[Exception]]] = [
    (1, UnsupportedProtocol),
    (3, LocalProtocolError),
    (5, ProxyError),
    (6, ConnectError),
    (7, ConnectError),
    (8, RemoteProtocolError),
    (16, RemoteProtocolError),
    (18, RemoteProtocolError),
    (28, ConnectTimeout),
    (35, ConnectError),
    (52, RemoteProtocolError),
    (55, WriteError),
    (56, ReadError),
    (60, ConnectError),
    (61, DecodingError),
    (92, RemoteProtocolError),
    (97, ProxyError),
    (1000, TransportError),
    (1001, ReadTimeout),
    (1002, WriteTimeout),
    (1003, PoolTimeout),
    (1004, TransportError),
    (1005, TransportError),
    (1006, ConnectTimeout),
    (1007, RemoteProtocolError),
    (12345, TransportError),
    (-1, TransportError),
]


@pytest.mark.parametrize(("code", "cls"), EXPECTED_CLASSES)
def test_engine_codes_map_to_the_most_specific_class(code: int, cls: type[Exception]) -> None:
    request = Request("GET", "http://h/")
    error = exception_for_engine_error(code, "", request)
    assert type(error) is cls
    assert error.request is request
    assert f"({code})" in str(error)


def test_engine_message_names_curl_text_and_code() -> None:
    request = Request("GET", "http://h/")
    error = exception_for_engine_error(
        7, "Failed to connect to 127.0.0.1 port 1: Connection refused", request
    )
    assert str(error) == (
        "Failed to connect to 127.0.0.1 port 1: Connection refused "
        "[CURLE_COULDNT_CONNECT (7): could not connect to server]"
    )
    cancelled = exception_for_engine_error(1000, "", request)
    assert str(cancelled) == "request cancelled [CANCELLED (1000)]"
    assert "client has been closed" in str(exception_for_engine_error(1005, "", request))
    assert "unknown engine error (4242)" in str(exception_for_engine_error(4242, "", request))


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        ("Too large response headers: 307762 > 307200", RemoteProtocolError),
        ("CONNECT tunnel failed, response 403", ProxyError),
        ("Proxy CONNECT aborted", ProxyError),
        ("Connection reset by peer", ReadError),
    ],
)
def test_recv_error_is_refined_by_message(message: str, cls: type[Exception]) -> None:
    error = exception_for_engine_error(56, message, Request("GET", "http://h/"))
    assert type(error) is cls


def test_every_engine_error_class_is_a_request_error() -> None:
    for cls, _, summary in ENGINE_ERRORS.values():
        assert issubclass(cls, RequestError) and summary


def _curl_codes() -> dict[str, int]:
    """CURLcode names and values, read from curl/curl.h: the bundled libcurl's, else the
    system's."""
    bundled = bundled_libcurl.prefix()
    candidates = [
        *([bundled / "include" / "curl" / "curl.h"] if bundled else []),
        pathlib.Path("/usr/include/curl/curl.h"),
        *pathlib.Path("/usr/include").glob("*/curl/curl.h"),
    ]
    header = next((path for path in candidates if path.exists()), None)
    if header is None:
        pytest.skip("curl/curl.h not installed")
    text = header.read_text()
    body = text[text.index("CURLE_OK = 0") : text.index("} CURLcode;")]
    names = re.findall(r"^\s*(CURLE_[A-Z0-9_]+)", body, flags=re.MULTILINE)
    return {name: value for value, name in enumerate(names)}


def test_engine_table_names_match_curl_h() -> None:
    curl_codes = _curl_codes()
    assert curl_codes["CURLE_COULDNT_CONNECT"] == 7 and len(curl_codes) > 90
    for code, (_, name, _) in ENGINE_ERRORS.items():
        if name.startswith("CURLE_") and name in curl_codes:
            assert curl_codes[name] == code, name
        elif name.startswith("CURLE_"):
            assert code >= 100, f"{name} is not in this curl.h but claims an old code"
        else:
            assert code >= 1000  # requestx's own codes


# --- Status codes --------------------------------------------------------------------


def test_status_codes_match_httpx() -> None:
    ours = [(member.name, member.value, member.phrase) for member in codes]
    theirs = [
        (member.name, member.value, httpx.codes.get_reason_phrase(member.value))
        for member in httpx.codes
    ]
    assert ours == theirs


@pytest.mark.parametrize("value", range(0, 1000))
def test_status_code_helpers_match_httpx(value: int) -> None:
    assert codes.get_reason_phrase(value) == httpx.codes.get_reason_phrase(value)
    for name in (
        "is_informational",
        "is_success",
        "is_redirect",
        "is_client_error",
        "is_server_error",
        "is_error",
    ):
        assert getattr(codes, name)(value) == getattr(httpx.codes, name)(value), name


def test_status_code_members_behave_like_httpx() -> None:
    assert int(codes.OK) == 200 and codes(404) is codes.NOT_FOUND
    assert str(codes.NOT_FOUND) == str(httpx.codes.NOT_FOUND) == "404"
    assert f"{codes.OK}" == f"{httpx.codes.OK}"
    assert codes["IM_A_TEAPOT"].phrase == "I'm a teapot"
    for member in httpx.codes:
        alias = member.name.lower()
        value = getattr(codes, alias)
        assert value == getattr(httpx.codes, alias) and type(value) is int


def test_status_code_classmethods_are_documented() -> None:
    for name, member in inspect.getmembers(codes, inspect.ismethod):
        if not name.startswith("_"):
            assert member.__doc__, name
