"""Credentials in a URL travel only where the auth flow puts them.

Given a URL's userinfo, libcurl sends its own `Authorization: Basic` header, even beside
another auth such as DigestAuth. httpx's rule must hold instead: with no auth given, the URL's
credentials become Basic auth, once; with an auth given, that auth alone. What arrived is read
back from the server's /echo.
"""

from __future__ import annotations

import anyio
import pytest

import requestx
from tests.servers import HypercornServer


def _authorization_headers(response: requestx.Response) -> list[str]:
    return [value for name, value in response.json()["headers"] if name == "authorization"]


def test_url_credentials_are_not_sent_beside_another_auth(server: HypercornServer) -> None:
    host = server.url.split("//", 1)[1]
    with requestx.Client(timeout=5) as client:
        # /echo never challenges, so DigestAuth sends nothing; neither may anyone else.
        response = client.get(f"http://user:pass@{host}/echo", auth=requestx.DigestAuth("d", "e"))
        assert _authorization_headers(response) == []
        # With no auth given, httpx's rule: the URL's credentials become Basic auth, once.
        response = client.get(f"http://user:pass@{host}/echo")
        assert _authorization_headers(response) == ["Basic dXNlcjpwYXNz"]
        # An explicit header wins and is not joined by the URL's.
        response = client.get(
            f"http://user:pass@{host}/echo", auth=requestx.BasicAuth("other", "secret")
        )
        assert _authorization_headers(response) == ["Basic b3RoZXI6c2VjcmV0"]


@pytest.mark.anyio
async def test_url_credentials_async(server: HypercornServer) -> None:
    host = server.url.split("//", 1)[1]
    async with requestx.AsyncClient(timeout=5) as client:
        with anyio.fail_after(10):
            response = await client.get(
                f"http://user:pass@{host}/echo", auth=requestx.DigestAuth("d", "e")
            )
    assert _authorization_headers(response) == []
