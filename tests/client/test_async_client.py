"""`requestx.AsyncClient` end to end, with httpx's names and semantics (httpx 0.28).

Every async test is written once and runs on asyncio, uvloop and trio (the `anyio_backend`
fixture in conftest.py). What the server received is read back from `/echo`, so the tests check
the bytes on the wire. Failures raise the same exception classes as the blocking `Client`, and
each is followed by a good request on the same client: a failure must not poison it.

The life-cycle tests at the end run child interpreters (interpreter exit, several event loops).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import textwrap
import time
import typing

import anyio
import pytest

import requestx
from requestx import _core
from tests.servers import HypercornServer, RawServer
from tests.servers.app import HELLO
from tests.servers.fast_server import FastServer
from tests.servers.stalling import full_backlog, silent_listener
from tests.support.child_process import run_child
from tests.support.echo import received, still_works_async
from tests.support.network import closed_port

pytestmark = pytest.mark.anyio


async def _timed(
    call: typing.Callable[[], typing.Awaitable[object]],
) -> tuple[BaseException | None, float]:
    start = time.monotonic()
    try:
        await call()
    except Exception as exc:
        return exc, time.monotonic() - start
    return None, time.monotonic() - start


def _assert_timeout(
    error: BaseException | None, cls: type[Exception], elapsed: float, expected: float
) -> None:
    print(f"{cls.__name__}: expected after {expected:.2f} s, raised after {elapsed:.3f} s")
    assert isinstance(error, cls), repr(error)
    assert isinstance(error, requestx.TimeoutException)
    assert error.request is not None
    assert expected - 0.1 <= elapsed <= expected + 0.5, f"{cls.__name__} after {elapsed:.3f} s"


# --- life cycle -------------------------------------------------------------------------------


async def test_async_with_returns_the_client_and_closes_it(server: HypercornServer) -> None:
    client = requestx.AsyncClient()
    assert not client.is_closed
    async with client as entered:
        assert entered is client
        assert not client.is_closed
        assert (await client.get(server.url + "/")).content == HELLO
    assert client.is_closed
    with pytest.raises(RuntimeError):
        await client.get(server.url + "/")
    with pytest.raises(RuntimeError):  # a closed client cannot be reopened
        async with client:
            pass


async def test_aclose_is_idempotent_and_final(server: HypercornServer) -> None:
    client = requestx.AsyncClient()
    assert (await client.get(server.url + "/")).status_code == 200
    await client.aclose()
    assert client.is_closed
    await client.aclose()  # a second close is harmless
    assert client.is_closed
    with pytest.raises(RuntimeError):
        await client.send(client.build_request("GET", server.url + "/"))


async def test_close_without_any_request() -> None:
    client = requestx.AsyncClient()
    await client.aclose()
    assert client.is_closed
    async with requestx.AsyncClient() as other:
        assert not other.is_closed
    assert other.is_closed


async def test_leaving_async_with_on_an_exception_closes_the_client(
    server: HypercornServer,
) -> None:
    client = requestx.AsyncClient()
    with pytest.raises(ZeroDivisionError):
        async with client:
            await client.get(server.url + "/")
            1 / 0  # noqa: B018
    assert client.is_closed


# --- methods ----------------------------------------------------------------------------------

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@pytest.mark.parametrize("method", METHODS)
async def test_methods(server: HypercornServer, method: str) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        response = await getattr(client, method.lower())("/echo/path", params={"m": method})
    assert isinstance(response, requestx.Response)
    assert response.status_code == 200
    echo = response.json()
    assert echo["method"] == method
    assert echo["path"] == "/echo/path"
    assert echo["query"] == f"m={method}"
    assert response.request.method == method
    assert response.url == requestx.URL(server.url + f"/echo/path?m={method}")


async def test_head_has_no_body_and_leaves_the_connection_usable(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        server.reset_stats()
        response = await client.head("/bytes/100000")
        assert response.status_code == 200
        assert response.headers["content-length"] == "100000"
        assert response.content == b""
        assert (await client.get("/")).content == HELLO
        assert server.connection_count() == 1  # the HEAD's connection was reused


async def test_request_with_every_kind_of_body(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        response = await client.request("PROPFIND", "/echo")
        assert response.json()["method"] == "PROPFIND"
        body = bytes(range(256)) * 4
        response = await client.request("POST", "/echo", content=body)
        assert response.json()["body"].encode("latin-1") == body
        assert received(response, "content-length") == [str(len(body))]
        response = await client.post("/echo", json={"a": [1, 2], "b": None})
        assert json.loads(response.json()["body"]) == {"a": [1, 2], "b": None}
        assert received(response, "content-type") == ["application/json"]
        response = await client.put("/echo", data={"k": ["1", "2"], "x": "y z"})
        assert response.json()["body"] == "k=1&k=2&x=y+z"
        assert received(response, "content-type") == ["application/x-www-form-urlencoded"]


async def test_response_is_read_and_aread_returns_the_content(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        response = await client.get("/json")
        assert response.headers["content-type"] == "application/json"
        assert response.json() == {"Hello": "world!"}
        assert await response.aread() == response.content == b'{"Hello": "world!"}'
        assert response.text == '{"Hello": "world!"}'
        assert response.http_version == "HTTP/1.1"
        assert response.is_success
        assert response.elapsed.total_seconds() >= 0
        response = await client.get("/status/404")
        assert response.status_code == 404
        with pytest.raises(requestx.HTTPStatusError):
            response.raise_for_status()


async def test_redirects_are_not_followed_by_default(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        assert client.follow_redirects is False
        response = await client.get("/redirect/302")
        assert response.status_code == 302
        assert response.headers["location"] == "/echo"
        assert response.is_redirect
        assert response.history == []


async def test_build_request_and_send(server: HypercornServer) -> None:
    async with requestx.AsyncClient(
        base_url=server.url, headers={"X-Client": "c"}, params={"cp": "1"}
    ) as client:
        request = client.build_request(
            "POST", "/echo", params={"rp": "2"}, headers={"X-Req": "r"}, content=b"payload"
        )
        assert isinstance(request, requestx.Request)
        assert request.url == requestx.URL(server.url + "/echo?cp=1&rp=2")
        assert request.headers["x-client"] == "c"
        # A built request can be changed before it is sent.
        request.headers["X-Late"] = "late"
        response = await client.send(request)
        assert response.request is request
        echo = response.json()
        assert echo["method"] == "POST"
        assert echo["query"] == "cp=1&rp=2"
        assert echo["body"] == "payload"
        assert received(response, "x-client") == ["c"]
        assert received(response, "x-req") == ["r"]
        assert received(response, "x-late") == ["late"]
        # The same request can be sent again.
        again = await client.send(request)
        assert again.json()["body"] == "payload"


# --- configuration ----------------------------------------------------------------------------


async def test_defaults_match_the_blocking_client() -> None:
    sync = requestx.Client()
    async with requestx.AsyncClient() as client:
        assert client.timeout == sync.timeout == requestx.Timeout(5.0)
        assert client.follow_redirects is sync.follow_redirects is False
        assert client.max_redirects == sync.max_redirects == 20
        assert client.headers == sync.headers
        assert client.base_url == sync.base_url == requestx.URL("")
        assert client.params == sync.params
        assert dict(client.cookies) == {}
    sync.close()


async def test_configuration_is_merged_with_the_request(server: HypercornServer) -> None:
    async with requestx.AsyncClient(
        base_url=server.url + "/echo",
        headers={"X-Client": "c", "X-Both": "client", "User-Agent": "agent/1"},
        params={"cp": "1", "both": "client"},
        cookies={"cc": "1"},
        timeout=3,
    ) as client:
        assert client.timeout == requestx.Timeout(3)
        with pytest.warns(DeprecationWarning, match="per-request cookies"):  # as in httpx
            response = await client.get(
                "/sub",
                params={"rp": "2", "both": "request"},
                headers={"x-both": "request", "X-Req": "r"},
                cookies={"rc": "2"},
            )
        echo = response.json()
        assert echo["path"] == "/echo/sub"
        assert echo["query"] == "cp=1&both=request&rp=2"
        assert received(response, "x-client") == ["c"]
        assert received(response, "x-both") == ["request"]
        assert received(response, "x-req") == ["r"]
        assert received(response, "user-agent") == ["agent/1"]
        assert received(response, "cookie") == ["cc=1; rc=2"]
        assert response.request.extensions["timeout"] == {
            "connect": 3,
            "read": 3,
            "write": 3,
            "pool": 3,
        }
        # Without per-request values only the client's are sent; the request's cookie did not
        # leak into the client's jar.
        response = await client.get("")
        assert response.json()["query"] == "cp=1&both=client"
        assert received(response, "cookie") == ["cc=1"]
        assert dict(client.cookies) == {"cc": "1"}
        # An absolute URL ignores base_url.
        assert (await client.get(server.url + "/json")).json() == {"Hello": "world!"}


async def test_default_headers_on_the_wire(server: HypercornServer) -> None:
    async with requestx.AsyncClient() as client:
        response = await client.get(server.url + "/echo")
    assert received(response, "host") == [server.url.removeprefix("http://")]
    assert received(response, "accept") == ["*/*"]
    assert received(response, "connection") == ["keep-alive"]
    assert received(response, "user-agent") == [f"python-requestx/{requestx.__version__}"]


async def test_configuration_can_be_changed_after_creation(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        client.headers["X-Later"] = "1"
        client.params = {"p": "1"}
        client.base_url = server.url + "/echo/base"
        response = await client.get("x")
        assert received(response, "x-later") == ["1"]
        assert response.json()["path"] == "/echo/base/x"
        assert response.json()["query"] == "p=1"
        client.timeout = 0.2  # type: ignore[assignment]
        assert client.timeout == requestx.Timeout(0.2)
        error, elapsed = await _timed(lambda: client.get(server.url + "/slow?delay=1"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.2)


async def test_cookies_set_by_the_server_persist_on_the_client(server: HypercornServer) -> None:
    async with requestx.AsyncClient(base_url=server.url) as client:
        await client.get("/cookies/set?session=abc&theme=dark")
        assert client.cookies["session"] == "abc"
        assert (await client.get("/cookies")).json() == {"cookie": "session=abc; theme=dark"}
    # ...and only on that client.
    async with requestx.AsyncClient(base_url=server.url) as other:
        assert (await other.get("/cookies")).json() == {"cookie": None}


async def test_per_request_timeout_overrides_the_clients(server: HypercornServer) -> None:
    async with requestx.AsyncClient(timeout=0.2) as client:
        assert (await client.get(server.url + "/slow?delay=0.3", timeout=3)).text == "slow"
        response = await client.get(server.url + "/", timeout=requestx.Timeout(1, read=2))
        assert response.request.extensions["timeout"] == {
            "connect": 1,
            "read": 2,
            "write": 1,
            "pool": 1,
        }
        error, elapsed = await _timed(lambda: client.get(server.url + "/slow?delay=1"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.2)
        assert (await client.get(server.url + "/slow?delay=0.25", timeout=None)).text == "slow"


async def test_limits_are_accepted_and_bound_the_pool(server: HypercornServer) -> None:
    limits = requestx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=5)
    async with requestx.AsyncClient(base_url=server.url, limits=limits) as client:
        server.reset_stats()
        for i in range(5):
            assert (await client.get("/echo", params={"i": i})).json()["query"] == f"i={i}"
        assert server.connection_count() == 1


# --- exceptions, each followed by a good request -----------------------------------------------


async def test_connection_refused(server: HypercornServer) -> None:
    url = f"http://127.0.0.1:{closed_port()}/path"
    async with requestx.AsyncClient() as client:
        for _ in range(3):
            with pytest.raises(requestx.ConnectError) as info:
                await client.get(url)
            assert isinstance(info.value, requestx.NetworkError)
            assert info.value.request.url == requestx.URL(url)
        await still_works_async(client, server)


async def test_read_timeout_on_a_stalled_server(raw_server: RawServer) -> None:
    async with requestx.AsyncClient(timeout=0.5) as client:
        error, elapsed = await _timed(lambda: client.get(raw_server.url + "/stall"))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.5)
        assert isinstance(error, requestx.ReadTimeout)
        assert error.request.url == requestx.URL(raw_server.url + "/stall")
        assert (await client.get(raw_server.url + "/ok")).text == "ok"


async def test_read_timeout_while_the_body_stalls(server: HypercornServer) -> None:
    url = server.url + "/drip?chunks=2&delay=1&size=10&length=1"
    async with requestx.AsyncClient(timeout=requestx.Timeout(5.0, read=0.4)) as client:
        error, elapsed = await _timed(lambda: client.get(url))
        _assert_timeout(error, requestx.ReadTimeout, elapsed, 0.4)
        await still_works_async(client, server)


async def test_connect_timeout_when_connect_hangs(server: HypercornServer) -> None:
    with full_backlog() as port:
        if port is None:
            pytest.skip("this kernel completes every loopback handshake; cannot stall connect")
        async with requestx.AsyncClient(timeout=requestx.Timeout(5.0, connect=0.5)) as client:
            error, elapsed = await _timed(lambda: client.get(f"http://127.0.0.1:{port}/"))
            _assert_timeout(error, requestx.ConnectTimeout, elapsed, 0.5)
            await still_works_async(client, server)


async def test_write_timeout_when_the_server_does_not_read(server: HypercornServer) -> None:
    body = b"x" * (32 * 1024 * 1024)  # more than loopback socket buffers hold
    with silent_listener() as listener:
        port = listener.getsockname()[1]
        async with requestx.AsyncClient(timeout=requestx.Timeout(5.0, write=0.5)) as client:
            error, elapsed = await _timed(
                lambda: client.post(f"http://127.0.0.1:{port}/", content=body)
            )
            _assert_timeout(error, requestx.WriteTimeout, elapsed, 0.5)
            await still_works_async(client, server)


async def test_pool_timeout(raw_server: RawServer) -> None:
    limits = requestx.Limits(max_connections=1)
    async with requestx.AsyncClient(timeout=5, limits=limits) as client:
        holder_outcome: list[BaseException | None] = []

        async def hold_the_only_connection() -> None:
            holder_outcome.append((await _timed(lambda: client.get(raw_server.url + "/stall")))[0])

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold_the_only_connection)
            await anyio.sleep(0.3)  # the holder's request is on the wire
            error, elapsed = await _timed(
                lambda: client.get(raw_server.url + "/ok", timeout=requestx.Timeout(5, pool=0.5))
            )
            _assert_timeout(error, requestx.PoolTimeout, elapsed, 0.5)
            raw_server.release()  # the stalled connection closes; the holder fails and returns
        assert len(holder_outcome) == 1
        assert isinstance(holder_outcome[0], requestx.RemoteProtocolError), holder_outcome
        assert (await client.get(raw_server.url + "/ok")).text == "ok"


@pytest.mark.parametrize(
    "scenario, errors",
    [
        ("close-mid-body", (requestx.RemoteProtocolError, requestx.ReadError)),
        ("close-no-response", (requestx.RemoteProtocolError,)),
        ("bad-status-line", (requestx.RemoteProtocolError,)),
    ],
)
async def test_misbehaving_server(
    raw_server: RawServer,
    server: HypercornServer,
    scenario: str,
    errors: tuple[type[Exception], ...],
) -> None:
    url = f"{raw_server.url}/{scenario}"
    async with requestx.AsyncClient(timeout=5) as client:
        with pytest.raises(requestx.TransportError) as info:
            await client.get(url)
        assert isinstance(info.value, errors), repr(info.value)
        assert info.value.request.url == requestx.URL(url)
        assert (await client.get(raw_server.url + "/ok")).text == "ok"
        await still_works_async(client, server)


async def test_pooled_connection_closed_by_the_server_is_replaced(raw_server: RawServer) -> None:
    async with requestx.AsyncClient(timeout=5) as client:
        raw_server.reset_stats()
        assert (await client.get(raw_server.url + "/ok-then-close")).text == "ok"
        for _ in range(3):
            assert (await client.get(raw_server.url + "/ok")).text == "ok"
        assert raw_server.connection_count() == 2


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/file", "file:///etc/passwd", "ws://127.0.0.1/", "/relative", "http:///p"],
)
async def test_unsupported_protocol(server: HypercornServer, url: str) -> None:
    async with requestx.AsyncClient() as client:
        server.reset_stats()
        with pytest.raises(requestx.UnsupportedProtocol):
            await client.get(url)
        assert server.request_count() == 0
        await still_works_async(client, server)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:99999/", "http://127.0.0.1:abc/", "http://[::1/", "http://a b/"]
)
async def test_invalid_url(server: HypercornServer, url: str) -> None:
    async with requestx.AsyncClient() as client:
        with pytest.raises(requestx.InvalidURL):
            await client.get(url)
        await still_works_async(client, server)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"headers": {"X-A": "a\r\nX-Injected: 1"}},
        {"headers": {"X-A\n": "a"}},
        {"method": "GET\r\nX"},
    ],
    ids=["header-value", "header-name", "method"],
)
async def test_local_protocol_error(server: HypercornServer, kwargs: dict[str, typing.Any]) -> None:
    kwargs = dict(kwargs)  # the parametrized dict is shared by the three backends' runs
    method = kwargs.pop("method", "GET")
    async with requestx.AsyncClient() as client:
        server.reset_stats()
        with pytest.raises(requestx.LocalProtocolError):
            await client.request(method, server.url + "/echo", **kwargs)
        assert server.request_count() == 0
        await still_works_async(client, server)


async def test_absurd_arguments_raise_what_httpx_raises(server: HypercornServer) -> None:
    async with requestx.AsyncClient() as client:
        server.reset_stats()
        with pytest.raises(TypeError):
            await client.get(123)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await client.post(server.url + "/echo", content=object())
        with pytest.raises(TypeError):
            await client.get(server.url + "/", headers=123)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            await client.get(server.url + "/", timeout="x")  # type: ignore[arg-type]
        assert server.request_count() == 0
        await still_works_async(client, server)


async def test_errors_do_not_leak_transfers(raw_server: RawServer, server: HypercornServer) -> None:
    async with requestx.AsyncClient(timeout=0.2) as client:
        for path in ("/stall", "/close-no-response", "/close-mid-body"):
            with pytest.raises(requestx.TransportError):
                await client.get(raw_server.url + path)
        with pytest.raises(requestx.ConnectError):
            await client.get(f"http://127.0.0.1:{closed_port()}/")
        await still_works_async(client, server)
    gc.collect()  # the exceptions above sit in reference cycles (see the next test)
    deadline = time.monotonic() + 2
    while _core.live_transfers() and time.monotonic() < deadline:
        await anyio.sleep(0.01)
    assert _core.live_transfers() == 0


async def test_a_kept_exception_or_response_does_not_pin_its_transfer(
    raw_server: RawServer, server: HypercornServer
) -> None:
    # A caller may keep an exception (to log or re-raise later) or a response; neither may keep
    # the engine's transfer (and with it the request body) alive. The blocking Client releases
    # the transfer before it raises or returns.
    baseline = _core.live_transfers()
    kept: list[object] = []
    async with requestx.AsyncClient(timeout=0.3) as client:
        for url in (f"http://127.0.0.1:{closed_port()}/", raw_server.url + "/stall"):
            try:
                await client.post(url, content=b"x" * 100_000)
            except requestx.TransportError as exc:
                kept.append(exc)
        kept.append(await client.post(server.url + "/echo", content=b"y" * 100_000))
        deadline = time.monotonic() + 2
        while _core.live_transfers() > baseline and time.monotonic() < deadline:
            await anyio.sleep(0.01)
        assert _core.live_transfers() <= baseline, f"{len(kept)} kept objects pin transfers"
    assert [type(k) for k in kept] == [
        requestx.ConnectError,
        requestx.ReadTimeout,
        requestx.Response,
    ]


# --- life cycle across interpreters and event loops --------------------------------------------

# A child that makes one request on an AsyncClient and then leaves it open ("kept": referenced
# until interpreter exit) or drops it unclosed ("dropped": garbage collected while the loop
# runs, "dropped-after": collected after the loop has closed). It prints DONE when its event
# loop has returned; the interpreter must then exit promptly and quietly.
_UNCLOSED_CHILD = textwrap.dedent(
    """
    import gc, sys
    import requestx

    backend, mode, url = sys.argv[1], sys.argv[2], sys.argv[3]
    kept = []

    async def main():
        client = requestx.AsyncClient()
        response = await client.get(url)
        assert response.status_code == 200, response
        kept.append(client)
        if mode == "dropped":
            kept.clear()
            del client
            gc.collect()

    if backend == "trio":
        import trio
        trio.run(main)
    elif backend == "uvloop":
        import uvloop
        uvloop.run(main())
    else:
        import asyncio
        asyncio.run(main())
    if mode == "dropped-after":
        kept.clear()
        gc.collect()
    print("DONE", flush=True)
    """
)


def _run_child(code: str, *args: str, timeout: float = 10.0) -> tuple[int, str, str, float]:
    start = time.monotonic()
    child = run_child(code, *args, timeout=timeout, options=("-X", "dev"))
    return child.returncode, child.stdout, child.stderr, time.monotonic() - start


BACKENDS = ["asyncio", "uvloop", "trio"]


@pytest.mark.parametrize("mode", ["kept", "dropped", "dropped-after"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_unclosed_client_does_not_hang_interpreter_exit(
    server: HypercornServer, backend: str, mode: str
) -> None:
    code, out, err, elapsed = _run_child(_UNCLOSED_CHILD, backend, mode, server.url + "/")
    print(f"{backend}/{mode}: child exited after {elapsed:.2f} s\n{err}")
    assert code == 0, err
    assert out.strip() == "DONE"
    assert elapsed < 5.0
    assert "Traceback" not in err
    assert "Exception ignored" not in err


_TWO_LOOPS_CHILD = textwrap.dedent(
    """
    import json, sys
    import requestx

    url, first, second = sys.argv[1], sys.argv[2], sys.argv[3]
    client = requestx.AsyncClient()

    async def one():
        response = await client.get(url)
        return response.status_code

    def run(backend):
        try:
            if backend == "trio":
                import trio
                return trio.run(one)
            if backend == "uvloop":
                import uvloop
                return uvloop.run(one())
            import asyncio
            return asyncio.run(one())
        except RuntimeError as exc:
            return "RuntimeError: " + str(exc)

    results = [run(first), run(second), run(first)]

    async def close():
        await client.aclose()

    import asyncio
    asyncio.run(close())
    print(json.dumps(results), flush=True)
    """
)


@pytest.mark.parametrize(
    "first, second",
    [("asyncio", "asyncio"), ("uvloop", "asyncio"), ("asyncio", "trio"), ("trio", "uvloop")],
)
def test_one_client_on_successive_event_loops(
    server: HypercornServer, first: str, second: str
) -> None:
    # requestx documents (requestx/_aio.py) that an AsyncClient works on one event loop after
    # another, as long as it is not used by two loops at once.
    code, out, err, elapsed = _run_child(_TWO_LOOPS_CHILD, server.url + "/", first, second)
    assert code == 0, err
    assert json.loads(out) == [200, 200, 200], out
    assert "Traceback" not in err
    assert elapsed < 8.0


def test_many_event_loops_do_not_leak_fds_or_threads(fast: FastServer) -> None:
    # Each event loop gets its own completion queue and eventfd; they must go away with it.
    async def one() -> None:
        async with requestx.AsyncClient() as client:
            for _ in range(3):
                assert (await client.get(fast.url + "/")).status_code == 200

    asyncio.run(one())  # warm up: lazily created process-wide state exists now
    gc.collect()
    fds_before = len(os.listdir("/proc/self/fd"))
    threads_before = len(os.listdir("/proc/self/task"))
    for _ in range(20):
        asyncio.run(one())
    gc.collect()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        fds = len(os.listdir("/proc/self/fd"))
        threads = len(os.listdir("/proc/self/task"))
        if fds <= fds_before + 2 and threads <= threads_before + 1:
            break
        time.sleep(0.02)
    assert fds <= fds_before + 2, f"{fds - fds_before} file descriptors leaked over 20 loops"
    assert threads <= threads_before + 1, f"{threads - threads_before} threads left behind"
