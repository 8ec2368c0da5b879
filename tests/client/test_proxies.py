"""
Proxies: `proxy=`, `Proxy(...)`, `mounts=` with proxy transports, and the proxy variables.

Every test counts at the proxy (tests/servers/proxies.py) and at the origin what went through
or around it. Origins: hypercorn (the suite's `server` / `tls_server`), nginx (`nginx_origin`),
and the raw RecordingServer where the exact request head matters.
"""

from __future__ import annotations

import socket
import threading
import time
import typing
import uuid

import anyio
import pytest

import requestx
from tests.servers._socket_server import SocketServer
from tests.servers.hypercorn_server import HypercornServer
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.servers.proxies import ForwardProxy, Socks5Proxy
from tests.servers.recorder import RecordingServer
from tests.servers.tinyproxy import Tinyproxy, tinyproxy_or_skip
from tests.support.echo import basic
from tests.support.network import closed_port
from tests.support.tls import TLSFiles

CREDENTIALS = ("proxy-user", "pässword:with colon")


@pytest.fixture(scope="module")
def nginx_origin() -> typing.Iterator[Nginx]:
    with nginx_or_skip(http2=True, log=True) as server:
        yield server


@pytest.fixture
def auth_proxy() -> typing.Iterator[ForwardProxy]:
    with ForwardProxy(credentials=CREDENTIALS) as running:
        yield running


@pytest.fixture
def socks() -> typing.Iterator[Socks5Proxy]:
    with Socks5Proxy() as running:
        yield running


class Origin(typing.NamedTuple):
    """A plain-HTTP origin and a way to count the requests it handled."""

    url: str  # ends without "/"
    path: str  # a path answered with 200 and a known body
    body: bytes
    handled: typing.Callable[[], int]


@pytest.fixture(params=["hypercorn", "nginx"])
def origin(request: pytest.FixtureRequest, server: HypercornServer) -> Origin:
    if request.param == "hypercorn":
        server.reset_stats()
        return Origin(server.url, "/json", b'{"Hello": "world!"}', server.request_count)
    ng: Nginx = request.getfixturevalue("nginx_origin")
    # A query of this test's own: only its requests are counted, whatever other tests left in
    # the log (nginx answers /get whatever the query).
    path = f"/get?test={uuid.uuid4().hex}"

    def handled() -> int:
        # nginx logs a request just after answering it: wait until the count settles.
        count = -1
        for _ in range(40):
            latest = ng.requested_uris().count(path)
            if latest == count:
                break
            count = latest
            time.sleep(0.05)
        return count

    return Origin(ng.url, path, b"Hello, world!", handled)


class TLSOrigin(typing.NamedTuple):
    url: str
    path: str
    body: bytes
    ca_file: str


@pytest.fixture(params=["hypercorn", "nginx"])
def tls_origin(request: pytest.FixtureRequest, tls: TLSFiles) -> TLSOrigin:
    if request.param == "hypercorn":
        hypercorn: HypercornServer = request.getfixturevalue("tls_server")
        return TLSOrigin(hypercorn.url, "/json", b'{"Hello": "world!"}', tls.ca_file)
    ng: Nginx = request.getfixturevalue("nginx_origin")
    return TLSOrigin(ng.tls_url, "/get", b"Hello, world!", ng.ca_file)


def _hostport(url: str) -> str:
    return url.split("://", 1)[1].rstrip("/")


# --- plain HTTP through an HTTP proxy: forwarded ----------------------------------------------


def test_http_request_is_forwarded_by_the_proxy(origin: Origin, proxy: ForwardProxy) -> None:
    with requestx.Client(proxy=proxy.url) as client:
        for _ in range(3):
            response = client.get(origin.url + origin.path)
            assert response.status_code == 200
            assert response.content == origin.body
    assert proxy.forwarded == [origin.url + origin.path] * 3
    assert proxy.connections == 1  # kept alive to the proxy
    assert origin.handled() == 3


