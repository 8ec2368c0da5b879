"""The C engine's platform layer (csrc/platform.h): which implementation runs, how
REQUESTX_PLATFORM picks one, and what each must cope with.

The whole suite runs once per implementation this machine has (scripts/test.sh: "linux", then
"posix", the one macOS and the BSDs run); these tests check the selection itself and the
cases the rest of the suite does not reach: descriptor numbers past select()'s FD_SETSIZE and
a failed selection."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import requestx
from tests.servers import HypercornServer

# This build's implementations, the default first.
BUILT = ("linux", "posix") if sys.platform == "linux" else ("posix",)


def _child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "REQUESTX_PLATFORM"}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        env=environ,
    )


def test_engine_names_the_implementation_in_use() -> None:
    wanted = os.environ.get("REQUESTX_PLATFORM") or BUILT[0]
    assert requestx.__engine__["platform"] == wanted
    with pytest.raises(TypeError):
        requestx.__engine__["platform"] = "other"  # type: ignore[index]


@pytest.mark.parametrize("name", ["", *BUILT])
def test_requestx_platform_selects_at_import(name: str) -> None:
    result = _child(
        "import requestx; print(requestx.__engine__['platform'])", REQUESTX_PLATFORM=name
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (name or BUILT[0])


@pytest.mark.parametrize("name", ["bsd", "Linux", "windows" if sys.platform != "win32" else "x"])
def test_an_implementation_this_build_lacks_is_refused_at_import(name: str) -> None:
    result = _child("import requestx", REQUESTX_PLATFORM=name)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ImportError: REQUESTX_PLATFORM=")
    assert repr(name) in last_line
    for built in BUILT:
        assert built in last_line


@pytest.mark.parametrize("platform", BUILT)
def test_descriptors_past_fd_setsize(server: HypercornServer, platform: str) -> None:
    """With 1,100 descriptors open first, every socket and notifier the engine makes has a
    number past 1,024, where select() would fail: blocking, async and streamed requests
    still work on each implementation."""
    code = f"""
        import asyncio, os, resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
        held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
        import requestx
        assert requestx.__engine__["platform"] == {platform!r}
        url = {server.url!r} + "/json"
        with requestx.Client() as client:
            assert [client.get(url).status_code for _ in range(20)] == [200] * 20
            with client.stream("GET", url) as response:
                assert b"".join(response.iter_bytes())

        async def main():
            async with requestx.AsyncClient() as client:
                answers = await asyncio.gather(*(client.get(url) for _ in range(100)))
            return [a.status_code for a in answers]

        assert asyncio.run(main()) == [200] * 100
        assert max(held) > 1024  # every descriptor made after these is past FD_SETSIZE
        print("ok")
    """
    result = _child(code, REQUESTX_PLATFORM=platform)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
