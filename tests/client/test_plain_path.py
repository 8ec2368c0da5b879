"""The plain path: `client.get(url)`, `client.post(url, json=...)` and the like, when nothing but
the client's defaults and the body shapes the request, are built by `_hotpath.plain_request`
(bodiless) or `Request(...)` and sent straight to the engine (`_hotpath.send_plain`, the
transport's `_send_plain`) instead of going through `build_request` -> `send` -> the redirect
loop -> `_send_single` (`_hotpath.plain_url`, docs/architecture.md "The plain path").

A shortcut must never change what reaches the server or what the caller gets back, so:

* every method it takes sends, byte for byte and in order, the head the general path sends
  (a raw-socket server records both), against nginx and hypercorn too;
* everything it does not handle falls back, also when the client is changed after it was made
  (hooks, cookies, auth, params, headers) or its class overrides a step of sending: each is
  checked by what the server saw or what the override recorded;
* redirects, errors, a closed client and odd URLs behave as on the general path;
* `client.stream(...)` takes the same path under the same conditions (the last section).
"""

from __future__ import annotations

import gzip
import time
import typing

import anyio
import pytest

import requestx
from tests.servers import HypercornServer, RawServer
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.servers.recorder import RecordedHead, RecordingServer

PLAIN_METHODS = ["GET", "HEAD", "OPTIONS", "DELETE"]


def _heads_of(recorder: RecordingServer, send: typing.Callable[[], object]) -> list[RecordedHead]:
    recorder.reset()
    send()
    return list(recorder.heads)


class GeneralPathSpy:
    """Counts calls of the general path's steps on one client (instance attributes: the class
    is untouched, so the client still may take the plain path)."""

    def __init__(self, client: requestx.Client) -> None:
        self.calls = 0
        original = client._send_handling_redirects

        def counted(*args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            self.calls += 1
            return original(*args, **kwargs)

        client._send_handling_redirects = counted  # type: ignore[method-assign]


@pytest.mark.parametrize("method", PLAIN_METHODS)
def test_plain_and_general_paths_send_the_same_head(recorder: RecordingServer, method: str) -> None:
    url = recorder.url + "/a/b?q=1&r=%20"
    with requestx.Client(headers={"X-Custom": "one", "x-custom": "two"}) as client:
        spy = GeneralPathSpy(client)
        plain = _heads_of(recorder, lambda: client.request(method, url))
        assert spy.calls == 0, "the plain path was not taken"
        # headers={} changes nothing but takes the general path
        general = _heads_of(recorder, lambda: client.request(method, url, headers={}))
        assert spy.calls == 1
    assert len(plain) == len(general) == 1
    assert plain[0].request_line == general[0].request_line == f"{method} /a/b?q=1&r=%20 HTTP/1.1"
    assert plain[0].fields == general[0].fields
    assert plain[0].fields[0] == ("Host", recorder.url.split("//")[1])
    assert plain[0].header("x-custom") == "one"


@pytest.mark.parametrize("method", PLAIN_METHODS)
def test_plain_request_object_matches_build_request(recorder: RecordingServer, method: str) -> None:
    url = recorder.url + "/echo"
    with requestx.Client() as client:
        response = client.request(method, url)
        built = client.build_request(method, url)
    request = response.request
    assert (request.method, request.url) == (built.method, built.url)
    assert request.headers.raw == built.headers.raw
    assert request.extensions == built.extensions
    assert request.content == built.content == b""
    # The request's headers and extensions are its own: changing them leaves the client alone.
    request.headers["X-Later"] = "1"
    request.extensions["x"] = 1
    assert "x-later" not in client.headers
    assert client.build_request("GET", url).extensions == built.extensions


# Each body as the server must receive it: its bytes, and the Content-Type it comes with.
BODIES: list[tuple[dict[str, typing.Any], bytes, str | None]] = [
    ({"json": {"a": [1, 2], "b": "ü"}}, '{"a":[1,2],"b":"ü"}'.encode(), "application/json"),
    ({"content": b"raw \x00 bytes"}, b"raw \x00 bytes", None),
    ({"content": "text"}, b"text", None),
    ({"content": b""}, b"", None),
    (
        {"data": {"field": "two words", "n": "1"}},
        b"field=two+words&n=1",
        "application/x-www-form-urlencoded",
    ),
    ({"json": None}, b"", None),
]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "GET"])
@pytest.mark.parametrize(("body", "sent", "content_type"), BODIES, ids=lambda v: str(v)[:12])
def test_bodies_on_the_plain_path(
    server: HypercornServer,
    method: str,
    body: dict[str, typing.Any],
    sent: bytes,
    content_type: str | None,
) -> None:
    """content=, data= and json= take the plain path too (`Request(...)` encodes them, as on
    the general path; only the send layers are skipped). hypercorn receives the body's exact
    bytes, framed by a Content-Length that matches them (`Content-Length: 0` for an empty
    POST, PUT or PATCH, none for an empty GET or DELETE), its Content-Type, and the client's
    own headers."""
    url = server.url + "/echo"
    with requestx.Client(headers={"X-Custom": "one"}) as client:
        spy = GeneralPathSpy(client)
        echo = client.request(method, url, **body).json()
        assert spy.calls == 0, "the plain path was not taken"
    headers = dict(echo["headers"])
    assert echo["method"] == method
    assert echo["body"].encode("latin-1") == sent
    if sent or method in ("POST", "PUT", "PATCH"):
        assert headers["content-length"] == str(len(sent))
    else:
        assert "content-length" not in headers
    assert "transfer-encoding" not in headers
    assert headers.get("content-type") == content_type
    assert headers["x-custom"] == "one"


