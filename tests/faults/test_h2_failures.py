"""HTTP/2 servers that misbehave mid-flight: refused streams, resets, GOAWAY, short bodies.

Against tests/servers/h2_scripted.py (h2c with prior knowledge, scenarios chosen by path). A
request the server refused before processing it is retried on a new connection without the
caller noticing; a request the server had started fails with RemoteProtocolError naming what
happened; a body shorter than its Content-Length is never reported complete.
"""

from __future__ import annotations

import concurrent.futures
import time
import typing
import uuid

import pytest

import requestx
from tests.servers.h2_scripted import ScriptedH2Server


@pytest.fixture
def client(h2_script: ScriptedH2Server) -> typing.Iterator[requestx.Client]:
    h2_script.reset_stats()
    with requestx.Client(base_url=h2_script.url, http1=False, http2=True, timeout=5) as client:
        yield client


def _token() -> str:
    return uuid.uuid4().hex


def test_a_refused_stream_is_retried_transparently(
    client: requestx.Client, h2_script: ScriptedH2Server
) -> None:
    assert client.get("/ok").status_code == 200  # the refused request reuses this connection
    response = client.get(f"/refuse-once?token={_token()}")
    assert response.status_code == 200 and response.text == "ok"
    assert response.http_version == "HTTP/2"
    assert h2_script.requests_seen("/refuse-once") == 2  # refused once, then served
    assert client.get("/ok").status_code == 200


def test_a_reset_stream_fails_naming_the_reset(client: requestx.Client) -> None:
    with pytest.raises(requestx.RemoteProtocolError, match="INTERNAL_ERROR"):
        client.get("/reset-mid-body")
    assert client.get("/ok").status_code == 200  # the connection and the pool are fine
    # libcurl 7.88 used to leave the next larger response on that connection unprocessed
    # until one of its timers fired (here: the 30 s connect timeout); the engine's sweep
    # delivers it, well within a 2 s read timeout.
    timeout = requestx.Timeout(30, read=2)
    assert len(client.get("/big?size=30000", timeout=timeout).content) == 30000


def test_goaway_during_a_started_response_fails_it(client: requestx.Client) -> None:
    with pytest.raises(requestx.RemoteProtocolError, match="partial|ended early"):
        client.get("/goaway-mid-body")
    assert client.get("/ok").status_code == 200  # on a new connection


@pytest.mark.parametrize("stream", [False, True], ids=["read", "stream"])
def test_a_short_body_is_never_complete(client: requestx.Client, stream: bool) -> None:
    with pytest.raises(requestx.RemoteProtocolError):
        if stream:
            with client.stream("GET", "/short-body") as response:
                response.read()
        else:
            client.get("/short-body")


@pytest.mark.parametrize("warm", [False, True], ids=["first-stream", "later-stream"])
def test_an_idempotent_request_lost_to_goaway_is_retried(
    client: requestx.Client, h2_script: ScriptedH2Server, warm: bool
) -> None:
    if warm:
        assert client.get("/ok").status_code == 200
    response = client.get(f"/goaway-once?token={_token()}")
    assert response.status_code == 200 and response.text == "ok"
    assert h2_script.requests_seen("/goaway-once") == 2  # lost once, then served


@pytest.mark.parametrize("warm", [False, True], ids=["first-stream", "later-stream"])
def test_a_post_the_server_never_processed_is_sent_again(
    client: requestx.Client, h2_script: ScriptedH2Server, warm: bool
) -> None:
    # A GOAWAY whose last stream id excludes the POST's stream: the server says it did not
    # process it, so sending it again is safe (libcurl 7.88 gives the ids only in its
    # informational text, which the engine reads for requests that are not idempotent).
    if warm:
        assert client.get("/ok").status_code == 200
    response = client.post(f"/goaway-once?token={_token()}", content=b"order #1")
    assert response.status_code == 200 and response.text == "ok"
    assert h2_script.requests_seen("/goaway-once") == 2  # lost once, then served


