"""Waiting for the engine's transfers to be released."""

from __future__ import annotations

import gc
import time

import anyio

from requestx import _core


async def wait_live_transfers(at_most: int = 0, timeout: float = 2.0) -> int:
    """Poll until `_core.live_transfers()` is down to `at_most` (the engine releases a transfer,
    cancelled or finished, on its own thread, a moment after the caller has moved on); return
    the count.

    Most tests compare with the count they started with, so that a transfer left behind by an
    earlier test is not blamed on them; some insist on zero (the default)."""
    gc.collect()  # exceptions in reference cycles may hold transfers (test_async_client checks)
    deadline = time.monotonic() + timeout
    while _core.live_transfers() > at_most and time.monotonic() < deadline:
        await anyio.sleep(0.01)
    return int(_core.live_transfers())
