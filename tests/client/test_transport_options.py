"""
`HTTPTransport(uds=..., local_address=..., socket_options=...)` and `create_ssl_context`, each
through the engine against real servers: a Unix-socket HTTP server, hypercorn, nginx, and a raw
server that reports the peer address and the socket options it can observe.
"""

from __future__ import annotations

import os
import socket
import ssl
import tempfile
import typing

import pytest

import requestx
from tests.servers.hypercorn_server import HypercornServer
from tests.servers.proxies import UnixSocketHTTPServer
from tests.servers.recorder import RecordingServer
from tests.support.tls import TLSFiles


@pytest.fixture
def unix_server() -> typing.Iterator[UnixSocketHTTPServer]:
    # Unix socket paths are limited to 107 bytes: a short directory, not pytest's tmp_path.
    with (
        tempfile.TemporaryDirectory(prefix="rx-") as directory,
        UnixSocketHTTPServer(os.path.join(directory, "http.sock")) as running,
    ):
        yield running


# --- uds ------------------------------------------------------------------------------------


def test_requests_over_a_unix_socket(unix_server: UnixSocketHTTPServer) -> None:
    transport = requestx.HTTPTransport(uds=unix_server.path)
    with requestx.Client(transport=transport) as client:
        first = client.get("http://docker/v1.43/containers/json?all=1")
        second = client.post("http://docker/build", content=b"x" * 1000)
    assert first.json() == {
        "path": "/v1.43/containers/json?all=1",
        "host": "docker",
        "method": "GET",
    }
    assert second.json()["method"] == "POST"
    assert unix_server.connections == 1  # kept alive over the socket
    assert len(unix_server.requests) == 2


@pytest.mark.anyio
async def test_async_requests_over_a_unix_socket(unix_server: UnixSocketHTTPServer) -> None:
    transport = requestx.AsyncHTTPTransport(uds=unix_server.path)
    async with requestx.AsyncClient(transport=transport) as client:
        response = await client.get("http://localhost/ping")
    assert response.json() == {"path": "/ping", "host": "localhost", "method": "GET"}
    assert len(unix_server.requests) == 1


def test_a_missing_unix_socket_is_a_connect_error() -> None:
    with tempfile.TemporaryDirectory(prefix="rx-") as directory:
        transport = requestx.HTTPTransport(uds=os.path.join(directory, "nobody.sock"))
        with requestx.Client(transport=transport) as client, pytest.raises(requestx.ConnectError):
            client.get("http://localhost/")


def test_uds_mounted_beside_tcp(unix_server: UnixSocketHTTPServer, server: HypercornServer) -> None:
    """A mount sends one host to the socket; everything else still goes over TCP."""
    mounts = {"http://docker.sock": requestx.HTTPTransport(uds=unix_server.path)}
    with requestx.Client(mounts=mounts) as client:
        assert client.get("http://docker.sock/info").json()["path"] == "/info"
        assert client.get(server.url + "/json").json() == {"Hello": "world!"}
    assert len(unix_server.requests) == 1


# --- local_address and socket_options -----------------------------------------------------


class PeerServer(RecordingServer):
    """A RecordingServer that notes each connection's peer address."""

    def __init__(self) -> None:
        super().__init__()
        self.peers: list[str] = []

    def _serve(self, conn: socket.socket) -> None:
        self.peers.append(conn.getpeername()[0])
        super()._serve(conn)


def test_local_address_binds_the_connection() -> None:
    with PeerServer() as recorder:
        # 127.0.0.2 is loopback too (127.0.0.0/8): the server sees it as the peer.
        transport = requestx.HTTPTransport(local_address="127.0.0.2")
        with requestx.Client(transport=transport) as client:
            assert client.get(recorder.url + "/").status_code == 200
        default = requestx.Client()
        assert default.get(recorder.url + "/").status_code == 200
        default.close()
        assert recorder.peers == ["127.0.0.2", "127.0.0.1"]


def test_an_unusable_local_address_is_a_connect_error(server: HypercornServer) -> None:
    # An address no interface has: binding fails before anything is sent.
    transport = requestx.HTTPTransport(local_address="192.0.2.1")
    server.reset_stats()
    with requestx.Client(transport=transport) as client, pytest.raises(requestx.ConnectError):
        client.get(server.url + "/json")
    assert server.request_count() == 0


def test_socket_options_reach_the_connection() -> None:
    """TCP_MAXSEG set by the client bounds the segment size the server's socket reports."""
    seen: list[int] = []

    class MSSServer(RecordingServer):
        def _serve(self, conn: socket.socket) -> None:
            seen.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG))
            super()._serve(conn)

    with MSSServer() as recorder:
        default = requestx.Client()
        assert default.get(recorder.url + "/").status_code == 200
        default.close()
        options = [(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1000)]
        with requestx.Client(transport=requestx.HTTPTransport(socket_options=options)) as client:
            assert client.get(recorder.url + "/").status_code == 200
    assert len(seen) == 2
    assert seen[1] <= 1000 < seen[0]


def test_a_refused_socket_option_is_a_connect_error(server: HypercornServer) -> None:
    server.reset_stats()
    transport = requestx.HTTPTransport(socket_options=[(socket.SOL_SOCKET, 0x7FFF, 1)])
    with (
        requestx.Client(transport=transport) as client,
        pytest.raises(requestx.ConnectError, match="setsockopt"),
    ):
        client.get(server.url + "/json")
    assert server.request_count() == 0


@pytest.mark.parametrize(
    "option",
    [
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, None, 4),
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, "1"),
    ],
)
def test_socket_options_of_other_shapes_are_refused(option: typing.Any) -> None:
    with pytest.raises((TypeError, NotImplementedError)):
        requestx.HTTPTransport(socket_options=[option])


# --- create_ssl_context ---------------------------------------------------------------------


def test_create_ssl_context_defaults_verify(tls_server: HypercornServer, tls: TLSFiles) -> None:
    context = requestx.create_ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    # The default store does not know the test CA; after loading it, the context verifies.
    with requestx.Client(verify=context) as client, pytest.raises(requestx.ConnectError):
        client.get(tls_server.url + "/json")
    context.load_verify_locations(cafile=tls.ca_file)
    with requestx.Client(verify=context) as client:
        assert client.get(tls_server.url + "/json").status_code == 200


def test_create_ssl_context_reads_ssl_cert_file(
    monkeypatch: pytest.MonkeyPatch, tls_server: HypercornServer, tls: TLSFiles
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", tls.ca_file)
    with requestx.Client(verify=requestx.create_ssl_context()) as client:
        assert client.get(tls_server.url + "/json").status_code == 200
    untrusting = requestx.create_ssl_context(trust_env=False)
    with requestx.Client(verify=untrusting) as client, pytest.raises(requestx.ConnectError):
        client.get(tls_server.url + "/json")


def test_create_ssl_context_with_a_path_and_with_cert(tls: TLSFiles) -> None:
    context = requestx.create_ssl_context(verify=tls.ca_file, cert=tls.cert_file)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert requestx.create_ssl_context(verify=context) is context
    unverified = requestx.create_ssl_context(verify=False)
    assert unverified.verify_mode == ssl.CERT_NONE and not unverified.check_hostname
    with pytest.raises(TypeError):
        requestx.create_ssl_context(verify=42)  # type: ignore[arg-type]
