"""Cookie rules against the real server: what the jar keeps, and what it sends where.

/headers/set?Set-Cookie=... makes the server send any Set-Cookie line; /cookies and /echo
report the Cookie header they received. The server is http://127.0.0.1, so a Secure cookie
must never be sent to it, and a Domain naming another host must not be stored.
"""

from __future__ import annotations

import typing
from urllib.parse import quote

import pytest

import requestx
from tests.servers import HypercornServer


def _set(client: requestx.Client, line: str) -> None:
    client.get(f"/headers/set?Set-Cookie={quote(line)}").raise_for_status()


def _sent(client: requestx.Client, path: str = "/cookies") -> str | None:
    if path == "/cookies":
        return typing.cast("str | None", client.get(path).json()["cookie"])
    headers = client.get(path).json()["headers"]
    values = [value for name, value in headers if name == "cookie"]
    return "; ".join(values) if values else None


def test_secure_cookies_are_never_sent_over_http(client: requestx.Client) -> None:
    _set(client, "token=secret; Secure; Path=/")
    _set(client, "plain=visible; Path=/")
    assert _sent(client) == "plain=visible"


def test_path_limits_where_a_cookie_goes(client: requestx.Client) -> None:
    _set(client, "scoped=1; Path=/echo")
    assert _sent(client, "/echo/inside") == "scoped=1"
    assert _sent(client) is None


def test_foreign_domain_is_not_stored(client: requestx.Client) -> None:
    _set(client, "foreign=1; Domain=example.org; Path=/")
    assert "foreign" not in client.cookies
    assert _sent(client) is None


def test_expiry_deletes_and_past_dates_are_not_stored(client: requestx.Client) -> None:
    _set(client, "short=1; Path=/")
    assert _sent(client) == "short=1"
    _set(client, "short=1; Max-Age=0; Path=/")  # the server deletes it
    assert _sent(client) is None
    _set(client, "old=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/")
    assert _sent(client) is None


def test_client_side_deletion_and_per_request_cookies(client: requestx.Client) -> None:
    _set(client, "kept=1; Path=/")
    _set(client, "dropped=2; Path=/")
    del client.cookies["dropped"]
    assert _sent(client) == "kept=1"
    # Per-request cookies are added to the jar's for that request only (httpx semantics).
    with pytest.warns(DeprecationWarning):
        once = client.get("/cookies", cookies={"extra": "3"}).json()["cookie"]
    assert sorted(once.split("; ")) == ["extra=3", "kept=1"]
    assert _sent(client) == "kept=1"


def test_cookies_given_to_the_client_are_sent(server: HypercornServer) -> None:
    with requestx.Client(base_url=server.url, cookies={"preset": "yes"}) as client:
        assert _sent(client) == "preset=yes"


@pytest.mark.anyio
async def test_async_secure_and_persistence(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        await client.get(f"/headers/set?Set-Cookie={quote('s=1; Secure; Path=/')}")
        await client.get(f"/headers/set?Set-Cookie={quote('p=2; Path=/')}")
        assert (await client.get("/cookies")).json()["cookie"] == "p=2"