def test_a_post_beyond_a_goaway_read_by_another_stream_is_sent_again(
    client: requestx.Client, h2_script: ScriptedH2Server
) -> None:
    # Two POSTs on one connection; the server answers the first and sends a GOAWAY that
    # excludes the second. Whichever transfer reads the GOAWAY, the other must learn it.
    assert client.get("/ok").status_code == 200
    token = _token()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, f"/pair?token={token}", content=b"order A")
        time.sleep(0.05)  # the first is waiting at the server before the second arrives
        second = pool.submit(client.post, f"/pair?token={token}", content=b"order B")
        responses = [first.result(timeout=10), second.result(timeout=10)]
    assert [r.text for r in responses] == ["ok", "ok"]
    assert h2_script.requests_seen("/pair") == 3  # A once, B lost once and then served


def test_a_refused_post_is_sent_again_only_when_libcurl_says_so(
    client: requestx.Client, h2_script: ScriptedH2Server
) -> None:
    # RST_STREAM(REFUSED_STREAM) on a new connection's first stream: libcurl 7.88 says
    # "REFUSED_STREAM" and the POST goes again. On a reused connection it says only
    # "Connection died", as for an answer it dropped (docs/architecture.md, "HTTP/2 request
    # bodies"): that POST fails, once, rather than risk doing the work twice.
    response = client.post(f"/refuse-once?token={_token()}", content=b"order #2")
    assert response.status_code == 200 and response.text == "ok"
    assert h2_script.requests_seen("/refuse-once") == 2
    try:
        again = client.post(f"/refuse-once?token={_token()}", content=b"order #3")
    except requestx.RemoteProtocolError as exc:
        assert "not sent again" in str(exc)
        assert h2_script.requests_seen("/refuse-once") == 3
    else:  # a libcurl that tells the two apart
        assert again.text == "ok" and h2_script.requests_seen("/refuse-once") == 4


def test_a_post_the_server_took_is_not_repeated(
    client: requestx.Client, h2_script: ScriptedH2Server
) -> None:
    # The GOAWAY's last stream id includes the POST: the server may have acted on it, and
    # closes without answering. Sending it again could do the work twice.
    assert client.get("/ok").status_code == 200
    with pytest.raises(requestx.RemoteProtocolError):
        client.post("/goaway-processed", content=b"order #3")
    assert h2_script.requests_seen("/goaway-processed") == 1
    assert client.get("/ok").status_code == 200  # on a new connection


@pytest.mark.parametrize("fed", [False, True], ids=["bytes", "iterator"])
def test_a_post_answered_before_its_body_is_sent_is_never_repeated(
    client: requestx.Client, h2_script: ScriptedH2Server, fed: bool
) -> None:
    # The server answers at once and resets the stream with NO_ERROR, while 64 KiB of the
    # 256 KiB body are in flight and the rest waits for window it never gives (RFC 9113
    # section 8.1: the client must not discard that answer). libcurl 7.88 dropped it and,
    # having received nothing, sent the request again (up to five times before the engine
    # stopped it); libcurl 8.22 keeps the answer (curl issue #22984 reported a case still
    # failing in 2026: this is the test that shows it does not here).
    assert client.get("/ok").status_code == 200
    body = b"x" * (256 * 1024)
    content: typing.Any = iter([body[:100_000], body[100_000:]]) if fed else body
    response = client.post("/answer-early", content=content)
    assert response.status_code == 200 and response.text == "early"
    assert h2_script.requests_seen("/answer-early") == 1


@pytest.mark.anyio
async def test_async_refused_and_reset_streams(h2_script: ScriptedH2Server) -> None:
    async with requestx.AsyncClient(base_url=h2_script.url, http1=False, http2=True) as client:
        assert (await client.get("/ok")).status_code == 200
        assert (await client.get(f"/refuse-once?token={_token()}")).text == "ok"
        posted = await client.post(f"/goaway-once?token={_token()}", content=b"order #4")
        assert posted.text == "ok"  # beyond the GOAWAY's last stream: sent again
        with pytest.raises(requestx.RemoteProtocolError, match="INTERNAL_ERROR"):
            await client.get("/reset-mid-body")
        big = await client.get("/big?size=30000")
        assert len(big.content) == 30000
