"""
Credentials that must not leak to another origin on a redirect, header injection refused
before any connection, and no state carried from one request to the next on a client (an
unverified TLS connection, a recycled handle's headers and cookies). Each test is named after
what it prevents (docs/security.md lists where each protection lives). What reached a server
is counted at the server: a raw recording server (tests/servers/recorder.py) beside hypercorn.
"""

from __future__ import annotations

import typing
import urllib.parse

import pytest

import requestx
from requestx import _client
from tests.servers import HypercornServer
from tests.servers.recorder import RecordingServer
from tests.support.tls import TLSFiles

SECRETS = {
    "Authorization": "Bearer secret-token",
    "Proxy-Authorization": "Basic cHJveHk6c2VjcmV0",
    "Cookie": "session=secret",
}


@pytest.fixture
def recorder() -> typing.Iterator[RecordingServer]:
    with RecordingServer() as running:
        yield running


def _redirect_to(origin: str, target: str) -> str:
    return f"{origin}/redirect/302?to={urllib.parse.quote(target, safe='')}"


# --- Redirects -------------------------------------------------------------------------------


@pytest.mark.parametrize("crossing", ["port", "host-and-port", "scheme-https-to-http"])
def test_credentials_do_not_leak_to_another_origin_on_redirect(
    crossing: str,
    server: HypercornServer,
    tls_server: HypercornServer,
    tls: TLSFiles,
    recorder: RecordingServer,
) -> None:
    """Authorization, Proxy-Authorization and a caller's Cookie header stay with the origin
    they were given for: a redirect to another port, host or scheme drops them (the server
    on the other side counts what it got)."""
    target = recorder.url + "/landed"
    origin = {"port": server.url, "scheme-https-to-http": tls_server.url}.get(crossing)
    if crossing == "host-and-port":
        origin = server.url
        target = target.replace("127.0.0.1", "localhost")
    assert origin is not None
    with requestx.Client(verify=tls.ca_file, follow_redirects=True) as client:
        response = client.get(_redirect_to(origin, target), headers=SECRETS)
        assert response.status_code == 200 and response.text == "ok"
        response = client.get(_redirect_to(origin, target), auth=("user", "password"))
        assert response.status_code == 200
    assert [head.target for head in recorder.heads] == ["/landed", "/landed"]
    for head in recorder.heads:
        for name in (*SECRETS, "Authorization"):
            assert head.header(name) is None, (name, head.fields)


def test_credentials_stay_on_a_same_origin_redirect(server: HypercornServer) -> None:
    """The other side of the rule above: without this, dropping everything would pass."""
    with requestx.Client(follow_redirects=True) as client:
        echo = client.get(_redirect_to(server.url, server.url + "/echo"), headers=SECRETS).json()
    received = {name: value for name, value in echo["headers"]}
    assert received["authorization"] == SECRETS["Authorization"]
    assert received["proxy-authorization"] == SECRETS["Proxy-Authorization"]
    # A caller's Cookie header is not kept even here: cookies come from the jar on each hop.
    assert "cookie" not in received


# --- Injection: refused before any I/O ------------------------------------------------------

INJECTIONS: list[tuple[str, dict[str, typing.Any]]] = [
    ("header value", {"headers": {"X-A": "1\r\nX-Injected: 1"}}),
    ("header value LF", {"headers": {"X-A": "1\nX-Injected: 1"}}),
    ("header value NUL", {"headers": {"X-A": "1\x002"}}),
    ("header name", {"headers": {"X-A\r\nX-Injected": "1"}}),
    ("header name colon", {"headers": {"X-A: 1\r\n": "1"}}),
    ("cookie", {"cookies": {"a": "1\r\nX-Injected: 1"}}),
    ("method", {"method": "GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET"}),
    ("path", {"path": "/a\r\nX-Injected: 1"}),
    ("path NUL", {"path": "/a\x00b"}),
    ("query", {"path": "/a?q=1\r\nX-Injected: 1"}),
    ("host", {"host": "127.0.0.1\r\nX-Injected: 1"}),
]


@pytest.mark.parametrize("where, injection", INJECTIONS, ids=[name for name, _ in INJECTIONS])
def test_header_injection_is_refused_before_any_connection(
    where: str, injection: dict[str, typing.Any], recorder: RecordingServer
) -> None:
    """CR, LF or NUL anywhere that ends up in the request head: a clear error, no
    connection made, and the client's next request goes out clean."""
    method = injection.get("method", "GET")
    host = injection.get("host", f"127.0.0.1:{recorder.port}")
    url = f"http://{host}{injection.get('path', '/x')}"
    with requestx.Client() as client:
        with pytest.raises((requestx.LocalProtocolError, requestx.InvalidURL, ValueError)):
            if "cookies" in injection:
                client.cookies.update(injection["cookies"])
            client.request(method, url, headers=injection.get("headers"))
        assert recorder.connections == 0
        client.cookies.clear()
        assert client.get(recorder.url + "/clean").text == "ok"
    assert len(recorder.heads) == 1
    assert all("Injected" not in str(field) for field in recorder.heads[0].fields)


# --- TLS --------------------------------------------------------------------------------------


@pytest.fixture
def own_shared_engine(monkeypatch: pytest.MonkeyPatch) -> typing.Iterator[None]:
    """The top-level functions get a shared engine of their own for the test, closed after
    it (its pooled connections would keep the session's servers from stopping)."""
    monkeypatch.setattr(_client, "_shared_engine", None)
    yield
    if _client._shared_engine is not None:
        _client._shared_engine.close()


@pytest.mark.usefixtures("own_shared_engine")
def test_an_unverified_connection_is_not_reused_by_a_verifying_call(
    tls_server: HypercornServer,
) -> None:
    """The top-level functions share one engine: `verify=False` for one call must not leave
    a pooled connection that a later, verifying call picks up."""
    assert requestx.get(tls_server.url + "/", verify=False).status_code == 200
    with pytest.raises(requestx.ConnectError, match="certificate"):
        requestx.get(tls_server.url + "/")  # the test CA is in no trust store


# --- A recycled transfer carries nothing over ------------------------------------------------


@pytest.mark.parametrize("client_kind", ["blocking", "async"])
def test_a_recycled_handle_carries_no_state_into_the_next_request(
    client_kind: str, recorder: RecordingServer
) -> None:
    """Headers, cookies and credentials of one request never reach the next one on the
    same client (the engine reuses its libcurl handles)."""
    first = {"headers": {"X-Secret": "1", **SECRETS}, "auth": ("user", "password")}
    urls = [recorder.url + f"/{index}" for index in range(6)]

    def check() -> None:
        assert len(recorder.heads) == 6
        for index, head in enumerate(recorder.heads):
            if index % 2 == 0:
                assert head.header("x-secret") == "1"
                continue
            names = {field[0].lower() for field in head.fields}
            assert names.isdisjoint({"x-secret", "authorization", "proxy-authorization"})
            assert "cookie" not in names

    if client_kind == "blocking":
        with requestx.Client() as client:
            for index, url in enumerate(urls):
                client.get(url, **(first if index % 2 == 0 else {}))
    else:
        import anyio

        async def run() -> None:
            async with requestx.AsyncClient() as client:
                for index, url in enumerate(urls):
                    await client.get(url, **(first if index % 2 == 0 else {}))

        anyio.run(run)
    check()
