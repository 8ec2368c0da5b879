"""The blocking `Client` end to end, against the real hypercorn test server (tests/servers/app.py).

What the server received is read back from `/echo`, so each test checks the bytes that went on
the wire, not what the client believes it sent. Behaviour follows httpx 0.28; where requestx
knowingly differs the test says so.
"""

from __future__ import annotations

import datetime
import json
import typing
from typing import Iterator

import httpx
import pytest

import requestx
from tests.servers import HypercornServer, RawServer, pattern_bytes
from tests.servers.app import CHARSET_TEXT, COMPRESSED_DOC, HELLO
from tests.support.echo import received
from tests.support.public_names import REQUESTX_ONLY_NAMES


@pytest.fixture
def client(server: HypercornServer) -> Iterator[requestx.Client]:
    with requestx.Client(base_url=server.url, timeout=5) as client:
        yield client


# --- methods and the top-level API ------------------------------------------------------------

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@pytest.mark.parametrize("method", METHODS)
def test_client_methods(client: requestx.Client, method: str) -> None:
    response = getattr(client, method.lower())("/echo/path")
    assert response.status_code == 200
    echo = response.json()
    assert echo["method"] == method
    assert echo["path"] == "/echo/path"


@pytest.mark.parametrize("method", METHODS)
def test_top_level_functions(server: HypercornServer, method: str) -> None:
    response = getattr(requestx, method.lower())(
        server.url + "/echo", params={"q": "1"}, headers={"X-Top": method}, cookies={"k": "v"}
    )
    echo = response.json()
    assert echo["method"] == method
    assert echo["query"] == "q=1"
    assert received(response, "x-top") == [method]
    assert received(response, "cookie") == ["k=v"]


def test_top_level_request_and_bodies(server: HypercornServer) -> None:
    response = requestx.request("PATCH", server.url + "/echo", content=b"raw")
    assert response.json()["method"] == "PATCH"
    assert response.json()["body"] == "raw"
    response = requestx.post(server.url + "/echo", json={"a": [1, 2]})
    assert response.json()["body"] == '{"a":[1,2]}'
    response = requestx.put(server.url + "/echo", data={"k": ["1", "2"]})
    assert response.json()["body"] == "k=1&k=2"


def test_top_level_head_has_no_body(server: HypercornServer) -> None:
    response = requestx.head(server.url + "/")
    assert response.status_code == 200
    assert response.headers["content-length"] == str(len(HELLO))
    assert response.content == b""


def test_top_level_calls_share_connections_but_not_cookies(server: HypercornServer) -> None:
    # Each call is its own short-lived client (httpx semantics: no cookie carries over), but they
    # run on one shared engine, so a script calling requestx.get() in a loop reuses connections.
    requestx.get(server.url + "/cookies/set?leak=1")
    assert requestx.get(server.url + "/cookies").json() == {"cookie": None}
    server.reset_stats()
    for _ in range(5):
        assert requestx.get(server.url + "/").status_code == 200
    assert server.request_count() == 5
    assert server.connection_count() == 1


def test_head_has_empty_body_and_real_headers(client: requestx.Client) -> None:
    response = client.head("/bytes/100000")
    assert response.status_code == 200
    assert response.headers["content-length"] == "100000"
    assert response.content == b""
    assert response.text == ""
    # The connection is still usable: a HEAD response must not leave a body to read.
    assert client.get("/bytes/10").content == pattern_bytes(10)


def test_custom_method(client: requestx.Client) -> None:
    assert client.request("PROPFIND", "/echo").json()["method"] == "PROPFIND"
    assert client.request("get", "/echo").json()["method"] == "GET"  # upper-cased, like httpx


# --- configuration merging --------------------------------------------------------------------


