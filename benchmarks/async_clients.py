"""The async HTTP clients under comparison, each behind the same three calls.

A driver is created inside the running event loop (`await Driver.open(...)`), makes one kind of
request (`get_json`: GET, read the whole body, check the status, decode the JSON with the
library's own `json()`), and is closed in the same loop. One driver, that is one client or
session, is shared by all the tasks of a measurement.

Every client gets a connection pool of exactly `concurrency` keep-alive connections, so that N
tasks use N connections whatever the library's default pool size (100 for httpx, requestx and
aiohttp, unlimited for pyreqwest): the benchmark compares clients, not pool defaults. Everything
else is the library's default, but for `timeout` (seconds) when a cell gives one: compare.py's
scale cells give every client the same 60 s, because with 10,000 requests in flight a request
can wait longer than httpx's and requestx's default 5 s for its turn, and the cell would measure
a default rather than the client. `settings(concurrency, timeout)` says in words what `open`
sets, for the report.

`LOOPS` says on which event loops a library runs: aiohttp and pyreqwest are asyncio-only.

H2_DRIVERS: the same calls over HTTP/2 (TLS or cleartext) for run_h2.py; see below.
"""

from __future__ import annotations

from typing import Any

from clients import ClientUnavailable, fail, require

ALL_LOOPS = ("asyncio", "uvloop", "trio")


class AsyncDriver:
    name = ""
    loops: tuple[str, ...] = ALL_LOOPS

    def __init__(self, client: Any) -> None:
        self._client = client

    @classmethod
    def check(cls) -> None:
        """Raise ClientUnavailable when the library cannot be imported (no event loop needed)."""
        raise NotImplementedError

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        raise NotImplementedError

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        """What `open(concurrency, timeout)` sets, as the library's own call."""
        raise NotImplementedError

    async def get_json(self, url: str) -> Any:
        raise NotImplementedError

    async def close(self) -> None:
        pass


class _HttpxStyleDriver(AsyncDriver):
    """requestx.AsyncClient and httpx.AsyncClient: the same calls, by design."""

    async def get_json(self, url: str) -> Any:
        response = await self._client.get(url)
        if response.status_code != 200:
            fail(self.name, url, response.status_code)
        return response.json()

    async def close(self) -> None:
        await self._client.aclose()


def _httpx_style_settings(module: str, concurrency: int, timeout: float | None) -> str:
    limits = (
        f"{module}.Limits(max_connections={concurrency}, max_keepalive_connections={concurrency})"
    )
    extra = "" if timeout is None else f", timeout={timeout:g}"
    return f"AsyncClient(limits={limits}{extra})"


class RequestxDriver(_HttpxStyleDriver):
    name = "requestx"

    @classmethod
    def check(cls) -> None:
        try:
            import requestx

            requestx.AsyncClient  # noqa: B018 - fails on a build without the async client
        except (ImportError, AttributeError) as exc:
            raise ClientUnavailable(f"requestx is not built/importable yet ({exc})") from exc

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        import requestx

        limits = requestx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        if timeout is None:
            return cls(requestx.AsyncClient(limits=limits))
        return cls(requestx.AsyncClient(limits=limits, timeout=timeout))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        return _httpx_style_settings("requestx", concurrency, timeout)


class HttpxDriver(_HttpxStyleDriver):
    name = "httpx"

    @classmethod
    def check(cls) -> None:
        require("httpx")

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        import httpx

        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        if timeout is None:
            return cls(httpx.AsyncClient(limits=limits))
        return cls(httpx.AsyncClient(limits=limits, timeout=timeout))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        return _httpx_style_settings("httpx", concurrency, timeout)


class AiohttpDriver(AsyncDriver):
    """One aiohttp.ClientSession; its json() uses the standard json module."""

    name = "aiohttp"
    loops = ("asyncio", "uvloop")

    @classmethod
    def check(cls) -> None:
        require("aiohttp", "aiohttp is not installed (pip install aiohttp)")

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=concurrency)  # limit_per_host: 0, no limit
        if timeout is None:
            return cls(aiohttp.ClientSession(connector=connector))
        limit = aiohttp.ClientTimeout(total=timeout)
        return cls(aiohttp.ClientSession(connector=connector, timeout=limit))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        session = f"ClientSession(connector=TCPConnector(limit={concurrency})"
        if timeout is not None:
            session += f", timeout=ClientTimeout(total={timeout:g})"
        return session + ")"

    async def get_json(self, url: str) -> Any:
        async with self._client.get(url) as response:
            if response.status != 200:
                fail(self.name, url, response.status)
            return await response.json()

    async def close(self) -> None:
        await self._client.close()


