"""
`URL` and `QueryParams`, with httpx's API and normalisation rules.

A URL is parsed once, into normalised components that are plain ASCII strings
(scheme and host lower-cased, IDNA hosts encoded, path dot-segments removed,
unsafe characters percent-encoded, default ports dropped). Every property is
derived from those components.

Parsing runs on every request, so it has two paths:

* a fast path: one regular expression that only accepts absolute URLs that are
  already in normal form apart from case and default port (ASCII, no userinfo,
  nothing to percent-encode). `http://127.0.0.1:8080/json?a=1` takes it.
* the general path for everything else, which implements the full rules.

Both must give the same result; tests check that by parsing a corpus both ways.

Stricter than httpx, on purpose (request smuggling and confused parsers):
ASCII control characters (CR, LF, NUL, TAB, DEL...) anywhere in a URL, ports
that are not 0-65535 in ASCII digits, and characters that cannot appear in a
host name (spaces, `<`, `>`, `|`, `\\`, ...) raise `InvalidURL`.
"""

from __future__ import annotations

import re
import typing
from urllib.parse import parse_qsl, unquote, urlencode

from ._exceptions import InvalidURL
from ._types import PrimitiveData, QueryParamTypes

__all__ = ["URL", "QueryParams", "RawURL"]

MAX_URL_LENGTH = 65536

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

# --- Character sets --------------------------------------------------------------------
#
# A component keeps the characters of its set and percent-encodes (UTF-8) the rest.
# The sets are the WHATWG URL standard's percent-encode sets, as httpx uses them:
# printable ASCII minus a few characters per component. "%" is always kept, so
# existing escapes survive and parsing is idempotent.

_PRINTABLE = {chr(i) for i in range(0x21, 0x7F)}  # no space, no controls
_FRAGMENT_SAFE = _PRINTABLE - set('"<>`')
_QUERY_SAFE = _PRINTABLE - set('"#<>')
_PATH_SAFE = _QUERY_SAFE - set("?`{}")
_USERINFO_SAFE = _PATH_SAFE - set("/;=@[\\]^|")  # ":" separates user and password
_USER_OR_PASSWORD_SAFE = _USERINFO_SAFE - {":"}

# Host names: RFC 3986 reg-name (unreserved, sub-delims, percent escapes). Anything
# else in an ASCII host is rejected rather than escaped.
_HOST_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=%")


def _class(chars: set[str]) -> str:
    """A regex character class body matching exactly `chars`."""
    return "".join(re.escape(c) for c in sorted(chars))


def _escaper(safe: set[str]) -> typing.Callable[[str], str]:
    """Build a function that percent-encodes every run of characters not in `safe`."""
    unsafe_run = re.compile(f"[^{_class(safe)}]+")

    def encode_run(match: re.Match[str]) -> str:
        try:
            raw = match.group().encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates
            raise InvalidURL(f"Invalid character in URL: {match.group()!r}") from None
        return "".join([f"%{byte:02X}" for byte in raw])

    def escape(text: str) -> str:
        if unsafe_run.search(text) is None:
            return text
        return unsafe_run.sub(encode_run, text)

    return escape


_escape_path = _escaper(_PATH_SAFE)
_escape_query = _escaper(_QUERY_SAFE)
_escape_fragment = _escaper(_FRAGMENT_SAFE)
_escape_userinfo = _escaper(_USERINFO_SAFE)
_escape_user_or_password = _escaper(_USER_OR_PASSWORD_SAFE)

# --- Regular expressions -------------------------------------------------------------

# The fast path. Groups: scheme, host, port, path, query, fragment.
_FAST_URL = re.compile(
    r"([a-zA-Z][a-zA-Z0-9+.-]*)://"
    r"([a-zA-Z0-9._~-]+)"
    r"(?::([0-9]*))?"
    f"(/[{_class(_PATH_SAFE)}]*)?"
    f"(?:\\?([{_class(_QUERY_SAFE)}]*))?"
    f"(?:#([{_class(_FRAGMENT_SAFE)}]*))?"
).fullmatch

# RFC 3986 appendix B, with the scheme restricted to valid scheme characters (so
# "a_b:c" is a relative path, not scheme "a_b"). Groups: scheme, authority, path,
# query, fragment; absent parts are None. Control characters are rejected before.
_SPLIT_URL = re.compile(
    r"(?:([a-zA-Z][a-zA-Z0-9+.-]*)?:)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?"
).fullmatch

