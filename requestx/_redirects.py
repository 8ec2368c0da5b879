"""
Following redirects, in Python (libcurl's FOLLOWLOCATION keeps no history and strips too little
on cross-origin hops). `next_request` builds the request for one hop; the clients loop over it.

httpx's rules: 301/302 turn POST into GET, 303 turns anything but HEAD into GET, 307/308 keep
method and body; `Authorization` survives only on the same origin or a same-host http -> https
upgrade (and so does `Proxy-Authorization`, which httpx keeps: credentials a caller put in a
header are not handed to another origin); `Cookie` is re-derived from the jar on every hop;
only http and https may be followed.
"""

from __future__ import annotations

from ._exceptions import RemoteProtocolError, TooManyRedirects, UnsupportedProtocol
from ._models import Cookies, Headers, Request, Response
from ._urls import URL

__all__ = ["check_redirect_count", "next_request"]

# Credentials: dropped when a hop leaves the origin they were given for.
_CREDENTIAL_HEADERS = (b"authorization", b"proxy-authorization")
# Headers that describe the body: dropped when a hop drops the body.
_BODY_HEADERS = (b"content-length", b"content-type", b"transfer-encoding", b"content-encoding")


def _method_for(request: Request, status: int) -> str:
    method = request.method
    if status == 303 and method != "HEAD":
        return "GET"
    if status in (301, 302) and method == "POST":
        return "GET"
    return method


def _url_for(request: Request, response: Response) -> URL:
    location = response.headers["location"]
    try:
        url = URL(location)
        if url.scheme and not url.host:
            # "https://:443/": absolute in form, but no host. Browsers (and httpx) take the
            # current one.
            url = url.copy_with(host=request.url.host)
        url = request.url.join(url)
    except Exception as exc:  # any parse failure of the server's header is the server's fault
        raise RemoteProtocolError(
            f"Invalid URL in location header: {location!r}", request=request
        ) from exc
    if request.url.fragment and not url.fragment:
        url = url.copy_with(fragment=request.url.fragment)
    return url


def _origin(url: URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url._port_or_default())


def _keeps_authorization(old: URL, new: URL) -> bool:
    if _origin(old) == _origin(new):
        return True
    # A same-host upgrade from http to https on the default ports keeps credentials.
    return (
        old.scheme == "http"
        and new.scheme == "https"
        and old.host == new.host
        and old.port in (None, 80)
        and new.port in (None, 443)
    )


def next_request(request: Request, response: Response, cookies: Cookies) -> Request:
    """The request that follows `response`'s redirect (which must have a Location)."""
    method = _method_for(request, response.status_code)
    url = _url_for(request, response)
    keep_auth = _keeps_authorization(request.url, url)
    keep_body = method == request.method
    entries = [
        (name, value)
        for name, lower, value in request.headers._entries()
        if lower != b"host"  # re-derived for the new URL
        and lower != b"cookie"  # re-derived from the jar below
        and (keep_auth or lower not in _CREDENTIAL_HEADERS)
        and (keep_body or lower not in _BODY_HEADERS)
    ]
    return Request(
        method,
        url,
        headers=Headers._from_trusted_list(entries),
        cookies=cookies if cookies else None,
        content=request._content if keep_body and request._content else None,
        stream=request.stream if keep_body and request._content is None else None,
        extensions=request.extensions,
    )


def check_followable(request: Request, following: Request) -> None:
    """Refuse to follow a redirect to anything but http or https (a `file://` Location must
    not make the client read local files). Without following, the response is returned as it
    is, with such a `next_request`, as httpx does."""
    if following.url.scheme not in ("http", "https"):
        raise UnsupportedProtocol(
            f"Refusing to follow a redirect to {str(following.url)!r}: only http and https are "
            "followed.",
            request=request,
        )


def check_redirect_count(history: list[Response], max_redirects: int, request: Request) -> None:
    if len(history) > max_redirects:
        raise TooManyRedirects("Exceeded maximum allowed redirects.", request=request)