def test_client_configuration_is_merged_with_the_request(server: HypercornServer) -> None:
    with requestx.Client(
        base_url=server.url + "/echo",
        headers={"X-Client": "c", "X-Both": "client", "User-Agent": "agent/1"},
        params={"cp": "1", "both": "client"},
        cookies={"cc": "1"},
        timeout=3,
    ) as client:
        with pytest.warns(DeprecationWarning, match="per-request cookies"):  # as in httpx
            response = client.get(
                "/sub",
                params={"rp": "2", "both": "request"},
                headers={"x-both": "request", "X-Req": "r"},
                cookies={"rc": "2"},
            )
        echo = response.json()
        assert echo["path"] == "/echo/sub"  # base_url path + relative path
        assert echo["query"] == "cp=1&both=request&rp=2"  # request params win, order kept
        assert received(response, "x-client") == ["c"]
        assert received(response, "x-both") == ["request"]  # replaced, case-insensitively
        assert received(response, "x-req") == ["r"]
        assert received(response, "user-agent") == ["agent/1"]
        assert received(response, "cookie") == ["cc=1; rc=2"]
        assert response.request.extensions["timeout"] == {
            "connect": 3,
            "read": 3,
            "write": 3,
            "pool": 3,
        }
        assert str(response.url) == server.url + "/echo/sub?cp=1&both=request&rp=2"

        # Without per-request values only the client's are sent, and the per-request cookie
        # did not leak into the client's jar.
        response = client.get("")
        assert response.json()["query"] == "cp=1&both=client"
        assert received(response, "cookie") == ["cc=1"]
        assert dict(client.cookies) == {"cc": "1"}

        # An absolute URL ignores base_url.
        assert client.get(server.url + "/json").json() == {"Hello": "world!"}


def test_default_headers_match_httpx_shape(server: HypercornServer) -> None:
    with requestx.Client() as client:
        response = client.get(server.url + "/echo")
    names = [name for name, _ in response.json()["headers"]]
    assert names[0] == "host"
    assert received(response, "host") == [server.url.removeprefix("http://")]
    assert received(response, "accept") == ["*/*"]
    assert received(response, "connection") == ["keep-alive"]
    assert received(response, "user-agent") == [f"python-requestx/{requestx.__version__}"]
    # All four codings requestx decodes (in C), whatever packages are installed; httpx
    # offers br and zstd only with their packages.
    assert received(response, "accept-encoding") == ["gzip, deflate, br, zstd"]
    assert not [n for n in names if n.startswith("content-")]  # a GET without body


def test_client_headers_can_be_changed_after_creation(client: requestx.Client) -> None:
    client.headers["X-Later"] = "1"
    assert received(client.get("/echo"), "x-later") == ["1"]
    client.headers = {"X-Only": "2"}
    response = client.get("/echo")
    assert received(response, "x-only") == ["2"]
    assert received(response, "x-later") == []
    assert received(response, "accept") == ["*/*"]  # defaults stay, like httpx


def test_repeated_headers_and_params(client: requestx.Client) -> None:
    response = client.get(
        "/echo", params=[("a", "1"), ("a", "2")], headers=[("X-R", "1"), ("X-R", "2")]
    )
    assert response.json()["query"] == "a=1&a=2"
    assert received(response, "x-r") == ["1", "2"]


def test_per_request_timeout_is_recorded(client: requestx.Client) -> None:
    response = client.get("/", timeout=requestx.Timeout(1, read=2))
    assert response.request.extensions["timeout"] == {
        "connect": 1,
        "read": 2,
        "write": 1,
        "pool": 1,
    }


# --- request bodies ---------------------------------------------------------------------------


def test_content_bytes(client: requestx.Client) -> None:
    body = bytes(range(256)) * 4
    response = client.post("/echo", content=body)
    assert response.json()["body"].encode("latin-1") == body
    assert received(response, "content-length") == [str(len(body))]


def test_content_str_is_utf8(client: requestx.Client) -> None:
    response = client.put("/echo", content="h\u00e9llo \u20ac")
    assert response.json()["body"].encode("latin-1") == "h\u00e9llo \u20ac".encode()
    assert received(response, "content-length") == [str(len("h\u00e9llo \u20ac".encode()))]