_CONTROL_CHAR = re.compile(r"[\x00-\x1f\x7f]").search
_IPV4_SHAPE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+").fullmatch
# Dotted quad without leading zeros, the form `ipaddress.IPv4Address` accepts.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}").fullmatch
_PORT = re.compile(r"[0-9]{1,5}").fullmatch
_BAD_HOST_CHAR = re.compile(f"[^{_class(_HOST_CHARS)}]").search
_BAD_IPV6_CHAR = re.compile(r"[^0-9A-Za-z:.%_~-]").search  # zone id: RFC 6874 ZoneID

# What each keyword argument of URL(...) may look like (before normalisation).
_KWARG_SHAPE = {
    "scheme": re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*)?").fullmatch,
    "path": re.compile(r"[^?#]*").fullmatch,
    "query": re.compile(r"[^#]*").fullmatch,
    "fragment": re.compile(r".*").fullmatch,
    "userinfo": re.compile(r"[^@]*").fullmatch,
    "host": re.compile(r"\[.*\]|[^:]*").fullmatch,
    "port": re.compile(r".*").fullmatch,
}

_KWARG_TYPES: dict[str, type] = {
    "scheme": str,
    "username": str,
    "password": str,
    "userinfo": bytes,
    "host": str,
    "port": int,
    "netloc": bytes,
    "path": str,
    "query": bytes,
    "raw_path": bytes,
    "fragment": str,
    "params": object,
}


# Normalised components: scheme, userinfo, host, port, path, query, fragment.
_Parts = typing.Tuple[
    str, str, str, typing.Optional[int], str, typing.Optional[str], typing.Optional[str]
]


class RawURL(typing.NamedTuple):
    """What a transport needs to send a request: `URL.raw`."""

    raw_scheme: bytes
    raw_host: bytes
    port: int | None
    raw_path: bytes


# --- Component normalisation ---------------------------------------------------------


def _check_no_control_chars(text: str, what: str) -> None:
    match = _CONTROL_CHAR(text)
    if match is not None:
        raise InvalidURL(
            f"Invalid non-printable ASCII character in {what}, {match.group()!r} at position "
            f"{match.start()}."
        )


def _normalize_host(host: str) -> str:
    """Lower-case, validate and IDNA-encode a host; IPv6 literals lose their brackets."""
    if not host:
        return ""
    if host[0] == "[":
        if host[-1] != "]":
            raise InvalidURL(f"Invalid IPv6 address: {host!r}")
        import ipaddress

        address = host[1:-1]
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            raise InvalidURL(f"Invalid IPv6 address: {address!r}") from None
        # ipaddress takes any text after "%" as a zone id ("::1%eth 0", non-ASCII): RFC 6874
        # allows unreserved characters and escapes (found by fuzz/python/url_fuzzer.py).
        if _BAD_IPV6_CHAR(address) is not None:
            raise InvalidURL(f"Invalid character in IPv6 address: {address!r}")
        return address
    if host.isascii():
        host = host.lower()
        bad = _BAD_HOST_CHAR(host)
        if bad is not None:
            raise InvalidURL(f"Invalid character {bad.group()!r} in host {host!r}")
        if _IPV4_SHAPE(host) and not _IPV4(host):
            raise InvalidURL(f"Invalid IPv4 address: {host!r}")
        return host
    import idna  # only needed for internationalised names

    try:
        return idna.encode(host.lower()).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        raise InvalidURL(f"Invalid IDNA hostname: {host!r}") from None


def _normalize_port(port: str | None, scheme: str) -> int | None:
    """The port as an int, None when absent, empty or the scheme's default."""
    if not port:
        return None
    if not _PORT(port) or int(port) > 65535:
        raise InvalidURL(f"Invalid port: {port!r}")
    number = int(port)
    return None if _DEFAULT_PORTS.get(scheme) == number else number