def test_client_framing_headers_with_a_body_are_judged(recorder: RecordingServer) -> None:
    """A client-level Content-Length that contradicts the body is refused before anything is
    sent, by the general path's framing check, whichever way the body is given."""
    with requestx.Client(headers={"Content-Length": "0"}) as client:
        for body in ({"json": {"a": 1}}, {"content": b"abc"}, {"data": {"k": "v"}}):
            recorder.reset()
            with pytest.raises(requestx.LocalProtocolError):
                client.post(recorder.url + "/x", **body)
            assert recorder.heads == []
    with requestx.Client(headers={"Host": "example.test"}) as client:
        head = _heads_of(recorder, lambda: client.post(recorder.url + "/x", content=b"abc"))[0]
    assert head.header("host") == "example.test"
    assert [name.lower() for name, *_ in head.fields].count("host") == 1


def test_streamed_bodies_on_the_plain_path(server: HypercornServer) -> None:
    def chunks() -> typing.Iterator[bytes]:
        yield b"one "
        yield b"two"

    with requestx.Client() as client:
        spy = GeneralPathSpy(client)
        seen = client.post(server.url + "/echo", content=chunks()).json()
        assert spy.calls == 0
    assert seen["body"] == "one two"
    assert ["transfer-encoding", "chunked"] in seen["headers"]


def test_plain_get_against_nginx_and_hypercorn(nginx: Nginx, server: HypercornServer) -> None:
    with requestx.Client() as client:
        spy = GeneralPathSpy(client)
        before = nginx.handled_requests()
        for _ in range(20):
            assert client.get(nginx.url + "/get").text == "Hello, world!"
        assert nginx.handled_requests() - before == 20
        echoed = client.get(server.url + "/echo").json()
        assert spy.calls == 0
    assert echoed["method"] == "GET"
    names = [name for name, _ in echoed["headers"]]
    assert names[0] == "host"
    assert names.count("host") == 1
    assert "content-length" not in names and "transfer-encoding" not in names


def test_redirects_from_the_plain_path(server: HypercornServer) -> None:
    with requestx.Client(follow_redirects=True) as client:
        response = client.get(server.url + "/redirect/chain/2")
        assert response.status_code == 200
        assert response.url == server.url + "/echo"
        assert [r.status_code for r in response.history] == [302, 302, 302]
        assert [r.history for r in response.history][2][0] is response.history[0]
        assert response.history[0].request.url == server.url + "/redirect/chain/2"
    with requestx.Client() as client:
        response = client.get(server.url + "/redirect/chain/0")
        assert response.status_code == 302 and response.history == []
        assert response.next_request is not None
        assert response.next_request.url == server.url + "/echo"
        followed = client.get(server.url + "/redirect/chain/0", follow_redirects=True)
        assert followed.status_code == 200 and len(followed.history) == 1
    with (
        requestx.Client(follow_redirects=True, max_redirects=3) as client,
        pytest.raises(requestx.TooManyRedirects),
    ):
        client.get(server.url + "/redirect/loop")


