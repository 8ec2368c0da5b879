"""
Response bodies that are still arriving: what `Response.stream` is for `stream=True` requests.

The engine buffers a streaming transfer's body in C and pauses the transfer once about 1 MiB
waits unread (see "Streaming" in csrc/transfer.h). These classes hand that buffer to Python as
it fills, as undecoded bytes (the Response decodes them, so `iter_raw()` can give the bytes as
sent):

* `EngineResponseStream`: a blocking iterator; each step waits with the GIL released.
* `AsyncEngineResponseStream`: an async iterator; each wait is one notification through the
  event loop's completion queue (`_aio.py`), never one per chunk.

Closing either before the end cancels the transfer: its connection is closed, not returned
half-read, so the pool stays healthy.
"""

from __future__ import annotations

import time
import typing

from . import _core
from ._exceptions import exception_for_engine_error

if typing.TYPE_CHECKING:
    from ._aio import _Bridge
    from ._models import Request

__all__ = ["AsyncEngineResponseStream", "EngineResponseStream"]


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
        return exception_for_engine_error(exc.code, exc.message, self._request)


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

    async def __aiter__(self) -> typing.AsyncIterator[bytes]:
        pending = self._pending
        while True:
            try:
                chunk = pending.read_chunk(False)
            except _core.EngineError as exc:
                raise self._failed(exc) from exc
            if chunk is None:
                await self._bridge.wait_for_news(pending)
                continue
            if not chunk:
                return
            yield chunk

    async def aclose(self) -> None:
        self._pending.close_stream()

    def close(self) -> None:
        self._pending.close_stream()
