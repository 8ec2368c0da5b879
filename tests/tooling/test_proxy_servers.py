"""The proxy test servers themselves (tests/servers/proxies.py), checked with the standard library.

If one of these fails, the servers are wrong, not requestx.
"""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import os
import socket
import ssl
import struct
import sys
import tempfile
import threading
from typing import TYPE_CHECKING, Any, Iterator

import pytest

from tests.servers.proxies import ForwardProxy, Socks5Proxy, UnixSocketHTTPServer
from tests.servers.recorder import RecordingServer

if TYPE_CHECKING:
    from tests.support.tls import TLSFiles

TIMEOUT = 5.0
BASIC = "Basic " + base64.b64encode(b"user:pass").decode()


class _EchoHandler(http.server.BaseHTTPRequestHandler):
    """Echoes the request as JSON; /chunked answers chunked, /close delimits by its close."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _echo(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        payload = json.dumps(
            {
                "method": self.command,
                "path": self.path,
                "headers": [[name.lower(), value] for name, value in self.headers.items()],
                "body": body.decode("latin-1"),
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.path == "/chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            middle = len(payload) // 2
            for piece in (payload[:middle], payload[middle:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        elif self.path == "/close":
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = _echo


@pytest.fixture
def echo() -> Iterator[str]:
    """The URL of a standard-library origin that echoes each request as JSON."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(TIMEOUT)


@pytest.fixture
def origin() -> Iterator[RecordingServer]:
    with RecordingServer() as running:
        yield running


def _via(proxy: ForwardProxy) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=TIMEOUT)


def _headers(echoed: Any) -> dict[str, str]:
    return dict(echoed["headers"])


# ForwardProxy


def test_forward_proxy_forwards_absolute_form_requests_on_one_connection(
    origin: RecordingServer,
) -> None:
    with ForwardProxy() as proxy:
        conn = _via(proxy)
        for path in ("/a?b=1", "/c"):
            conn.request("GET", origin.url + path, headers={"Proxy-Connection": "keep-alive"})
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, b"ok")
        conn.close()
        assert proxy.connections == 1
        assert proxy.forwarded == [origin.url + "/a?b=1", origin.url + "/c"]
        assert [head.target for head in proxy.requests] == proxy.forwarded
        assert proxy.tunnels == [] and proxy.rejected_auth == 0
    # One origin connection per request, in origin form, the proxy's own headers removed.
    assert origin.connections == 2
    assert [head.target for head in origin.heads] == ["/a?b=1", "/c"]
    first = origin.heads[0]
    assert first.header("host") == origin.url.removeprefix("http://")
    assert first.header("proxy-connection") is None
    assert first.header("connection") == "close"
    proxy.reset()
    assert (proxy.connections, proxy.requests, proxy.forwarded) == (0, [], [])


def test_forward_proxy_dechunks_request_bodies_and_relays_every_response_framing(
    echo: str,
) -> None:
    with ForwardProxy() as proxy:
        conn = _via(proxy)
        conn.request("POST", echo + "/length", body=b"x" * 100_000)
        echoed = json.loads(conn.getresponse().read())
        assert echoed["body"] == "x" * 100_000
        assert _headers(echoed)["content-length"] == "100000"

        conn.request("PUT", echo + "/chunked", body=iter([b"ab", b"cd"]), encode_chunked=True)
        response = conn.getresponse()
        assert response.getheader("transfer-encoding") == "chunked"  # passed through
        echoed = json.loads(response.read())
        assert (echoed["method"], echoed["path"], echoed["body"]) == ("PUT", "/chunked", "abcd")
        assert _headers(echoed)["content-length"] == "4"
        assert "transfer-encoding" not in _headers(echoed)

        conn.request("GET", echo + "/close")
        response = conn.getresponse()
        assert response.getheader("connection") == "close"
        assert json.loads(response.read())["path"] == "/close"
        conn.close()
        assert proxy.connections == 1
        assert len(proxy.forwarded) == 3


def test_forward_proxy_refuses_targets_that_are_not_loopback(origin: RecordingServer) -> None:
    with ForwardProxy() as proxy:
        conn = _via(proxy)
        conn.request("GET", "http://192.0.2.1/")
        response = conn.getresponse()
        assert (response.status, response.read()) == (403, b"")
        conn.close()
        conn = _via(proxy)
        conn.set_tunnel("192.0.2.1", 443)
        with pytest.raises(OSError, match="403"):
            conn.connect()
        conn.close()
        assert proxy.forwarded == [] and proxy.tunnels == []
        assert len(proxy.requests) == 2