def test_each_redirect_hop_is_requested_once(server: HypercornServer) -> None:
    """The plain path hands a redirect answer to the redirect loop, which must go on from it,
    not send the first request again: counted at the server, sync and async."""
    with requestx.Client(follow_redirects=True) as client:
        server.reset_stats()
        assert client.get(server.url + "/redirect/chain/2").status_code == 200
        assert server.request_count() == 4  # three redirects, then /echo
        server.reset_stats()
        client.post(server.url + "/redirect/307", content=b"body")
        assert server.request_count() == 2

    async def run() -> None:
        async with requestx.AsyncClient(follow_redirects=True) as client:
            server.reset_stats()
            assert (await client.get(server.url + "/redirect/chain/1")).status_code == 200
            assert server.request_count() == 3

    anyio.run(run)


def test_answers_the_compiled_path_hands_back_to_python(server: HypercornServer) -> None:
    """`_hotpath.send_plain` hands an answer with Set-Cookie, a redirect (of any bodiless
    method, with `follow_redirects` given per call) and a client's own default encoding to
    the client's Python; each is checked by what the caller and the server saw."""
    with requestx.Client(default_encoding="latin-1") as client:
        spy = GeneralPathSpy(client)
        server.reset_stats()
        response = client.get(server.url + "/cookies/set?flavour=oat")
        assert response.status_code == 200 and spy.calls == 0
        assert client.cookies["flavour"] == "oat"
        assert response.default_encoding == "latin-1"
        # The jar is no longer empty: the next request takes the general path and sends it.
        assert client.get(server.url + "/cookies").json() == {"cookie": "flavour=oat"}
        assert spy.calls == 1
        assert server.request_count() == 2
    with requestx.Client() as client:
        for method in PLAIN_METHODS:
            server.reset_stats()
            answer = client.request(method, server.url + "/redirect/chain/1")
            assert answer.status_code == 302 and answer.next_request is not None
            assert server.request_count() == 1
            followed = client.request(
                method, server.url + "/redirect/chain/1", follow_redirects=True
            )
            assert followed.status_code == 200 and len(followed.history) == 2
            assert server.request_count() == 1 + 3, method


def test_content_encoding_on_the_compiled_path(tmp_path: typing.Any) -> None:
    """An encoded answer is decoded by `_hotpath.engine_response` as on the general path."""
    document = b'{"items": [1, 2, 3]}' * 50
    with (
        nginx_or_skip(encoded={"gz": ("gzip", gzip.compress(document))}) as nginx,
        requestx.Client() as client,
    ):
        spy = GeneralPathSpy(client)
        plain = client.get(nginx.url + "/encoded/gz")
        general = client.get(nginx.url + "/encoded/gz", headers={})
        assert spy.calls == 1
    assert plain.content == general.content == document
    assert plain.headers["content-encoding"] == "gzip"
    assert plain.num_bytes_downloaded == general.num_bytes_downloaded < len(document)


def test_changes_after_construction_are_honoured(recorder: RecordingServer) -> None:
    url = recorder.url + "/x"
    with requestx.Client() as client:
        seen: list[str] = []
        client.event_hooks["request"].append(lambda request: seen.append("request"))
        client.get(url)
        assert seen == ["request"]
        client.event_hooks = {"response": [lambda response: seen.append("response")]}
        client.get(url)
        assert seen == ["request", "response"]
        client.event_hooks = {}

        client.cookies.set("session", "s-1")
        assert _heads_of(recorder, lambda: client.get(url))[0].header("cookie") == "session=s-1"
        client.cookies.clear()
        assert _heads_of(recorder, lambda: client.get(url))[0].header("cookie") is None

        client.auth = ("user", "pass")
        head = _heads_of(recorder, lambda: client.get(url))[0]
        assert head.header("authorization") == "Basic dXNlcjpwYXNz"
        client.auth = None

        client.params = {"p": "1"}
        assert _heads_of(recorder, lambda: client.get(url))[0].target == "/x?p=1"
        client.params = {}

        client.headers["X-Added"] = "yes"
        assert _heads_of(recorder, lambda: client.get(url))[0].header("x-added") == "yes"
        client.headers = {"Accept": "text/plain"}
        head = _heads_of(recorder, lambda: client.get(url))[0]
        assert head.header("accept") == "text/plain" and head.header("x-added") is None


