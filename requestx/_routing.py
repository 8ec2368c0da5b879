"""
Which transport a URL goes to, and how the engine's connections for a transport are made.

* `URLPattern`: httpx's mount keys (`"all://"`, `"https://"`, `"http://example.org"`,
  `"all://*.example.org"`, `"https://example.org:8443"`), matched from the most specific down.
* `environment_proxies()`: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (either
  case) read as httpx reads them, as mount keys mapped to a proxy URL or to None ("direct").
* `engine_route()`: a transport's `proxy=`, `uds=`, `local_address=` and `socket_options=` as
  the engine's `RouteConfig` (csrc/route.h), or None for plain connections.

libcurl is never left to read proxy variables itself (csrc/transfer.c turns that off): what the
environment means is decided here, once, when a client is built.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import re
import typing
import urllib.request

from . import _core
from ._config import Proxy
from ._tls import tls_config
from ._urls import URL

__all__ = ["URLPattern", "engine_route", "environment_proxies", "normalize_proxy"]

# CURL_IPRESOLVE_V4 / _V6 from curl/curl.h.
_IPRESOLVE_V4 = 1
_IPRESOLVE_V6 = 2


class URLPattern:
    """
    A mount key and the URLs it covers.

        >>> URLPattern("all://*.example.org").matches(URL("https://www.example.org"))
        True
        >>> URLPattern("all://*.example.org").matches(URL("https://example.org"))
        False
        >>> URLPattern("all://*example.org").matches(URL("https://example.org"))
        True

    No port in the pattern matches any port. Patterns sort most specific first: with a port
    before without, then longer hosts, then longer schemes ("http://" before "all://").
    """

    def __init__(self, pattern: str) -> None:
        if pattern and ":" not in pattern:
            raise ValueError(
                "Mount and proxy keys are URL patterns such as 'http://' or "
                f"'all://example.org', not plain scheme strings: use '{pattern}://' "
                f"instead of '{pattern}'."
            )
        url = URL(pattern)
        self.pattern = pattern
        self.scheme = "" if url.scheme == "all" else url.scheme
        self.host = "" if url.host == "*" else url.host
        self.port = url.port
        self.host_regex: typing.Pattern[str] | None
        if not self.host:
            self.host_regex = None
        elif self.host.startswith("*."):  # subdomains only
            self.host_regex = re.compile(rf"^.+\.{re.escape(self.host[2:])}$")
        elif self.host.startswith("*"):  # the domain and its subdomains
            self.host_regex = re.compile(rf"^(.+\.)?{re.escape(self.host[1:])}$")
        else:
            self.host_regex = re.compile(rf"^{re.escape(self.host)}$")

    def matches(self, url: URL) -> bool:
        if self.scheme and self.scheme != url.scheme:
            return False
        if self.host_regex is not None and not self.host_regex.match(url.host):
            return False
        return self.port is None or self.port == url.port

    @property
    def priority(self) -> tuple[int, int, int]:
        return (0 if self.port is not None else 1, -len(self.host), -len(self.scheme))

    def __lt__(self, other: URLPattern) -> bool:
        return self.priority < other.priority

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, URLPattern) and self.pattern == other.pattern

    def __repr__(self) -> str:
        return f"URLPattern({self.pattern!r})"


def _is_ip_address(text: str, version: int) -> bool:
    try:
        address = ipaddress.ip_address(text.split("/")[0])
    except ValueError:
        return False
    return address.version == version


def environment_proxies() -> dict[str, str | None]:
    """The proxy variables as mount keys: `{"http://": "http://proxy:3128", "all://*.corp":
    None, ...}`. A proxy without a scheme is an http:// one; `NO_PROXY=*` turns every proxy
    off. NO_PROXY entries follow curl's rules, as httpx does: "example.org" covers the domain
    and its subdomains, ".example.org" only subdomains, IP addresses and "localhost" exactly,
    an entry with a scheme only that scheme."""
    found = urllib.request.getproxies_environment()
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        value = found.get(scheme)
        if value:
            mounts[f"{scheme}://"] = value if "://" in value else f"http://{value}"
    for entry in (item.strip() for item in found.get("no", "").split(",")):
        if entry == "*":
            return {}
        if not entry:
            continue
        if "://" in entry:
            mounts[entry] = None
        elif _is_ip_address(entry, 4) or entry.lower() == "localhost":
            mounts[f"all://{entry}"] = None
        elif _is_ip_address(entry, 6):
            mounts[f"all://[{entry}]"] = None
        else:
            mounts[f"all://*{entry}"] = None
    return mounts


def normalize_proxy(proxy: typing.Any) -> Proxy | None:
    """`proxy=` as a `Proxy`: a URL string or `URL` becomes one."""
    if proxy is None or isinstance(proxy, Proxy):
        return proxy
    if isinstance(proxy, (str, URL)):
        return Proxy(proxy)
    raise TypeError(f"proxy must be a URL string, a URL or a Proxy, not {type(proxy).__name__}")


def _proxy_headers(proxy: Proxy) -> list[bytes]:
    """The lines an HTTP proxy is sent: the Proxy's headers, and its credentials as Basic
    Proxy-Authorization (unless the headers already carry one)."""
    lines = [name + b": " + value for name, value in proxy.headers.raw]
    raw_auth = proxy.raw_auth
    if raw_auth is not None and "proxy-authorization" not in proxy.headers:
        token = base64.b64encode(raw_auth[0] + b":" + raw_auth[1])
        lines.append(b"Proxy-Authorization: Basic " + token)
    return lines


def engine_route(
    proxy: Proxy | None,
    uds: str | None,
    local_address: str | None,
    socket_options: typing.Iterable[typing.Any] | None,
    trust_env: bool,
) -> _core.RouteConfig | None:
    """The engine's route for a transport; None when every option is at its default."""
    if proxy is None and uds is None and local_address is None and not socket_options:
        return None
    fields: dict[str, typing.Any] = {}
    if proxy is not None:
        fields["proxy_url"] = str(proxy.url).encode("ascii")
        if proxy.url.scheme in ("http", "https"):
            fields["proxy_headers"] = _proxy_headers(proxy)
        elif proxy.raw_auth is not None:  # socks5 / socks5h: the handshake carries them
            fields["proxy_username"], fields["proxy_password"] = proxy.raw_auth
        if proxy.url.scheme == "https":
            verify = proxy.ssl_context if proxy.ssl_context is not None else True
            fields["proxy_tls"] = tls_config(verify, None, trust_env)
    if uds is not None:
        fields["unix_socket"] = uds.encode()
    if local_address is not None:
        fields["interface"] = b"host!" + local_address.encode("ascii")
        if _is_ip_address(local_address, 4):
            fields["ip_resolve"] = _IPRESOLVE_V4
        elif _is_ip_address(local_address, 6):
            fields["ip_resolve"] = _IPRESOLVE_V6
    if socket_options:
        fields["socket_options"] = [_socket_option(option) for option in socket_options]
    # The key tells routes apart in the engine's HTTP/2 bookkeeping: equal settings, equal key.
    described = {
        name: value.fields() if isinstance(value, _core.TLSConfig) else value
        for name, value in fields.items()
    }
    digest = hashlib.sha256(repr(sorted(described.items())).encode())
    return _core.RouteConfig(digest.hexdigest().encode(), **fields)


def _socket_option(option: typing.Any) -> tuple[typing.Any, ...]:
    """httpx's (level, name, value) socket options; the value (an int or bytes) is checked
    and packed by RouteConfig."""
    if len(option) != 3:
        raise NotImplementedError(
            "requestx supports socket options as (level, name, int or bytes) triples only, "
            f"not {option!r}"
        )
    return tuple(option)