def _remove_dot_segments(path: str) -> str:
    """
    Resolve "." and ".." segments (RFC 3986 section 5.2.4):

        "/a/b/c/./../../g" -> "/a/g"      "/a/b/.." -> "/a/"
    """
    if "." not in path:
        return path
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    output: list[str] = []
    for segment in segments:
        if segment == ".":
            continue
        if segment == "..":
            if len(output) > 1 or (output and output[0] != ""):
                output.pop()
            continue
        output.append(segment)
    # A trailing "." or ".." names a directory: keep the slash.
    if segments[-1] in (".", ".."):
        output.append("")
    return "/".join(output)


def _check_path(path: str, has_scheme: bool, has_authority: bool) -> None:
    """RFC 3986 section 3.3 rules that depend on the other components."""
    if has_authority and path and not path.startswith("/"):
        raise InvalidURL("For absolute URLs, path must be empty or begin with '/'")
    if not has_scheme and not has_authority:
        if path.startswith("//"):
            raise InvalidURL("Relative URLs cannot have a path starting with '//'")
        if path.startswith(":"):
            raise InvalidURL("Relative URLs cannot have a path starting with ':'")


def _split_authority(authority: str) -> tuple[str, str, str | None]:
    """'user:pw@host:port' -> ('user:pw', 'host', 'port'); port None if absent."""
    userinfo, _, hostport = authority.rpartition("@")
    if hostport.startswith("["):
        end = hostport.rfind("]") + 1
        if end == 0:
            raise InvalidURL(f"Invalid IPv6 address: {hostport!r}")
        host, rest = hostport[:end], hostport[end:]
        if rest and rest[0] != ":":
            raise InvalidURL(f"Invalid port: {rest!r}")
        return userinfo, host, rest[1:] if rest else None
    host, colon, port = hostport.partition(":")
    return userinfo, host, port if colon else None


# --- URL -----------------------------------------------------------------------------


