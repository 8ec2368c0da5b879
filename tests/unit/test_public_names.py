"""The public names: `requestx.__all__` lists exactly what the package offers, and they are
httpx's, less the few requestx does not provide, plus its own additions."""

from __future__ import annotations

import inspect
import pickle
import pydoc
import traceback

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


def test_public_classes_and_functions_print_as_requestx() -> None:
    # As httpx's print as httpx.X: tracebacks, reprs and help() name the package a user
    # imports, not the private module that defines the name.
    for name in requestx.__all__:
        public = getattr(requestx, name)
        if isinstance(public, type) or callable(public):
            assert public.__module__ == "requestx", name
    assert repr(requestx.ConnectError) == "<class 'requestx.ConnectError'>"
    error = requestx.ConnectError("refused")
    assert traceback.format_exception_only(error) == ["requestx.ConnectError: refused\n"]
    assert "requestx.Client" in pydoc.render_doc(requestx.Client)


def test_public_classes_still_pickle_by_their_public_name() -> None:
    error = pickle.loads(pickle.dumps(requestx.ReadTimeout("slow")))
    assert type(error) is requestx.ReadTimeout and str(error) == "slow"
    url = pickle.loads(pickle.dumps(requestx.URL("http://h/?x=1")))
    assert url == requestx.URL("http://h/?x=1")
