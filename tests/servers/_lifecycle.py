"""The context-manager protocol shared by the test servers: `with Server() as running:` calls
start() on entry and stop() on exit."""

from __future__ import annotations

from types import TracebackType
from typing import TypeVar

_Server = TypeVar("_Server", bound="Lifecycle")


class Lifecycle:
    """Mixin for a server with start() and stop(); subclasses implement both."""

    def start(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Server) -> _Server:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