@pytest.mark.parametrize(
    ("header", "value"),
    [("Host", "example.test"), ("Content-Length", "0")],
)
def test_client_headers_that_the_general_path_decides(
    recorder: RecordingServer, header: str, value: str
) -> None:
    """A client-level Host or framing header is the general path's to judge: the head sent is
    the one `send(build_request(...))` sends, with the header once."""
    url = recorder.url + "/x"
    with requestx.Client(headers={header: value}) as client:
        sent = _heads_of(recorder, lambda: client.get(url))
        general = _heads_of(recorder, lambda: client.send(client.build_request("GET", url)))
    assert len(sent) == len(general) == 1
    assert sent[0].fields == general[0].fields
    assert sent[0].header(header) == value
    assert [name.lower() for name, *_ in sent[0].fields].count(header.lower()) == 1


def test_client_level_chunked_framing_as_on_the_general_path(server: HypercornServer) -> None:
    """(The recorder frames bodies by Content-Length only: hypercorn reports this one.)"""
    url = server.url + "/echo"
    with requestx.Client(headers={"Transfer-Encoding": "chunked"}) as client:
        plain = client.get(url).json()
        general = client.send(client.build_request("GET", url)).json()
    assert plain["headers"] == general["headers"]
    assert ["transfer-encoding", "chunked"] in plain["headers"]


def test_urls_the_plain_path_leaves_alone(recorder: RecordingServer) -> None:
    with requestx.Client(base_url=recorder.url + "/base") as client:
        assert _heads_of(recorder, lambda: client.get("rel"))[0].target == "/base/rel"
        credentials = recorder.url.replace("http://", "http://u:p@") + "/x"
        head = _heads_of(recorder, lambda: client.get(credentials))[0]
        assert head.header("authorization") == "Basic dTpw"
    with requestx.Client() as client:
        for bad in ("ftp://127.0.0.1/x", "http:///x", "//127.0.0.1/x", "x"):
            with pytest.raises(requestx.UnsupportedProtocol) as plain:
                client.get(bad)
            with pytest.raises(requestx.UnsupportedProtocol) as general:
                client.send(client.build_request("GET", bad))
            assert str(plain.value) == str(general.value)
        # a URL object, and a method the plain path does not build, take the general path
        head = _heads_of(recorder, lambda: client.get(requestx.URL(recorder.url + "/u")))[0]
        assert head.target == "/u"
        head = _heads_of(recorder, lambda: client.request("post", recorder.url + "/p"))[0]
        assert head.request_line.startswith("POST /p ") and head.header("content-length") == "0"


def test_a_subclass_that_overrides_a_send_step_is_called(recorder: RecordingServer) -> None:
    calls: list[str] = []

    class Recording(requestx.Client):
        def send(self, request: requestx.Request, **kwargs: typing.Any) -> requestx.Response:
            calls.append(request.method)
            return super().send(request, **kwargs)

    class Building(requestx.Client):
        def build_request(self, method: str, url: typing.Any, **kwargs: typing.Any) -> typing.Any:
            request = super().build_request(method, url, **kwargs)
            request.headers["X-Built"] = "1"
            return request

    class Requesting(requestx.Client):
        def request(self, method: str, url: typing.Any, **kwargs: typing.Any) -> typing.Any:
            calls.append("request " + method)
            return super().request(method, url, **kwargs)

    with Recording() as client:
        client.get(recorder.url + "/x")
    assert calls == ["GET"]
    with Building() as client:
        assert _heads_of(recorder, lambda: client.get(recorder.url + "/x"))[0].header("x-built")
    # `get` goes to the plain path without calling `request`, unless a subclass overrides it
    with Requesting() as client:
        assert _heads_of(recorder, lambda: client.get(recorder.url + "/r"))[0].target == "/r"
    assert calls == ["GET", "request GET"]


