"""The public names: `requestx.__all__` lists exactly what the package offers, and they are
httpx's, less the few requestx does not provide, plus its own additions."""

from __future__ import annotations

import inspect

import httpx

import requestx
from tests.support.public_names import REQUESTX_ONLY_NAMES

# httpx names requestx does not provide: `main`, httpx's command line (its `cli` extra).
# Keeping the list here makes adding one of them, or losing another, a test failure to look at.
NOT_PROVIDED = {"main"}


def test_all_is_exactly_the_public_names() -> None:
    public = {
        name
        for name in dir(requestx)
        if not name.startswith("_") and not inspect.ismodule(getattr(requestx, name))
    }
    dunder = {"__version__", "__title__", "__description__"}
    assert set(requestx.__all__) - dunder == public
    assert len(requestx.__all__) == len(set(requestx.__all__))


def test_all_is_httpx_all_minus_what_is_not_provided() -> None:
    assert set(httpx.__all__) - set(requestx.__all__) == NOT_PROVIDED
    assert set(requestx.__all__) <= set(httpx.__all__) | REQUESTX_ONLY_NAMES
