"""Real local servers for the test suite (loopback only): an ASGI app on hypercorn, and a raw
socket server that misbehaves on request."""

from __future__ import annotations

from .app import App, pattern_bytes
from .hypercorn_server import HypercornServer
from .raw_server import RawServer

__all__ = ["App", "HypercornServer", "RawServer", "pattern_bytes"]