class PyreqwestDriver(AsyncDriver):
    """pyreqwest's async Client (Rust reqwest on a tokio runtime thread); JSON decoded in Rust."""

    name = "pyreqwest"
    loops = ("asyncio", "uvloop")

    @classmethod
    def check(cls) -> None:
        require(
            "pyreqwest.client", "pyreqwest is not installed (pip install pyreqwest; Python >= 3.11)"
        )

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        from datetime import timedelta

        from pyreqwest.client import ClientBuilder

        # max_connections caps in-flight requests: over HTTP/1.1, the connections in use.
        # Idle connections per host are unlimited by default, so all of them stay open.
        builder = ClientBuilder().max_connections(concurrency)
        if timeout is not None:
            builder = builder.timeout(timedelta(seconds=timeout))
        return cls(builder.build())

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        built = f"ClientBuilder().max_connections({concurrency})"
        if timeout is not None:
            built += f".timeout(timedelta(seconds={timeout:g}))"
        return built + ".build()"

    async def get_json(self, url: str) -> Any:
        response = await self._client.get(url).build().send()
        if response.status != 200:
            fail(self.name, url, response.status)
        return await response.json()

    async def close(self) -> None:
        await self._client.close()


class _AsyncSessionDriver(_HttpxStyleDriver):
    """curl_cffi's and niquests' AsyncSession: httpx's calls, but `close()` to close."""

    loops = ("asyncio", "uvloop")

    async def close(self) -> None:
        await self._client.close()


class CurlCffiDriver(_AsyncSessionDriver):
    """curl_cffi's AsyncSession: libcurl's multi interface driven from the asyncio loop."""

    name = "curl_cffi"

    @classmethod
    def check(cls) -> None:
        require("curl_cffi.requests")

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        from curl_cffi import requests

        if timeout is None:
            return cls(requests.AsyncSession(max_clients=concurrency))
        return cls(requests.AsyncSession(max_clients=concurrency, timeout=timeout))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        extra = "" if timeout is None else f", timeout={timeout:g}"
        return f"AsyncSession(max_clients={concurrency}{extra})"


class NiquestsDriver(_AsyncSessionDriver):
    """niquests' AsyncSession (requests' API, async)."""

    name = "niquests"

    @classmethod
    def check(cls) -> None:
        require("niquests")

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        import niquests

        if timeout is None:
            return cls(niquests.AsyncSession(pool_maxsize=concurrency))
        return cls(niquests.AsyncSession(pool_maxsize=concurrency, timeout=timeout))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        extra = "" if timeout is None else f", timeout={timeout:g}"
        return f"AsyncSession(pool_maxsize={concurrency}{extra})"


DRIVERS: dict[str, type[AsyncDriver]] = {
    "requestx": RequestxDriver,
    "aiohttp": AiohttpDriver,
    "pyreqwest": PyreqwestDriver,
    "httpx": HttpxDriver,
    "curl_cffi": CurlCffiDriver,
    "niquests": NiquestsDriver,
}


# --- HTTP/2 (benchmarks/run_h2.py) ----------------------------------------------------------
#
# The same libraries asked for HTTP/2 the way their documentation says, over TLS ("h2": ALPN
# negotiates it, the client trusting the benchmark's CA) or cleartext with prior knowledge
# ("h2c"). Pools are the libraries' defaults: over HTTP/2 a client should multiplex all its
# tasks' requests on one connection, and how many it opens is part of what is measured.
# Every response is checked to be HTTP/2: a client that fell back to HTTP/1.1 fails its cell.

H2_PROTOCOLS = ("h2", "h2c")


