"""Scripts written for httpx run unchanged on requestx and give the same results.

Each script in tests/client/real_world/ is a typical user program (a download with a progress loop,
paginated API calls with auth and cookies, a multipart upload, redirect chains). It starts with
`import httpx`; here it runs twice in a fresh interpreter against the suite's server, once
with the real httpx and once with `sys.modules["httpx"]` pointing at requestx, and the JSON
summaries it prints must be equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from tests.servers import HypercornServer

SCRIPTS = sorted((Path(__file__).parent / "real_world").glob("*.py"))


def _run(script: Path, module: str, base_url: str) -> typing.Any:
    code = (
        "import runpy, sys\n"
        f"import {module} as implementation\n"
        "sys.modules['httpx'] = implementation\n"
        f"sys.argv = [{str(script)!r}, {base_url!r}]\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=50, check=False
    )
    assert out.returncode == 0, f"{script.name} with {module}:\n{out.stderr}"
    return json.loads(out.stdout)


def test_there_are_scripts() -> None:
    assert len(SCRIPTS) >= 4


@pytest.mark.parametrize("script", SCRIPTS, ids=[script.stem for script in SCRIPTS])
def test_script_gives_the_same_result_as_with_httpx(script: Path, server: HypercornServer) -> None:
    ours = _run(script, "requestx", server.url)
    theirs = _run(script, "httpx", server.url)
    assert ours == theirs