def test_connect_tunnel_relays_bytes(origin: RecordingServer) -> None:
    port = origin.url.rsplit(":", 1)[1]
    with ForwardProxy() as proxy:
        conn = _via(proxy)
        conn.set_tunnel("127.0.0.1", int(port))
        for _ in range(2):
            conn.request("GET", "/through")
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, b"ok")
        conn.close()
        assert proxy.tunnels == [f"127.0.0.1:{port}"]
        assert proxy.forwarded == []
        # http.client's CONNECT line says HTTP/1.0 up to Python 3.11 and HTTP/1.1 after.
        version = "1.1" if sys.version_info >= (3, 12) else "1.0"
        assert proxy.requests[0].request_line == f"CONNECT 127.0.0.1:{port} HTTP/{version}"
    assert origin.connections == 1
    assert [head.target for head in origin.heads] == ["/through", "/through"]


def test_proxy_credentials_407_without_and_200_with(origin: RecordingServer) -> None:
    with ForwardProxy(credentials=("user", "pass")) as proxy:
        conn = _via(proxy)
        conn.request("GET", origin.url + "/")
        response = conn.getresponse()
        assert response.status == 407
        assert response.getheader("proxy-authenticate") == 'Basic realm="test"'
        assert response.read() == b""
        # The connection stays usable: the same one, now with credentials.
        conn.request("GET", origin.url + "/", headers={"Proxy-Authorization": BASIC})
        response = conn.getresponse()
        assert (response.status, response.read()) == (200, b"ok")
        conn.close()
        assert proxy.connections == 1
        assert origin.heads[0].header("proxy-authorization") is None

        conn = _via(proxy)
        conn.set_tunnel("127.0.0.1", origin.port)
        with pytest.raises(OSError, match="407"):
            conn.connect()
        conn.close()
        wrong = "Basic " + base64.b64encode(b"user:wrong").decode()
        conn = _via(proxy)
        conn.set_tunnel("127.0.0.1", origin.port, headers={"Proxy-Authorization": wrong})
        with pytest.raises(OSError, match="407"):
            conn.connect()
        conn.close()
        conn = _via(proxy)
        conn.set_tunnel("127.0.0.1", origin.port, headers={"Proxy-Authorization": BASIC})
        conn.request("GET", "/tunnelled")
        assert conn.getresponse().read() == b"ok"
        conn.close()
        assert proxy.rejected_auth == 3
        assert proxy.tunnels == [f"127.0.0.1:{origin.port}"]
    assert origin.connections == 2


def test_tls_proxy_forwards_and_tunnels(origin: RecordingServer, tls: TLSFiles) -> None:
    context = ssl.create_default_context(cafile=tls.ca_file)
    with ForwardProxy(tls=(tls.cert_file, tls.cert_file)) as proxy:
        assert proxy.url == f"https://127.0.0.1:{proxy.port}"
        conn = http.client.HTTPSConnection(
            "127.0.0.1", proxy.port, timeout=TIMEOUT, context=context
        )
        conn.request("GET", origin.url + "/over-tls")
        assert conn.getresponse().read() == b"ok"
        conn.close()

        raw = socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT)
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            target = f"127.0.0.1:{origin.port}"
            sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            assert _read_until(sock, b"\r\n\r\n").startswith(b"HTTP/1.1 200 ")
            sock.sendall(b"GET /in-tunnel HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _read_until(sock, b"\r\n\r\nok").startswith(b"HTTP/1.1 200 OK")
        assert proxy.connections == 2
        assert proxy.forwarded == [origin.url + "/over-tls"]
        assert proxy.tunnels == [f"127.0.0.1:{origin.port}"]
    assert [head.target for head in origin.heads] == ["/over-tls", "/in-tunnel"]


def _read_until(sock: socket.socket, end: bytes) -> bytes:
    data = b""
    while end not in data:
        piece = sock.recv(65536)
        assert piece, f"closed after {data!r}"
        data += piece
    return data


# Socks5Proxy


def _socks_connect(
    proxy: Socks5Proxy, address: bytes, port: int, credentials: tuple[bytes, bytes] | None = None
) -> tuple[socket.socket, bytes]:
    """Greet, authenticate, ask for CONNECT; the socket and the proxy's reply."""
    sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT)
    if credentials is None:
        sock.sendall(b"\x05\x01\x00")
        assert sock.recv(2) == b"\x05\x00"
    else:
        sock.sendall(b"\x05\x02\x00\x02")
        assert sock.recv(2) == b"\x05\x02"
        user, password = credentials
        sock.sendall(b"\x01" + bytes([len(user)]) + user + bytes([len(password)]) + password)
        assert sock.recv(2) == b"\x01\x00"
    sock.sendall(b"\x05\x01\x00" + address + struct.pack("!H", port))
    reply = _recv_exact(sock, 4)
    return sock, reply + _recv_exact(sock, 4 + 2 if reply[3] == 1 else 16 + 2)


