"""Type stubs for the compiled hot path (requestx/_hotpath.pyx)."""

from typing import Any

from ._models import Request, Response
from ._transports import EngineArguments
from ._urls import URL

def plain_url(client: Any, url: object) -> URL | None: ...
def plain_request(client: Any, method: str, url: object) -> Request | None: ...
def engine_arguments(
    transport: Any, request: Request, timeouts: tuple[int, ...]
) -> EngineArguments: ...
def engine_response(
    request: Request, result: tuple[Any, ...], max_body_bytes: int | None
) -> Response: ...
def send_bodiless(
    client: Any, method: str, url: object, follow_redirects: Any
) -> Response | None: ...
def needs_client(client: Any, response: Response) -> bool: ...
