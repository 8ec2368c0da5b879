"""The exception tree, the engine error table, and status codes (vs httpx and curl.h)."""

from __future__ import annotations

import errno
import inspect
import os
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
from requestx._urls import URL
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
    assert error.engine_code == code
    assert str(error).startswith("GET http://h/: ")


def test_engine_message_says_what_failed_and_where() -> None:
    request = Request("GET", "http://h:8080/x?q=1")
    curl_text = "Failed to connect to h port 8080 after 0 ms: Could not connect to server"
    error = exception_for_engine_error(7, curl_text, request, os_errno=errno.ECONNREFUSED)
    expected = f"could not connect to h:8080: {os.strerror(errno.ECONNREFUSED).lower()}"
    assert str(error) == f"GET http://h:8080/x?q=1: {expected}"
    # libcurl's code, name and words stay on the exception for debugging, out of str().
    assert (error.engine_code, error.engine_name) == (7, "CURLE_COULDNT_CONNECT")
    assert error.engine_message == curl_text
    assert "CURLE" not in str(error) and "libcurl" not in str(error)
    resolve = exception_for_engine_error(6, "Could not resolve host: h", request)
    assert str(resolve) == "GET http://h:8080/x?q=1: could not resolve host h"
    cancelled = exception_for_engine_error(1000, "", request)
    assert str(cancelled) == "GET http://h:8080/x?q=1: the request was cancelled"
    assert "client has been closed" in str(exception_for_engine_error(1005, "", request))
    unknown = exception_for_engine_error(4242, "", request)
    assert type(unknown) is TransportError and "engine error 4242" in str(unknown)


def test_engine_message_uses_the_default_port_and_hides_credentials() -> None:
    request = Request("POST", "https://user:secret@[::1]/upload")
    error = exception_for_engine_error(52, "Empty reply from server", request)
    assert str(error) == "POST https://[::1]/upload: [::1]:443 closed without answering"
    assert "secret" not in str(error) and "user" not in str(error)


@pytest.mark.parametrize(
    ("code", "engine_text", "expected"),
    [
        (1001, "timed out waiting for response data",
         "the read timeout (0.5 s) ran out waiting for response data from h:80"),
        (1002, "timed out sending the request body",
         "the write timeout (2 s) ran out sending the request body to h:80"),
        (1003, "timed out waiting for a connection from the pool",
         "the pool timeout (3 s) ran out waiting for a connection to h:80 from the pool"),
        (1006, "timed out connecting", "the connect timeout (1.5 s) ran out connecting to h:80"),
        (28, "Connection timed out after 1501 milliseconds",
         "the connect timeout (1.5 s) ran out connecting to h:80"),
        (1001, "the request's total timeout (800 ms) ran out",
         "the total timeout (0.8 s) ran out waiting for response data from h:80"),
    ],
)  # fmt: skip
def test_timeout_message_names_the_timeout_and_its_value(
    code: int, engine_text: str, expected: str
) -> None:
    timeouts = {"connect": 1.5, "read": 0.5, "write": 2, "pool": 3, "total": 0.8}
    request = Request("GET", "http://h/", extensions={"timeout": timeouts})
    error = exception_for_engine_error(code, engine_text, request)
    assert str(error) == f"GET http://h/: {expected}"
    # A transport used without a client has no timeout extension: the words stay.
    bare = exception_for_engine_error(code, engine_text, Request("GET", "http://h/"))
    assert "timeout ran out" in str(bare)


def test_tls_message_keeps_what_the_tls_library_found() -> None:
    request = Request("GET", "https://h:8443/")
    verify = exception_for_engine_error(
        60, "SSL certificate problem: self-signed certificate in certificate chain", request
    )
    assert str(verify) == (
        "GET https://h:8443/: h:8443's TLS certificate failed verification: "
        "self-signed certificate in certificate chain"
    )
    handshake = exception_for_engine_error(
        35, "OpenSSL/3.5.5: error:0A00010B:SSL routines::wrong version number", request
    )
    assert str(handshake) == (
        "GET https://h:8443/: the TLS handshake with h:8443 failed: wrong version number"
    )


def test_a_proxy_that_cannot_be_reached_is_named() -> None:
    request = Request("GET", "http://target/")
    proxy = URL("http://proxy.internal:3128")
    refused = exception_for_engine_error(
        7, "Failed to connect", request, os_errno=errno.ECONNREFUSED, proxy=proxy
    )
    assert type(refused) is ProxyError
    assert str(refused).startswith(
        "GET http://target/: could not connect to the proxy proxy.internal:3128: "
    )
    unresolved = exception_for_engine_error(5, "Could not resolve proxy", request, proxy=proxy)
    assert str(unresolved) == "GET http://target/: could not resolve proxy proxy.internal"
    # Past the proxy, the words are about the target.
    reset = exception_for_engine_error(56, "Recv failure", request, proxy=proxy)
    assert type(reset) is ReadError and "target:80" in str(reset)


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