@pytest.mark.anyio
async def test_async_http_request_is_forwarded_by_the_proxy(
    origin: Origin, proxy: ForwardProxy
) -> None:
    async with requestx.AsyncClient(proxy=proxy.url) as client:
        responses = []

        async def one() -> None:
            responses.append(await client.get(origin.url + origin.path))

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(one)
    assert [r.content for r in responses] == [origin.body] * 8
    assert len(proxy.forwarded) == 8
    assert origin.handled() == 8


def test_post_body_goes_through_the_proxy_once(proxy: ForwardProxy) -> None:
    with RecordingServer() as recorder, requestx.Client(proxy=proxy.url) as client:
        response = client.post(recorder.url + "/submit", content=b"x" * 100_000)
        assert response.status_code == 200
        assert recorder.heads[0].request_line == "POST /submit HTTP/1.1"
        assert recorder.heads[0].header("content-length") == "100000"
        assert len(recorder.heads) == 1
    assert proxy.forwarded == [recorder.url + "/submit"]


# --- https through an HTTP proxy: CONNECT tunnel ------------------------------------------------


def test_https_request_goes_through_a_connect_tunnel(
    tls_origin: TLSOrigin, proxy: ForwardProxy
) -> None:
    with requestx.Client(proxy=proxy.url, verify=tls_origin.ca_file) as client:
        for _ in range(3):
            response = client.get(tls_origin.url + tls_origin.path)
            assert response.content == tls_origin.body
    # One tunnel, reused: the requests never showed themselves to the proxy.
    assert proxy.tunnels == [_hostport(tls_origin.url)]
    assert proxy.forwarded == []
    assert [head.request_line.split()[0] for head in proxy.requests] == ["CONNECT"]


@pytest.mark.anyio
async def test_http2_multiplexes_inside_one_tunnel(
    tls_origin: TLSOrigin, proxy: ForwardProxy
) -> None:
    options: dict[str, typing.Any] = {"verify": tls_origin.ca_file, "http2": True}
    async with requestx.AsyncClient(proxy=proxy.url, **options) as client:
        await client.get(tls_origin.url + tls_origin.path)  # the connection, then 16 streams
        versions = []

        async def one() -> None:
            response = await client.get(tls_origin.url + tls_origin.path)
            assert response.content == tls_origin.body
            versions.append(response.http_version)

        async with anyio.create_task_group() as group:
            for _ in range(16):
                group.start_soon(one)
    assert versions == ["HTTP/2"] * 16
    assert proxy.tunnels == [_hostport(tls_origin.url)]


# --- credentials ---------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["url", "Proxy-auth"])
def test_proxy_credentials_reach_the_proxy_and_not_the_origin(
    auth_proxy: ForwardProxy, server: HypercornServer, how: str
) -> None:
    user, password = CREDENTIALS
    if how == "url":
        quoted = requestx.URL(auth_proxy.url).copy_with(username=user, password=password)
        proxy: typing.Any = str(quoted)
    else:
        proxy = requestx.Proxy(auth_proxy.url, auth=CREDENTIALS)
    with requestx.Client(proxy=proxy) as client:
        echoed = client.get(server.url + "/echo").json()
    names = [name for name, _ in echoed["headers"]]
    assert "proxy-authorization" not in names
    assert auth_proxy.requests[0].header("proxy-authorization") == basic(user, password)
    assert auth_proxy.rejected_auth == 0