@pytest.mark.anyio
async def test_an_async_subclass_that_overrides_request_is_called(
    recorder: RecordingServer,
) -> None:
    calls: list[str] = []

    class Requesting(requestx.AsyncClient):
        async def request(self, method: str, url: typing.Any, **kwargs: typing.Any) -> typing.Any:
            calls.append(method)
            return await super().request(method, url, **kwargs)

    async with Requesting() as client:
        with anyio.fail_after(10):
            response = await client.get(recorder.url + "/r")
            assert response.status_code == 200
            await client.request("GET", recorder.url + "/q")
    assert calls == ["GET", "GET"]
    assert [head.target for head in recorder.heads[-2:]] == ["/r", "/q"]


def test_closed_client_and_engine_errors(nginx: Nginx) -> None:
    client = requestx.Client()
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.get(nginx.url + "/get")
    with pytest.raises(RuntimeError, match="closed"), client.stream("GET", nginx.url + "/get"):
        pass
    with requestx.Client(timeout=2) as client:
        with pytest.raises(requestx.ConnectError) as caught:
            client.get("http://127.0.0.1:9/unreachable")
        assert caught.value.request.url == "http://127.0.0.1:9/unreachable"
        with (
            pytest.raises(requestx.ConnectError) as caught,
            client.stream("GET", "http://127.0.0.1:9/unreachable"),
        ):
            pass
        assert caught.value.request.url == "http://127.0.0.1:9/unreachable"
        # the client goes on working after an error on the plain path
        assert client.get(nginx.url + "/get").status_code == 200
        with client.stream("GET", nginx.url + "/get") as response:
            assert response.read() == b"Hello, world!"


def test_mounts_and_custom_transports_are_used(recorder: RecordingServer) -> None:
    seen: list[str] = []

    class Transport(requestx.BaseTransport):
        def handle_request(self, request: requestx.Request) -> requestx.Response:
            seen.append(str(request.url))
            return requestx.Response(204)

    with requestx.Client(mounts={"http://127.0.0.1": Transport()}) as client:
        assert client.get(recorder.url + "/m").status_code == 204
    with requestx.Client(transport=Transport()) as client:
        assert client.get(recorder.url + "/t").status_code == 204
    assert seen == [recorder.url + "/m", recorder.url + "/t"]


class AsyncGeneralPathSpy:
    """GeneralPathSpy for an AsyncClient."""

    def __init__(self, client: requestx.AsyncClient) -> None:
        self.calls = 0
        original = client._send_handling_redirects

        async def counted(*args: typing.Any, **kwargs: typing.Any) -> typing.Any:
            self.calls += 1
            return await original(*args, **kwargs)

        client._send_handling_redirects = counted  # type: ignore[method-assign]


@pytest.mark.anyio
async def test_async_plain_and_general_paths_send_the_same_head(
    recorder: RecordingServer, server: HypercornServer
) -> None:
    url = recorder.url + "/a?b=c"
    async with requestx.AsyncClient(headers={"X-Custom": "one"}) as client:
        spy = AsyncGeneralPathSpy(client)
        for method in PLAIN_METHODS:
            recorder.reset()
            await client.request(method, url)
            plain = list(recorder.heads)
            assert spy.calls == 0, "the plain path was not taken"
            recorder.reset()
            await client.request(method, url, headers={})
            assert spy.calls == 1
            spy.calls = 0
            assert len(plain) == len(recorder.heads) == 1
            assert plain[0].request_line == recorder.heads[0].request_line
            assert plain[0].fields == recorder.heads[0].fields
        echoed = (await client.get(server.url + "/echo")).json()
        assert [name for name, _ in echoed["headers"]][0] == "host"
        assert spy.calls == 0