class URL:
    """
    A parsed, normalised URL. Immutable and hashable; equal to its string form.

        >>> url = URL("HTTPS://jo%40mail.com:s3cret@Müller.de:1234/pa th?q=a b#frag")
        >>> url.scheme, url.host, url.raw_host, url.port
        ('https', 'müller.de', b'xn--mller-kva.de', 1234)
        >>> url.username, url.password, url.path, url.query, url.fragment
        ('jo@mail.com', 's3cret', '/pa th', b'q=a%20b', 'frag')
        >>> url.raw_path, url.netloc
        (b'/pa%20th?q=a%20b', b'xn--mller-kva.de:1234')
        >>> URL("http://example.com:80/") == "http://example.com/"
        True

    Keyword arguments replace components: `URL("http://a/", path="/b")`, and
    `params=` replaces the query string (see `copy_merge_params` to merge).
    """

    __slots__ = (
        "_engine_target_cache",
        "_fragment",
        "_host",
        "_host_entry_cache",
        "_path",
        "_port",
        "_query",
        "_scheme",
        "_str",
        "_userinfo",
    )

    _scheme: str
    _userinfo: str
    _host: str  # normalised: lower-case, IDNA-encoded, IPv6 without brackets
    _port: int | None  # None for "absent" and for the scheme's default port
    _path: str  # percent-encoded, dot-segments removed; may be ""
    _query: str | None  # None: no "?"; "": a bare "?"
    _fragment: str | None
    _str: str | None  # cached str(url)
    # Cached for the engine, which gets one request after another to the same (shared) URL:
    _host_entry_cache: tuple[bytes, bytes, bytes] | None  # _host_entry()
    _engine_target_cache: bytes | None  # _engine_target()

    def __init__(self, url: URL | str = "", **kwargs: typing.Any) -> None:
        if not kwargs and type(url) is str:
            match = _FAST_URL(url)
            if match is not None and len(url) <= MAX_URL_LENGTH:
                self._set_from_fast_match(url, match)
                return
            self._set(*_parse(url, {}))
        elif isinstance(url, str):
            self._set(*_parse(url, _check_kwargs(kwargs)))
        elif isinstance(url, URL):
            if kwargs:
                self._set(*_reparse(url, _check_kwargs(kwargs)))
            else:
                self._set(*url._parts())
                self._str = url._str
        else:
            raise TypeError(
                f"Invalid type for url. Expected str or requestx.URL, got {type(url)}: {url!r}"
            )

    def _set_from_fast_match(self, url: str, match: re.Match[str]) -> None:
        scheme, host, port, path, query, fragment = match.groups()
        self._str = url
        if not scheme.islower():
            scheme = scheme.lower()
            self._str = None
        ends_with_digit = "0" <= host[-1] <= "9"
        if ends_with_digit and _IPV4(host):
            pass  # a valid IPv4 address: nothing to lower-case
        elif ends_with_digit and _IPV4_SHAPE(host):
            raise InvalidURL(f"Invalid IPv4 address: {host!r}")
        elif not host.islower():
            lowered = host.lower()
            if lowered != host:
                host = lowered
                self._str = None
        if port is not None:
            # The pattern guarantees ASCII digits; only the range and the default
            # port need checking.
            number = int(port) if port else None
            if number is not None and (number > 65535 or len(port) > 5):
                raise InvalidURL(f"Invalid port: {port!r}")  # at most 5 digits, as _PORT
            if number is None or number == _DEFAULT_PORTS.get(scheme):
                number = None
                self._str = None  # ":" alone or the default port: not in str()
            elif port[0] == "0" and len(port) > 1:
                self._str = None  # ":0880" is written ":880"
            port = number
        if path is None:
            path = ""
        elif "/." in path:
            normalized = _remove_dot_segments(path)
            if normalized != path:
                path = normalized
                self._str = None
        self._scheme = scheme
        self._userinfo = ""
        self._host = host
        self._port = port
        self._path = path
        self._query = query
        self._fragment = fragment
        self._host_entry_cache = self._engine_target_cache = None

    def _set(
        self,
        scheme: str,
        userinfo: str,
        host: str,
        port: int | None,
        path: str,
        query: str | None,
        fragment: str | None,
    ) -> None:
        self._scheme = scheme
        self._userinfo = userinfo
        self._host = host
        self._port = port
        self._path = path
        self._query = query
        self._fragment = fragment
        self._str = None
        self._host_entry_cache = self._engine_target_cache = None

    def _parts(self) -> _Parts:
        return (
            self._scheme,
            self._userinfo,
            self._host,
            self._port,
            self._path,
            self._query,
            self._fragment,
        )

    @classmethod
    def _from_parts(
        cls,
        scheme: str,
        userinfo: str,
        host: str,
        port: int | None,
        path: str,
        query: str | None,
        fragment: str | None,
    ) -> URL:
        url = cls.__new__(cls)
        url._set(scheme, userinfo, host, port, path, query, fragment)
        return url

    # -- Components --

    @property
    def scheme(self) -> str:
        """The scheme, lower-cased: "http", "https"."""
        return self._scheme

    @property
    def raw_scheme(self) -> bytes:
        """The scheme as ASCII bytes."""
        return self._scheme.encode("ascii")

    @property
    def userinfo(self) -> bytes:
        """The percent-encoded userinfo as bytes: b"jo%40mail.com:s3cret"."""
        return self._userinfo.encode("ascii")

    @property
    def username(self) -> str:
        """The decoded user name: "jo@mail.com"."""
        return unquote(self._userinfo.partition(":")[0])

    @property
    def password(self) -> str:
        """The decoded password: "s3cret"."""
        return unquote(self._userinfo.partition(":")[2])

    @property
    def host(self) -> str:
        """
        The host, lower-cased, with internationalised names in Unicode
        ("müller.de") and IPv6 addresses without brackets ("::1").
        """
        host = self._host
        if host.startswith("xn--") or ".xn--" in host:
            import idna

            try:
                return str(idna.decode(host))
            except (idna.IDNAError, UnicodeError):
                return host  # not valid punycode: show it as written
        return host

    @property
    def raw_host(self) -> bytes:
        """The host as sent on the wire: b"xn--mller-kva.de"."""
        return self._host.encode("ascii")

    @property
    def port(self) -> int | None:
        """The port, or None when absent or the scheme's default (80 for http...)."""
        return self._port

    def _port_or_default(self) -> int | None:
        """The port a request goes to: the URL's own, else its scheme's default (None for a
        scheme without one)."""
        return self._port if self._port is not None else _DEFAULT_PORTS.get(self.scheme)

    @property
    def netloc(self) -> bytes:
        """host[:port] as bytes, the value of a Host header: b"example.com:8080"."""
        host = self._host
        if ":" in host:
            host = f"[{host}]"
        if self._port is None:
            return host.encode("ascii")
        return f"{host}:{self._port}".encode("ascii")

    @property
    def path(self) -> str:
        """The decoded path, "/" when empty: "/pa th"."""
        return unquote(self._path or "/")

    @property
    def query(self) -> bytes:
        """The raw query string without "?": b"q=a%20b"."""
        return (self._query or "").encode("ascii")

    @property
    def params(self) -> QueryParams:
        """The query string parsed into a `QueryParams`."""
        return QueryParams(self._query)

    @property
    def raw_path(self) -> bytes:
        """The request target, path and query: b"/pa%20th?q=a%20b"."""
        path = self._path or "/"
        if self._query is not None:
            path = f"{path}?{self._query}"
        return path.encode("ascii")

    @property
    def fragment(self) -> str:
        """The decoded fragment, without "#"."""
        return unquote(self._fragment or "")

    @property
    def raw(self) -> RawURL:
        """(raw_scheme, raw_host, port, raw_path): everything a transport needs."""
        return RawURL(self.raw_scheme, self.raw_host, self._port, self.raw_path)

    @property
    def is_absolute_url(self) -> bool:
        """True when there is a scheme and a host to connect to."""
        return bool(self._scheme and self._host)

    @property
    def is_relative_url(self) -> bool:
        """The opposite of `is_absolute_url`."""
        return not (self._scheme and self._host)

    # -- Derived URLs --

    def copy_with(self, **kwargs: typing.Any) -> URL:
        """
        A copy with some components replaced; the keywords are the component names.

            >>> URL("https://example.com/a").copy_with(path="/b", port=8443)
            URL('https://example.com:8443/b')
        """
        return URL(self, **kwargs)

    def copy_set_param(self, key: str, value: typing.Any = None) -> URL:
        """A copy with query parameter `key` set to `value` (replacing others)."""
        return self.copy_with(params=self.params.set(key, value))

    def copy_add_param(self, key: str, value: typing.Any = None) -> URL:
        """A copy with one more `key=value` query parameter."""
        return self.copy_with(params=self.params.add(key, value))

    def copy_remove_param(self, key: str) -> URL:
        """A copy without query parameter `key`."""
        return self.copy_with(params=self.params.remove(key))

    def copy_merge_params(self, params: QueryParamTypes) -> URL:
        """A copy with `params` merged into the query (their keys replace ours)."""
        return self.copy_with(params=self.params.merge(params))

    def join(self, url: URL | str) -> URL:
        """
        Resolve `url` against this URL as base (RFC 3986 section 5.2):

            >>> URL("https://example.com/a/b").join("../c?x=1")
            URL('https://example.com/c?x=1')
        """
        ref = url if isinstance(url, URL) else URL(url)
        scheme = ref._scheme
        if scheme == self._scheme:
            scheme = ""  # "http:g" against an http base means "g" (RFC 5.2.2, non-strict)
        if scheme:
            return ref
        path, query = ref._path, ref._query
        if ref._userinfo or ref._host or ref._port is not None:
            userinfo, host, port = ref._userinfo, ref._host, ref._port
            if port is not None and port == _DEFAULT_PORTS.get(self._scheme):
                port = None  # "//b:80/x" against an http base: the default port, not written
            path = _remove_dot_segments(path)
        else:
            userinfo, host, port = self._userinfo, self._host, self._port
            if not path:
                path = self._path
                if query is None:
                    query = self._query
            elif path.startswith("/"):
                path = _remove_dot_segments(path)
            else:
                has_authority = bool(self._userinfo or self._host or self._port is not None)
                if has_authority and not self._path:
                    merged = "/" + path
                else:
                    merged = self._path[: self._path.rfind("/") + 1] + path
                path = _remove_dot_segments(merged)
        return URL._from_parts(self._scheme, userinfo, host, port, path, query, ref._fragment)

    # -- Comparison and display --

    def __eq__(self, other: object) -> bool:
        if isinstance(other, URL):
            return str(self) == str(other)
        if isinstance(other, str):
            try:
                return str(self) == str(URL(other))
            except InvalidURL:
                return False
        return False

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        text = self._str
        if text is None:
            text = self._str = self._build(self._userinfo)
        return text

    def _host_entry(self) -> tuple[bytes, bytes, bytes]:
        """The Host header of a request to this URL, as a header entry (name, lower-cased
        name, value), made once per URL: a URL is immutable, and the client's hot path shares
        one between the requests to the same address (`url_from_str`)."""
        entry = self._host_entry_cache
        if entry is None:
            entry = self._host_entry_cache = (b"Host", b"host", self.netloc)
        return entry

    def _engine_target(self) -> bytes:
        """The URL as the engine takes it, made once per URL: ASCII, and without userinfo
        (credentials travel only as the auth flow's header: given them, libcurl would send
        its own Basic header, even beside DigestAuth)."""
        target = self._engine_target_cache
        if target is None:
            text = self._build("") if self._userinfo else str(self)
            target = self._engine_target_cache = text.encode("ascii")
        return target

    def _build(self, userinfo: str) -> str:
        parts = []
        if self._scheme:
            parts.append(f"{self._scheme}:")
        host = f"[{self._host}]" if ":" in self._host else self._host
        if userinfo or host or self._port is not None:
            parts.append("//")
            if userinfo:
                parts.append(f"{userinfo}@")
            parts.append(host)
            if self._port is not None:
                parts.append(f":{self._port}")
        parts.append(self._path)
        if self._query is not None:
            parts.append(f"?{self._query}")
        if self._fragment is not None:
            parts.append(f"#{self._fragment}")
        return "".join(parts)

    def __repr__(self) -> str:
        userinfo = self._userinfo
        if ":" in userinfo:
            userinfo = userinfo.partition(":")[0] + ":[secure]"  # never show passwords
        return f"{self.__class__.__name__}({self._build(userinfo)!r})"

    def __reduce__(self) -> tuple[type[URL], tuple[str]]:
        return (URL, (str(self),))