def test_proxy_credentials_on_the_connect_only(
    auth_proxy: ForwardProxy, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    proxy = requestx.Proxy(auth_proxy.url, auth=CREDENTIALS, headers={"X-Proxy-Only": "1"})
    with requestx.Client(proxy=proxy, verify=tls.ca_file) as client:
        echoed = client.get(tls_server.url + "/echo").json()
    names = [name for name, _ in echoed["headers"]]
    assert "proxy-authorization" not in names and "x-proxy-only" not in names
    (connect,) = auth_proxy.requests
    assert connect.request_line.startswith("CONNECT ")
    assert connect.header("proxy-authorization") == basic(*CREDENTIALS)
    assert connect.header("x-proxy-only") == "1"


def test_a_proxy_that_refuses_the_credentials(
    auth_proxy: ForwardProxy, server: HypercornServer, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    wrong = requestx.Proxy(auth_proxy.url, auth=("proxy-user", "wrong"))
    with requestx.Client(proxy=wrong, verify=tls.ca_file) as client:
        # Forwarded: the proxy's 407 is the answer, as with httpx.
        assert client.get(server.url + "/json").status_code == 407
        # Tunnelled: no answer from the origin can come, so it is the proxy's error.
        with pytest.raises(requestx.ProxyError, match="407"):
            client.get(tls_server.url + "/json")
    assert auth_proxy.rejected_auth == 2
    assert auth_proxy.forwarded == [] and auth_proxy.tunnels == []


# --- https:// proxies (TLS to the proxy) ----------------------------------------------------


def test_https_proxy(tls: TLSFiles, server: HypercornServer, tls_server: HypercornServer) -> None:
    with ForwardProxy(tls=(tls.cert_file, tls.cert_file)) as tls_proxy:
        context = requestx.create_ssl_context(verify=tls.ca_file)
        proxy = requestx.Proxy(tls_proxy.url, ssl_context=context)
        with requestx.Client(proxy=proxy, verify=tls.ca_file) as client:
            assert client.get(server.url + "/json").json() == {"Hello": "world!"}
            assert client.get(tls_server.url + "/json").json() == {"Hello": "world!"}
        assert tls_proxy.forwarded == [server.url + "/json"]
        assert tls_proxy.tunnels == [_hostport(tls_server.url)]


def test_https_proxy_certificate_is_verified(tls: TLSFiles, server: HypercornServer) -> None:
    with ForwardProxy(tls=(tls.cert_file, tls.cert_file)) as tls_proxy:
        # The origin's CA is trusted, the proxy's is not (no ssl_context: the default store).
        with requestx.Client(proxy=tls_proxy.url, verify=tls.ca_file) as client:
            with pytest.raises((requestx.ProxyError, requestx.ConnectError)) as info:
                client.get(server.url + "/json")
            assert "certificate" in str(info.value).lower()
        assert tls_proxy.forwarded == []


# --- SOCKS5 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["socks5", "socks5h"])
def test_socks5_proxy(scheme: str, origin: Origin, socks: Socks5Proxy) -> None:
    port = requestx.URL(origin.url).port
    # socks5h sends the name for the proxy to resolve; socks5 resolves it here and sends the
    # address (the origins listen on 127.0.0.1 only, so the name is not "localhost" there).
    host = "localhost" if scheme == "socks5h" else "127.0.0.1"
    url = f"http://{host}:{port}{origin.path}"
    proxy = socks.url.replace("socks5://", f"{scheme}://")
    with requestx.Client(proxy=proxy) as client:
        assert client.get(url).content == origin.body
        assert client.get(url).content == origin.body
    assert socks.connections == 1
    # socks5h: the proxy resolves the name; socks5: the client does and sends an address.
    (target,) = socks.targets
    if scheme == "socks5h":
        assert target == ("localhost", port, "domain")
    else:
        assert target == ("127.0.0.1", port, "ipv4")
    assert origin.handled() == 2


@pytest.mark.anyio
async def test_async_socks5_proxy_with_credentials(
    tls_server: HypercornServer, tls: TLSFiles
) -> None:
    with Socks5Proxy(credentials=CREDENTIALS) as socks:
        proxy = requestx.Proxy(socks.url, auth=CREDENTIALS)
        async with requestx.AsyncClient(proxy=proxy, verify=tls.ca_file) as client:
            response = await client.get(tls_server.url + "/json")
            assert response.json() == {"Hello": "world!"}
        assert socks.auth_failures == 0
        assert len(socks.targets) == 1


def test_socks5_wrong_credentials_raise_proxy_error(server: HypercornServer) -> None:
    with Socks5Proxy(credentials=CREDENTIALS) as socks:
        proxy = requestx.Proxy(socks.url, auth=("proxy-user", "wrong"))
        with requestx.Client(proxy=proxy) as client, pytest.raises(requestx.ProxyError):
            client.get(server.url + "/json")
            # The client goes on: a good proxy for the next request works.
        assert socks.auth_failures == 1
        assert socks.targets == []


# --- failures ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["http", "socks5"])
def test_an_unreachable_proxy_raises_proxy_error(scheme: str, server: HypercornServer) -> None:
    server.reset_stats()
    proxy = f"{scheme}://127.0.0.1:{closed_port()}"
    with requestx.Client(proxy=proxy) as client, pytest.raises(requestx.ProxyError, match="proxy"):
        client.get(server.url + "/json")
    assert server.request_count() == 0


@pytest.mark.anyio
async def test_async_unreachable_proxy_raises_proxy_error(server: HypercornServer) -> None:
    async with requestx.AsyncClient(proxy=f"http://127.0.0.1:{closed_port()}") as client:
        with pytest.raises(requestx.ProxyError):
            await client.get(server.url + "/json")


def test_unsupported_proxy_schemes_and_types() -> None:
    with pytest.raises(ValueError, match="ftp"):
        requestx.Client(proxy="ftp://127.0.0.1:21")
    with pytest.raises(TypeError):
        requestx.Client(proxy=3128)


# --- the pool: routes never share connections -------------------------------------------------


def test_connections_through_different_proxies_are_never_mixed(server: HypercornServer) -> None:
    server.reset_stats()
    port = requestx.URL(server.url).port
    with ForwardProxy() as first, ForwardProxy() as second:
        mounts = {
            "all://localhost": requestx.HTTPTransport(proxy=first.url),
            "all://[::1]": None,  # the client's own transport: direct
        }
        with requestx.Client(proxy=second.url, mounts=mounts) as client:
            for _ in range(3):
                assert client.get(f"http://127.0.0.1:{port}/json").status_code == 200
                assert client.get(f"http://localhost:{port}/json").status_code == 200
        assert first.forwarded == [f"http://localhost:{port}/json"] * 3
        assert second.forwarded == [f"http://127.0.0.1:{port}/json"] * 3
        assert first.connections == 1 and second.connections == 1
    assert server.request_count() == 6


def test_top_level_calls_share_an_engine_but_not_connections_across_proxies(
    origin: Origin, proxy: ForwardProxy
) -> None:
    """`requestx.get` shares one engine between calls: a proxied call and a direct one to the
    same URL still use different connections."""
    url = origin.url + origin.path
    for _ in range(2):
        assert requestx.get(url).content == origin.body
        assert requestx.get(url, proxy=proxy.url).content == origin.body
    assert proxy.forwarded == [url, url]
    assert proxy.connections == 1
    assert origin.handled() == 4


@pytest.mark.anyio
async def test_http2_to_one_origin_direct_and_tunnelled_at_once(
    tls_server: HypercornServer, tls: TLSFiles, proxy: ForwardProxy
) -> None:
    """The same URL over HTTP/2, direct and through a tunnel, at once, on one engine: each
    route gets its own connection (the engine's one-connection-per-origin rule is per route),
    and neither waits for the other's."""
    tls_server.reset_stats()
    url = tls_server.url + "/json"
    engine = requestx._core.Engine()
    options: dict[str, typing.Any] = {"verify": tls.ca_file, "http2": True, "_engine": engine}
    try:
        async with (
            requestx.AsyncClient(**options) as direct,
            requestx.AsyncClient(proxy=proxy.url, **options) as proxied,
        ):
            versions: list[str] = []

            async def one(client: requestx.AsyncClient) -> None:
                response = await client.get(url)
                assert response.status_code == 200
                versions.append(response.http_version)

            with anyio.fail_after(20):
                async with anyio.create_task_group() as group:
                    for index in range(20):
                        group.start_soon(one, direct if index % 2 else proxied)
        assert versions == ["HTTP/2"] * 20
        assert proxy.tunnels == [_hostport(tls_server.url)]
        assert tls_server.connection_count() == 2  # the tunnel's and the direct one
    finally:
        engine.close()


# --- the environment -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_proxy_variables_are_used(
    monkeypatch: pytest.MonkeyPatch, name: str, proxy: ForwardProxy, server: HypercornServer
) -> None:
    monkeypatch.setenv(name, proxy.url)
    with requestx.Client() as client:
        assert client.get(server.url + "/json").status_code == 200
    assert proxy.forwarded == [server.url + "/json"]


def test_https_proxy_variable_covers_https_only(
    monkeypatch: pytest.MonkeyPatch,
    proxy: ForwardProxy,
    server: HypercornServer,
    tls_server: HypercornServer,
    tls: TLSFiles,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    with requestx.Client(verify=tls.ca_file) as client:
        assert client.get(server.url + "/json").status_code == 200
        assert client.get(tls_server.url + "/json").status_code == 200
    assert proxy.forwarded == []
    assert proxy.tunnels == [_hostport(tls_server.url)]


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "*", "localhost,127.0.0.1", "http://127.0.0.1"])
def test_no_proxy_bypasses_the_proxy(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, proxy: ForwardProxy, server: HypercornServer
) -> None:
    server.reset_stats()
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    with requestx.Client() as client:
        assert client.get(server.url + "/json").status_code == 200
    assert proxy.connections == 0
    assert server.request_count() == 1