@pytest.mark.anyio
async def test_async_get_hands_answers_back_to_python(server: HypercornServer) -> None:
    """`AsyncClient.get(url)` awaits the engine itself and hands an answer with Set-Cookie,
    a redirect or a client's own default encoding to `_finish_plain`; a closed client
    raises as on the general path. Checked by what the caller and the server saw."""
    async with requestx.AsyncClient(default_encoding="latin-1") as client:
        spy = AsyncGeneralPathSpy(client)
        server.reset_stats()
        response = await client.get(server.url + "/cookies/set?flavour=oat")
        assert response.status_code == 200 and spy.calls == 0
        assert client.cookies["flavour"] == "oat"
        assert response.default_encoding == "latin-1"
        assert (await client.get(server.url + "/cookies")).json() == {"cookie": "flavour=oat"}
        assert server.request_count() == 2
    async with requestx.AsyncClient(follow_redirects=True) as client:
        spy = AsyncGeneralPathSpy(client)
        server.reset_stats()
        followed = await client.get(server.url + "/redirect/chain/1")
        assert followed.status_code == 200 and len(followed.history) == 2
        assert server.request_count() == 3
        assert spy.calls == 1  # the redirect loop went on from the first answer
    with pytest.raises(RuntimeError, match="closed"):
        await client.get(server.url + "/echo")


@pytest.mark.anyio
async def test_async_plain_path_fallbacks_and_redirects(
    recorder: RecordingServer, server: HypercornServer
) -> None:
    url = recorder.url + "/x"
    async with requestx.AsyncClient(follow_redirects=True) as client:
        response = await client.get(server.url + "/redirect/chain/1")
        assert response.url == server.url + "/echo"
        assert [r.status_code for r in response.history] == [302, 302]
        seen: list[str] = []

        async def hook(response: requestx.Response) -> None:
            seen.append(response.request.method)

        client.event_hooks["response"].append(hook)
        await client.head(url)
        assert seen == ["HEAD"]
        client.event_hooks = {}
        client.cookies.set("session", "s-2")
        recorder.reset()
        await client.get(url)
        assert recorder.heads[0].header("cookie") == "session=s-2"
        client.cookies.clear()
        for bad in ("ftp://127.0.0.1/x", "x"):
            with pytest.raises(requestx.UnsupportedProtocol):
                await client.get(bad)
    with pytest.raises(RuntimeError, match="closed"):
        await client.get(url)


@pytest.mark.anyio
async def test_async_bodies_on_the_plain_path(server: HypercornServer) -> None:
    url = server.url + "/echo"
    async with requestx.AsyncClient() as client:
        spy = AsyncGeneralPathSpy(client)
        for body, sent, content_type in BODIES:
            echo = (await client.post(url, **body)).json()
            assert spy.calls == 0, body
            headers = dict(echo["headers"])
            assert echo["body"].encode("latin-1") == sent
            assert headers["content-length"] == str(len(sent))
            assert headers.get("content-type") == content_type
        # other keyword arguments take the general path
        await client.post(url, json={}, params={"p": "1"})
        assert spy.calls == 1


# --- streams: client.stream() takes the plain path too -------------------------------------------


STREAM_CALLS: list[tuple[str, dict[str, typing.Any]]] = [
    ("GET", {}),
    ("HEAD", {}),
    ("DELETE", {}),
    ("POST", {"json": {"a": [1, 2]}}),
    ("PUT", {"content": b"raw bytes"}),
    ("PATCH", {"data": {"field": "two words"}}),
]


def _stream_body(client: requestx.Client, method: str, url: str, **kwargs: typing.Any) -> bytes:
    with client.stream(method, url, **kwargs) as response:
        return response.read()


@pytest.mark.parametrize(("method", "body"), STREAM_CALLS, ids=[m for m, _ in STREAM_CALLS])
def test_plain_and_general_streams_send_the_same_head(
    recorder: RecordingServer, method: str, body: dict[str, typing.Any]
) -> None:
    """Each request is sent once, and the plain stream's head is the general path's, byte for
    byte (the recorder frames request bodies by Content-Length, which these all have)."""
    url = recorder.url + "/s?q=1"
    with requestx.Client(headers={"X-Custom": "one"}) as client:
        spy = GeneralPathSpy(client)
        plain = _heads_of(recorder, lambda: _stream_body(client, method, url, **body))
        assert spy.calls == 0, "the plain path was not taken"
        general = _heads_of(recorder, lambda: _stream_body(client, method, url, headers={}, **body))
        assert spy.calls == 1
    assert len(plain) == len(general) == 1
    assert plain[0].raw == general[0].raw
    assert plain[0].request_line == f"{method} /s?q=1 HTTP/1.1"