def test_form_data(client: requestx.Client) -> None:
    response = client.post("/echo", data={"a": ["1", "2"], "b": "x y&z", "c": 3})
    assert response.json()["body"] == "a=1&a=2&b=x+y%26z&c=3"
    assert received(response, "content-type") == ["application/x-www-form-urlencoded"]
    assert received(response, "content-length") == ["21"]


def test_json_body(client: requestx.Client) -> None:
    document = {"text": "caf\u00e9", "list": [1, 2.5, None, True], "nested": {"k": "v"}}
    response = client.patch("/echo", json=document)
    raw = response.json()["body"].encode("latin-1")
    assert json.loads(raw) == document
    assert raw == json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    assert received(response, "content-type") == ["application/json"]
    assert received(response, "content-length") == [str(len(raw))]


def test_body_with_get_and_delete(client: requestx.Client) -> None:
    assert client.request("GET", "/echo", content=b"xyz").json()["body"] == "xyz"
    assert client.request("DELETE", "/echo", content=b"xyz").json()["body"] == "xyz"


@pytest.mark.parametrize(
    "method, kwargs",
    [
        ("POST", {"content": b"raw bytes"}),
        ("PUT", {"content": "text"}),
        ("POST", {"content": b""}),
        ("POST", {"data": {}}),
        ("PUT", {}),
        ("PATCH", {}),
    ],
)
def test_no_content_type_is_invented(
    client: requestx.Client, server: HypercornServer, method: str, kwargs: dict[str, typing.Any]
) -> None:
    with httpx.Client(base_url=server.url) as reference:
        expected = received(reference.request(method, "/echo", **kwargs), "content-type")  # type: ignore[arg-type]
    assert expected == []
    assert received(client.request(method, "/echo", **kwargs), "content-type") == expected


def test_caller_content_type_wins(client: requestx.Client) -> None:
    response = client.post("/echo", content=b"<a/>", headers={"Content-Type": "text/xml"})
    assert received(response, "content-type") == ["text/xml"]


def test_large_upload_and_download(client: requestx.Client) -> None:
    body = pattern_bytes(3 * 1024 * 1024 + 17)
    response = client.post("/echo", content=body)
    assert response.json()["body"].encode("latin-1") == body
    for url in ("/bytes/5000001", "/bytes/5000001?chunked=1"):
        response = client.get(url)
        assert len(response.content) == 5000001
        assert response.content == pattern_bytes(5000001)


# --- the Response object ---------------------------------------------------------------------


def test_response_attributes(client: requestx.Client, server: HypercornServer) -> None:
    response = client.get("/json", params={"x": "1"})
    assert response.status_code == 200
    # hypercorn (h11) sends "HTTP/1.1 200 " without a reason; httpx reads "" too.
    assert response.reason_phrase == ""
    assert response.http_version == "HTTP/1.1"
    assert str(response.url) == server.url + "/json?x=1"
    assert isinstance(response.url, requestx.URL)
    assert response.request.method == "GET"
    assert response.request.url == response.url
    assert isinstance(response.elapsed, datetime.timedelta)
    assert response.elapsed > datetime.timedelta(0)
    assert response.elapsed < datetime.timedelta(seconds=5)
    assert response.content == b'{"Hello": "world!"}'
    assert response.text == '{"Hello": "world!"}'
    assert response.json() == {"Hello": "world!"}
    assert response.encoding == "utf-8"
    assert response.num_bytes_downloaded == len(response.content)
    assert repr(response) == "<Response [200 ]>"  # as httpx: the (empty) reason as sent


def test_reason_phrase_from_the_status_line(raw_server: RawServer) -> None:
    with requestx.Client() as client:
        assert client.get(raw_server.url + "/ok").reason_phrase == "OK"
        assert client.get(raw_server.url + "/unknown").reason_phrase == "Not Found"


