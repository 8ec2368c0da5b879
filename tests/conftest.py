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

At the end of the session every C object of the engine (transfers, easy handles, buffers) must
be gone once the clients and responses are (`_no_engine_objects_left`).
"""

from __future__ import annotations

import gc
import importlib.util
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.servers import HypercornServer, RawServer

# Variables that would silently route test traffic through a proxy or change which CA bundle
# is trusted; httpx's suite clears the same set.
_ENV_TO_CLEAR = [
    "HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy",
    "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
    "SSL_CERT_FILE", "SSL_CERT_DIR",
]  # fmt: skip


# Public names requestx has and httpx does not (docs/differences.md, "Additions").
REQUESTX_ONLY_NAMES = {"ResponseTooLarge"}


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


class TLSFiles:
    """A test CA and a server certificate for 127.0.0.1 and localhost, written to files."""

    def __init__(self, directory: Path) -> None:
        import trustme

        self.ca = trustme.CA()
        self.server_cert = self.ca.issue_cert("127.0.0.1", "localhost")
        self.ca_file = str(directory / "ca.pem")
        self.cert_file = str(directory / "server.pem")
        self.ca.cert_pem.write_to_path(self.ca_file)
        self.server_cert.private_key_and_cert_chain_pem.write_to_path(self.cert_file)


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
