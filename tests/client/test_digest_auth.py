"""DigestAuth against a server-side verifier written independently (tests/servers/digest.py),
plus a differential check against httpx's DigestAuth answering the same server."""

from __future__ import annotations

import httpx
import pytest

import requestx
from tests.servers import HypercornServer


@pytest.mark.parametrize("qop", ["auth", "auth-int", "none"])
@pytest.mark.parametrize("algorithm", ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess", "SHA-512"])
def test_digest_auth_is_accepted(server: HypercornServer, qop: str, algorithm: str) -> None:
    auth = requestx.DigestAuth("user", "passwd")
    with requestx.Client(base_url=server.url) as client:
        response = client.post(f"/digest-auth/{qop}/{algorithm}", content=b"body", auth=auth)
        assert response.status_code == 200, response.text
        assert [r.status_code for r in response.history] == [401]
        # The challenge is remembered: the next request authenticates at once (nc grows).
        again = client.post(f"/digest-auth/{qop}/{algorithm}", content=b"body", auth=auth)
        assert again.status_code == 200 and again.history == []
        if qop != "none":
            assert "nc=00000002" in again.json()["authorization"]


def test_wrong_password_ends_with_the_401(server: HypercornServer) -> None:
    with requestx.Client(base_url=server.url) as client:
        response = client.get("/digest-auth/auth/MD5", auth=requestx.DigestAuth("user", "nope"))
    assert response.status_code == 401
    assert len(response.history) == 1  # one retry with credentials, then the answer


def test_a_401_without_a_digest_challenge_is_returned_as_is(server: HypercornServer) -> None:
    with requestx.Client(base_url=server.url) as client:
        response = client.get("/status/401", auth=requestx.DigestAuth("user", "passwd"))
    assert response.status_code == 401 and response.history == []


def test_header_matches_httpx_for_the_same_challenge(server: HypercornServer) -> None:
    # Both clients answer the same server's challenge (its nonce is fixed) and are accepted by
    # its verifier; their Authorization headers then agree but for the client nonce, which
    # each draws at random, and the digest that depends on it.
    url = server.url + "/digest-auth/auth/SHA-256?q=1"
    with requestx.Client() as client:
        ours = client.get(url, auth=requestx.DigestAuth("user", "passwd"))
    with httpx.Client() as client:
        theirs = client.get(url, auth=httpx.DigestAuth("user", "passwd"))
    assert ours.status_code == theirs.status_code == 200

    def fields(header: str) -> dict[str, str]:
        parts = [p.strip().split("=", 1) for p in header[len("Digest ") :].split(",")]
        return {k: v.strip('"') for k, v in parts}

    ours_fields = fields(ours.request.headers["Authorization"])
    their_fields = fields(theirs.request.headers["Authorization"])
    for name in ("username", "realm", "nonce", "uri", "algorithm", "opaque", "qop", "nc"):
        assert ours_fields[name].lower() == their_fields[name].lower(), name


@pytest.mark.anyio
async def test_async_digest_auth(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        response = await client.get(
            "/digest-auth/auth/SHA-256", auth=requestx.DigestAuth("user", "passwd")
        )
    assert response.status_code == 200
