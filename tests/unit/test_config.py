"""Timeout, Limits, Proxy and the defaults: differential tests against httpx."""

from __future__ import annotations

import itertools
import typing

import httpx
import pytest

from requestx._config import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_REDIRECTS,
    DEFAULT_TIMEOUT_CONFIG,
    UNSET,
    Limits,
    Proxy,
    Timeout,
)

# Every combination of "not passed", None and a number for the default and the four
# phases: 3**5 = 243 constructions, each checked against httpx.
_CHOICES: list[typing.Any] = [UNSET, None, 2.5]


def _call(cls: typing.Any, default: typing.Any, phases: dict[str, typing.Any]) -> typing.Any:
    kwargs = {name: value for name, value in phases.items() if value is not UNSET}
    args = () if default is UNSET else (default,)
    try:
        timeout = cls(*args, **kwargs)
    except ValueError:
        return "ValueError"
    return (timeout.as_dict(), repr(timeout).replace("requestx.", ""))


@pytest.mark.parametrize("default", _CHOICES)
def test_timeout_construction_matches_httpx(default: typing.Any) -> None:
    for connect, read, write, pool in itertools.product(_CHOICES, repeat=4):
        phases = {"connect": connect, "read": read, "write": write, "pool": pool}
        assert _call(Timeout, default, phases) == _call(httpx.Timeout, default, phases), phases


@pytest.mark.parametrize(
    "value",
    [(1.0, 2.0), (1.0, 2.0, 3.0), (1.0, 2.0, 3.0, 4.0), (None, None, None, None), (1, None)],
)
def test_timeout_tuples_match_httpx(value: typing.Any) -> None:
    ours, theirs = Timeout(value), httpx.Timeout(value)
    assert ours.as_dict() == theirs.as_dict()
    assert repr(ours) == repr(theirs)


def test_timeout_requires_a_default_or_all_four() -> None:
    with pytest.raises(ValueError):
        Timeout()
    with pytest.raises(ValueError):
        Timeout(connect=1.0)
    assert Timeout(connect=1, read=2, write=3, pool=4).as_dict() == {
        "connect": 1,
        "read": 2,
        "write": 3,
        "pool": 4,
    }


def test_timeout_from_timeout_and_equality() -> None:
    original = Timeout(5.0, connect=1.0)
    assert Timeout(original) == original
    assert Timeout(original) is not original
    assert Timeout(5.0) != Timeout(5.0, pool=None)
    assert Timeout(5.0) != 5.0
    assert Timeout(None) == Timeout(None)
    with pytest.raises(TypeError):
        Timeout(original, read=2.0)
    with pytest.raises(TypeError):
        hash(Timeout(1.0))


def test_timeout_repr() -> None:
    assert repr(Timeout(5.0)) == "Timeout(timeout=5.0)"
    assert repr(Timeout(None)) == "Timeout(timeout=None)"
    assert repr(Timeout(5.0, read=1.0)) == "Timeout(connect=5.0, read=1.0, write=5.0, pool=5.0)"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"max_connections": 10},
        {"max_keepalive_connections": 3, "keepalive_expiry": None},
        {"max_connections": 1, "max_keepalive_connections": 1, "keepalive_expiry": 0.5},
    ],
)
def test_limits_match_httpx(kwargs: dict[str, typing.Any]) -> None:
    ours, theirs = Limits(**kwargs), httpx.Limits(**kwargs)
    assert repr(ours) == repr(theirs)
    assert (ours.max_connections, ours.max_keepalive_connections, ours.keepalive_expiry) == (
        theirs.max_connections,
        theirs.max_keepalive_connections,
        theirs.keepalive_expiry,
    )
    assert ours == Limits(**kwargs)
    assert ours != Limits(max_connections=12345)
    assert ours != theirs  # different classes never compare equal


def test_limits_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Limits(10)  # type: ignore[call-arg]


def test_defaults_match_httpx() -> None:
    from httpx._config import DEFAULT_LIMITS as HTTPX_LIMITS
    from httpx._config import DEFAULT_MAX_REDIRECTS as HTTPX_MAX_REDIRECTS
    from httpx._config import DEFAULT_TIMEOUT_CONFIG as HTTPX_TIMEOUT

    assert DEFAULT_TIMEOUT_CONFIG.as_dict() == HTTPX_TIMEOUT.as_dict()
    assert repr(DEFAULT_LIMITS) == repr(HTTPX_LIMITS)
    assert DEFAULT_MAX_REDIRECTS == HTTPX_MAX_REDIRECTS == 20
    expected = Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
    assert expected == DEFAULT_LIMITS


@pytest.mark.parametrize(
    ("url", "kwargs"),
    [
        ("http://proxy.local:3128", {}),
        ("https://user:secret@proxy.local", {}),
        ("socks5://proxy.local:1080", {"auth": ("a", "b")}),
        ("http://proxy.local", {"headers": {"X-Proxy": "1"}}),
    ],
)
def test_proxy_matches_httpx(url: str, kwargs: dict[str, typing.Any]) -> None:
    ours, theirs = Proxy(url, **kwargs), httpx.Proxy(url, **kwargs)
    assert repr(ours) == repr(theirs)
    assert str(ours.url) == str(theirs.url)
    assert ours.auth == theirs.auth
    assert ours.raw_auth == theirs.raw_auth
    assert ours.headers.raw == theirs.headers.raw


def test_proxy_rejects_unknown_schemes() -> None:
    with pytest.raises(ValueError):
        Proxy("ftp://proxy.local")
