"""The README's examples marked `<!-- tested -->` run as written.

The proxy example reads `CORP_PROXY`, `CORP_PROXY_PASSWORD`, `API_URL` and `DOCKER_SOCKET`:
a proxy that demands those credentials, a server and a Unix-socket server are started for it;
the proxy must have forwarded the API request, and the socket server must have answered the
other."""

from __future__ import annotations

import os
import re
import tempfile

import pytest

from tests.servers.hypercorn_server import HypercornServer
from tests.servers.proxies import ForwardProxy, UnixSocketHTTPServer
from tests.support.paths import ROOT

README = ROOT / "README.md"
EXAMPLES = re.findall(r"<!-- tested -->\n```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_tested_examples() -> None:
    assert len(EXAMPLES) >= 3
    assert any("CORP_PROXY" in source for source in EXAMPLES)


@pytest.mark.parametrize("source", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_readme_example_runs(
    source: str, monkeypatch: pytest.MonkeyPatch, server: HypercornServer
) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="rx-") as directory,  # short: a socket path's limit
        UnixSocketHTTPServer(os.path.join(directory, "docker.sock")) as docker,
        ForwardProxy(credentials=("svc", "s3cret")) as proxy,
    ):
        monkeypatch.setenv("CORP_PROXY", proxy.url)
        monkeypatch.setenv("CORP_PROXY_PASSWORD", "s3cret")
        monkeypatch.setenv("API_URL", server.url + "/json")
        monkeypatch.setenv("DOCKER_SOCKET", docker.path)
        exec(compile(source, str(README), "exec"), {"__name__": "readme_example"})
        if "CORP_PROXY" in source:
            assert proxy.forwarded == [server.url + "/json"]
            assert proxy.rejected_auth == 0
            assert docker.requests == ["GET /v1.43/containers/json HTTP/1.1"]
