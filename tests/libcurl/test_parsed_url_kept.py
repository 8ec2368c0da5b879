"""A handle keeps the last URL it parsed, and requests still go where their URLs say.

requestx's bundled libcurl keeps, on each easy handle, the last URL it was given; given twice
in a row, the parsed form and its normalized string are kept too, and a later transfer to the
same URL copies them instead of parsing again
(scripts/libcurl-patches/curl-0003-parsed-url-kept.patch). Another patch builds the
connection's "host:port" and the request's own `Host:` line without printf
(curl-0004-host-strings-without-printf.patch).

What a kept URL could get wrong is where a request goes and what its head says. So one
client, whose pool hands the same handle back request after request, sends sequences where a
URL repeats, then changes by its query, its path, its port or its server, then comes back;
each head is compared byte for byte with the head a fresh client (a fresh handle, nothing
kept) sends for the same request, and the requests are counted at each server: a raw-socket
recorder, hypercorn and nginx.

A kept URL can carry credentials (a password in its userinfo, a token in its query), so
curl_easy_reset must take it away with the handle's options: a C program (tests/c/
url_cache_reset.c), linked against the same libcurl, tracks libcurl's live allocations and
checks that none holds either secret after the reset. Stock libcurl 8.22 fails it too: its
reset keeps the last transfer's parsed URL and the credentials taken from it until the next
transfer, and the patch's reset drops those as well; so it runs only where the patch is.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import typing
from pathlib import Path

import pytest

import requestx
from tests.servers import HypercornServer
from tests.servers.nginx import Nginx, nginx_or_skip
from tests.servers.recorder import RecordedHead, RecordingServer
from tests.support.bundled_libcurl import libcurl_flags, needs_patch
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def recorders() -> typing.Iterator[tuple[RecordingServer, RecordingServer]]:
    with RecordingServer() as first, RecordingServer() as second:
        yield first, second


@pytest.fixture(scope="module")
def nginx() -> typing.Iterator[Nginx]:
    with nginx_or_skip(log=True) as server:
        yield server


# (which recorder, path and query, extra headers). A URL is kept once given twice in a row,
# so the runs of one URL come in twos and threes, and what follows each run differs from it
# in one part only.
SEQUENCE: list[tuple[int, str, dict[str, str]]] = [
    (0, "/a", {}),
    (0, "/a", {}),
    (0, "/a", {}),  # the kept form from here
    (0, "/a?x=1", {}),  # the query differs
    (0, "/a?x=1", {}),
    (0, "/a?x=2", {}),
    (0, "/b", {}),  # the path differs
    (0, "/a", {}),
    (1, "/a", {}),  # the port differs
    (1, "/a", {}),
    (1, "/a", {}),
    (0, "/a", {}),
    (0, "/caf%C3%A9/%7Euser?q=a%20b", {}),  # percent-encoded
    (0, "/caf%C3%A9/%7Euser?q=a%20b", {}),
    (0, "/caf%C3%A9/%7Euser?q=a%20b", {}),
    (0, "/a", {"Host": "name.test:8080"}),  # the request's own Host line
    (0, "/a", {"Host": "other.test"}),
    (0, "/a", {}),
]


def _send(client: requestx.Client, url: str, headers: dict[str, str]) -> None:
    assert client.get(url, headers=headers).text == "ok"


def _expected(recorder: RecordingServer, url: str, headers: dict[str, str]) -> RecordedHead:
    recorder.reset()
    with requestx.Client() as fresh:
        _send(fresh, url, headers)
    assert len(recorder.heads) == 1
    return recorder.heads[0]


def test_a_kept_url_sends_what_a_fresh_handle_sends(
    recorders: tuple[RecordingServer, RecordingServer],
) -> None:
    with requestx.Client() as client:
        for which, target, headers in SEQUENCE:
            recorder = recorders[which]
            url = recorder.url + target
            for each in recorders:
                each.reset()
            _send(client, url, headers)
            # Exactly one request, at the server the URL names.
            reached = [len(each.heads) for each in recorders]
            assert reached == [int(n == which) for n in range(2)], (which, target)
            sent = recorder.heads[0]
            assert sent.raw == _expected(recorder, url, headers).raw, (which, target, headers)
            # and what both say is right: the target as given, the Host line as asked or the
            # URL's (a fresh handle runs the same patched libcurl, so compare with the source)
            assert sent.target == target
            host = headers.get("Host", recorder.url.removeprefix("http://"))
            assert sent.raw.split(b"\r\n")[1] == b"Host: " + host.encode()


@pytest.mark.anyio
async def test_an_async_client_keeps_urls_as_well(
    recorders: tuple[RecordingServer, RecordingServer],
) -> None:
    async with requestx.AsyncClient() as client:
        for which, target, headers in SEQUENCE:
            recorder = recorders[which]
            url = recorder.url + target
            for each in recorders:
                each.reset()
            assert (await client.get(url, headers=headers)).text == "ok"
            reached = [len(each.heads) for each in recorders]
            assert reached == [int(n == which) for n in range(2)], (which, target)
            sent = recorder.heads[0]
            assert sent.raw == _expected(recorder, url, headers).raw, (which, target, headers)


def test_urls_alternating_between_hypercorn_and_nginx(
    server: HypercornServer, nginx: Nginx
) -> None:
    """Runs of one URL, then the other server, then back: each request is answered by the
    server its URL names, with the path and query it gave, and each server saw each request
    once."""
    plan = [
        ("hypercorn", "/echo?n=1"),
        ("hypercorn", "/echo?n=1"),
        ("hypercorn", "/echo?n=1"),
        ("nginx", "/get?kept=1"),
        ("nginx", "/get?kept=1"),
        ("nginx", "/get?kept=1"),
        ("nginx", "/missing?kept=2"),
        ("hypercorn", "/echo?n=1"),
        ("hypercorn", "/echo/other?n=2"),
        ("nginx", "/get?kept=1"),
        ("hypercorn", "/echo?n=1"),
    ]
    server.reset_stats()
    with requestx.Client() as client:
        for where, target in plan:
            if where == "hypercorn":
                answer = client.get(server.url + target)
                assert answer.status_code == 200
                path, _, query = target.partition("?")
                assert answer.json()["path"] == path
                assert answer.json()["query"] == query
            else:
                answer = client.get(nginx.url + target)
                assert answer.status_code == (200 if target.startswith("/get") else 404), target
    assert server.request_count() == sum(where == "hypercorn" for where, _ in plan)
    expected = [target for where, target in plan if where == "nginx"]
    assert _logged(nginx, len(expected)) == expected


def _logged(nginx: Nginx, count: int) -> list[str]:
    """The URIs of this test (`kept=` in the query) that nginx logged, once it has logged
    `count` of them, or whatever it has after 5 seconds: nginx writes a request's line after
    sending its answer, so the client can be ahead of the log (and of the line of the request
    that checked nginx was up)."""
    deadline = time.monotonic() + 5.0
    while True:
        uris = [uri for uri in nginx.requested_uris() if "kept=" in uri]
        if len(uris) >= count or time.monotonic() > deadline:
            return uris
        time.sleep(0.01)


# Stock 8.22 keeps the last URL's parsed form and credentials across curl_easy_reset (until
# the next transfer): the patch's reset drops them with the kept URL.
@needs_patch("curl-0003-parsed-url-kept")
@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.timeout(240)  # libcurl_flags() builds libcurl when its cache has no such build
def test_a_reset_handle_keeps_no_credentials_of_its_last_url(
    recorders: tuple[RecordingServer, RecordingServer], tmp_path: Path
) -> None:
    """Two transfers to a URL with a password and a query token (the second keeps its parsed
    form), then curl_easy_reset: no block libcurl still has allocated holds either secret.
    The program also checks that its search finds them before the reset."""
    cflags, libs = libcurl_flags()
    binary = tmp_path / "url_cache_reset"
    built = subprocess.run(
        ["gcc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", *cflags,
         str(ROOT / "tests/c/url_cache_reset.c"), "-o", str(binary), *libs, "-pthread"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    recorder = recorders[0]
    recorder.reset()
    done = subprocess.run(
        [str(binary), recorder.url.removeprefix("http://")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all checks passed" in done.stdout
    assert len(recorder.heads) == 2
