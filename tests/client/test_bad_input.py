"""Bad input from the caller: URLs, headers, methods and arguments no request can be made of.

Every case raises the httpx exception class for it (never crashes, never hangs) and is followed
by a normal request on the same client, which must succeed: a failure must not poison the
client, its engine or its connection pool. Errors that come out of the engine carry the request
and are chained (`raise ... from`) to the engine's `EngineError`. Bad behaviour from the server
(refused connections, malformed responses) is in tests/faults/test_misbehaving_servers.py.
"""

from __future__ import annotations

import typing
import warnings
from typing import Iterator

import pytest

import requestx
from requestx import _core
from requestx._exceptions import exception_for_engine_error
from tests.servers import HypercornServer
from tests.support.echo import still_works


@pytest.fixture
def client(server: HypercornServer) -> Iterator[requestx.Client]:
    with requestx.Client(timeout=5) as client:
        yield client


# --- URLs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:99999/",
        "http://127.0.0.1:65536/",
        "http://127.0.0.1:-1/",
        "http://127.0.0.1:abc/",
        "http://127.0.0.1:1:2/",
        "http://[::1/",
        "http://exa mple.com/",
    ],
)
def test_invalid_url(client: requestx.Client, server: HypercornServer, url: str) -> None:
    with pytest.raises(requestx.InvalidURL):
        client.get(url)
    still_works(client, server)


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://127.0.0.1/file", "unsupported protocol 'ftp://'"),
        ("ws://127.0.0.1/", "unsupported protocol 'ws://'"),
        ("gopher://127.0.0.1/", "unsupported protocol 'gopher://'"),
        ("file:///etc/passwd", "unsupported protocol 'file://'"),
        ("127.0.0.1:80/path", "missing an 'http://' or 'https://' protocol"),
        ("//127.0.0.1/path", "missing an 'http://' or 'https://' protocol"),
        ("/relative/path", "missing an 'http://' or 'https://' protocol"),
        ("", "missing an 'http://' or 'https://' protocol"),
        ("http:///path", "missing a host"),
        ("http://", "missing a host"),
        ("https://:443/", "missing a host"),
    ],
)
def test_unsupported_protocol(
    client: requestx.Client, server: HypercornServer, url: str, message: str
) -> None:
    server.reset_stats()
    with pytest.raises(requestx.UnsupportedProtocol, match=message):
        client.get(url)
    assert server.request_count() == 0
    still_works(client, server)


def test_file_url_never_reads_the_file(client: requestx.Client) -> None:
    # Whatever else happens, /etc/passwd must not come back as a body.
    for url in ("file:///etc/passwd", "FILE:///etc/passwd", "file://localhost/etc/passwd"):
        with pytest.raises(requestx.UnsupportedProtocol):
            client.get(url)


def test_unsupported_protocol_carries_the_request(client: requestx.Client) -> None:
    with pytest.raises(requestx.UnsupportedProtocol) as info:
        client.get("ftp://127.0.0.1/file")
    assert info.value.request.url == requestx.URL("ftp://127.0.0.1/file")


@pytest.mark.parametrize("url", ["file:///etc/passwd", "127.0.0.1:80/path", "http:///path"])
def test_unsupported_protocol_with_cookies_in_the_jar(server: HypercornServer, url: str) -> None:
    with requestx.Client(cookies={"session": "1"}) as client:
        with pytest.raises(requestx.UnsupportedProtocol):
            client.get(url)
        still_works(client, server)


@pytest.mark.parametrize(
    "suffix",
    ["/a\r\nX-Injected: 1", "/a\nb", "/a\x00b", "/a\tb", "?q=\r\n", "#\r\n"],
)
def test_control_characters_in_url(
    client: requestx.Client, server: HypercornServer, suffix: str
) -> None:
    server.reset_stats()
    with pytest.raises(requestx.InvalidURL):
        client.get(server.url + suffix)
    assert server.request_count() == 0
    still_works(client, server)


def test_control_characters_in_host(client: requestx.Client, server: HypercornServer) -> None:
    for url in ("http://127.0.0.1\r\n/", "http://\x00/", "http://127.0.0.1\x7f/"):
        with pytest.raises(requestx.InvalidURL):
            client.get(url)
    still_works(client, server)


