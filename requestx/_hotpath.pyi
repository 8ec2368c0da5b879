"""Type stubs for the compiled hot path (requestx/_hotpath.pyx)."""

from typing import TYPE_CHECKING, Any

from ._models import Headers, Request, Response
from ._transports import EngineArguments
from ._types import CookieTypes, HeaderTypes, QueryParamTypes, RequestExtensions, TimeoutTypes
from ._urls import URL

if TYPE_CHECKING:
    from ._client import AsyncClient, Client
    from ._config import UseClientDefault

class EnginePlan:
    engine: Any
    http_version: int
    tls: Any
    route: Any
    max_body_bytes: int | None
    def __init__(
        self, engine: Any, http_version: int, tls: Any, route: Any, max_body_bytes: int | None
    ) -> None: ...

class ClientPlan:
    plain: bool
    transport: Any
    engine_plan: EnginePlan | None
    timeout_ms: tuple[int, ...]
    timeout_dict: dict[str, Any]
    headers: Headers
    request_hooks: list[Any]
    response_hooks: list[Any]
    cookie_jar: Any
    custom_encoding: bool

def plan_for(client: Any) -> ClientPlan: ...
def is_sendable(url: URL) -> bool: ...
def jar_is_empty(jar: Any) -> bool: ...
def is_redirect(response: Response) -> bool: ...
def through_stream(request: Request, stream: bool) -> bool: ...
def marks_content_encoding(response: Response, marks: int) -> bool: ...
def plain_url(plan: ClientPlan, url: object) -> URL | None: ...
def plain_request(
    client: Any,
    method: str | bytes,
    url: object,
    content: Any = None,
    data: Any = None,
    json: Any = None,
    files: Any = None,
    params: Any = None,
    headers: Any = None,
    cookies: Any = None,
    auth: Any = ...,
    timeout: Any = ...,
    extensions: Any = None,
) -> Request | None: ...
def engine_arguments(
    engine: EnginePlan, request: Request, timeouts: tuple[int, ...]
) -> EngineArguments: ...
def engine_response(
    request: Request, result: tuple[Any, ...], max_body_bytes: int | None
) -> Response: ...
def send_plain(client: Any, request: Request, follow_redirects: Any, stream: bool) -> Response: ...
def perform(
    engine: EnginePlan, transport: Any, request: Request, timeouts: tuple[int, ...]
) -> Response: ...
def needs_client(plan: ClientPlan, response: Response) -> bool: ...
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
async def async_client_get(
    self: AsyncClient,
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