def test_trust_env_false_ignores_proxy_variables(
    monkeypatch: pytest.MonkeyPatch, proxy: ForwardProxy, server: HypercornServer
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with requestx.Client(trust_env=False) as client:
        assert client.get(server.url + "/json").status_code == 200
    assert requestx.get(server.url + "/json", trust_env=False).status_code == 200
    assert proxy.connections == 0


def test_a_given_transport_ignores_proxy_variables(
    monkeypatch: pytest.MonkeyPatch, proxy: ForwardProxy, server: HypercornServer
) -> None:
    """httpx reads the variables only for the transport it builds itself."""
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with requestx.Client(transport=requestx.HTTPTransport()) as client:
        assert client.get(server.url + "/json").status_code == 200
    assert proxy.connections == 0


def test_libcurl_never_reads_proxy_variables_itself(
    monkeypatch: pytest.MonkeyPatch, proxy: ForwardProxy, server: HypercornServer
) -> None:
    """A transport built without proxy= goes direct whatever the environment says: only the
    client's routing reads it (libcurl would read http_proxy and NO_PROXY on its own)."""
    monkeypatch.setenv("http_proxy", proxy.url)
    monkeypatch.setenv("NO_PROXY", "")
    with requestx.HTTPTransport() as transport:
        response = transport.handle_request(requestx.Request("GET", server.url + "/json"))
        assert response.read() == b'{"Hello": "world!"}'
        response.close()
    assert proxy.connections == 0


@pytest.mark.parametrize("name", ["NO_PROXY", "no_proxy"])
def test_an_explicit_proxy_is_not_bypassed_by_no_proxy_variables(
    monkeypatch: pytest.MonkeyPatch, name: str, proxy: ForwardProxy, server: HypercornServer
) -> None:
    """proxy= is for every URL, as in httpx: NO_PROXY shapes only the mounts a client makes
    from the environment, and libcurl (which would read it on its own) is told no list."""
    monkeypatch.setenv(name, "127.0.0.1,localhost,*")
    with requestx.HTTPTransport(proxy=proxy.url) as transport:
        response = transport.handle_request(requestx.Request("GET", server.url + "/json"))
        assert response.read() == b'{"Hello": "world!"}'
        response.close()
    assert proxy.forwarded == [server.url + "/json"]


# --- routing ----------------------------------------------------------------------------------


ROUTING_CASES = [
    # (url, mount patterns, the pattern expected to win or None for the client's own)
    ("http://example.org", ["https://"], None),
    ("http://example.org", ["http://"], "http://"),
    ("http://example.org", ["all://"], "all://"),
    ("http://example.org", ["http://*"], "http://*"),
    ("https://example.org", ["http://*"], None),
    ("http://example.org", ["http://example.org"], "http://example.org"),
    ("http://www.example.org", ["http://example.org"], None),
    ("http://example.org", ["all://*.example.org"], None),
    ("http://www.example.org", ["all://*.example.org"], "all://*.example.org"),
    ("http://example.org", ["all://*example.org"], "all://*example.org"),
    ("http://api.example.org", ["all://*example.org"], "all://*example.org"),
    ("http://badexample.org", ["all://*example.org"], None),
    ("http://example.org:8080", ["http://example.org"], "http://example.org"),
    ("http://example.org:8080", ["http://example.org:8081"], None),
    ("http://example.org", ["http://example.org:80"], "http://example.org:80"),
    ("http://example.org", ["all://", "http://", "all://example.org"], "all://example.org"),
    ("http://example.org", ["all://", "http://"], "http://"),
    ("http://example.org:1", ["all://example.org", "http://example.org:1"], "http://example.org:1"),
]


@pytest.mark.parametrize(("url", "patterns", "expected"), ROUTING_CASES)
def test_the_most_specific_mount_wins(url: str, patterns: list[str], expected: str | None) -> None:
    # Engine transports start no thread until used: routing is all that is exercised here.
    mounts = {pattern: requestx.HTTPTransport() for pattern in patterns}
    with requestx.Client(mounts=mounts) as client:
        chosen = client._transport_for_url(requestx.URL(url))
        assert chosen is (client._transport if expected is None else mounts[expected])


@pytest.mark.parametrize("key", ["http", "https", "all"])
def test_mount_keys_must_be_patterns(key: str) -> None:
    with pytest.raises(ValueError, match="://"):
        requestx.Client(mounts={key: requestx.HTTPTransport()})


def test_proxy_variables_as_mounts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "proxy.internal:3128")  # no scheme: http://
    monkeypatch.setenv("HTTPS_PROXY", "http://tls-proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", " .corp.example, example.net, ::1, 10.0.0.1, localhost ")
    client = requestx.Client()

    def proxy_for(url: str) -> str | None:
        transport = client._transport_for_url(requestx.URL(url))
        return None if transport is client._transport else str(transport._proxy.url)

    assert proxy_for("http://example.org") == "http://proxy.internal:3128"
    assert proxy_for("https://example.org") == "http://tls-proxy.internal:3128"
    assert proxy_for("http://www.corp.example") is None
    assert proxy_for("http://corp.example") == "http://proxy.internal:3128"  # ".x": subdomains
    assert proxy_for("http://example.net") is None
    assert proxy_for("http://www.example.net") is None
    assert proxy_for("http://notexample.net") == "http://proxy.internal:3128"
    assert proxy_for("http://[::1]:8000") is None
    assert proxy_for("http://10.0.0.1") is None
    assert proxy_for("http://10.0.0.2") == "http://proxy.internal:3128"
    assert proxy_for("http://localhost:8000") is None
    client.close()


