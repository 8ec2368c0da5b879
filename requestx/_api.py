"""
The top-level functions: `requestx.get(url)` and friends, as in httpx.

Each call builds a short-lived `Client` for its configuration but runs on one shared engine
(see `_client._get_shared_engine`), so a script calling `requestx.get()` in a loop reuses
connections and does not start a thread per call.
"""

from __future__ import annotations

import contextlib
import typing

from ._client import Client, _get_shared_engine
from ._config import DEFAULT_TIMEOUT_CONFIG
from ._models import Response
from ._types import (
    CookieTypes,
    HeaderTypes,
    QueryParamTypes,
    RequestContent,
    RequestData,
    RequestFiles,
    TimeoutTypes,
)
from ._urls import URL

__all__ = ["delete", "get", "head", "options", "patch", "post", "put", "request", "stream"]


def request(
    method: str,
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: typing.Any | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    """Send one request.

    >>> response = requestx.request("GET", "https://www.example.org/")
    >>> response.status_code
    200
    """
    client = _client_on_shared_engine(
        cookies=cookies,
        proxy=proxy,
        verify=verify,
        cert=cert,
        timeout=timeout,
        trust_env=trust_env,
        auth=auth,
        follow_redirects=follow_redirects,
    )
    with client:
        return client.request(
            method,
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
        )


@contextlib.contextmanager
def stream(
    method: str,
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: typing.Any | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> typing.Iterator[Response]:
    """Send one request and stream its response (see `Client.stream`).

    >>> with requestx.stream("GET", "https://www.example.org/big") as response:
    ...     for chunk in response.iter_bytes():
    ...         sink.write(chunk)
    """
    client = _client_on_shared_engine(
        cookies=cookies,
        proxy=proxy,
        verify=verify,
        cert=cert,
        timeout=timeout,
        trust_env=trust_env,
        auth=auth,
        follow_redirects=follow_redirects,
    )
    with (
        client,
        client.stream(
            method,
            url,
            content=content,
            data=data,
            files=files,
            json=json,
            params=params,
            headers=headers,
        ) as response,
    ):
        yield response


def _client_on_shared_engine(**options: typing.Any) -> Client:
    return Client(**options, _engine=_get_shared_engine())


# The method functions take httpx 0.28's parameters, in its order (which differs between
# them: delete's timeout comes before verify), and `cert` after them (requestx keeps it for
# mutual TLS; docs/differences.md). Bodies only where httpx takes one: a `json=` on `get` is a
# TypeError, not a GET with a body.


def get(
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    """`requestx.get("https://www.example.org/", params={"q": "x"})`"""
    return request(
        "GET",
        url,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        verify=verify,
        timeout=timeout,
        trust_env=trust_env,
        cert=cert,
    )


def options(
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    return request(
        "OPTIONS",
        url,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        verify=verify,
        timeout=timeout,
        trust_env=trust_env,
        cert=cert,
    )


def head(
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    return request(
        "HEAD",
        url,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        verify=verify,
        timeout=timeout,
        trust_env=trust_env,
        cert=cert,
    )


def post(
    url: URL | str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: typing.Any | None = None,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    """`requestx.post("https://www.example.org/items", json={"name": "x"})`"""
    return request(
        "POST",
        url,
        content=content,
        data=data,
        files=files,
        json=json,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        verify=verify,
        timeout=timeout,
        trust_env=trust_env,
        cert=cert,
    )


def put(
    url: URL | str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: typing.Any | None = None,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    return request(
        "PUT",
        url,
        content=content,
        data=data,
        files=files,
        json=json,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        verify=verify,
        timeout=timeout,
        trust_env=trust_env,
        cert=cert,
    )


def patch(
    url: URL | str,
    *,
    content: RequestContent | None = None,
    data: RequestData | None = None,
    files: RequestFiles | None = None,
    json: typing.Any | None = None,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    verify: typing.Any = True,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    return request(
        "PATCH",
        url,
        content=content,
        data=data,
        files=files,
        json=json,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        verify=verify,
        timeout=timeout,
        trust_env=trust_env,
        cert=cert,
    )


def delete(
    url: URL | str,
    *,
    params: QueryParamTypes | None = None,
    headers: HeaderTypes | None = None,
    cookies: CookieTypes | None = None,
    auth: typing.Any = None,
    proxy: typing.Any = None,
    follow_redirects: bool = False,
    timeout: TimeoutTypes = DEFAULT_TIMEOUT_CONFIG,
    verify: typing.Any = True,
    trust_env: bool = True,
    cert: typing.Any = None,
) -> Response:
    return request(
        "DELETE",
        url,
        params=params,
        headers=headers,
        cookies=cookies,
        auth=auth,
        proxy=proxy,
        follow_redirects=follow_redirects,
        timeout=timeout,
        verify=verify,
        trust_env=trust_env,
        cert=cert,
    )