@pytest.mark.anyio
@pytest.mark.parametrize(("method", "body"), STREAM_CALLS, ids=[m for m, _ in STREAM_CALLS])
async def test_plain_and_general_async_streams_send_the_same_head(
    recorder: RecordingServer, method: str, body: dict[str, typing.Any]
) -> None:
    url = recorder.url + "/s?q=1"
    heads: list[list[RecordedHead]] = []
    async with requestx.AsyncClient(headers={"X-Custom": "one"}) as client:
        spy = AsyncGeneralPathSpy(client)
        for extra in ({}, {"headers": {}}):
            recorder.reset()
            async with client.stream(method, url, **extra, **body) as response:
                assert await response.aread() == (b"" if method == "HEAD" else b"ok")
            heads.append(list(recorder.heads))
            assert spy.calls == len(extra), "plain path first, then the general one"
    plain, general = heads
    assert len(plain) == len(general) == 1
    assert plain[0].raw == general[0].raw


def test_plain_streams_against_nginx(nginx: Nginx) -> None:
    """Counted at nginx: one request per stream, all on one kept-alive connection; a stream
    left before its body is read drops its connection and the next stream still works."""
    with requestx.Client() as client:
        spy = GeneralPathSpy(client)
        before = nginx.handled_requests()
        accepted = nginx.accepted_connections()
        for _ in range(20):
            assert _stream_body(client, "GET", nginx.url + "/get") == b"Hello, world!"
        assert nginx.handled_requests() - before == 20
        assert nginx.accepted_connections() - accepted == 1
        with client.stream("GET", nginx.url + "/big") as response:
            assert response.status_code == 200  # closed unread
        assert _stream_body(client, "GET", nginx.url + "/get") == b"Hello, world!"
        assert nginx.handled_requests() - before == 22
        assert spy.calls == 0


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "h2c"])
def test_plain_streams_against_hypercorn(server: HypercornServer, http2: bool) -> None:
    """Request bodies arrive as sent, one request per stream, on one connection."""
    with requestx.Client(http1=not http2, http2=http2) as client:
        spy = GeneralPathSpy(client)
        server.reset_stats()
        for n in range(5):
            with client.stream("POST", server.url + "/echo", json={"n": n}) as response:
                response.read()
                seen = response.json()
                assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")
            assert seen["method"] == "POST" and seen["body"] == f'{{"n":{n}}}'
        assert server.request_count() == 5
        assert server.connection_count() == 1
        assert spy.calls == 0


def test_plain_stream_redirects(server: HypercornServer) -> None:
    """A redirect answer on the plain path goes on in the redirect loop: each hop requested
    once (counted at the server), its body read so the connection stays usable."""
    with requestx.Client(follow_redirects=True) as client:
        server.reset_stats()
        with client.stream("GET", server.url + "/redirect/chain/2") as response:
            assert response.status_code == 200
            assert response.url == server.url + "/echo"
            assert [hop.status_code for hop in response.history] == [302, 302, 302]
            assert all(hop.is_closed for hop in response.history)
            assert response.read()
        assert server.request_count() == 4
        # A 307 keeps method and body: each hop sends them once, and a 303 turns the POST
        # into a bodiless GET.
        for code, method, body in ((307, "POST", "body"), (303, "GET", "")):
            server.reset_stats()
            with client.stream("POST", server.url + f"/redirect/{code}", content=b"body") as r:
                r.read()
                echoed = r.json()
            assert (echoed["method"], echoed["body"]) == (method, body)
            assert [hop.status_code for hop in r.history] == [code]
            assert server.request_count() == 2
    with requestx.Client() as client:
        with client.stream("GET", server.url + "/redirect/chain/0") as response:
            assert response.status_code == 302 and response.history == []
            assert response.next_request is not None
        with client.stream("GET", server.url + "/redirect/chain/0", follow_redirects=True) as r:
            assert r.status_code == 200 and len(r.history) == 1

    async def run() -> None:
        async with requestx.AsyncClient(follow_redirects=True) as client:
            server.reset_stats()
            async with client.stream("GET", server.url + "/redirect/chain/1") as response:
                assert response.status_code == 200 and len(response.history) == 2
                await response.aread()
            assert server.request_count() == 3

    anyio.run(run)