def test_response_headers(client: requestx.Client) -> None:
    response = client.get("/headers/set?X-A=1&x-b=2&x-a=3")
    headers = response.headers
    assert isinstance(headers, requestx.Headers)
    assert headers["x-b"] == "2"
    assert headers["X-B"] == headers["x-B"] == "2"
    assert "X-a" in headers and "missing" not in headers
    assert headers["x-a"] == "1, 3"  # httpx joins repeats
    assert headers.get_list("X-A") == ["1", "3"]
    assert headers.get("missing") is None
    assert headers.get("missing", "d") == "d"
    # raw keeps the server's spelling, order and repeats.
    raw = [(k, v) for k, v in headers.raw if k.lower() in (b"x-a", b"x-b")]
    assert raw == [(b"X-A", b"1"), (b"x-b", b"2"), (b"x-a", b"3")]
    assert headers["content-length"] == str(len(response.content))


def test_text_and_json_of_a_utf8_body(client: requestx.Client) -> None:
    response = client.post("/echo", json={"k": "\u00e9\u20ac"})
    assert response.json()["body"].encode("latin-1").decode() == '{"k":"\u00e9\u20ac"}'


@pytest.mark.parametrize(
    "charset, text",
    [
        ("utf-8", CHARSET_TEXT),
        ("latin-1", CHARSET_TEXT),
        ("iso-8859-15", "caf\u00e9 \u20ac"),
        ("utf-16", CHARSET_TEXT),
        ("cp1252", "\u201cquoted\u201d caf\u00e9"),
        ("shift_jis", "\u65e5\u672c\u8a9e"),
    ],
)
def test_text_uses_the_charset_from_the_header(
    client: requestx.Client, charset: str, text: str
) -> None:
    response = client.get(f"/charset/{charset}", params={"text": text})
    assert response.content == text.encode(charset)
    assert response.charset_encoding == charset
    assert response.encoding == charset
    assert response.text == text


def test_text_without_charset_uses_the_default_encoding(server: HypercornServer) -> None:
    raw = CHARSET_TEXT.encode("latin-1")
    with requestx.Client(base_url=server.url) as client:
        response = client.get("/charset/latin-1", params={"param": "0"})
        assert response.charset_encoding is None
        assert response.content == raw
        assert response.text == raw.decode("utf-8", errors="replace")  # httpx's default
    with requestx.Client(base_url=server.url, default_encoding="latin-1") as client:
        assert client.get("/charset/latin-1", params={"param": "0"}).text == CHARSET_TEXT


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_compressed_bodies_are_decoded(client: requestx.Client, coding: str) -> None:
    response = client.get(f"/{coding}")
    assert response.headers["content-encoding"] == coding
    assert response.json() == COMPRESSED_DOC
    response = client.get(f"/{coding}", params={"size": "1000000"})
    assert response.content == b"a" * 1_000_000


@pytest.mark.parametrize("code", [200, 201, 204, 301, 304, 404, 418, 500, 503])
def test_status_predicates_match_httpx(client: requestx.Client, code: int) -> None:
    response = client.get(f"/status/{code}")
    assert response.status_code == code
    reference = httpx.Response(code)
    for name in (
        "is_informational",
        "is_success",
        "is_redirect",
        "is_client_error",
        "is_server_error",
        "is_error",
    ):
        assert getattr(response, name) == getattr(reference, name), name
    assert response.content == (b"" if code in (204, 304) else f"status {code}".encode())


@pytest.mark.parametrize("code", [200, 201, 204])
def test_raise_for_status_returns_the_response_on_success(
    client: requestx.Client, code: int
) -> None:
    response = client.get(f"/status/{code}")
    assert response.raise_for_status() is response


