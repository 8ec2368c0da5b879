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
import hashlib
import os
import re
import typing

from ._exceptions import ProtocolError
from ._models import Cookies, Request, Response

__all__ = ["Auth", "BasicAuth", "DigestAuth", "FunctionAuth", "NetRCAuth"]


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
        # UTF-8, as httpx (RFC 7617 section 2.1's charset="UTF-8").
        user = username.encode("utf-8") if isinstance(username, str) else username
        secret = password.encode("utf-8") if isinstance(password, str) else password
        return "Basic " + base64.b64encode(user + b":" + secret).decode("ascii")


class NetRCAuth(Auth):
    """Basic credentials for each request's host from a netrc file (`~/.netrc` by default);
    requests to hosts the file does not list are sent without credentials."""

    def __init__(self, file: str | None = None) -> None:
        import netrc

        self._netrc_info = netrc.netrc(file)

    def auth_flow(self, request: Request) -> typing.Generator[Request, Response, None]:
        entry = self._netrc_info.authenticators(request.url.host)
        if entry is not None and entry[2] is not None:
            request.headers["Authorization"] = BasicAuth._build_auth_header(entry[0], entry[2])
        yield request


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


class DigestAuth(Auth):
    """HTTP Digest authentication (RFC 7616): MD5, SHA-256 and SHA-512 with their "-sess"
    variants, qop "auth" and "auth-int" or none. The first request goes out without
    credentials; a 401 with a Digest challenge is answered once, and later requests reuse the
    challenge (with a growing nonce count) so they need no extra round trip."""

    _ALGORITHMS: typing.ClassVar[dict[str, typing.Callable[[bytes], typing.Any]]] = {
        "MD5": hashlib.md5,
        "MD5-SESS": hashlib.md5,
        "SHA": hashlib.sha1,
        "SHA-SESS": hashlib.sha1,
        "SHA-256": hashlib.sha256,
        "SHA-256-SESS": hashlib.sha256,
        "SHA-512": hashlib.sha512,
        "SHA-512-SESS": hashlib.sha512,
    }

    def __init__(self, username: str | bytes, password: str | bytes) -> None:
        self._username = username.encode() if isinstance(username, str) else username
        self._password = password.encode() if isinstance(password, str) else password
        self._challenge: dict[str, str] | None = None
        self._nonce_count = 0

    def auth_flow(self, request: Request) -> typing.Generator[Request, Response, None]:
        if self._challenge is not None:
            request.headers["Authorization"] = self._authorization(request)
        response = yield request
        if response.status_code != 401 or "www-authenticate" not in response.headers:
            return
        for value in response.headers.get_list("www-authenticate"):
            if value.lower().startswith("digest "):
                challenge = _parse_challenge(value[7:])
                if "realm" not in challenge or "nonce" not in challenge:
                    raise ProtocolError(
                        "Malformed Digest WWW-Authenticate header: it needs a realm and a "
                        f"nonce: {value!r}",
                        request=request,
                    )
                self._challenge = challenge
                self._nonce_count = 0
                break
        else:
            return  # not a Digest challenge: the 401 is the answer
        request.headers["Authorization"] = self._authorization(request)
        if response.cookies:
            # A session cookie set with the challenge belongs to the answer to it.
            Cookies(response.cookies).set_cookie_header(request)
        yield request

    def _authorization(self, request: Request) -> str:
        challenge = self._challenge
        assert challenge is not None
        algorithm = challenge.get("algorithm", "MD5").upper()
        hash_function = self._ALGORITHMS.get(algorithm)
        if hash_function is None:
            raise ProtocolError(f"Unsupported Digest algorithm {algorithm!r}", request=request)

        def digest(*parts: bytes) -> bytes:
            return hash_function(b":".join(parts)).hexdigest().encode()  # type: ignore[no-any-return]

        realm = challenge.get("realm", "").encode()
        nonce = challenge.get("nonce", "").encode()
        uri = request.url.raw_path
        self._nonce_count += 1
        nc = b"%08x" % self._nonce_count
        cnonce = self._get_client_nonce(self._nonce_count, nonce)
        ha1 = digest(self._username, realm, self._password)
        if algorithm.endswith("-SESS"):
            ha1 = digest(ha1, nonce, cnonce)
        qop = _choose_qop(challenge.get("qop"), request)
        if qop == b"auth-int":
            ha2 = digest(request.method.encode(), uri, digest(request.read()))
        else:
            ha2 = digest(request.method.encode(), uri)
        # Without qop (RFC 2069) the response leaves out the nonce count and client nonce.
        response = digest(ha1, nonce, nc, cnonce, qop, ha2) if qop else digest(ha1, nonce, ha2)
        fields = [
            ("username", self._username),
            ("realm", realm),
            ("nonce", nonce),
            ("uri", uri),
            ("response", response),
        ]
        if "opaque" in challenge:
            fields.append(("opaque", challenge["opaque"].encode()))
        header = ", ".join(f'{name}="{value.decode("latin-1")}"' for name, value in fields)
        # A token, so unquoted (RFC 7616 section 3.4; httpx does the same).
        header += f", algorithm={challenge.get('algorithm', 'MD5')}"
        if qop:
            header += f', qop={qop.decode()}, nc={nc.decode()}, cnonce="{cnonce.decode()}"'
        elif algorithm.endswith("-SESS"):
            # "-sess" mixes the client nonce into HA1, so the server needs it even without qop
            # (a combination RFC 7616 leaves undefined; sending it is the only way to agree).
            header += f', cnonce="{cnonce.decode()}"'
        return "Digest " + header

    def _get_client_nonce(self, nonce_count: int, nonce: bytes) -> bytes:
        """A fresh client nonce (httpx's name: tests replace it to check RFC 7616's examples)."""
        return os.urandom(8).hex().encode()


def _parse_challenge(text: str) -> dict[str, str]:
    """`realm="x", nonce="y", qop="auth,auth-int"` -> {"realm": "x", ...} (quotes optional)."""
    fields: dict[str, str] = {}
    for match in _CHALLENGE_FIELD.finditer(text):
        name, quoted, bare = match.groups()
        fields[name.lower()] = quoted if quoted is not None else bare
    return fields


_CHALLENGE_FIELD = re.compile(r'([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))')


def _choose_qop(offered: str | None, request: Request) -> bytes:
    """ "auth" when offered (cheapest), else "auth-int", else b"" (RFC 2069 compatibility)."""
    if offered is None:
        return b""
    choices = {q.strip() for q in offered.split(",")}
    if "auth" in choices:
        return b"auth"
    if "auth-int" in choices:
        return b"auth-int"
    raise ProtocolError(
        f"Unsupported Digest qop {offered!r}: requestx knows 'auth' and 'auth-int'",
        request=request,
    )