def test_streams_that_the_general_path_shapes(recorder: RecordingServer) -> None:
    """Per-request options, and a client changed after it was made, reach the server from a
    stream as from `request`."""
    url = recorder.url + "/x"
    with requestx.Client() as client:
        spy = GeneralPathSpy(client)
        head = _heads_of(recorder, lambda: _stream_body(client, "GET", url, params={"p": "1"}))[0]
        assert head.target == "/x?p=1"
        head = _heads_of(recorder, lambda: _stream_body(client, "GET", url, auth=("u", "p")))[0]
        assert head.header("authorization") == "Basic dTpw"
        assert spy.calls == 2
        client.auth = ("user", "pass")
        head = _heads_of(recorder, lambda: _stream_body(client, "GET", url))[0]
        assert head.header("authorization") == "Basic dXNlcjpwYXNz"
        client.auth = None
        client.cookies.set("session", "s-1")
        assert (
            _heads_of(recorder, lambda: _stream_body(client, "GET", url))[0].header("cookie")
            == "session=s-1"
        )
        assert spy.calls == 4
        client.cookies.clear()
        assert (
            _heads_of(recorder, lambda: _stream_body(client, "GET", url))[0].header("cookie")
            is None
        )
        assert spy.calls == 4, "a plain client again: the plain path"


# --- the stream context ------------------------------------------------------------------------


def test_the_stream_context_closes_on_the_way_out(server: HypercornServer) -> None:
    """Leaving the block closes the response, also when the block raises (the error goes on),
    and the client's next request is answered."""
    url = server.url + "/bytes/200000"
    with requestx.Client() as client:
        with client.stream("GET", url) as response:
            assert response.status_code == 200 and not response.is_closed
        assert response.is_closed
        with pytest.raises(ValueError, match="in the block"), client.stream("GET", url) as failed:
            raise ValueError("in the block")
        assert failed.is_closed
        context = client.stream("GET", url)
        with context as response:
            assert len(response.read()) == 200000
        with pytest.raises(RuntimeError, match="entered once"), context:
            pass
        server.reset_stats()
        assert client.get(server.url + "/echo").status_code == 200
        assert server.request_count() == 1


@pytest.mark.anyio
async def test_the_async_stream_context_closes_on_the_way_out(server: HypercornServer) -> None:
    url = server.url + "/bytes/200000"
    async with requestx.AsyncClient() as client:
        async with client.stream("GET", url) as response:
            assert response.status_code == 200 and not response.is_closed
        assert response.is_closed
        with pytest.raises(ValueError, match="in the block"):
            async with client.stream("GET", url) as failed:
                raise ValueError("in the block")
        assert failed.is_closed
        context = client.stream("GET", url)
        async with context as response:
            assert len(await response.aread()) == 200000
        with pytest.raises(RuntimeError, match="entered once"):
            async with context:
                pass
        chunks = []
        async with client.stream("GET", url) as response:
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
        assert len(b"".join(chunks)) == 200000
        assert (await client.get(server.url + "/echo")).status_code == 200


def test_settings_replaced_after_construction_reach_the_plain_path(
    recorder: RecordingServer, raw_server: RawServer
) -> None:
    # The client's plan is rebuilt by each setter of what it holds: a new cookie jar and a
    # new timeout take effect on the very next plain call.
    with requestx.Client(timeout=5) as client:
        client.cookies = {"session": "s-2"}
        head = _heads_of(recorder, lambda: client.get(recorder.url + "/x"))[0]
        assert head.header("cookie") == "session=s-2"
        client.timeout = 0.2
        started = time.monotonic()
        with pytest.raises(requestx.ReadTimeout, match=r"read timeout \(0.2 s\)"):
            client.get(raw_server.url + "/stall")
        assert time.monotonic() - started < 2
