"""Session-wide test servers and per-test hygiene.

Fixtures:
    server       HypercornServer running tests/servers/app.py (one per session):
                 .url, .connection_count(), .request_count(), .reset_stats()
    raw_server   RawServer (one per session; stalled sockets are released after each test):
                 .url, .connection_count(), .reset_stats(), .release()
    anyio_backend  asyncio, asyncio+uvloop and trio, for `@pytest.mark.anyio` tests
"""

from __future__ import annotations

import importlib.util
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


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def server() -> Iterator[HypercornServer]:
    with HypercornServer() as running:
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