def test_proxy_url_credentials_move_to_auth() -> None:
    proxy = requestx.Proxy("http://user:p%40ss@proxy.internal:3128")
    assert proxy.auth == ("user", "p@ss")
    assert str(proxy.url) == "http://proxy.internal:3128"
    assert "p@ss" not in repr(proxy)


@pytest.mark.anyio
async def test_async_client_mounts_route_to_any_transport(server: HypercornServer) -> None:
    """A user's transport mounted for one host: its requests pass through it (to the real
    server, through an engine transport of its own), the others go straight to the client's."""
    seen: list[str] = []

    class Recording(requestx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = requestx.AsyncHTTPTransport()

        async def handle_async_request(self, request: requestx.Request) -> requestx.Response:
            seen.append(str(request.url))
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    server.reset_stats()
    local = server.url.replace("127.0.0.1", "localhost")
    async with requestx.AsyncClient(mounts={"all://localhost": Recording()}) as client:
        assert (await client.get(local + "/json")).json() == {"Hello": "world!"}
        assert (await client.get(server.url + "/json")).json() == {"Hello": "world!"}
    assert seen == [local + "/json"]
    assert server.request_count() == 2


def test_closing_the_client_closes_every_mounted_transport() -> None:
    calls: list[str] = []

    class Recording(requestx.BaseTransport):
        def __init__(self, name: str) -> None:
            self.name = name

        def handle_request(self, request: requestx.Request) -> requestx.Response:
            return requestx.Response(200)

        def __enter__(self) -> Recording:
            calls.append(f"enter {self.name}")
            return self

        def __exit__(self, *exc_info: typing.Any) -> None:
            calls.append(f"exit {self.name}")

        def close(self) -> None:
            calls.append(f"close {self.name}")

    own, mounted = Recording("own"), Recording("mounted")
    with requestx.Client(transport=own, mounts={"http://": mounted}):
        pass
    assert calls == ["enter own", "enter mounted", "exit own", "exit mounted"]
    calls.clear()
    client = requestx.Client(transport=own, mounts={"http://": mounted})
    client.close()
    assert calls == ["close own", "close mounted"]
    with pytest.raises(RuntimeError, match="closed"):
        client.get("http://example.org/")


# --- proxies that misbehave -----------------------------------------------------------------


class MisbehavingProxy(SocketServer):
    """Reads what the client sends first (a CONNECT, a request head or a SOCKS greeting), then
    does `mode`: "silent" (never answers), "close" (closes), "garbage" (answers with bytes
    that are no HTTP and no SOCKS), "502" (refuses the tunnel with a 502)."""

    def __init__(self, mode: str) -> None:
        super().__init__(name=f"proxy-{mode}", backlog=16)
        self.mode = mode
        self.connections = 0
        self._release = threading.Event()

    def stop(self) -> None:
        self._release.set()
        super().stop()

    def _serve(self, conn: socket.socket) -> None:
        self.connections += 1
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)
                if self.mode == "silent":
                    self._release.wait(10)
                elif self.mode == "garbage":
                    conn.sendall(b"\x05\xff SURPRISE \r\n\r\n")
                elif self.mode == "502":
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    conn.recv(65536)
            except OSError:
                pass


