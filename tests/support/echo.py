"""What the suite's server (tests/servers/app.py) received, and whether a client still works."""

from __future__ import annotations

import base64

import requestx
from tests.servers import HypercornServer
from tests.servers.app import HELLO


def received(response: requestx.Response, name: str) -> list[str]:
    """Values of header `name` as the server received them (from an /echo response)."""
    return [value for key, value in response.json()["headers"] if key == name.lower()]


def basic(user: str, password: str) -> str:
    """The `Authorization` (or `Proxy-Authorization`) value of Basic credentials."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def still_works(client: requestx.Client, server: HypercornServer) -> None:
    """A good request on `client` succeeds: the failure before it did not poison the client."""
    response = client.get(server.url + "/")
    assert response.status_code == 200
    assert response.content == HELLO


async def still_works_async(client: requestx.AsyncClient, server: HypercornServer) -> None:
    """`still_works` for an `AsyncClient`."""
    response = await client.get(server.url + "/")
    assert response.status_code == 200
    assert response.content == HELLO
