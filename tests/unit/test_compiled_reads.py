"""The compiled steps (`requestx/*.pyx`) read private attributes of Python classes: a client's
`_plan`, a request's `_content`, a URL's `_host_entry_cache`, and calls such as
`client._finish_plain`. Cython cannot check those at build time (the classes are Python's), so a
rename on the Python side would break only when a request reached that line.

This test is the declaration. Every `name._attribute` in the compiled sources has a receiver
whose classes are listed in RECEIVERS; each attribute must exist on real instances of those
classes. A new read with an unlisted receiver, or a renamed attribute, fails here, without a
server.
"""

from __future__ import annotations

import re

import pytest

import requestx
from tests.support.paths import ROOT

COMPILED = sorted((ROOT / "requestx").glob("*.pyx"))
# The variable names the compiled steps give objects of each class (modules named in
# docstrings, such as `_transports._enforce_http_url`, are not reads).
RECEIVERS: dict[str, tuple[str, ...]] = {
    "client": ("Client", "AsyncClient"),
    "transport": ("HTTPTransport",),  # blocking: perform, send_plain
    "request": ("Request",),
    "response": ("Response",),
    "headers": ("Headers",),
    "url": ("URL",),
    "merged_url": ("URL",),
    # `self` of the client methods compiled in _hotpath.pyx: each belongs to one of the two
    # classes, so an attribute one of them has is enough (ANY_OF).
    "method_self": ("Client", "AsyncClient"),
}
ANY_OF = {"method_self"}
MODULES = {"_transports", "_core", "_client", "_models", "_urls", "_aio"}
# Objects of `_core`'s own cdef classes (an `Engine`): Cython checks what is read of them.
CDEF_OBJECTS = {"lane", "engine"}


def _instances(cls_name: str) -> list[object]:
    """Real instances of `cls_name`, made through the public API."""
    if cls_name == "Client":
        client = requestx.Client()
        client.close()
        return [client]
    if cls_name == "AsyncClient":
        return [requestx.AsyncClient()]
    if cls_name in ("HTTPTransport", "AsyncHTTPTransport"):
        return [getattr(requestx, cls_name)()]
    if cls_name == "Request":
        return [
            requestx.Request("GET", "http://example.org/"),
            requestx.Request("POST", "http://example.org/", json={"a": 1}),
        ]
    if cls_name == "Response":
        return [requestx.Response(200, content=b"x")]
    if cls_name == "Headers":
        return [requestx.Headers({"a": "1"})]
    if cls_name == "URL":
        return [requestx.URL("http://u:p@example.org/x?y=1")]
    raise AssertionError(cls_name)


def _reads() -> dict[tuple[str, str], list[str]]:
    """(receiver, attribute) -> where it is read, for every private attribute read."""
    found: dict[tuple[str, str], list[str]] = {}
    pattern = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\.(_[a-z][a-z0-9_]*)\b")
    for path in COMPILED:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for receiver, attribute in pattern.findall(line):
                if receiver == "self" and path.name == "_hotpath.pyx":
                    receiver = "method_self"  # client_get, async_client_get: client methods
                if receiver in MODULES or receiver in CDEF_OBJECTS or receiver == "self":
                    continue
                where = f"{path.relative_to(ROOT)}:{number}"
                found.setdefault((receiver, attribute), []).append(where)
    return found


def test_the_compiled_sources_are_read() -> None:
    names = {path.name for path in COMPILED}
    assert {"_core.pyx", "_hotpath.pyx", "_default_headers.pyx"} <= names
    reads = _reads()
    # The plan and the hand-offs, at least, are among what the scan sees.
    assert ("client", "_plan") in reads and ("transport", "_perform_failed") in reads


def test_every_receiver_is_declared() -> None:
    unknown = {
        receiver: where
        for (receiver, _), where in _reads().items()
        if receiver not in RECEIVERS and receiver[0].islower()
    }
    assert not unknown, f"add these receivers' classes to RECEIVERS: {unknown}"


def _missing(reads: dict[tuple[str, str], list[str]], receiver: str) -> list[str]:
    """The reads by `receiver` that some instance of its classes lacks."""
    missing: set[str] = set()
    for (name, attribute), where in reads.items():
        if name != receiver:
            continue
        lacking = [
            cls_name
            for cls_name in RECEIVERS[receiver]
            if not all(hasattr(instance, attribute) for instance in _instances(cls_name))
        ]
        if receiver in ANY_OF and len(lacking) < len(RECEIVERS[receiver]):
            continue
        missing.update(
            f"{cls_name}.{attribute} (read at {', '.join(where)})" for cls_name in lacking
        )
    return sorted(missing)


@pytest.mark.parametrize("receiver", sorted(RECEIVERS))
def test_every_private_attribute_read_exists(receiver: str) -> None:
    missing = _missing(_reads(), receiver)
    assert not missing, "the compiled steps read attributes that do not exist: " + "; ".join(
        missing
    )


def test_a_renamed_attribute_would_be_seen() -> None:
    """The check itself: a read of an attribute the class does not have is reported, with
    where it was read."""
    reads = {("client", "_finish_plain"): ["a.pyx:1"], ("client", "_finish_plan"): ["a.pyx:2"]}
    assert _missing(reads, "client") == [
        "AsyncClient._finish_plan (read at a.pyx:2)",
        "Client._finish_plan (read at a.pyx:2)",
    ]
