"""Session-wide test servers and per-test hygiene.

Fixtures:
    server       HypercornServer running tests/servers/app.py (one per session):
                 .url, .connection_count(), .request_count(), .reset_stats()
    raw_server   RawServer (one per session; stalled sockets are released after each test):
                 .url, .connection_count(), .reset_stats(), .release()
    anyio_backend  asyncio, asyncio+uvloop and trio, for `@pytest.mark.anyio` tests
    tls          a trustme CA and a certificate for 127.0.0.1/localhost, as files:
                 .ca_file (trust this), .cert_file (server key + chain)
    tls_server   HypercornServer over TLS offering h2 and http/1.1 (one per session)
    tls_h1_server  the same offering http/1.1 only (ALPN fallback tests)
    nginx        nginx with its default configuration, one per module (skipped without nginx);
                 a module that needs another configuration defines its own `nginx`
    fast         FastServer, hypercorn in a subprocess (one per module; its sockets are not in
                 this process's fd table)
    recorder     RecordingServer: the exact request heads it received (one per module)
    proxy        ForwardProxy: a forwarding and CONNECT-tunnelling HTTP proxy (one per test)
    h2_script    ScriptedH2Server: h2c whose misbehaviour each path chooses (one per module)

Helpers the tests share are in tests/support/, the servers in tests/servers/.

At the end of the session every C object of the engine (transfers, easy handles, buffers) must
be gone once the clients and responses are (`_no_engine_objects_left`).
"""

from __future__ import annotations

import gc
import importlib.util
import time
from typing import Iterator

import pytest

from tests.servers import HypercornServer, RawServer
from tests.servers.fast_server import FastServer
from tests.servers.h2_scripted import ScriptedH2Server
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.servers.proxies import ForwardProxy
from tests.servers.recorder import RecordingServer
from tests.support.tls import TLSFiles

# Variables that would silently route test traffic through a proxy or change which CA bundle
# is trusted; httpx's suite clears the same set.
_ENV_TO_CLEAR = [
    "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
    "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR",
]  # fmt: skip


@pytest.fixture(scope="session", autouse=True)
def _no_engine_objects_left() -> Iterator[None]:
    """Set up first, so torn down last: after every other fixture's clients are closed."""
    yield
    from requestx import _client, _core

    engine = _client._shared_engine  # the top-level API's engine (requestx.get)
    _client._shared_engine = None
    if engine is not None:
        engine.close()
    del engine
    deadline = time.monotonic() + 5
    while True:
        gc.collect()
        live = _core.live_objects()
        if not any(live.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not any(live.values()), f"engine objects alive after the session: {live}"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def server() -> Iterator[HypercornServer]:
    with HypercornServer() as running:
        yield running


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    return TLSFiles(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def tls_server(tls: TLSFiles) -> Iterator[HypercornServer]:
    with HypercornServer(certfile=tls.cert_file, keyfile=tls.cert_file) as running:
        yield running


@pytest.fixture(scope="session")
def tls_h1_server(tls: TLSFiles) -> Iterator[HypercornServer]:
    server = HypercornServer(certfile=tls.cert_file, keyfile=tls.cert_file, alpn=("http/1.1",))
    with server as running:
        yield running


@pytest.fixture(scope="session")
def _raw_server_session() -> Iterator[RawServer]:
    with RawServer() as running:
        yield running


@pytest.fixture
def raw_server(_raw_server_session: RawServer) -> Iterator[RawServer]:
    yield _raw_server_session
    _raw_server_session.release()  # "stall" holds its socket only until the test ends


@pytest.fixture(scope="module")
def nginx() -> Iterator[Nginx]:
    with nginx_or_skip() as running:
        yield running


@pytest.fixture(scope="module")
def fast() -> Iterator[FastServer]:
    # In another process, so that its sockets are not in this process's fd table.
    with FastServer() as running:
        yield running


@pytest.fixture(scope="module")
def recorder() -> Iterator[RecordingServer]:
    with RecordingServer() as running:
        yield running


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    with ForwardProxy() as running:
        yield running


@pytest.fixture(scope="module")
def h2_script() -> Iterator[ScriptedH2Server]:
    with ScriptedH2Server() as running:
        yield running


_HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(("asyncio", {"use_uvloop": False}), id="asyncio"),
        pytest.param(
            ("asyncio", {"use_uvloop": True}),
            id="uvloop",
            marks=pytest.mark.skipif(not _HAVE_UVLOOP, reason="uvloop is not installed"),
        ),
        pytest.param("trio", id="trio"),
    ],
)
def anyio_backend(request: pytest.FixtureRequest) -> object:
    """Every async test runs on each event loop requestx supports, written once."""
    return request.param
