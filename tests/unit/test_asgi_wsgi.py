"""
In-process apps: `ASGITransport` for async clients (asyncio, uvloop, trio) and
`WSGITransport` for blocking ones, against a FastAPI-style ASGI app and a Flask-style WSGI app
written here (routing, JSON, cookies, redirects, streamed request bodies, errors). Neither
touches the network or the engine. httpx's own tests/test_asgi.py and test_wsgi.py pass
against requestx too, except for the User-Agent (docs/differences.md).
"""

from __future__ import annotations

import io
import json
import typing
import wsgiref.validate

import pytest

import requestx

# --- A FastAPI-style ASGI app ---------------------------------------------------------------

Scope = typing.Dict[str, typing.Any]


async def _read_body(receive: typing.Callable[..., typing.Any]) -> tuple[bytes, int]:
    """The request body, and how many http.request messages carried it."""
    body, messages = b"", 0
    while True:
        message = await receive()
        assert message["type"] == "http.request"
        body += message.get("body", b"")
        messages += 1
        if not message.get("more_body", False):
            return body, messages


async def _answer(send: typing.Callable[..., typing.Any], status: int, payload: typing.Any,
                  headers: list[tuple[bytes, bytes]] | None = None) -> None:  # fmt: skip
    body = json.dumps(payload).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": head + (headers or [])})
    await send({"type": "http.response.body", "body": body})