def _check_kwargs(kwargs: dict[str, typing.Any]) -> dict[str, str | None]:
    """Type-check URL(...) keyword arguments and turn them into component strings."""
    for key, value in kwargs.items():
        expected = _KWARG_TYPES.get(key)
        if expected is None:
            raise TypeError(f"{key!r} is an invalid keyword argument for URL()")
        if value is not None and not isinstance(value, expected):
            raise TypeError(
                f"Argument {key!r} must be {expected.__name__} but got {type(value).__name__}"
            )
    components: dict[str, typing.Any] = {
        key: value.decode("ascii") if isinstance(value, bytes) else value
        for key, value in kwargs.items()
    }
    if "params" in components:
        # Empty params give no query at all, rather than a trailing "?".
        params = components.pop("params")
        components["query"] = str(QueryParams(params)) if params else None
    if "port" in components and isinstance(components["port"], int):
        components["port"] = str(components["port"])
    if "netloc" in components:
        netloc = components.pop("netloc") or ""
        components["host"], _, components["port"] = netloc.partition(":")
    if "username" in components or "password" in components:
        username = _escape_user_or_password(components.pop("username", None) or "")
        password = _escape_user_or_password(components.pop("password", None) or "")
        components["userinfo"] = f"{username}:{password}" if password else username
    if "raw_path" in components:
        raw_path = components.pop("raw_path") or ""
        path, question, query = raw_path.partition("?")
        components["path"] = path
        components["query"] = query if question else None
    host = components.get("host")
    if host and ":" in host and not (host.startswith("[") and host.endswith("]")):
        components["host"] = f"[{host}]"  # a bare IPv6 address
    for key, value in components.items():
        if value is None:
            continue
        if len(value) > MAX_URL_LENGTH:
            raise InvalidURL(f"URL component {key!r} too long")
        _check_no_control_chars(value, f"URL {key} component")
        if not _KWARG_SHAPE[key](value):
            raise InvalidURL(f"Invalid URL component {key!r}")
    return components