def _recv_exact(sock: socket.socket, length: int) -> bytes:
    data = b""
    while len(data) < length:
        piece = sock.recv(length - len(data))
        assert piece, f"closed after {data!r}"
        data += piece
    return data


def _http_get(sock: socket.socket) -> bytes:
    sock.sendall(b"GET /socks HTTP/1.1\r\nHost: x\r\n\r\n")
    return _read_until(sock, b"\r\n\r\nok")


def test_socks5_without_auth_relays_ipv4_and_domain_targets(origin: RecordingServer) -> None:
    with Socks5Proxy() as proxy:
        assert proxy.url == f"socks5://127.0.0.1:{proxy.port}"
        sock, reply = _socks_connect(proxy, b"\x01" + socket.inet_aton("127.0.0.1"), origin.port)
        with sock:
            assert reply[:4] == b"\x05\x00\x00\x01" and len(reply) == 10
            assert _http_get(sock).startswith(b"HTTP/1.1 200 OK")
        # "localhost" may resolve to ::1 first, where the origin does not listen.
        sock, reply = _socks_connect(proxy, b"\x03\x09localhost", origin.port)
        with sock:
            assert reply[:3] == b"\x05\x00\x00"
            assert _http_get(sock).startswith(b"HTTP/1.1 200 OK")
        assert proxy.connections == 2
        assert proxy.targets == [
            ("127.0.0.1", origin.port, "ipv4"),
            ("localhost", origin.port, "domain"),
        ]
    assert origin.connections == 2


def test_socks5_with_credentials(origin: RecordingServer) -> None:
    with Socks5Proxy(credentials=("user", "pass")) as proxy:
        address = b"\x01" + socket.inet_aton("127.0.0.1")
        sock, reply = _socks_connect(proxy, address, origin.port, (b"user", b"pass"))
        with sock:
            assert reply[:2] == b"\x05\x00"
            assert _http_get(sock).startswith(b"HTTP/1.1 200 OK")

        with socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT) as sock:
            sock.sendall(b"\x05\x01\x02\x01\x04user\x05wrong")
            assert sock.recv(2) == b"\x05\x02"
            assert _read_until(sock, b"\x01\x01") == b"\x01\x01"
            assert sock.recv(1) == b""  # closed
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=TIMEOUT) as sock:
            sock.sendall(b"\x05\x01\x00")  # no authentication offered
            assert sock.recv(2) == b"\x05\xff"
            assert sock.recv(1) == b""
        assert proxy.auth_failures == 1
        assert proxy.method_refusals == 1
        assert proxy.targets == [("127.0.0.1", origin.port, "ipv4")]
        proxy.reset()
        assert (proxy.connections, proxy.targets, proxy.auth_failures) == (0, [], 0)
    assert origin.connections == 1


def test_socks5_refusals() -> None:
    with socket.socket() as unused, Socks5Proxy() as proxy:
        unused.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        closed_port = unused.getsockname()[1]
        cases = [
            (b"\x01" + socket.inet_aton("192.0.2.1"), 80, 0x02),
            (b"\x03\x0bexample.com", 80, 0x02),
            (b"\x01" + socket.inet_aton("127.0.0.1"), closed_port, 0x05),
        ]
        for address, port, expected in cases:
            sock, reply = _socks_connect(proxy, address, port)
            with sock:
                assert reply[:2] == bytes([5, expected])
        sock, reply = _socks_connect(proxy, b"\x04" + socket.inet_pton(socket.AF_INET6, "::1"), 1)
        with sock:
            assert reply[1] != 0  # refused, or unreachable where there is no IPv6
        assert proxy.targets == [
            ("192.0.2.1", 80, "ipv4"),
            ("example.com", 80, "domain"),
            ("127.0.0.1", closed_port, "ipv4"),
            ("::1", 1, "ipv6"),
        ]


# UnixSocketHTTPServer


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=TIMEOUT)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(self._path)


def test_unix_socket_server_answers_and_counts() -> None:
    with tempfile.TemporaryDirectory(prefix="rx") as directory:
        path = os.path.join(directory, "http.sock")
        with UnixSocketHTTPServer(path) as server:
            conn = _UnixConnection(path)
            conn.request("GET", "/a?b=1")
            assert json.loads(conn.getresponse().read()) == {
                "path": "/a?b=1",
                "host": "localhost",
                "method": "GET",
            }
            conn.request("POST", "/b", body=b"data", headers={"Host": "example.org"})
            response = conn.getresponse()
            assert response.getheader("content-type") == "application/json"
            assert json.loads(response.read())["host"] == "example.org"
            conn.close()
            assert server.connections == 1
            assert server.requests == ["GET /a?b=1 HTTP/1.1", "POST /b HTTP/1.1"]
        assert not os.path.exists(path)