@pytest.mark.parametrize("scheme", ["http", "socks5"])
@pytest.mark.parametrize("mode", ["close", "garbage", "502"])
def test_a_broken_proxy_fails_the_request_and_not_the_client(
    scheme: str, mode: str, server: HypercornServer, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    server.reset_stats()
    with MisbehavingProxy(mode) as broken:
        proxy = f"{scheme}://127.0.0.1:{broken.port}"
        mounts = {f"all://localhost:{requestx.URL(server.url).port}": None}  # direct
        with requestx.Client(proxy=proxy, mounts=mounts, verify=tls.ca_file, timeout=5) as client:
            # A tunnel (https) through an http proxy, or anything through SOCKS: the proxy's
            # failure is the request's.
            with pytest.raises((requestx.ProxyError, requestx.RemoteProtocolError)):
                client.get(tls_server.url + "/json")
            # The client is intact: a direct request works, and so does the next proxy try's
            # failure.
            local = server.url.replace("127.0.0.1", "localhost")
            assert client.get(local + "/json").json() == {"Hello": "world!"}
            with pytest.raises(requestx.TransportError):
                client.get(tls_server.url + "/json")
    assert server.request_count() == 1


@pytest.mark.parametrize("scheme", ["http", "socks5"])
def test_a_silent_proxy_times_out(scheme: str, tls_server: HypercornServer, tls: TLSFiles) -> None:
    with MisbehavingProxy("silent") as silent:
        proxy = f"{scheme}://127.0.0.1:{silent.port}"
        started = time.monotonic()
        with (
            requestx.Client(proxy=proxy, verify=tls.ca_file, timeout=0.5) as client,
            pytest.raises(requestx.TimeoutException),
        ):
            client.get(tls_server.url + "/json")
        assert time.monotonic() - started < 3


@pytest.mark.anyio
async def test_async_silent_proxy_times_out(tls_server: HypercornServer, tls: TLSFiles) -> None:
    with MisbehavingProxy("silent") as silent:
        proxy = f"http://127.0.0.1:{silent.port}"
        async with requestx.AsyncClient(proxy=proxy, verify=tls.ca_file, timeout=0.5) as client:
            with anyio.fail_after(5), pytest.raises(requestx.TimeoutException):
                await client.get(tls_server.url + "/json")


# --- a second proxy implementation: Debian's tinyproxy ------------------------------------


@pytest.fixture(scope="module")
def tinyproxy() -> typing.Iterator[Tinyproxy]:
    with tinyproxy_or_skip(credentials=CREDENTIALS_TINYPROXY) as running:
        yield running


# tinyproxy's BasicAuth line takes no spaces or colons in its words.
CREDENTIALS_TINYPROXY = ("tiny-user", "tiny-secret")


def test_tinyproxy_forwards_http_and_tunnels_https(
    tinyproxy: Tinyproxy, server: HypercornServer, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    server.reset_stats()
    proxy = requestx.Proxy(tinyproxy.url, auth=CREDENTIALS_TINYPROXY)
    with requestx.Client(proxy=proxy, verify=tls.ca_file) as client:
        echoed = client.get(server.url + "/echo").json()
        assert client.get(tls_server.url + "/json").json() == {"Hello": "world!"}
    headers = dict(echoed["headers"])
    assert "tinyproxy" in headers.get("via", "")  # it went through tinyproxy ...
    assert "proxy-authorization" not in headers  # ... which kept the credentials
    assert server.request_count() == 1
    assert "CONNECT" in tinyproxy.log


@pytest.mark.anyio
async def test_async_tinyproxy_http2_in_a_tunnel(
    tinyproxy: Tinyproxy, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    proxy = requestx.Proxy(tinyproxy.url, auth=CREDENTIALS_TINYPROXY)
    async with requestx.AsyncClient(proxy=proxy, verify=tls.ca_file, http2=True) as client:
        responses = []

        async def one() -> None:
            responses.append(await client.get(tls_server.url + "/json"))

        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(one)
    assert [r.http_version for r in responses] == ["HTTP/2"] * 10


def test_tinyproxy_refusing_credentials(
    tinyproxy: Tinyproxy, server: HypercornServer, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    server.reset_stats()
    wrong = requestx.Proxy(tinyproxy.url, auth=("tiny-user", "wrong"))
    with requestx.Client(proxy=wrong, verify=tls.ca_file) as client:
        # The proxy's own answer, as it gave it (tinyproxy says 401 to a forwarded request).
        assert client.get(server.url + "/json").status_code in (401, 407)
        with pytest.raises(
            requestx.ProxyError,
            match="the proxy refused a tunnel to 127.0.0.1:[0-9]+: response 40[17]",
        ):
            client.get(tls_server.url + "/json")
    assert server.request_count() == 0