@pytest.mark.parametrize("code, kind", [(400, "Client"), (404, "Client"), (500, "Server")])
def test_raise_for_status_on_errors(
    client: requestx.Client, server: HypercornServer, code: int, kind: str
) -> None:
    response = client.get(f"/status/{code}")
    with pytest.raises(requestx.HTTPStatusError) as info:
        response.raise_for_status()
    error = info.value
    assert isinstance(error, requestx.HTTPError)
    assert error.response is response
    assert error.request is response.request
    assert str(error).startswith(f"{kind} error '{code} ")
    assert f"for url '{server.url}/status/{code}'" in str(error)


def test_raise_for_status_on_a_redirect(client: requestx.Client) -> None:
    response = client.get("/redirect/302")  # not followed: Client defaults to no redirects
    assert response.status_code == 302
    assert response.headers["location"] == "/echo"
    assert response.has_redirect_location
    with pytest.raises(requestx.HTTPStatusError, match="Redirect response '302 "):
        response.raise_for_status()


# --- cookies ----------------------------------------------------------------------------------


def test_server_cookies_persist_in_the_client(client: requestx.Client) -> None:
    response = client.get("/cookies/set?flavour=oat&size=big")
    assert response.cookies["flavour"] == "oat"
    assert dict(client.cookies) == {"flavour": "oat", "size": "big"}
    sent = client.get("/cookies").json()["cookie"]
    assert sorted(sent.split("; ")) == ["flavour=oat", "size=big"]
    client.cookies.set("extra", "1")
    assert "extra=1" in client.get("/cookies").json()["cookie"]
    client.cookies.clear()
    assert client.get("/cookies").json() == {"cookie": None}


def test_client_cookies_setter(client: requestx.Client) -> None:
    client.cookies = {"a": "1"}  # type: ignore[assignment]
    assert client.get("/cookies").json() == {"cookie": "a=1"}


# --- life cycle -------------------------------------------------------------------------------


def test_with_block_closes(server: HypercornServer) -> None:
    with requestx.Client() as client:
        assert not client.is_closed
        assert client.get(server.url).status_code == 200
    assert client.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        client.get(server.url)
    with pytest.raises(RuntimeError), client:
        pass  # a closed client cannot be entered again (httpx)


def test_close_is_idempotent_and_final(server: HypercornServer) -> None:
    client = requestx.Client()
    assert client.get(server.url).status_code == 200
    client.close()
    client.close()
    assert client.is_closed
    for method in ("get", "post", "head"):
        with pytest.raises(RuntimeError):
            getattr(client, method)(server.url)
    with pytest.raises(RuntimeError):
        client.send(client.build_request("GET", server.url))


def test_client_closed_without_any_request() -> None:
    client = requestx.Client()
    client.close()
    assert client.is_closed


def test_build_request_and_send(client: requestx.Client, server: HypercornServer) -> None:
    request = client.build_request(
        "PUT", "/echo", params={"p": "1"}, headers={"X-B": "b"}, content=b"abc"
    )
    assert isinstance(request, requestx.Request)
    assert request.url == requestx.URL(server.url + "/echo?p=1")
    assert request.headers["x-b"] == "b"
    assert request.headers["content-length"] == "3"
    response = client.send(request)
    assert response.request is request
    echo = response.json()
    assert (echo["method"], echo["query"], echo["body"]) == ("PUT", "p=1", "abc")
    assert received(response, "x-b") == ["b"]
    # A request can be sent again.
    assert client.send(request).json()["body"] == "abc"


def test_send_a_hand_built_request(server: HypercornServer) -> None:
    request = requestx.Request("POST", server.url + "/echo", json={"a": 1})
    with requestx.Client() as client:
        response = client.send(request)
    assert response.json()["body"] == '{"a":1}'


def test_sequential_requests_reuse_one_connection(
    client: requestx.Client, server: HypercornServer
) -> None:
    client.get("/")
    server.reset_stats()
    for i in range(20):
        kind = i % 5
        if kind == 0:
            assert client.get("/").status_code == 200
        elif kind == 1:
            assert client.post("/echo", json={"i": i}).status_code == 200
        elif kind == 2:
            assert client.head("/bytes/1000").status_code == 200
        elif kind == 3:
            assert client.get("/status/404").status_code == 404
        else:
            assert client.get("/gzip").json() == COMPRESSED_DOC
    assert server.request_count() == 20
    assert server.connection_count() == 1


