"""The test servers themselves, checked with httpx as a known-good client.

If one of these fails, the servers are wrong, not requestx.
"""

from __future__ import annotations

import importlib.util
import json
import ssl
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from tests.servers import HypercornServer, RawServer, pattern_bytes
from tests.servers.app import CHARSET_TEXT, COMPRESSED_DOC


@pytest.fixture
def client(server: HypercornServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=5) as client:
        yield client


def test_hello_and_json(client: httpx.Client) -> None:
    assert client.get("/").text == "Hello, world!"
    response = client.get("/json")
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"Hello": "world!"}


def test_echo_shows_exactly_what_was_sent(client: httpx.Client) -> None:
    body = bytes(range(256))
    response = client.request(
        "PATCH",
        "/echo/some%20path",
        params=[("a", "1"), ("a", "2")],
        headers=[("X-Repeat", "one"), ("X-Repeat", "two")],
        content=body,
    )
    echo = response.json()
    assert echo["method"] == "PATCH"
    assert echo["path"] == "/echo/some path"
    assert echo["raw_path"] == "/echo/some%20path"
    assert echo["query"] == "a=1&a=2"
    assert [v for n, v in echo["headers"] if n == "x-repeat"] == ["one", "two"]
    assert ["content-length", "256"] in echo["headers"]
    assert echo["body"].encode("latin-1") == body
    assert echo["http_version"] == "1.1"


@pytest.mark.parametrize("code", [200, 201, 204, 304, 404, 500, 503])
def test_status(client: httpx.Client, code: int) -> None:
    response = client.get(f"/status/{code}")
    assert response.status_code == code
    assert response.content == (b"" if code in (204, 304) else f"status {code}".encode())


def test_response_headers_keep_order_and_repeats(client: httpx.Client) -> None:
    response = client.get("/headers/set?x-a=1&x-b=2&x-a=3")
    assert response.headers.get_list("x-a") == ["1", "3"]
    assert response.headers["x-b"] == "2"


def test_cookies_round_trip(client: httpx.Client) -> None:
    response = client.get("/cookies/set?flavour=oat&size=big")
    assert response.headers.get_list("set-cookie") == ["flavour=oat; Path=/", "size=big; Path=/"]
    assert client.get("/cookies").json()["cookie"] in (
        "flavour=oat; size=big",
        "size=big; flavour=oat",
    )
    client.cookies.clear()
    assert client.get("/cookies").json() == {"cookie": None}


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("shape", ["", "/absolute", "/relative"])
def test_redirect_shapes(client: httpx.Client, code: int, shape: str) -> None:
    response = client.post(f"/redirect/{code}{shape}", content=b"data", follow_redirects=True)
    assert response.status_code == 200
    assert response.url.path == "/echo"
    assert [r.status_code for r in response.history] == [code]
    kept = code in (307, 308)
    assert response.json()["method"] == ("POST" if kept else "GET")
    assert response.json()["body"] == ("data" if kept else "")


def test_redirect_to_and_chain_and_loop(client: httpx.Client, server: HypercornServer) -> None:
    response = client.get("/redirect/302?to=/json", follow_redirects=True)
    assert response.json() == {"Hello": "world!"}
    absolute = client.get("/redirect/301/absolute")
    assert absolute.headers["location"] == f"{server.url}/echo"
    assert len(client.get("/redirect/chain/3", follow_redirects=True).history) == 4
    with pytest.raises(httpx.TooManyRedirects):
        client.get("/redirect/loop", follow_redirects=True)


def test_slow_and_timeout(client: httpx.Client) -> None:
    assert client.get("/slow?delay=0.05").text == "slow"
    with pytest.raises(httpx.ReadTimeout):
        client.get("/slow?delay=1", timeout=httpx.Timeout(5, read=0.1))


@pytest.mark.parametrize("length", ["0", "1"])
def test_drip_streams_pieces(client: httpx.Client, length: str) -> None:
    url = f"/drip?chunks=5&delay=0.01&size=3&length={length}"
    with client.stream("GET", url) as response:
        assert ("content-length" in response.headers) == (length == "1")
        body = b"".join(response.iter_raw())
    assert body == pattern_bytes(15)


@pytest.mark.parametrize("chunked", ["0", "1"])
def test_bytes_are_deterministic(client: httpx.Client, chunked: str) -> None:
    response = client.get(f"/bytes/200000?chunked={chunked}")
    assert response.content == pattern_bytes(200000)
    assert response.content[251:253] == b"\x00\x01"


