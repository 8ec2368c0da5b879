"""Run the test ASGI app on hypercorn, on 127.0.0.1 and a free port.

Why a thread and not a subprocess: the fixture reads the app's connection counter directly (no
IPC, no stats requests that would themselves open connections), start-up takes milliseconds, and
nothing is left behind if the test process dies. A server in the same process also catches a
client that blocks while holding the GIL: the server could not answer, and the test would hit
its timeout instead of passing by luck. requestx releases the GIL while it waits, so this costs
the engine nothing.

TLS/HTTP/2 hook: pass `certfile` and `keyfile` (e.g. from `trustme`) and the server speaks
HTTPS with ALPN h2 and http/1.1 (or what `alpn` lists); `url` then starts with https://. Over
plain TCP hypercorn already accepts h2c, both prior-knowledge and `Upgrade: h2c`.
"""

from __future__ import annotations

import asyncio
import http.client
import ssl
import threading
import time

from hypercorn.asyncio import serve
from hypercorn.config import Config

from ._lifecycle import Lifecycle
from ._socket_server import LOOPBACK, loopback_listener
from .app import App


class HypercornServer(Lifecycle):
    """`with HypercornServer(App()) as server: ... server.url ...`"""

    def __init__(
        self,
        app: App | None = None,
        *,
        certfile: str | None = None,
        keyfile: str | None = None,
        alpn: tuple[str, ...] = ("h2", "http/1.1"),
        client_ca: str | None = None,
        max_streams: int = 1000,
    ) -> None:
        self.app = app if app is not None else App()
        self.certfile = certfile
        self.keyfile = keyfile
        self.alpn = alpn  # offered over TLS; ("http/1.1",) makes an HTTP/1.1-only server
        self.client_ca = client_ca  # require client certificates signed by this CA (mTLS)
        # HTTP/2 streams a connection may carry at once. hypercorn's own default is 100; the
        # shared servers allow 1000 so that bursts fit, and tests/client/test_h2_multiplexing.py
        # runs servers with the default to check that requests beyond it wait for a stream.
        self.max_streams = max_streams
        self.port = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shutdown: asyncio.Event | None = None
        self._error: BaseException | None = None

    # --- what tests use ---------------------------------------------------------------------

    @property
    def tls(self) -> bool:
        return self.certfile is not None

    @property
    def url(self) -> str:
        """Base URL without a trailing slash, e.g. http://127.0.0.1:43210"""
        return f"{'https' if self.tls else 'http'}://{LOOPBACK}:{self.port}"

    def connection_count(self) -> int:
        """Distinct TCP connections that carried a request since the last reset."""
        return self.app.stats.connection_count()

    def request_count(self) -> int:
        return self.app.stats.request_count()

    def request_queries(self) -> list[str]:
        """Query strings of the requests since the last reset, in the order they arrived."""
        return self.app.stats.queries()

    def client_ports(self) -> dict[str, int | None]:
        """Query string -> the client port of the connection its request came on."""
        return self.app.stats.client_ports()

    def reset_stats(self) -> None:
        self.app.stats.reset()

    # --- life cycle -------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> None:
        # We bind the socket ourselves and hand hypercorn its file descriptor: the port is known
        # before the server thread runs, and no other process can take it in between.
        listener = loopback_listener(128)
        self.port = listener.getsockname()[1]

        config = Config()
        config.bind = [f"fd://{listener.detach()}"]  # hypercorn owns (and closes) it now
        config.certfile = self.certfile
        config.keyfile = self.keyfile
        config.alpn_protocols = list(self.alpn)
        if self.client_ca is not None:
            config.ca_certs = self.client_ca
            config.verify_mode = ssl.CERT_REQUIRED
        config.accesslog = None
        config.loglevel = "WARNING"  # no "Running on ..." banner in every test run
        config.graceful_timeout = 1.0  # stalled test connections must not delay shutdown
        config.h11_max_incomplete_size = 1024 * 1024  # tests may send large request headers
        config.h2_max_concurrent_streams = self.max_streams
        started = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(config, started), name="hypercorn-test-server", daemon=True
        )
        self._thread.start()
        if not started.wait(timeout):
            raise RuntimeError("hypercorn test server thread did not start")
        self._wait_ready(timeout)
        self.reset_stats()

    def stop(self, timeout: float = 10.0) -> None:
        if self._thread is None:
            return
        if self._loop is not None and self._shutdown is not None:
            self._loop.call_soon_threadsafe(self._shutdown.set)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError("hypercorn test server did not stop in time")
        self._thread = None

    # --- internals --------------------------------------------------------------------------

    def _run(self, config: Config, started: threading.Event) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._shutdown = asyncio.Event()
            started.set()
            await serve(self.app, config, shutdown_trigger=self._shutdown.wait)  # type: ignore[arg-type]

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by _wait_ready / visible in the fixture
            self._error = exc
            started.set()

    def _wait_ready(self, timeout: float) -> None:
        """Poll GET / until the app answers: the socket accepts before hypercorn serves."""
        deadline = time.monotonic() + timeout
        while True:
            if self._error is not None:
                raise RuntimeError("hypercorn test server failed") from self._error
            try:
                if self._probe():
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"hypercorn test server not ready at {self.url}")
            time.sleep(0.02)

    def _probe(self) -> bool:
        if self.client_ca is not None:
            # A server that wants client certificates refuses the probe's handshake; the
            # listening socket exists already, and requests wait in its backlog until served.
            return self._thread is not None and self._loop is not None
        if self.tls:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # readiness only; tests verify with trustme
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                LOOPBACK, self.port, timeout=1.0, context=context
            )
        else:
            conn = http.client.HTTPConnection(LOOPBACK, self.port, timeout=1.0)
        try:
            conn.request("GET", "/")
            return conn.getresponse().status == 200
        finally:
            conn.close()