def _parse(url: str, components: dict[str, str | None]) -> _Parts:
    """The general parser: split `url`, apply keyword overrides, normalise."""
    if len(url) > MAX_URL_LENGTH:
        raise InvalidURL("URL too long")
    _check_no_control_chars(url, "URL")
    match = _SPLIT_URL(url)
    assert match is not None  # every group is optional: the pattern always matches
    scheme, authority, path, query, fragment = match.groups()
    if components:
        scheme = components.get("scheme", scheme)
        path = components.get("path", path)
        query = components.get("query", query)
        fragment = components.get("fragment", fragment)
    userinfo, host, port = _split_authority(authority or "")
    if components:
        userinfo = components.get("userinfo", userinfo) or ""
        host = components.get("host", host) or ""
        port = components.get("port", port)
    return _normalize(scheme or "", userinfo, host, port, path or "", query, fragment)


def _reparse(url: URL, components: dict[str, str | None]) -> _Parts:
    """`URL(url, **components)`: `url`'s components with some replaced."""
    host = url._host
    base: dict[str, str | None] = {
        "scheme": url._scheme,
        "userinfo": url._userinfo,
        "host": f"[{host}]" if ":" in host else host,
        "port": None if url._port is None else str(url._port),
        "path": url._path,
        "query": url._query,
        "fragment": url._fragment,
    }
    base.update(components)
    return _normalize(
        base["scheme"] or "",
        base["userinfo"] or "",
        base["host"] or "",
        base["port"],
        base["path"] or "",
        base["query"],
        base["fragment"],
    )


