"""Small differences from httpx that users hit, each checked against httpx
0.28.1 on the same server, and against what the server saw.

* An empty reason phrase (`HTTP/1.1 200 `) reads "" (requestx gave the standard "OK").
* Basic auth encodes credentials as UTF-8 (requestx sent Latin-1).
* With `follow_redirects=False`, a 302 to `file://` or `ftp://` is returned to the caller
  (requestx raised UnsupportedProtocol); following it still raises.
* DigestAuth sends `algorithm=MD5` unquoted (RFC 7616), and a challenge without a realm or
  nonce raises ProtocolError (requestx raised ValueError or sent a meaningless answer).
"""

from __future__ import annotations

import base64
import types
from typing import Iterator

import httpx
import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.canned import CannedServer

CLIENTS = [pytest.param(requestx, id="requestx"), pytest.param(httpx, id="httpx")]


@pytest.fixture(scope="module")
def canned() -> Iterator[CannedServer]:
    answers = {
        "/empty-reason": b"HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok",
        "/to-file": b"HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\n"
        b"Content-Length: 0\r\n\r\n",
        "/to-ftp": b"HTTP/1.1 302 Found\r\nLocation: ftp://example.org/x\r\n"
        b"Content-Length: 0\r\n\r\n",
        "/digest-no-nonce": b'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Digest realm="r"\r\n'
        b"Content-Length: 0\r\n\r\n",
        "/digest-no-realm": b'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Digest nonce="n"\r\n'
        b"Content-Length: 0\r\n\r\n",
    }
    # The canned server closes each connection after its answer: say so, or a client may reuse
    # the connection before it sees the close and fail the next request (a race, not a bug).
    answers = {path: answer.replace(b"\r\n", b"\r\nConnection: close\r\n", 1)
               for path, answer in answers.items()}  # fmt: skip
    with CannedServer(answers) as server:
        yield server


@pytest.mark.parametrize("module", CLIENTS)
def test_an_empty_reason_phrase_is_empty(canned: CannedServer, module: types.ModuleType) -> None:
    with module.Client(timeout=5) as client:
        response = client.get(canned.url + "/empty-reason")
    assert (response.status_code, response.reason_phrase, response.text) == (200, "", "ok")


@pytest.mark.parametrize("module", CLIENTS)
def test_basic_auth_sends_utf8(server: HypercornServer, module: types.ModuleType) -> None:
    with module.Client(timeout=5) as client:
        seen = client.get(server.url + "/echo", auth=("usér", "päss")).json()
    (header,) = [v for n, v in seen["headers"] if n == "authorization"]
    assert base64.b64decode(header.removeprefix("Basic ")) == "usér:päss".encode()


@pytest.mark.parametrize("module", CLIENTS)
@pytest.mark.parametrize("path", ["/to-file", "/to-ftp"])
def test_a_redirect_to_another_scheme_is_returned_when_not_following(
    canned: CannedServer, module: types.ModuleType, path: str
) -> None:
    with module.Client(timeout=5) as client:
        response = client.get(canned.url + path)
        assert response.status_code == 302
        assert response.has_redirect_location
        assert response.next_request.url.scheme in ("file", "ftp")
        with pytest.raises(module.UnsupportedProtocol):
            client.get(canned.url + path, follow_redirects=True)


@pytest.mark.anyio
async def test_a_redirect_to_another_scheme_async(canned: CannedServer) -> None:
    async with requestx.AsyncClient(timeout=5) as client:
        assert (await client.get(canned.url + "/to-file")).status_code == 302
        with pytest.raises(requestx.UnsupportedProtocol):
            await client.get(canned.url + "/to-file", follow_redirects=True)


@pytest.mark.parametrize("module", CLIENTS)
def test_digest_sends_the_algorithm_unquoted(
    server: HypercornServer, module: types.ModuleType
) -> None:
    with module.Client(timeout=5) as client:
        response = client.get(
            server.url + "/digest-auth/auth/MD5", auth=module.DigestAuth("user", "passwd")
        )
    assert response.status_code == 200  # the server's verifier accepted it
    sent = response.request.headers["authorization"]
    assert "algorithm=MD5" in sent and 'algorithm="MD5"' not in sent
    assert "qop=auth," in sent and "nc=00000001" in sent


@pytest.mark.parametrize("module", CLIENTS)
@pytest.mark.parametrize("path", ["/digest-no-nonce", "/digest-no-realm"])
def test_a_malformed_digest_challenge_raises_protocol_error(
    canned: CannedServer, module: types.ModuleType, path: str
) -> None:
    with module.Client(timeout=5) as client, pytest.raises(module.ProtocolError):
        client.get(canned.url + path, auth=module.DigestAuth("user", "passwd"))