def test_spaces_and_non_ascii_in_the_path_are_percent_encoded(
    client: requestx.Client, server: HypercornServer
) -> None:
    echo = client.get(server.url + "/echo/a b/\u00fc", params={"q": "\u00e9 &"}).json()
    assert echo["raw_path"] == "/echo/a%20b/%C3%BC"
    assert echo["query"] == "q=%C3%A9+%26"


# --- headers and methods ----------------------------------------------------------------------

_SMUGGLING_HEADERS = [
    pytest.param({"X-A": "a\r\nX-Injected: 1"}, id="crlf-in-value"),
    pytest.param({"X-A": "a\nb"}, id="lf-in-value"),
    pytest.param({"X-A": "a\rb"}, id="cr-in-value"),
    pytest.param({"X-A": "a\x00b"}, id="nul-in-value"),
    pytest.param({"X-A": b"a\r\nX-Injected: 1"}, id="crlf-in-bytes-value"),
    pytest.param({"X-A\r\nX-Injected": "1"}, id="crlf-in-name"),
    pytest.param({b"X-A\x00": b"1"}, id="nul-in-bytes-name"),
    pytest.param({"X A": "1"}, id="space-in-name"),
    pytest.param({"X:A": "1"}, id="colon-in-name"),
    pytest.param({"": "1"}, id="empty-name"),
]


@pytest.mark.parametrize("headers", _SMUGGLING_HEADERS)
def test_bad_header_is_a_local_protocol_error(
    client: requestx.Client, server: HypercornServer, headers: dict[typing.Any, typing.Any]
) -> None:
    server.reset_stats()
    with pytest.raises(requestx.LocalProtocolError):
        client.get(server.url + "/echo", headers=headers)
    assert server.request_count() == 0  # nothing went on the wire
    still_works(client, server)


def test_bad_header_in_client_defaults_or_cookie(server: HypercornServer) -> None:
    with pytest.raises(requestx.LocalProtocolError):
        requestx.Client(headers={"X-A": "a\r\nb"})
    with requestx.Client() as client:
        with pytest.raises(requestx.LocalProtocolError), pytest.warns(DeprecationWarning):
            client.get(server.url + "/cookies", cookies={"a": "b\r\nX-Injected: 1"})
        still_works(client, server)


@pytest.mark.parametrize(
    "kwargs",
    [{"headers": {"X-A": "a\r\nb"}}, {"method": "GET\r\nX"}],
    ids=["header", "method"],
)
def test_local_protocol_error_is_raised_while_building_the_request(
    client: requestx.Client, server: HypercornServer, kwargs: dict[str, typing.Any]
) -> None:
    # Deliberate difference (docs/differences.md): httpx accepts such a header or method into
    # a Request and fails when sending it, so its error carries `.request`. requestx refuses
    # the value when the Request is built, before one exists, so there is none to attach.
    method = kwargs.pop("method", "GET")
    server.reset_stats()
    with pytest.raises(requestx.LocalProtocolError) as info:
        client.request(method, server.url + "/echo", **kwargs)
    with pytest.raises(RuntimeError):
        _ = info.value.request
    assert server.request_count() == 0
    still_works(client, server)


@pytest.mark.parametrize("method", ["GET\r\nX-Injected: 1", "GET X", "G\x00T", "", "G\u00cbT"])
def test_bad_method_is_a_local_protocol_error(
    client: requestx.Client, server: HypercornServer, method: str
) -> None:
    server.reset_stats()
    with pytest.raises(requestx.LocalProtocolError):
        client.request(method, server.url + "/echo")
    assert server.request_count() == 0
    still_works(client, server)


def test_non_latin_bytes_header_values_are_sent_verbatim(
    client: requestx.Client, server: HypercornServer
) -> None:
    value = "\u00fc\u20ac\U0001f600".encode()
    response = client.get(server.url + "/echo", headers={"X-Bytes": value, "X-Tab": "a\tb"})
    received = dict(response.json()["headers"])
    assert received["x-bytes"].encode("latin-1") == value
    assert received["x-tab"] == "a\tb"


def test_non_ascii_str_header_value_is_refused_like_httpx(
    client: requestx.Client, server: HypercornServer
) -> None:
    with pytest.raises(UnicodeEncodeError):
        client.get(server.url + "/echo", headers={"X-Euro": "\u20ac"})
    still_works(client, server)


