"""
Bodies in flight: response bodies still arriving, request bodies still being sent.

Response side: what `Response.stream` is for `stream=True` requests.

The engine buffers a streaming transfer's body in C and pauses the transfer once about 1 MiB
waits unread (see "Streaming" in csrc/transfer.h). These classes hand that buffer to Python as
it fills, as undecoded bytes (the Response decodes them, so `iter_raw()` can give the bytes as
sent):

* `EngineResponseStream`: a blocking iterator; each step waits with the GIL released.
* `AsyncEngineResponseStream`: an async iterator; each wait is one notification through the
  event loop's completion queue (`_aio.py`), never one per chunk.

Closing either before the end cancels the transfer: its connection is closed, not returned
half-read, so the pool stays healthy.

Request side: `feed_request_body` / `afeed_request_body` copy a streamed request body
(iterator, file, multipart) into the engine piece by piece while the transfer runs; the engine
holds at most 256 KiB of it, and the feeder waits for room. A body that does not match its own
Content-Length is refused with `LocalProtocolError` and the transfer is cancelled, so a
truncated or overlong body never reaches the server as if it were complete.
"""

from __future__ import annotations

import time
import typing

from . import _core
from ._exceptions import LocalProtocolError, exception_for_engine_error
from ._framing import parse_content_length

if typing.TYPE_CHECKING:
    from ._aio import _Bridge
    from ._models import Request

__all__ = [
    "AsyncEngineResponseStream",
    "EngineResponseStream",
    "afeed_request_body",
    "feed_request_body",
    "upload_length",
]


class _EngineStreamBase:
    def __init__(self, pending: _core.PendingTransfer, request: Request) -> None:
        self._pending = pending
        self._request = request
        self._started = time.perf_counter()

    @property
    def elapsed(self) -> float:
        """Seconds from sending to the end of the body (or to now, if it has not ended)."""
        finished = self._pending.elapsed
        return time.perf_counter() - self._started if finished is None else float(finished)

    def _failed(self, exc: _core.EngineError) -> Exception:
        return exception_for_engine_error(
            exc.code, exc.message, self._request, os_errno=exc.os_errno
        )


class EngineResponseStream(_EngineStreamBase):
    """The undecoded body of a blocking client's streaming response."""

    def __iter__(self) -> typing.Iterator[bytes]:
        read_chunk = self._pending.read_chunk
        while True:
            try:
                chunk = read_chunk(True)
            except _core.EngineError as exc:
                raise self._failed(exc) from exc
            if not chunk:
                return
            yield chunk

    def close(self) -> None:
        self._pending.close_stream()


class AsyncEngineResponseStream(_EngineStreamBase):
    """The undecoded body of an async client's streaming response."""

    def __init__(self, pending: _core.PendingTransfer, request: Request, bridge: _Bridge) -> None:
        super().__init__(pending, request)
        self._bridge = bridge

    def __aiter__(self) -> _AsyncChunks:
        return _AsyncChunks(self)

    async def aclose(self) -> None:
        self._pending.close_stream()

    def close(self) -> None:
        self._pending.close_stream()


class _AsyncChunks:
    """`async for` over an async engine stream's chunks. A plain async iterator rather than an
    async generator: asyncio books every async generator it starts (a hook, a WeakSet entry
    added and removed), a cost per streamed response for nothing to clean up."""

    __slots__ = ("_stream",)

    def __init__(self, stream: AsyncEngineResponseStream) -> None:
        self._stream = stream

    def __aiter__(self) -> _AsyncChunks:
        return self

    async def __anext__(self) -> bytes:
        stream = self._stream
        pending = stream._pending
        while True:
            try:
                chunk = pending.read_chunk(False)
            except _core.EngineError as exc:
                raise stream._failed(exc) from exc
            if chunk is None:
                await stream._bridge.wait_for_news(pending)
                continue
            if not chunk:
                raise StopAsyncIteration
            return chunk


# --- request bodies ----------------------------------------------------------------------------


def upload_length(request: Request) -> int:
    """The declared length of a streamed request body, or -1 for chunked."""
    declared = request.headers.get("content-length")
    if declared is None:
        return -1
    length = parse_content_length(declared)
    if length is None:
        raise LocalProtocolError(f"Invalid Content-Length {declared!r}", request=request)
    return length


class _LengthCheck:
    """Counts fed bytes against the declared Content-Length (-1: none declared)."""

    def __init__(self, request: Request, declared: int) -> None:
        self.request = request
        self.declared = declared
        self.sent = 0

    def add(self, chunk: bytes) -> None:
        self.sent += len(chunk)
        if 0 <= self.declared < self.sent:
            raise LocalProtocolError(
                f"The request body is longer than its Content-Length ({self.declared} bytes)",
                request=self.request,
            )

    def finish(self) -> None:
        if 0 <= self.declared != self.sent:
            raise LocalProtocolError(
                f"The request body ended after {self.sent} bytes, but its Content-Length "
                f"is {self.declared}",
                request=self.request,
            )


def feed_request_body(pending: _core.PendingTransfer, request: Request, declared: int) -> None:
    """Blocking client: send `request.stream` through the engine (see the module docstring).
    Returns early if the transfer ends first (the server answered or failed: its result
    says which)."""
    stream = request.stream
    if not isinstance(stream, typing.Iterable):
        raise RuntimeError("Attempted to send an async request with a sync Client instance.")
    check = _LengthCheck(request, declared)
    try:
        for chunk in stream:
            if type(chunk) is not bytes:
                chunk = bytes(chunk)
            check.add(chunk)
            if not pending.feed(chunk, True):
                return
        check.finish()
        pending.end_body()
    except BaseException:
        pending.close_stream()  # cancels: nothing incomplete goes out as complete
        raise


async def afeed_request_body(
    pending: _core.PendingTransfer, request: Request, declared: int, bridge: _Bridge
) -> None:
    """Async client: `feed_request_body`, awaiting room through the event loop's queue."""
    stream = request.stream
    if not isinstance(stream, typing.AsyncIterable):
        raise RuntimeError("Attempted to send a sync request with an AsyncClient instance.")
    check = _LengthCheck(request, declared)
    try:
        async for chunk in stream:
            if type(chunk) is not bytes:
                chunk = bytes(chunk)
            check.add(chunk)
            while (taken := pending.feed(chunk, False)) is None:
                await bridge.wait_for_news(pending)
            if not taken:
                return
        check.finish()
        pending.end_body()
    except BaseException:
        pending.close_stream()
        raise
