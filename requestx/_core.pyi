"""Type stubs for the compiled bridge (requestx/_core.pyx): the contract the Python layer uses."""

from typing import Any, Sequence

LIBCURL_VERSION: str
MARK_CONTENT_ENCODING: int
MARK_SET_COOKIE: int
LIBCURL_CAINFO: str | None
LIBCURL_CAPATH: str | None

def libcurl_info() -> dict[str, Any]: ...
def heap_stats() -> dict[str, int] | None: ...
def platform_info() -> dict[str, str]: ...
def gil_probe_layout_known() -> bool: ...

class EngineError(Exception):
    code: int
    message: str
    os_errno: int
    def __init__(self, code: int, message: str, os_errno: int = 0) -> None: ...

class Body:
    """A response body in a C buffer, exported read-only through the buffer protocol."""

    def __len__(self) -> int: ...
    def __bytes__(self) -> bytes: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

def timeouts_ms(
    connect: float | None,
    read: float | None,
    write: float | None,
    pool: float | None,
    total: float | None = None,
) -> tuple[int, ...]: ...
def gil_probe_stats() -> dict[str, int | bool]: ...
def gil_held() -> bool: ...
def gil_held_while_released(wait_us: int = 0) -> bool: ...
def live_transfers() -> int: ...
def live_objects() -> dict[str, int]: ...
def decoder_codings() -> tuple[str, ...]: ...

class DecoderError(Exception):
    detail: str
    truncated: bool
    def __init__(self, detail: str, truncated: bool = False) -> None: ...

class Decoder:
    """One body's content coding undone in C (csrc/decode.h)."""

    needs_input: bool
    def __init__(self, coding: str) -> None: ...
    def feed(self, data: bytes) -> None: ...
    def size_hint(self) -> int: ...
    def read(self, limit: int, hint: int = 0) -> bytes: ...
    def finish(self) -> None: ...

class TLSConfig:
    def __init__(
        self,
        verify_peer: bool = True,
        verify_host: bool = True,
        ca_file: bytes | None = None,
        ca_path: bytes | None = None,
        ca_pem: bytes | None = None,
        cert_file: bytes | None = None,
        key_file: bytes | None = None,
        key_password: bytes | None = None,
        ssl_version: int = 0,
    ) -> None: ...
    def fields(self) -> dict[str, Any]: ...
    @property
    def verify_peer(self) -> bool: ...
    @property
    def verify_host(self) -> bool: ...

class RouteConfig:
    key: bytes
    def __init__(
        self,
        key: bytes,
        proxy_url: bytes | None = None,
        proxy_username: bytes | None = None,
        proxy_password: bytes | None = None,
        proxy_headers: list[bytes] | None = None,
        proxy_tls: TLSConfig | None = None,
        unix_socket: bytes | None = None,
        interface: bytes | None = None,
        ip_resolve: int = 0,
        socket_options: list[tuple[int, int, int | bytes]] | None = None,
    ) -> None: ...

class Engine:
    def __init__(
        self,
        max_connections: int | None = None,
        max_keepalive: int | None = None,
        keepalive_expiry: float | None = None,
        max_header_bytes: int | None = None,
        max_body_bytes: int | None = None,
        blocking_lanes: bool = False,
    ) -> None: ...
    def close(self) -> None: ...
    def stats(self) -> dict[str, int]: ...
    def perform(
        self,
        method: bytes,
        url: bytes,
        headers: Sequence[tuple[bytes, ...]],
        body: bytes | None,
        timeouts: tuple[int, ...],
        http_version: int,
        tls: TLSConfig | None,
        route: RouteConfig | None,
    ) -> tuple[int, str, bytes, Body, float, int]: ...
    def start_load(
        self,
        method: bytes,
        url: bytes,
        headers: Sequence[tuple[bytes, ...]],
        body: bytes | None,
        timeouts: tuple[int, ...],
        http_version: int,
        tls: TLSConfig | None,
        route: RouteConfig | None,
        concurrency: int,
        requests: int,
        duration: float,
    ) -> LoadRun: ...
    def submit(
        self,
        method: bytes,
        url: bytes,
        headers: Sequence[tuple[bytes, ...]],
        body: bytes | None,
        timeouts: tuple[int, ...],
        http_version: int,
        tls: TLSConfig | None,
        route: RouteConfig | None,
        queue: CompletionQueue,
        defer_wake: bool = ...,
    ) -> PendingTransfer: ...
    def flush(self) -> None: ...
    def open_stream(
        self,
        method: bytes,
        url: bytes,
        headers: Sequence[tuple[bytes, ...]],
        body: bytes | None,
        timeouts: tuple[int, ...],
        http_version: int,
        tls: TLSConfig | None,
        route: RouteConfig | None,
        queue: CompletionQueue | None,
        stream_response: bool = True,
        upload_length: int = -2,
    ) -> PendingTransfer: ...

class PendingTransfer:
    waiter: Any
    def cancel(self) -> None: ...
    def result(self) -> tuple[int, str, bytes, Body, float, int]: ...
    # Streams (Engine.open_stream); block=False returns None when not ready yet.
    def response_head(self, block: bool) -> tuple[int, str, bytes, int] | None: ...
    def read_chunk(self, block: bool) -> bytes | None: ...
    def close_stream(self) -> None: ...
    # Fed request bodies (upload_length >= -1); block=False returns None when full.
    def feed(self, data: bytes, block: bool) -> bool | None: ...
    def end_body(self) -> None: ...
    def finish(self) -> tuple[int, str, bytes, Body, float, int]: ...
    @property
    def finished(self) -> bool: ...
    @property
    def elapsed(self) -> float | None: ...

class CompletionQueue:
    def fileno(self) -> int: ...
    def __len__(self) -> int: ...
    def drain(self) -> list[PendingTransfer]: ...
    def try_spin(self, pending: PendingTransfer) -> list[PendingTransfer] | None: ...
    def close(self) -> None: ...

class LoadRun:
    def wait(self, timeout: float) -> bool: ...
    def stop(self) -> None: ...
    def results(self) -> dict[str, Any]: ...
