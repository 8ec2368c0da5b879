"""Redirects, followed in Python with httpx's rules, in blocking and async clients.

Against the suite's ASGI server: /redirect/{code}[/absolute|/relative][?to=URL] answers with
that status and a Location pointing at /echo (or `to`), /redirect/chain/{n} takes n hops,
/redirect/loop points at itself.
"""

from __future__ import annotations

import typing

import pytest

import requestx
from tests.servers import HypercornServer


def _echo(response: requestx.Response) -> dict[str, typing.Any]:
    return typing.cast("dict[str, typing.Any]", response.json())


def _header(echo: dict[str, typing.Any], name: str) -> str | None:
    values = [value for key, value in echo["headers"] if key == name]
    return values[0] if values else None


def test_not_followed_by_default_and_next_request_is_set(client: requestx.Client) -> None:
    response = client.get("/redirect/302")
    assert response.status_code == 302
    assert response.is_redirect and response.has_redirect_location
    assert response.next_request is not None
    assert response.next_request.url.path == "/echo"
    followed = client.send(response.next_request)
    assert followed.status_code == 200


@pytest.mark.parametrize("shape", ["", "/absolute", "/relative"])
@pytest.mark.parametrize(
    "code, method_after, body_after",
    [
        (301, "GET", ""),
        (302, "GET", ""),
        (303, "GET", ""),
        (307, "POST", "data"),
        (308, "POST", "data"),
    ],
)
def test_post_redirects_change_method_and_body_like_httpx(
    client: requestx.Client, code: int, shape: str, method_after: str, body_after: str
) -> None:
    response = client.post(
        f"/redirect/{code}{shape}",
        content=b"data",
        headers={"Content-Type": "text/plain"},
        follow_redirects=True,
    )
    echo = _echo(response)
    assert response.status_code == 200
    assert echo["method"] == method_after
    assert echo["body"] == body_after
    # Headers describing a dropped body are dropped with it.
    assert (_header(echo, "content-type") is None) == (body_after == "")
    assert [r.status_code for r in response.history] == [code]
    assert response.url.path == "/echo"


def test_history_and_too_many_redirects(client: requestx.Client, server: HypercornServer) -> None:
    response = client.get("/redirect/chain/3", follow_redirects=True)
    assert [r.url.path for r in response.history] == [
        "/redirect/chain/3",
        "/redirect/chain/2",
        "/redirect/chain/1",
        "/redirect/chain/0",
    ]
    assert response.history[-1].history == response.history[:-1]
    with pytest.raises(requestx.TooManyRedirects):
        client.get("/redirect/loop", follow_redirects=True)
    client.max_redirects = 2
    with pytest.raises(requestx.TooManyRedirects) as info:
        client.get("/redirect/chain/3", follow_redirects=True)
    assert info.value.request.url.path.startswith("/redirect/chain/")
    assert client.get("/redirect/chain/1", follow_redirects=True).status_code == 200


def test_authorization_kept_on_same_origin_stripped_across_origins(
    client: requestx.Client, server: HypercornServer
) -> None:
    auth = {"Authorization": "Bearer secret"}
    same = _echo(client.get("/redirect/302", headers=auth, follow_redirects=True))
    assert _header(same, "authorization") == "Bearer secret"
    # "localhost" is another origin than "127.0.0.1", though the same server.
    other = server.url.replace("127.0.0.1", "localhost") + "/echo"
    crossed = _echo(client.get(f"/redirect/302?to={other}", headers=auth, follow_redirects=True))
    assert crossed["path"] == "/echo"
    assert _header(crossed, "authorization") is None


def test_cookies_are_rederived_from_the_jar_on_every_hop(
    client: requestx.Client, server: HypercornServer
) -> None:
    client.cookies.set("session", "abc", domain="127.0.0.1")
    echo = _echo(client.get("/redirect/302", follow_redirects=True))
    assert _header(echo, "cookie") == "session=abc"
    other = server.url.replace("127.0.0.1", "localhost") + "/echo"
    crossed = _echo(client.get(f"/redirect/302?to={other}", follow_redirects=True))
    assert _header(crossed, "cookie") is None  # the jar's cookie belongs to 127.0.0.1


@pytest.mark.parametrize(
    "target", ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"]
)
def test_redirects_to_other_schemes_are_refused(client: requestx.Client, target: str) -> None:
    with pytest.raises(requestx.UnsupportedProtocol) as info:
        client.get(f"/redirect/302?to={target}", follow_redirects=True)
    assert info.value.request.url.path == "/redirect/302"
    assert client.get("/json").status_code == 200


def test_unparseable_location_is_a_request_error(client: requestx.Client) -> None:
    with pytest.raises(requestx.RemoteProtocolError):
        client.get("/redirect/302?to=http://[::1", follow_redirects=True)
    assert client.get("/json").status_code == 200


def test_top_level_function_follows_when_asked(server: HypercornServer) -> None:
    assert requestx.get(server.url + "/redirect/303").status_code == 303
    response = requestx.get(server.url + "/redirect/303", follow_redirects=True)
    assert response.status_code == 200 and len(response.history) == 1


def test_client_default_follow_redirects(server: HypercornServer) -> None:
    with requestx.Client(base_url=server.url, follow_redirects=True) as client:
        assert client.get("/redirect/307").status_code == 200
        assert client.get("/redirect/307", follow_redirects=False).status_code == 307


@pytest.mark.anyio
async def test_async_client_follows_redirects(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url, follow_redirects=True) as client:
        response = await client.post("/redirect/308", content=b"data")
        echo = _echo(response)
        assert (echo["method"], echo["body"]) == ("POST", "data")
        assert [r.status_code for r in response.history] == [308]
        with pytest.raises(requestx.TooManyRedirects):
            await client.get("/redirect/loop")
        with pytest.raises(requestx.UnsupportedProtocol):
            await client.get("/redirect/302?to=file:///etc/passwd")
        assert (await client.get("/redirect/chain/2")).status_code == 200