# --- absurd argument types -------------------------------------------------------------------

# Each raises what httpx raises for it (TypeError, or AttributeError where httpx does too);
# requestx must never crash the interpreter or send something half-built.
_ABSURD = [
    pytest.param({"headers": 123}, TypeError, id="headers=123"),
    pytest.param({"headers": [("a",)]}, ValueError, id="headers=[1-tuple]"),
    pytest.param({"headers": {1: "a"}}, TypeError, id="header-name=int"),
    pytest.param({"headers": {"X": 1}}, TypeError, id="header-value=int"),
    pytest.param({"headers": {"X": None}}, TypeError, id="header-value=None"),
    pytest.param({"cookies": 123}, TypeError, id="cookies=123"),
    pytest.param({"params": 123}, AttributeError, id="params=123"),  # httpx: AttributeError
    pytest.param({"params": [1, 2]}, TypeError, id="params=[1,2]"),
    pytest.param({"content": 123}, TypeError, id="content=123"),
    pytest.param({"content": object()}, TypeError, id="content=object"),
    pytest.param({"data": 123}, TypeError, id="data=123"),
    pytest.param({"json": object()}, TypeError, id="json=object"),
    pytest.param({"json": {1j: 1}}, TypeError, id="json-key=complex"),
    pytest.param({"timeout": "x"}, TypeError, id="timeout=str"),
    pytest.param({"timeout": object()}, TypeError, id="timeout=object"),
    pytest.param({"timeout": -1}, ValueError, id="timeout=-1"),
]


@pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")  # data=123, as httpx
@pytest.mark.parametrize("kwargs, error", _ABSURD)
def test_absurd_argument_types(
    client: requestx.Client,
    server: HypercornServer,
    kwargs: dict[str, typing.Any],
    error: type[Exception],
) -> None:
    server.reset_stats()
    with pytest.raises(error), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # per-request cookies=
        client.post(server.url + "/echo", **kwargs)
    assert server.request_count() == 0
    still_works(client, server)


@pytest.mark.parametrize("url", [123, None, b"http://127.0.0.1/", ["http://127.0.0.1/"]])
def test_absurd_url_types(client: requestx.Client, server: HypercornServer, url: object) -> None:
    with pytest.raises(TypeError):
        client.get(url)  # type: ignore[arg-type]
    still_works(client, server)


def test_absurd_client_arguments() -> None:
    with pytest.raises(TypeError):
        requestx.Client(headers=123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        requestx.Client(timeout="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        requestx.Client(verify=123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        requestx.Client(base_url=123)  # type: ignore[arg-type]


# --- below the Python layer -------------------------------------------------------------------


@pytest.mark.parametrize("code", [1009, 1010, 1011])
def test_engine_validation_codes_are_local_protocol_errors(code: int) -> None:
    # The C check is the last line of defence behind the models' own validation.
    request = requestx.Request("GET", "http://127.0.0.1/")
    assert isinstance(exception_for_engine_error(code, "", request), requestx.LocalProtocolError)


def test_engine_rejects_header_injection_below_the_python_layer(server: HypercornServer) -> None:
    # The C setters are the last line of defence: they refuse CR/LF/NUL even if Python did not.
    with requestx.Client() as client:
        engine = client._engine
        cases = [
            (b"GET", b"http://127.0.0.1/", [(b"X-A", b"a\r\nX-B: b")]),
            (b"GET", b"http://127.0.0.1/", [(b"X-A\n", b"a")]),
            (b"GET", b"http://127.0.0.1/a\r\nb", []),
            (b"GET\r\n", b"http://127.0.0.1/", []),
        ]
        for method, url, headers in cases:
            with pytest.raises(_core.EngineError) as info:
                engine.perform(method, url, headers, None, (1000, 1000, 1000, 1000), 0, None, None)
            assert info.value.code in (1009, 1010, 1011)
        assert _core.live_transfers() == 0
        still_works(client, server)


def test_unsupported_protocol_quotes_the_url_as_typed(client: requestx.Client) -> None:
    with pytest.raises(requestx.UnsupportedProtocol) as caught:
        client.get("example.org/x")
    assert str(caught.value).endswith(": 'example.org/x'.")
    with pytest.raises(requestx.UnsupportedProtocol, match="missing a host: 'http:/x'"):
        requestx.get("http:///x")