@pytest.mark.parametrize("coding", ["gzip", "deflate", "brotli"])
def test_compressed(client: httpx.Client, coding: str) -> None:
    if coding == "brotli" and importlib.util.find_spec("brotli") is None:
        pytest.skip("brotli module not installed")
    response = client.get(f"/{coding}")
    assert response.headers["content-encoding"] == ("br" if coding == "brotli" else coding)
    assert response.json() == COMPRESSED_DOC
    assert len(client.get(f"/{coding}?size=100000").content) == 100000


def test_charset(client: httpx.Client) -> None:
    response = client.get("/charset/iso-8859-1")
    assert response.headers["content-type"] == "text/plain; charset=iso-8859-1"
    assert response.content == CHARSET_TEXT.encode("iso-8859-1")
    assert response.text == CHARSET_TEXT
    japanese = client.get("/charset/shift_jis", params={"text": "こんにちは"})
    assert japanese.text == "こんにちは"
    assert client.get("/charset/utf-8?param=0").headers["content-type"] == "text/plain"
    assert client.get("/charset/ascii").status_code == 400  # the sample text is not ASCII


def test_large_headers(client: httpx.Client) -> None:
    response = client.get("/large-headers?count=1000&size=50")
    assert response.headers["x-large-999"] == "v" * 50


def test_connection_count(server: HypercornServer) -> None:
    server.reset_stats()
    with httpx.Client() as one:
        for _ in range(5):
            one.get(server.url + "/").raise_for_status()
    assert server.connection_count() == 1
    assert server.request_count() == 5
    for _ in range(2):
        with httpx.Client() as fresh:
            fresh.get(server.url + "/")
    assert server.connection_count() == 3
    server.reset_stats()
    assert server.connection_count() == 0


# --- raw misbehaving server ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "error"),
    [
        ("close-mid-body", httpx.RemoteProtocolError),
        ("close-no-response", httpx.RemoteProtocolError),
        ("bad-status-line", httpx.RemoteProtocolError),
        ("huge-headers", httpx.RemoteProtocolError),  # h11 refuses header blocks > 100 KiB
    ],
)
def test_raw_failures_then_recovery(
    raw_server: RawServer, scenario: str, error: type[Exception]
) -> None:
    with httpx.Client(base_url=raw_server.url, timeout=5) as client:
        with pytest.raises(error):
            client.get(f"/{scenario}")
        assert client.get("/ok").text == "ok"


def test_raw_stall_is_a_read_timeout(raw_server: RawServer) -> None:
    with httpx.Client(base_url=raw_server.url, timeout=httpx.Timeout(5, read=0.2)) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.get("/stall")
        assert client.get("/ok").text == "ok"


def test_raw_slow_headers(raw_server: RawServer) -> None:
    url = raw_server.url + "/slow-headers?lines=3&delay=0.1"
    response = httpx.get(url, timeout=httpx.Timeout(5, read=0.5))
    assert response.headers["x-slow-2"] == "2"
    assert response.text == "ok"
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(url, timeout=httpx.Timeout(5, read=0.02))


def test_raw_keep_alive_and_dead_pooled_connection(raw_server: RawServer) -> None:
    raw_server.reset_stats()
    with httpx.Client(base_url=raw_server.url) as client:
        for _ in range(3):
            assert client.get("/ok").text == "ok"
        assert raw_server.connection_count() == 1
        assert client.get("/ok-then-close").text == "ok"
        # httpx does not retry a request that races the server's close (libcurl does), so
        # give the server's FIN time to arrive: this test checks the server, not that race.
        time.sleep(0.05)
        assert client.get("/ok").text == "ok"  # the pool notices the closed socket
    assert raw_server.connection_count() == 2
    assert httpx.get(raw_server.url + "/nope").status_code == 404


# --- TLS + HTTP/2, and h2c --------------------------------------------------------------------


def test_tls_and_http2_hook(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    pytest.importorskip("h2")
    ca = trustme.CA()
    pem = tmp_path / "server.pem"
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(pem))
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    tls_server = HypercornServer(certfile=str(pem), keyfile=str(pem))
    with tls_server, httpx.Client(verify=trust, http2=True) as client:
        assert tls_server.url.startswith("https://127.0.0.1:")
        response = client.get(tls_server.url + "/echo")
    assert response.http_version == "HTTP/2"
    assert response.json()["http_version"] == "2"


def test_h2c_prior_knowledge(server: HypercornServer) -> None:
    pytest.importorskip("h2")
    with httpx.Client(http1=False, http2=True) as client:
        response = client.get(server.url + "/echo")
    assert response.http_version == "HTTP/2"
    assert json.loads(response.content)["http_version"] == "2"
