"""The async HTTP clients under comparison, each behind the same three calls.

A driver is created inside the running event loop (`await Driver.open(...)`), makes one kind of
request (`get_json`: GET, read the whole body, check the status, decode the JSON with the
library's own `json()`), and is closed in the same loop. One driver, that is one client or
session, is shared by all the tasks of a measurement.

Every client gets a connection pool of exactly `concurrency` keep-alive connections, so that N
tasks use N connections whatever the library's default pool size (100 for httpx, requestx and
aiohttp, unlimited for pyreqwest): the benchmark compares clients, not pool defaults. Everything
else is the library's default.

`LOOPS` says on which event loops a library runs: aiohttp and pyreqwest are asyncio-only.
"""

from __future__ import annotations

from typing import Any

from clients import ClientUnavailable, fail

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
    async def open(cls, concurrency: int) -> AsyncDriver:
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
    async def open(cls, concurrency: int) -> AsyncDriver:
        import requestx

        limits = requestx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        return cls(requestx.AsyncClient(limits=limits))


class HttpxDriver(_HttpxStyleDriver):
    name = "httpx"

    @classmethod
    def check(cls) -> None:
        try:
            import httpx  # noqa: F401
        except ImportError as exc:
            raise ClientUnavailable("httpx is not installed") from exc

    @classmethod
    async def open(cls, concurrency: int) -> AsyncDriver:
        import httpx

        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        return cls(httpx.AsyncClient(limits=limits))


class AiohttpDriver(AsyncDriver):
    """One aiohttp.ClientSession; its json() uses the standard json module."""

    name = "aiohttp"
    loops = ("asyncio", "uvloop")

    @classmethod
    def check(cls) -> None:
        try:
            import aiohttp  # noqa: F401
        except ImportError as exc:
            raise ClientUnavailable("aiohttp is not installed (pip install aiohttp)") from exc

    @classmethod
    async def open(cls, concurrency: int) -> AsyncDriver:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=concurrency)
        return cls(aiohttp.ClientSession(connector=connector))

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
        try:
            from pyreqwest.client import ClientBuilder  # noqa: F401
        except ImportError as exc:
            raise ClientUnavailable(
                "pyreqwest is not installed (pip install pyreqwest; Python >= 3.11)"
            ) from exc

    @classmethod
    async def open(cls, concurrency: int) -> AsyncDriver:
        from pyreqwest.client import ClientBuilder

        # max_connections caps in-flight requests: over HTTP/1.1, the connections in use.
        # Idle connections per host are unlimited by default, so all of them stay open.
        return cls(ClientBuilder().max_connections(concurrency).build())

    async def get_json(self, url: str) -> Any:
        response = await self._client.get(url).build().send()
        if response.status != 200:
            fail(self.name, url, response.status)
        return await response.json()

    async def close(self) -> None:
        await self._client.close()


DRIVERS: dict[str, type[AsyncDriver]] = {
    "requestx": RequestxDriver,
    "aiohttp": AiohttpDriver,
    "pyreqwest": PyreqwestDriver,
    "httpx": HttpxDriver,
}
