"""Type stubs for the compiled default-headers rule (requestx/_default_headers.pyx)."""

from collections.abc import Iterable

from ._urls import URL

def add_default_headers(
    entries: list[tuple[bytes, bytes, bytes]],
    method: str,
    url: URL,
    body_headers: Iterable[tuple[bytes, bytes]],
) -> None: ...
