"""httpx's transport extension point: MockTransport, custom transports, HTTPTransport settings
(including connect retries), NetRCAuth."""

from __future__ import annotations

import time
import typing

import pytest

import requestx
from tests.servers import HypercornServer
from tests.support.network import closed_port

# The transports below answer through the engine from the suite's real server: what is tested
# is the extension point (a handler or subclass in between) and the client's features on top
# of it, with real requests, not canned answers.


def test_mock_transport_answers_with_client_features_on_top(server: HypercornServer) -> None:
    seen: list[str] = []
    hooks = {"request": [lambda request: seen.append(request.url.path)]}
    with requestx.HTTPTransport() as upstream:
        transport = requestx.MockTransport(upstream.handle_request)
        with requestx.Client(transport=transport, base_url=server.url, event_hooks=hooks) as client:
            response = client.post("/echo", content=b"hello")
            echo = response.json()
            assert (echo["method"], echo["path"], echo["body"]) == ("POST", "/echo", "hello")
            assert response.request.url == server.url + "/echo"
            assert response.elapsed.total_seconds() >= 0
            followed = client.get("/redirect/302", follow_redirects=True)
            assert followed.json()["path"] == "/echo" and len(followed.history) == 1
            client.get("/cookies/set?flavour=oat")
            assert client.get("/cookies").json()["cookie"] == "flavour=oat"
            with client.stream("GET", "/json") as streamed:
                assert b"".join(streamed.iter_bytes()).startswith(b"{")
    assert seen == ["/echo", "/redirect/302", "/echo", "/cookies/set", "/cookies", "/json"]


def test_mock_transport_handler_must_return_a_response(server: HypercornServer) -> None:
    transport = requestx.MockTransport(lambda request: "nope")
    with requestx.Client(transport=transport) as client, pytest.raises(TypeError, match="Response"):
        client.get(server.url + "/json")


def test_custom_base_transport_subclass(server: HypercornServer) -> None:
    class Forwarding(requestx.BaseTransport):
        def __init__(self) -> None:
            self.upstream = requestx.HTTPTransport()
            self.closed = False

        def handle_request(self, request: requestx.Request) -> requestx.Response:
            return self.upstream.handle_request(request)

        def close(self) -> None:
            self.upstream.close()
            self.closed = True

    transport = Forwarding()
    with requestx.Client(transport=transport) as client:
        response = client.get(server.url + "/status/418")
        assert response.status_code == 418 and response.text == "status 418"
    assert transport.closed


@pytest.mark.anyio
async def test_mock_transport_async_with_async_handler(server: HypercornServer) -> None:
    upstream = requestx.AsyncHTTPTransport()

    async def handler(request: requestx.Request) -> requestx.Response:
        return await upstream.handle_async_request(request)

    transport = requestx.MockTransport(handler)
    async with upstream, requestx.AsyncClient(transport=transport, base_url=server.url) as client:
        response = await client.put("/echo", content=b"data")
        assert response.json()["body"] == "data"
        async with client.stream("GET", "/json") as streamed:
            assert (await streamed.aread()).startswith(b"{")


def test_client_sends_through_the_given_http_transport(server: HypercornServer) -> None:
    transport = requestx.HTTPTransport(limits=requestx.Limits(max_connections=1))
    with requestx.Client(transport=transport) as client:
        assert client._transport is transport
        assert client._engine is transport._engine  # called directly: the hot path
        assert client.get(server.url + "/json").json() == {"Hello": "world!"}
        assert transport._engine.stats()["completed"] == 1
    # Leaving the block closed the transport, as httpx's __exit__ does.
    with pytest.raises(requestx.TransportError):
        transport.handle_request(requestx.Request("GET", server.url + "/json"))


def test_http_transport_used_directly(server: HypercornServer) -> None:
    with requestx.HTTPTransport() as transport:
        response = transport.handle_request(requestx.Request("GET", server.url + "/bytes/10"))
        assert response.read() == bytes(range(10))
        response.close()


def test_http_transport_retries_connect_errors() -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    transport = requestx.HTTPTransport(retries=2)
    with requestx.Client(transport=transport) as client:
        started = time.monotonic()
        with pytest.raises(requestx.ConnectError):
            client.get(url)
        # Two retries: the first at once, the second after 0.5 s.
        assert time.monotonic() - started >= 0.5
        assert client._engine.stats()["completed"] == 3


@pytest.mark.anyio
async def test_async_http_transport_retries_connect_errors() -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    async with requestx.AsyncClient(transport=requestx.AsyncHTTPTransport(retries=1)) as client:
        with pytest.raises(requestx.ConnectError):
            await client.get(url)
        assert client._engine.stats()["completed"] == 2


def test_netrc_auth(server: HypercornServer, tmp_path: typing.Any) -> None:
    netrc_file = tmp_path / "netrc"
    netrc_file.write_text("machine 127.0.0.1\nlogin alice\npassword s3cret\n")
    netrc_file.chmod(0o600)
    with requestx.Client(auth=requestx.NetRCAuth(str(netrc_file))) as client:
        echo = client.get(server.url + "/echo").json()
    authorization = [value for name, value in echo["headers"] if name == "authorization"]
    assert authorization == [requestx.BasicAuth._build_auth_header("alice", "s3cret")]


@pytest.mark.parametrize(
    ("client_class", "transport_class"),
    [
        (requestx.Client, requestx.AsyncHTTPTransport),
        (requestx.AsyncClient, requestx.HTTPTransport),
    ],
)
def test_the_wrong_kind_of_engine_transport_is_refused(
    client_class: typing.Any, transport_class: typing.Any
) -> None:
    with pytest.raises(TypeError, match=f"needs .*HTTPTransport, not {transport_class.__name__}"):
        client_class(transport=transport_class())
    with pytest.raises(TypeError, match="needs"):
        client_class(mounts={"https://": transport_class()})