@pytest.mark.parametrize(
    "limits",
    [
        requestx.Limits(max_connections=1),
        requestx.Limits(max_connections=5, max_keepalive_connections=2, keepalive_expiry=1),
        requestx.Limits(max_connections=None, max_keepalive_connections=None),
    ],
)
def test_limits_are_accepted(server: HypercornServer, limits: requestx.Limits) -> None:
    with requestx.Client(limits=limits) as client:
        for _ in range(3):
            assert client.get(server.url).text == HELLO.decode()


# --- the httpx drop-in -----------------------------------------------------------------------


def test_import_requestx_as_httpx(server: HypercornServer) -> None:
    import requestx as httpx_alias

    for name in requestx.__all__:
        assert hasattr(httpx_alias, name), name
        if name != "__version__" and name not in REQUESTX_ONLY_NAMES:
            assert name in httpx.__all__, f"{name} is not an httpx name"
    for name in (
        "Client",
        "Timeout",
        "Limits",
        "Headers",
        "Cookies",
        "Request",
        "Response",
        "URL",
        "QueryParams",
        "HTTPStatusError",
        "RequestError",
        "TimeoutException",
        "codes",
        "get",
        "post",
        "request",
    ):
        assert name in requestx.__all__, name
    # A snippet written for httpx runs unchanged.
    with httpx_alias.Client(timeout=httpx_alias.Timeout(5.0)) as client:
        response = client.get(server.url + "/json")
        response.raise_for_status()
        assert response.status_code == httpx_alias.codes.OK
        assert response.json() == {"Hello": "world!"}


def test_no_keepalive_closes_each_connection(server: HypercornServer) -> None:
    # Limits(max_keepalive_connections=0) means no reuse at all: one connection per request.
    with requestx.Client(limits=requestx.Limits(max_keepalive_connections=0)) as client:
        server.reset_stats()
        for _ in range(4):
            assert client.get(server.url + "/json").status_code == 200
        assert server.connection_count() == 4


# --- params= and a URL that has a query: one rule everywhere ----------------------------------
# params= adds to the URL's query (a key in both takes params' value); httpx 0.28 drops the
# URL's query from a Request and from build_request when params= is given
# (docs/differences.md, "URL details").


def test_params_add_to_the_urls_query_in_request_and_build_request() -> None:
    url, params = "http://h/?x=1&y=old", {"y": "2", "z": "3"}
    expected = "http://h/?x=1&y=2&z=3"
    assert str(requestx.Request("GET", url, params=params).url) == expected
    with requestx.Client() as client:
        assert str(client.build_request("GET", url, params=params).url) == expected
    with requestx.Client(params={"c": "0"}) as client:
        assert str(client.build_request("GET", url).url) == "http://h/?x=1&y=old&c=0"
    assert str(requestx.Request("GET", url, params={}).url) == url


def test_params_add_to_the_urls_query_in_every_method(server: HypercornServer) -> None:
    url = server.url + "/echo?x=1"
    sent = []
    with requestx.Client() as client:
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
            sent.append(client.request(method, url, params={"y": "2"}).json()["query"])
        sent.append(client.get(url, params={"y": "2"}).json()["query"])
        with client.stream("GET", url, params={"y": "2"}) as response:
            response.read()
            sent.append(response.json()["query"])
    sent.append(requestx.get(url, params={"y": "2"}).json()["query"])
    assert sent == ["x=1&y=2"] * len(sent)


@pytest.mark.anyio
async def test_params_add_to_the_urls_query_on_async_clients(server: HypercornServer) -> None:
    async with requestx.AsyncClient(params={"c": "0"}) as client:
        response = await client.get(server.url + "/echo?x=1", params={"y": "2"})
    assert response.json()["query"] == "x=1&c=0&y=2"
