"""The README's examples marked `<!-- tested -->` run as written.

The proxy example reads `CORP_PROXY`, `CORP_PROXY_PASSWORD` and `API_URL`: a proxy that
demands those credentials and a server are started for it, and the proxy must have forwarded
its request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.servers.hypercorn_server import HypercornServer
from tests.servers.proxies import ForwardProxy

README = Path(__file__).resolve().parent.parent / "README.md"
EXAMPLES = re.findall(r"<!-- tested -->\n```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_tested_examples() -> None:
    assert len(EXAMPLES) >= 3
    assert any("CORP_PROXY" in source for source in EXAMPLES)


@pytest.mark.parametrize("source", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_readme_example_runs(
    source: str, monkeypatch: pytest.MonkeyPatch, server: HypercornServer
) -> None:
    with ForwardProxy(credentials=("svc", "s3cret")) as proxy:
        monkeypatch.setenv("CORP_PROXY", proxy.url)
        monkeypatch.setenv("CORP_PROXY_PASSWORD", "s3cret")
        monkeypatch.setenv("API_URL", server.url + "/json")
        exec(compile(source, str(README), "exec"), {"__name__": "readme_example"})
        if "CORP_PROXY" in source:
            assert proxy.forwarded == [server.url + "/json"]
            assert proxy.rejected_auth == 0
