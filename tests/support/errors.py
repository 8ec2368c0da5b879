"""What every error that comes out of the engine must carry."""

from __future__ import annotations

import requestx
from requestx import _core


def assert_engine_error(exc: requestx.RequestError, url: str) -> None:
    """An error from the engine names its request and chains (`raise ... from`) the engine's
    own `EngineError`, with a message."""
    assert exc.request.url == requestx.URL(url)
    assert isinstance(exc.__cause__, _core.EngineError)
    assert exc.__cause__.code != 0
    assert str(exc)  # a message, not an empty string
