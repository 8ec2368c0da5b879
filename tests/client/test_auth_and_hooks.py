"""Authentication (Basic, callables, custom generator flows, URL credentials) and event hooks,
in blocking and async clients, against the suite's ASGI server (/echo shows what arrived)."""

from __future__ import annotations

import typing

import pytest

import requestx
from tests.servers import HypercornServer
from tests.support.echo import basic


def _authorization(response: requestx.Response) -> str | None:
    values = [v for k, v in response.json()["headers"] if k == "authorization"]
    return values[0] if values else None


def test_basic_auth_on_client_and_per_request(server: HypercornServer) -> None:
    with requestx.Client(base_url=server.url, auth=("alice", "s3cret")) as client:
        assert _authorization(client.get("/echo")) == basic("alice", "s3cret")
        per_request = client.get("/echo", auth=requestx.BasicAuth("bob", "pw"))
        assert _authorization(per_request) == basic("bob", "pw")
        client.auth = None
        assert _authorization(client.get("/echo")) is None


def test_credentials_from_the_url(server: HypercornServer) -> None:
    url = server.url.replace("http://", "http://carol:p%40ss@") + "/echo"
    assert _authorization(requestx.get(url)) == basic("carol", "p@ss")


def test_function_auth(server: HypercornServer) -> None:
    def sign(request: requestx.Request) -> requestx.Request:
        request.headers["Authorization"] = "Signed " + request.method
        return request

    with requestx.Client(base_url=server.url, auth=sign) as client:  # a plain callable
        assert _authorization(client.post("/echo", content=b"x")) == "Signed POST"


class _RetryWithToken(requestx.Auth):
    """A flow that needs a round trip: the first answer (401) decides the second request."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def auth_flow(
        self, request: requestx.Request
    ) -> typing.Generator[requestx.Request, requestx.Response, None]:
        response = yield request
        self.seen.append(response.status_code)
        if response.status_code == 401:
            retry = requestx.Request("GET", request.url.copy_with(path="/echo"))
            retry.headers["Authorization"] = "Token fresh"
            yield retry


def test_custom_auth_generator_flow(server: HypercornServer) -> None:
    auth = _RetryWithToken()
    with requestx.Client(base_url=server.url) as client:
        response = client.get("/status/401", auth=auth)
    assert auth.seen == [401]
    assert response.status_code == 200
    assert _authorization(response) == "Token fresh"
    assert [r.status_code for r in response.history] == [401]


def test_invalid_auth_argument_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        requestx.Client(auth=123)


def test_event_hooks_run_per_hop_and_propagate(server: HypercornServer) -> None:
    calls: list[str] = []
    hooks = {
        "request": [lambda request: calls.append(f"> {request.url.path}")],
        "response": [lambda response: calls.append(f"< {response.status_code}")],
    }
    with requestx.Client(base_url=server.url, event_hooks=hooks) as client:
        client.get("/redirect/chain/1", follow_redirects=True)
        assert calls == [
            "> /redirect/chain/1",
            "< 302",
            "> /redirect/chain/0",
            "< 302",
            "> /echo",
            "< 200",
        ]

        def fail(response: requestx.Response) -> None:
            response.raise_for_status()

        client.event_hooks = {"response": [fail]}
        assert client.event_hooks == {"request": [], "response": [fail]}
        with pytest.raises(requestx.HTTPStatusError):
            client.get("/status/500")
        assert client.get("/json").status_code == 200


@pytest.mark.anyio
async def test_async_auth_and_hooks(server: HypercornServer) -> None:
    seen: list[int] = []

    async def on_response(response: requestx.Response) -> None:
        seen.append(response.status_code)

    async with requestx.AsyncClient(
        base_url=server.url, auth=("alice", "s3cret"), event_hooks={"response": [on_response]}
    ) as client:
        assert _authorization(await client.get("/echo")) == basic("alice", "s3cret")
        auth = _RetryWithToken()
        response = await client.get("/status/401", auth=auth)
        assert _authorization(response) == "Token fresh"
        assert auth.seen == [401]
    assert seen == [200, 401, 200]