def _normalize(
    scheme: str,
    userinfo: str,
    host: str,
    port: str | None,
    path: str,
    query: str | None,
    fragment: str | None,
) -> _Parts:
    scheme = scheme.lower()
    userinfo = _escape_userinfo(userinfo)
    host = _normalize_host(host)
    # Unlike httpx, the default port is looked up with the lower-cased scheme, so
    # "HTTP://a:80/" and "http://a/" are the same URL.
    port_number = _normalize_port(port, scheme)
    has_authority = bool(userinfo or host or port_number is not None)
    _check_path(path, has_scheme=bool(scheme), has_authority=has_authority)
    if scheme or has_authority:
        path = _remove_dot_segments(path)
    return (
        scheme,
        userinfo,
        host,
        port_number,
        _escape_path(path),
        None if query is None else _escape_query(query),
        None if fragment is None else _escape_fragment(fragment),
    )


# --- QueryParams ---------------------------------------------------------------------


def _to_str(value: PrimitiveData) -> str:
    """Query values: True/False as JSON-style "true"/"false", None as ""."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    return str(value)


# URL(text) for strings seen recently. A client is called with the same few URLs over and
# over, and a URL is immutable, so one parse can serve them all: 1.1 µs per request becomes a
# dictionary lookup. Bounded: at most _RECENT_URLS_MAX entries (emptied when full), and only
# strings up to _RECENT_URL_LENGTH characters.
_RECENT_URLS: dict[str, URL] = {}
_RECENT_URLS_MAX = 256
_RECENT_URL_LENGTH = 2048


def url_from_str(text: str) -> URL:
    """`URL(text)` for a plain `str`, shared with earlier calls for the same text."""
    url = _RECENT_URLS.get(text)
    if url is None:
        url = URL(text)
        if len(text) <= _RECENT_URL_LENGTH:
            if len(_RECENT_URLS) >= _RECENT_URLS_MAX:
                _RECENT_URLS.clear()
            _RECENT_URLS[text] = url
    return url


class QueryParams(typing.Mapping[str, str]):
    """
    An immutable multi-dict of query parameters that keeps the order they came in.

        >>> q = QueryParams("a=1&b=2&a=3")
        >>> q["a"], q.get_list("a"), q.multi_items()
        ('1', ['1', '3'], [('a', '1'), ('b', '2'), ('a', '3')])
        >>> str(q.set("a", "x").add("c", True))
        'a=x&b=2&c=true'

    Accepts a query string (str or bytes), a mapping whose values may be lists,
    a list of (key, value) pairs, or another QueryParams. Mapping lookups return
    the first value of a key.
    """

    __slots__ = ("_items",)

    _items: list[tuple[str, str]]

    def __init__(self, *args: QueryParamTypes | None, **kwargs: typing.Any) -> None:
        if len(args) > 1:
            raise TypeError("QueryParams takes at most one positional argument.")
        if args and kwargs:
            raise TypeError("QueryParams takes either one argument or keywords, not both.")
        value: typing.Any = args[0] if args else kwargs
        if value is None or isinstance(value, (str, bytes)):
            text = value.decode("ascii") if isinstance(value, bytes) else value
            self._items = parse_qsl(text, keep_blank_values=True) if text else []
        elif isinstance(value, QueryParams):
            self._items = list(value._items)
        elif isinstance(value, (list, tuple)):
            self._items = [(str(item[0]), _to_str(item[1])) for item in value]
        else:
            items: list[tuple[str, str]] = []
            for key, values in value.items():
                if isinstance(values, (list, tuple)):
                    items.extend((str(key), _to_str(item)) for item in values)
                else:
                    items.append((str(key), _to_str(values)))
            self._items = items

    @classmethod
    def _from_items(cls, items: list[tuple[str, str]]) -> QueryParams:
        params = cls.__new__(cls)
        params._items = items
        return params

    def keys(self) -> typing.KeysView[str]:
        """The distinct keys, in order of first appearance."""
        return dict.fromkeys(key for key, _ in self._items).keys()

    def values(self) -> typing.ValuesView[str]:
        """The first value of each key."""
        return self._first_values().values()

    def items(self) -> typing.ItemsView[str, str]:
        """(key, first value) for each key."""
        return self._first_values().items()

    def _first_values(self) -> dict[str, str]:
        first: dict[str, str] = {}
        for key, value in self._items:
            first.setdefault(key, value)
        return first

    def multi_items(self) -> list[tuple[str, str]]:
        """Every (key, value) pair, repeated keys included, in order."""
        return list(self._items)

    def get(self, key: typing.Any, default: typing.Any = None) -> typing.Any:
        """The first value of `key`, or `default`."""
        for item_key, value in self._items:
            if item_key == key:
                return value
        return default

    def get_list(self, key: str) -> list[str]:
        """All values of `key`, in order."""
        key = str(key)
        return [value for item_key, value in self._items if item_key == key]

    def set(self, key: str, value: typing.Any = None) -> QueryParams:
        """A copy where `key` has the single value `value`, at its first position."""
        key, value = str(key), _to_str(value)
        items: list[tuple[str, str]] = []
        placed = False
        for item in self._items:
            if item[0] != key:
                items.append(item)
            elif not placed:
                items.append((key, value))
                placed = True
        if not placed:
            items.append((key, value))
        return QueryParams._from_items(items)

    def add(self, key: str, value: typing.Any = None) -> QueryParams:
        """A copy with `key=value` appended."""
        return QueryParams._from_items([*self._items, (str(key), _to_str(value))])

    def remove(self, key: str) -> QueryParams:
        """A copy without any value for `key`."""
        key = str(key)
        return QueryParams._from_items([item for item in self._items if item[0] != key])

    def merge(self, params: QueryParamTypes | None = None) -> QueryParams:
        """
        A copy updated with `params`: each of their keys replaces all our values for
        that key (at the key's first position); new keys are appended.

            >>> str(QueryParams("a=1&b=2").merge({"a": "3", "c": "4"}))
            'a=3&b=2&c=4'
        """
        other = QueryParams(params)
        replacements: dict[str, list[tuple[str, str]]] = {}
        for item in other._items:
            replacements.setdefault(item[0], []).append(item)
        items: list[tuple[str, str]] = []
        placed: set[str] = set()
        for item in self._items:
            key = item[0]
            if key not in replacements:
                items.append(item)
            elif key not in placed:
                items.extend(replacements[key])
                placed.add(key)
        for key, new_items in replacements.items():
            if key not in placed:
                items.extend(new_items)
        return QueryParams._from_items(items)

    def __getitem__(self, key: typing.Any) -> str:
        for item_key, value in self._items:
            if item_key == key:
                return value
        raise KeyError(key)

    def __contains__(self, key: typing.Any) -> bool:
        return any(item_key == key for item_key, _ in self._items)

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        """The number of distinct keys (as for a dict)."""
        return len({key for key, _ in self._items})

    def __bool__(self) -> bool:
        return bool(self._items)

    def __eq__(self, other: object) -> bool:
        # Order-insensitive, like httpx: "a=1&b=2" equals "b=2&a=1".
        if not isinstance(other, self.__class__):
            return False
        return sorted(self._items) == sorted(other._items)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items)))  # consistent with __eq__

    def __str__(self) -> str:
        return urlencode(self._items)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({str(self)!r})"

    def update(self, params: QueryParamTypes | None = None) -> None:
        raise RuntimeError(
            "QueryParams are immutable. Use `q = q.merge(...)` to get an updated copy."
        )

    def __setitem__(self, key: str, value: str) -> None:
        raise RuntimeError(
            "QueryParams are immutable. Use `q = q.set(key, value)` to get an updated copy."
        )
