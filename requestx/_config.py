"""Client configuration values: `Timeout`, `Limits`, `Proxy` and the defaults."""

from __future__ import annotations

import typing

from ._types import HeaderTypes, TimeoutTypes

if typing.TYPE_CHECKING:  # pragma: no cover
    import ssl

    from ._models import Headers
    from ._urls import URL

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_MAX_REDIRECTS",
    "DEFAULT_TIMEOUT_CONFIG",
    "Limits",
    "Proxy",
    "Timeout",
]


class UseClientDefault:
    """Marks an argument as "whatever the client was configured with" (httpx's sentinel)."""

    def __repr__(self) -> str:
        return "USE_CLIENT_DEFAULT"


USE_CLIENT_DEFAULT = UseClientDefault()


class UnsetType:
    """Marks an argument the caller did not pass (None means "no timeout")."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET = UnsetType()

_Seconds = typing.Optional[float]


class Timeout:
    """
    Timeouts in seconds for the four phases of a request; None disables one.

        Timeout(5.0)                  # 5 s for everything
        Timeout(None)                 # no timeouts at all
        Timeout(5.0, connect=10.0)    # 10 s to connect, 5 s for the rest
        Timeout(None, read=30.0)      # only reads are limited
        Timeout(connect=1, read=2, write=3, pool=4)   # all four, no default
        Timeout((1, 2))               # tuple form: connect, read[, write[, pool]]
        Timeout(5.0, total=60)        # and the whole request within 60 s

    Without a default, all four must be given (ValueError otherwise), so that
    a phase is never left unlimited by accident.

    `total` (requestx's addition; httpx has none) bounds the whole request, from the moment
    the client starts it until the last byte of the response body is in: waiting for a
    connection, connecting, sending, and receiving. The four phase timeouts bound each wait,
    so a server that trickles its response a byte at a time (slowloris) can otherwise hold a
    request for ever. When it runs out, the timeout class of the phase it ran out in is
    raised (`ReadTimeout` while the response arrives), saying it was the total.
    """

    __slots__ = ("connect", "pool", "read", "total", "write")

    connect: _Seconds
    read: _Seconds
    write: _Seconds
    pool: _Seconds
    total: _Seconds

    def __init__(
        self,
        timeout: TimeoutTypes | UnsetType = UNSET,
        *,
        connect: _Seconds | UnsetType = UNSET,
        read: _Seconds | UnsetType = UNSET,
        write: _Seconds | UnsetType = UNSET,
        pool: _Seconds | UnsetType = UNSET,
        total: _Seconds = None,
    ) -> None:
        self.total = total
        if isinstance(timeout, Timeout):
            if not (connect is read is write is pool is UNSET) or total is not None:
                raise TypeError("Timeout(<Timeout>) takes no other arguments.")
            self.connect, self.read = timeout.connect, timeout.read
            self.write, self.pool = timeout.write, timeout.pool
            self.total = timeout.total
        elif isinstance(timeout, tuple):
            values = tuple(timeout) + (None, None)
            self.connect, self.read, self.write, self.pool = values[:4]
        elif (
            not isinstance(connect, UnsetType)
            and not isinstance(read, UnsetType)
            and (not isinstance(write, UnsetType) and not isinstance(pool, UnsetType))
        ):
            # All four given: a default, if any, is irrelevant.
            self.connect, self.read, self.write, self.pool = connect, read, write, pool
        elif isinstance(timeout, UnsetType):
            raise ValueError(
                "Timeout needs a default (e.g. Timeout(5.0, connect=1.0)) or all four "
                "of connect, read, write and pool."
            )
        else:
            self.connect = timeout if isinstance(connect, UnsetType) else connect
            self.read = timeout if isinstance(read, UnsetType) else read
            self.write = timeout if isinstance(write, UnsetType) else write
            self.pool = timeout if isinstance(pool, UnsetType) else pool

    def as_dict(self) -> dict[str, float | None]:
        """`{"connect": ..., "read": ..., "write": ..., "pool": ...}`, and `"total"` when set."""
        values = {
            "connect": self.connect,
            "read": self.read,
            "write": self.write,
            "pool": self.pool,
        }
        if self.total is not None:
            values["total"] = self.total
        return values

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Timeout) and self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value

    def _values(self) -> tuple[_Seconds, _Seconds, _Seconds, _Seconds, _Seconds]:
        return (self.connect, self.read, self.write, self.pool, self.total)

    def __repr__(self) -> str:
        total = "" if self.total is None else f", total={self.total}"
        if len({self.connect, self.read, self.write, self.pool}) == 1:
            return f"Timeout(timeout={self.connect}{total})"
        return (
            f"Timeout(connect={self.connect}, read={self.read}, "
            f"write={self.write}, pool={self.pool}{total})"
        )


class Limits:
    """
    Connection pool limits.

    * max_connections: concurrent connections, None for no limit.
    * max_keepalive_connections: idle connections kept open, None for no limit.
    * keepalive_expiry: seconds an idle connection is kept, None for no limit.

        Limits(max_connections=10, max_keepalive_connections=5)
    """

    __slots__ = ("keepalive_expiry", "max_connections", "max_keepalive_connections")

    def __init__(
        self,
        *,
        max_connections: int | None = None,
        max_keepalive_connections: int | None = None,
        keepalive_expiry: float | None = 5.0,
    ) -> None:
        self.max_connections = max_connections
        self.max_keepalive_connections = max_keepalive_connections
        self.keepalive_expiry = keepalive_expiry

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Limits)
            and self.max_connections == other.max_connections
            and self.max_keepalive_connections == other.max_keepalive_connections
            and self.keepalive_expiry == other.keepalive_expiry
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Limits(max_connections={self.max_connections}, "
            f"max_keepalive_connections={self.max_keepalive_connections}, "
            f"keepalive_expiry={self.keepalive_expiry})"
        )


class Proxy:
    """
    A proxy to send requests through. Credentials in the URL move to `auth`:

        >>> Proxy("http://user:secret@proxy.local:3128")
        Proxy('http://proxy.local:3128', auth=('user', '********'))
    """

    def __init__(
        self,
        url: URL | str,
        *,
        ssl_context: ssl.SSLContext | None = None,
        auth: tuple[str, str] | None = None,
        headers: HeaderTypes | None = None,
    ) -> None:
        # Imported here: _models imports this module's siblings, not the reverse.
        from ._models import Headers
        from ._urls import URL

        url = URL(url)
        if url.scheme not in ("http", "https", "socks5", "socks5h"):
            raise ValueError(f"Unknown scheme for proxy URL {url!r}")
        if url.username or url.password:
            auth = (url.username, url.password)
            url = url.copy_with(username=None, password=None)
        self.url: URL = url
        self.auth = auth
        self.headers: Headers = Headers(headers)
        self.ssl_context = ssl_context

    @property
    def raw_auth(self) -> tuple[bytes, bytes] | None:
        """`auth` as UTF-8 bytes, or None."""
        if self.auth is None:
            return None
        return (self.auth[0].encode("utf-8"), self.auth[1].encode("utf-8"))

    def __repr__(self) -> str:
        parts = [repr(str(self.url))]
        if self.auth:
            parts.append(f"auth={(self.auth[0], '********')!r}")
        if self.headers:
            parts.append(f"headers={dict(self.headers)!r}")
        return f"Proxy({', '.join(parts)})"


DEFAULT_TIMEOUT_CONFIG = Timeout(timeout=5.0)
DEFAULT_LIMITS = Limits(max_connections=100, max_keepalive_connections=20)
DEFAULT_MAX_REDIRECTS = 20

# The largest response header block a client accepts (requestx's `max_header_bytes=`; httpx
# has the same limit, fixed, in httpcore's h11 connection). Larger blocks raise
# RemoteProtocolError: a server cannot make the client buffer unbounded headers.
DEFAULT_MAX_HEADER_BYTES = 100 * 1024
