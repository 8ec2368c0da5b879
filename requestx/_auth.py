"""
Authentication, with httpx's generator flow.

An `Auth` subclass implements `auth_flow(request)`: a generator that yields requests and is sent
back each response, so schemes that need a round trip (a challenge, a token refresh) are
written as straight-line code:

    class TokenAuth(requestx.Auth):
        def auth_flow(self, request):
            request.headers["Authorization"] = f"Bearer {self.token}"
            response = yield request
            if response.status_code == 401:
                self.token = refresh()
                request.headers["Authorization"] = f"Bearer {self.token}"
                yield request

Subclasses that must do I/O in the flow override `sync_auth_flow` / `async_auth_flow`.
"""

from __future__ import annotations

import base64
import typing

from ._models import Request, Response

__all__ = ["Auth", "BasicAuth", "FunctionAuth"]


class Auth:
    """The base class: by itself, sends the request unchanged."""

    requires_request_body = False
    requires_response_body = False

    def auth_flow(self, request: Request) -> typing.Generator[Request, Response, None]:
        yield request

    def sync_auth_flow(self, request: Request) -> typing.Generator[Request, Response, None]:
        if self.requires_request_body:
            request.read()
        flow = self.auth_flow(request)
        request = next(flow)
        while True:
            response = yield request
            if self.requires_response_body:
                response.read()
            try:
                request = flow.send(response)
            except StopIteration:
                break

    async def async_auth_flow(self, request: Request) -> typing.AsyncGenerator[Request, Response]:
        if self.requires_request_body:
            await request.aread()
        flow = self.auth_flow(request)
        request = next(flow)
        while True:
            response = yield request
            if self.requires_response_body:
                await response.aread()
            try:
                request = flow.send(response)
            except StopIteration:
                break


class FunctionAuth(Auth):
    """Auth from a plain callable that takes the request and returns it (modified)."""

    def __init__(self, func: typing.Callable[[Request], Request]) -> None:
        self._func = func

    def auth_flow(self, request: Request) -> typing.Generator[Request, Response, None]:
        yield self._func(request)


class BasicAuth(Auth):
    """HTTP Basic authentication: `Client(auth=("user", "pass"))` does the same."""

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        self._auth_header = self._build_auth_header(username, password)

    def auth_flow(self, request: Request) -> typing.Generator[Request, Response, None]:
        request.headers["Authorization"] = self._auth_header
        yield request

    @staticmethod
    def _build_auth_header(username: str | bytes, password: str | bytes) -> str:
        user = username.encode("latin-1") if isinstance(username, str) else username
        secret = password.encode("latin-1") if isinstance(password, str) else password
        return "Basic " + base64.b64encode(user + b":" + secret).decode("ascii")


def build_auth(auth: typing.Any) -> Auth | None:
    """httpx's `auth=` argument -> an Auth, or None for no authentication."""
    if auth is None:
        return None
    if isinstance(auth, tuple):
        return BasicAuth(auth[0], auth[1])
    if isinstance(auth, Auth):
        return auth
    if callable(auth):
        return FunctionAuth(auth)
    raise TypeError(f'Invalid "auth" argument: {auth!r}')