class _H2Driver(AsyncDriver):
    protocol = "h2"  # or "h2c"; set by h2_driver()
    ca_file = ""  # h2: PEM file of the CA to trust

    def _require_h2(self, url: str, version: str) -> None:
        if version not in ("HTTP/2", "HTTP/2.0"):
            raise RuntimeError(f"{self.name}: {url} answered over {version}, not HTTP/2")


class _HttpxStyleH2Driver(_H2Driver, _HttpxStyleDriver):
    async def get_json(self, url: str) -> Any:
        response = await self._client.get(url)
        if response.status_code != 200:
            fail(self.name, url, response.status_code)
        self._require_h2(url, response.http_version)
        return response.json()


class RequestxH2Driver(_HttpxStyleH2Driver, RequestxDriver):
    """h2: AsyncClient(http2=True, verify=CA file); h2c: AsyncClient(http1=False, http2=True)."""

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        import requestx

        if cls.protocol == "h2":
            return cls(requestx.AsyncClient(http2=True, verify=cls.ca_file))
        return cls(requestx.AsyncClient(http1=False, http2=True))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        if cls.protocol == "h2":
            return "AsyncClient(http2=True, verify=CA file)"
        return "AsyncClient(http1=False, http2=True)"


class HttpxH2Driver(_HttpxStyleH2Driver, HttpxDriver):
    """h2: AsyncClient(http2=True, verify=SSLContext trusting the CA); h2c: http1=False."""

    @classmethod
    def check(cls) -> None:
        super().check()
        require("h2", "httpx needs the h2 package for HTTP/2 (pip install 'httpx[http2]')")

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        import ssl

        import httpx

        if cls.protocol == "h2":
            context = ssl.create_default_context(cafile=cls.ca_file)
            return cls(httpx.AsyncClient(http2=True, verify=context))
        return cls(httpx.AsyncClient(http1=False, http2=True))

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        if cls.protocol == "h2":
            return "AsyncClient(http2=True, verify=SSLContext trusting the CA)"
        return "AsyncClient(http1=False, http2=True)"


class PyreqwestH2Driver(_H2Driver, PyreqwestDriver):
    """ClientBuilder().http2_prior_knowledge(): HTTP/2 only, over TLS (ALPN offers h2 alone;
    .add_root_certificate_pem(CA)) and cleartext. Response.version is "HTTP/2.0".

    Over TLS, .http2(True) also gets HTTP/2 (ALPN offers h2 and http/1.1; without it, only
    http/1.1), but then the pool cannot know before the handshake that a connection will
    multiplex: 64 tasks starting together open 63 connections (nginx 1.22, pyreqwest 0.15),
    at about the same req/s. HTTP/2 only is the setting that compares like with like."""

    @classmethod
    async def open(cls, concurrency: int, timeout: float | None = None) -> AsyncDriver:
        from pathlib import Path

        from pyreqwest.client import ClientBuilder

        builder = ClientBuilder().http2_prior_knowledge()
        if cls.protocol == "h2":
            builder = builder.add_root_certificate_pem(Path(cls.ca_file).read_bytes())
        return cls(builder.build())

    @classmethod
    def settings(cls, concurrency: int, timeout: float | None = None) -> str:
        if cls.protocol == "h2":
            return "ClientBuilder().http2_prior_knowledge().add_root_certificate_pem(CA).build()"
        return "ClientBuilder().http2_prior_knowledge().build()"

    async def get_json(self, url: str) -> Any:
        response = await self._client.get(url).build().send()
        if response.status != 200:
            fail(self.name, url, response.status)
        self._require_h2(url, response.version)
        return await response.json()


H2_DRIVERS: dict[str, type[_H2Driver]] = {
    "requestx": RequestxH2Driver,
    "pyreqwest": PyreqwestH2Driver,
    "httpx": HttpxH2Driver,
}


def h2_driver(client: str, protocol: str, ca_file: str = "") -> type[AsyncDriver]:
    """H2_DRIVERS[client] set up for `protocol` ("h2" or "h2c")."""
    if protocol not in H2_PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}")
    base = H2_DRIVERS[client]
    attrs = {"protocol": protocol, "ca_file": ca_file}
    return type(f"{base.__name__}_{protocol}", (base,), attrs)
