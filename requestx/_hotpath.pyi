"""Type stubs for the compiled hot path (requestx/_hotpath.pyx)."""

from typing import TYPE_CHECKING, Any

from ._models import Request, Response
from ._transports import EngineArguments
from ._types import CookieTypes, HeaderTypes, QueryParamTypes, RequestExtensions, TimeoutTypes
from ._urls import URL

if TYPE_CHECKING:
    from ._client import Client
    from ._config import UseClientDefault

def only_url_and_body(
    files: object,
    params: object,
    headers: object,
    cookies: object,
    auth: object,
    timeout: object,
    extensions: object,
) -> bool: ...
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
def client_get(
    self: Client,
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: Any = ...,
    follow_redirects: bool | UseClientDefault = ...,
    timeout: TimeoutTypes | UseClientDefault = ...,
    extensions: RequestExtensions | None = None,
) -> Response: ...
