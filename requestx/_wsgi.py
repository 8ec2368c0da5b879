"""
`WSGITransport`: a blocking client that talks to a WSGI application (Flask, Django) in the
same process, without a network or the engine:

    >>> client = Client(transport=WSGITransport(app=app), base_url="http://testserver")
    >>> client.get("/").status_code

httpx's semantics: the request body is read whole into `wsgi.input`; the response streams
from the app's iterable (closed when the response is closed); an exception the app reports
through `start_response(..., exc_info)` or raises propagates (`raise_app_exceptions=True`,
the default).
"""

from __future__ import annotations

import io
import sys
import typing
import urllib.parse

from ._content import SyncByteStream
from ._models import Request, Response
from ._transports import BaseTransport

__all__ = ["WSGITransport"]

_App = typing.Callable[..., typing.Iterable[bytes]]


class _WSGIResponseStream(SyncByteStream):
    """The app's iterable as the response body. The app is run up to its first non-empty
    chunk at once, so that a generator app has called start_response before the response
    is built; `close()` is passed on to the app's iterable, as WSGI requires."""

    def __init__(self, result: typing.Iterable[bytes]) -> None:
        self._result = result
        self._rest = iter(result)
        self._first = next((chunk for chunk in self._rest if chunk), b"")

    def __iter__(self) -> typing.Iterator[bytes]:
        if self._first:
            yield self._first
        yield from self._rest

    def close(self) -> None:
        close = getattr(self._result, "close", None)
        if close is not None:
            close()


class WSGITransport(BaseTransport):
    """
    Send requests to the WSGI application `app` in this process.

    `script_name` is the environ's SCRIPT_NAME (an app mounted under a prefix),
    `remote_addr` its REMOTE_ADDR, and `wsgi_errors` the stream behind `wsgi.errors`
    (standard error by default).
    """

    def __init__(
        self,
        app: _App,
        raise_app_exceptions: bool = True,
        script_name: str = "",
        remote_addr: str = "127.0.0.1",
        wsgi_errors: typing.TextIO | None = None,
    ) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.script_name = script_name
        self.remote_addr = remote_addr
        self.wsgi_errors = wsgi_errors

    def _environ(self, request: Request, body: bytes) -> dict[str, typing.Any]:
        url = request.url
        environ: dict[str, typing.Any] = {
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": url.scheme,
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": self.wsgi_errors or sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "REQUEST_METHOD": request.method,
            "SCRIPT_NAME": self.script_name,
            "PATH_INFO": urllib.parse.unquote(url.path, encoding="latin-1"),
            "QUERY_STRING": url.query.decode("ascii"),
            "SERVER_NAME": url.host,
            "SERVER_PORT": str(url._port_or_default()),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": self.remote_addr,
        }
        for name, value in request.headers.raw:
            key = name.decode("ascii").upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = "HTTP_" + key
            text = value.decode("latin-1")
            # Repeated fields are joined, as a server folds them (RFC 9110 5.3).
            environ[key] = f"{environ[key]},{text}" if key in environ else text
        return environ

    def handle_request(self, request: Request) -> Response:
        body = request.read()
        started: list[typing.Any] = []  # status, headers, exc_info of start_response

        def start_response(
            status: str, response_headers: list[tuple[str, str]], exc_info: typing.Any = None
        ) -> typing.Callable[[bytes], None]:
            started[:] = [status, response_headers, exc_info]
            return lambda data: None  # the legacy write() callable; its data is not used

        stream = _WSGIResponseStream(self.app(self._environ(request, body), start_response))
        if not started:
            raise RuntimeError("The WSGI app returned without calling start_response.")
        status, response_headers, exc_info = started
        if exc_info and exc_info[0] and self.raise_app_exceptions:
            raise exc_info[1]
        headers = [
            (name.encode("ascii"), value.encode("latin-1")) for name, value in response_headers
        ]
        return Response(int(status.split(None, 1)[0]), headers=headers, stream=stream)