class AsgiApp:
    """Routes: GET /items/{id}, POST /echo, GET /login (sets a cookie), GET /me (reads it),
    GET /old (307 to /items/1), GET /stream (three body messages), GET /boom (raises),
    GET /scope (what the app saw). `disconnected` notes a receive() after the response."""

    def __init__(self) -> None:
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: typing.Any, send: typing.Any) -> None:
        assert scope["type"] == "http"
        path, method = scope["path"], scope["method"]
        if path.startswith("/items/") and method == "GET":
            await _answer(send, 200, {"id": int(path.rsplit("/", 1)[1])})
        elif path == "/echo" and method == "POST":
            body, messages = await _read_body(receive)
            decoded = json.loads(body) if body[:1] == b"{" else None
            await _answer(send, 200, {"length": len(body), "messages": messages, "json": decoded})
            self.disconnected = (await receive())["type"] == "http.disconnect"
        elif path == "/login":
            await _answer(send, 200, {}, [(b"set-cookie", b"session=s3cret; Path=/")])
        elif path == "/me":
            cookies = [value.decode() for name, value in scope["headers"] if name == b"cookie"]
            await _answer(send, 200 if cookies else 401, {"cookie": cookies})
        elif path == "/old":
            await send({"type": "http.response.start", "status": 307,
                        "headers": [(b"location", b"/items/1")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b""})
        elif path == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            for part in (b"one,", b"two,", b"three"):
                await send({"type": "http.response.body", "body": part, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        elif path == "/boom":
            raise ValueError("the app failed")
        elif path == "/scope":
            seen = {key: scope[key] for key in ("path", "root_path", "query_string", "client",
                                                 "server", "scheme", "raw_path")}  # fmt: skip
            await _answer(send, 200, {key: value.decode() if isinstance(value, bytes) else value
                                      for key, value in seen.items()})  # fmt: skip
        else:
            await _answer(send, 404, {"detail": "Not Found"})


@pytest.fixture
def asgi_app() -> AsgiApp:
    return AsgiApp()


@pytest.mark.anyio
async def test_asgi_routes_json_and_redirects(asgi_app: AsgiApp) -> None:
    transport = requestx.ASGITransport(app=asgi_app)
    async with requestx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.get("/items/42")).json() == {"id": 42}
        assert (await client.get("/nowhere")).status_code == 404
        response = await client.get("/old", follow_redirects=True)
        assert response.json() == {"id": 1}
        assert [r.status_code for r in response.history] == [307]
        echoed = (await client.post("/echo", json={"a": [1, 2]})).json()
        assert echoed["json"] == {"a": [1, 2]}
        assert asgi_app.disconnected  # receive() after the response: http.disconnect


@pytest.mark.anyio
async def test_asgi_cookies_reach_the_clients_jar(asgi_app: AsgiApp) -> None:
    transport = requestx.ASGITransport(app=asgi_app)
    async with requestx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.get("/me")).status_code == 401
        await client.get("/login")
        assert client.cookies["session"] == "s3cret"
        assert (await client.get("/me")).json() == {"cookie": ["session=s3cret"]}


@pytest.mark.anyio
async def test_asgi_streamed_request_and_response_bodies(asgi_app: AsgiApp) -> None:
    async def body() -> typing.AsyncIterator[bytes]:
        for _ in range(5):
            yield b"x" * 1000

    transport = requestx.ASGITransport(app=asgi_app)
    async with requestx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        # Each piece of a streamed body is one http.request message, then the final empty one.
        assert (await client.post("/echo", content=body())).json()["messages"] == 6
        async with client.stream("GET", "/stream") as response:
            assert b"".join([chunk async for chunk in response.aiter_bytes()]) == b"one,two,three"


@pytest.mark.anyio
async def test_asgi_app_exceptions(asgi_app: AsgiApp) -> None:
    async with requestx.AsyncClient(transport=requestx.ASGITransport(app=asgi_app)) as client:
        with pytest.raises(ValueError, match="the app failed"):
            await client.get("http://testserver/boom")
    transport = requestx.ASGITransport(app=asgi_app, raise_app_exceptions=False)
    async with requestx.AsyncClient(transport=transport) as client:
        assert (await client.get("http://testserver/boom")).status_code == 500


@pytest.mark.anyio
async def test_asgi_scope_root_path_and_client(asgi_app: AsgiApp) -> None:
    transport = requestx.ASGITransport(app=asgi_app, root_path="/api", client=("10.0.0.1", 5000))
    async with requestx.AsyncClient(transport=transport) as client:
        seen = (await client.get("https://example.org:8443/scope?a=1&b=%20")).json()
    assert seen == {
        "path": "/scope", "root_path": "/api", "query_string": "a=1&b=%20",
        "client": ["10.0.0.1", 5000], "server": ["example.org", 8443], "scheme": "https",
        "raw_path": "/scope",
    }  # fmt: skip


# --- A Flask-style WSGI app -------------------------------------------------------------------


class WsgiApp:
    """Routes: GET /items/<id>, POST /echo, GET /login, GET /me, GET /old (302 to
    /items/1), GET /stream (a generator), GET /boom (start_response with exc_info),
    GET /environ. `closed` counts close() calls on the streamed iterable."""

    def __init__(self) -> None:
        self.closed = 0

    def __call__(self, environ: dict[str, typing.Any], start_response: typing.Any) -> typing.Any:
        path = environ["PATH_INFO"]

        def answer(
            status: str, payload: typing.Any, extra: tuple[tuple[str, str], ...] = ()
        ) -> list[bytes]:
            body = json.dumps(payload).encode()
            start_response(status, [("Content-Type", "application/json"),
                                    ("Content-Length", str(len(body))), *extra])  # fmt: skip
            return [body]

        if path.startswith("/items/"):
            return answer("200 OK", {"id": int(path.rsplit("/", 1)[1])})
        if path == "/echo":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            body = environ["wsgi.input"].read(length)
            return answer("200 OK", {"length": len(body), "type": environ.get("CONTENT_TYPE")})
        if path == "/login":
            return answer("200 OK", {}, (("Set-Cookie", "session=s3cret; Path=/"),))
        if path == "/me":
            cookie = environ.get("HTTP_COOKIE")
            return answer("200 OK" if cookie else "401 Unauthorized", {"cookie": cookie})
        if path == "/old":
            start_response("302 Found", [("Location", "/items/1"), ("Content-Length", "0")])
            return [b""]
        if path == "/stream":
            return self._stream(start_response)
        if path == "/boom":
            try:
                raise KeyError("the app failed")
            except KeyError:
                import sys

                start_response("500 Internal Server Error", [], sys.exc_info())
                return [b"failed"]
        if path == "/environ":
            keys = ("SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "SERVER_NAME", "SERVER_PORT",
                    "REMOTE_ADDR", "wsgi.url_scheme", "HTTP_X_TWICE")  # fmt: skip
            return answer("200 OK", {key: environ.get(key) for key in keys})
        return answer("404 Not Found", {"detail": "Not Found"})

    def _stream(self, start_response: typing.Any) -> typing.Iterable[bytes]:
        app = self

        class Body:
            def __iter__(self) -> typing.Iterator[bytes]:
                start_response("200 OK", [("Content-Type", "text/plain")])
                yield b""  # an empty first chunk: start_response has run by the next one
                yield from (b"one,", b"two,", b"three")

            def close(self) -> None:
                app.closed += 1

        return Body()


def test_wsgi_routes_json_cookies_and_redirects() -> None:
    app = WsgiApp()
    client = requestx.Client(
        transport=requestx.WSGITransport(app=app), base_url="http://testserver"
    )
    with client:
        assert client.get("/items/7").json() == {"id": 7}
        assert client.get("/nowhere").status_code == 404
        response = client.get("/old", follow_redirects=True)
        assert response.json() == {"id": 1} and [r.status_code for r in response.history] == [302]
        assert client.post("/echo", data={"a": "1"}).json() == {
            "length": 3, "type": "application/x-www-form-urlencoded"}  # fmt: skip
        assert client.get("/me").status_code == 401
        client.get("/login")
        assert client.get("/me").json() == {"cookie": "session=s3cret"}


def test_wsgi_streams_and_closes_the_apps_iterable() -> None:
    app = WsgiApp()
    with requestx.Client(transport=requestx.WSGITransport(app=app)) as client:
        assert client.get("http://testserver/stream").text == "one,two,three"
        assert app.closed == 1
        with client.stream("GET", "http://testserver/stream") as response:
            assert list(response.iter_bytes()) == [b"one,", b"two,", b"three"]
        assert app.closed == 2


def test_wsgi_app_exceptions_and_errors_stream() -> None:
    app = WsgiApp()
    transport = requestx.WSGITransport(app=app)
    with requestx.Client(transport=transport) as client, pytest.raises(KeyError, match="failed"):
        client.get("http://testserver/boom")
    transport = requestx.WSGITransport(app=app, raise_app_exceptions=False)
    with requestx.Client(transport=transport) as client:
        response = client.get("http://testserver/boom")
        assert response.status_code == 500 and response.text == "failed"


def test_wsgi_environ() -> None:
    errors = io.StringIO()
    transport = requestx.WSGITransport(
        app=WsgiApp(), script_name="/app", remote_addr="10.0.0.2", wsgi_errors=errors
    )
    with requestx.Client(transport=transport) as client:
        headers = [("X-Twice", "1"), ("X-Twice", "2")]
        seen = client.get("https://example.org/environ?q=a%20b", headers=headers).json()
    assert seen == {
        "SCRIPT_NAME": "/app", "PATH_INFO": "/environ", "QUERY_STRING": "q=a%20b",
        "SERVER_NAME": "example.org", "SERVER_PORT": "443", "REMOTE_ADDR": "10.0.0.2",
        "wsgi.url_scheme": "https", "HTTP_X_TWICE": "1,2",
    }  # fmt: skip


def test_wsgi_environ_passes_the_wsgi_validator() -> None:
    """wsgiref's validator checks the environ, start_response and the iterable's use
    (close() called, nothing read after it) against PEP 3333."""
    app = wsgiref.validate.validator(WsgiApp())
    with requestx.Client(transport=requestx.WSGITransport(app=app)) as client:
        assert client.get("http://testserver/items/3").json() == {"id": 3}
        assert client.post("http://testserver/echo", content=b"abc").json()["length"] == 3
