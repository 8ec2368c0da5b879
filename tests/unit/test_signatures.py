"""The public API's signatures are httpx 0.28's, as `help()`, an IDE and mypy see them.

Every top-level function and every `Client`/`AsyncClient` method a user calls takes httpx's
parameters by name, in httpx's order and of the same kind (positional or keyword-only), with
the same defaults; no `**kwargs` hides them. requestx's own additions come after httpx's, are
keyword-only, and are listed here (and in docs/differences.md).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import pydoc
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

import requestx

FUNCTIONS = ["request", "stream", "get", "options", "head", "post", "put", "patch", "delete"]
METHODS = ["__init__", "request", "stream", "send", "build_request", *FUNCTIONS[2:]]
NAMES = FUNCTIONS + [f"{cls}.{m}" for cls in ("Client", "AsyncClient") for m in METHODS]

# requestx's parameters beyond httpx's, in order: cert= for mutual TLS on the top-level
# functions (httpx 0.28 dropped it there), and the clients' response limits and shared engine.
EXTRAS: dict[str, tuple[str, ...]] = {
    **{name: ("cert",) for name in FUNCTIONS},
    "Client.__init__": ("max_header_bytes", "max_body_bytes", "_engine"),
    "AsyncClient.__init__": ("max_header_bytes", "max_body_bytes", "_engine"),
}


def _resolve(module: Any, name: str) -> Any:
    target = module
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _default(value: Any) -> Any:
    """A default in terms both libraries share: their USE_CLIENT_DEFAULT markers are each
    library's own object, their Timeout and Limits compare by repr."""
    if type(value).__name__ == "UseClientDefault":
        return "USE_CLIENT_DEFAULT"
    if value is inspect.Parameter.empty or value is None or isinstance(value, (bool, int, str)):
        return value
    return repr(value)


def _shape(function: Any) -> list[tuple[str, str, Any]]:
    return [
        (p.name, p.kind.name, _default(p.default))
        for p in inspect.signature(function).parameters.values()
    ]


@pytest.mark.parametrize("name", NAMES)
def test_parameters_are_httpx_s_then_requestx_s_own(name: str) -> None:
    ours = _shape(_resolve(requestx, name))
    theirs = _shape(_resolve(httpx, name))
    assert ours[: len(theirs)] == theirs
    extras = ours[len(theirs) :]
    assert [extra[0] for extra in extras] == list(EXTRAS.get(name, ()))
    assert all(kind == "KEYWORD_ONLY" for _, kind, _ in extras)


@pytest.mark.parametrize("name", NAMES)
def test_coroutine_functions_where_httpx_has_them(name: str) -> None:
    ours = inspect.iscoroutinefunction(_resolve(requestx, name))
    assert ours == inspect.iscoroutinefunction(_resolve(httpx, name))


def test_a_mock_of_the_async_client_awaits_like_httpx_s() -> None:
    from unittest import mock

    ours = mock.create_autospec(requestx.AsyncClient, instance=True)
    theirs = mock.create_autospec(httpx.AsyncClient, instance=True)
    for name in ("request", "get", "post", "delete"):
        assert isinstance(getattr(theirs, name), mock.AsyncMock)
        assert isinstance(getattr(ours, name), mock.AsyncMock), name


def test_help_shows_the_parameters() -> None:
    text = pydoc.render_doc(requestx.Client.get, renderer=pydoc.plaintext)
    for parameter in ("params", "headers", "cookies", "auth", "follow_redirects", "timeout"):
        assert f"{parameter}:" in text or f"{parameter}=" in text
    assert "kwargs" not in text


@pytest.mark.parametrize("method", ["get", "head", "options", "delete"])
def test_a_body_on_a_bodiless_method_is_a_type_error(method: str) -> None:
    # httpx raises TypeError here; a GET that silently carried the body would be data sent
    # somewhere the caller did not mean. Raised at the call, before any connection.
    with requestx.Client() as client, pytest.raises(TypeError, match="json"):
        getattr(client, method)("http://127.0.0.1:9/", json={"a": 1})
    with pytest.raises(TypeError, match="content"):
        getattr(requestx, method)("http://127.0.0.1:9/", content=b"x")


def test_a_misspelt_keyword_raises_naming_it() -> None:
    with requestx.Client() as client, pytest.raises(TypeError, match="timout"):
        client.get("http://127.0.0.1:9/", timout=3)  # type: ignore[call-arg]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="needs mypy")
def test_mypy_rejects_a_misspelt_keyword_in_a_users_script(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """\
            import requestx

            async def main() -> None:
                with requestx.Client() as client:
                    client.get("https://example.org/", timeout=3)
                    client.get("https://example.org/", timout=3)
                async with requestx.AsyncClient() as aclient:
                    await aclient.post("https://example.org/", json={"a": 1})
                    await aclient.get("https://example.org/", json={"a": 1})
                requestx.get("https://example.org/", params={"q": "x"}, follow_redirect=True)
            """
        )
    )
    # A checkout's requestx (an editable install) is not where mypy looks for installed
    # packages; an installed wheel is, and mypy refuses site-packages on MYPYPATH.
    package_root = Path(requestx.__file__).resolve().parent.parent
    env = dict(os.environ)
    if "site-packages" not in package_root.parts:
        env["MYPYPATH"] = str(package_root)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    # The three wrong calls, each at its own line, and nothing about the right ones.
    assert [line.split(":")[1] for line in errors] == ["6", "9", "10"], result.stdout
    assert '"timout"' in errors[0] and '"json"' in errors[1] and '"follow_redirect"' in errors[2]
