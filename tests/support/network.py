"""Loopback addresses for tests of connection failures."""

from __future__ import annotations

import socket


def closed_port() -> int:
    """A loopback port that was listening a moment ago and is closed now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        return int(listener.getsockname()[1])
