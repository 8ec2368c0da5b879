"""Fixtures of the client tests (the suite's own are in tests/conftest.py).

client   a blocking `Client` with base_url set to the suite's server (`server`), closed
         after the test; a module that needs another configuration defines its own
"""

from __future__ import annotations

from typing import Iterator

import pytest

import requestx
from tests.servers import HypercornServer


@pytest.fixture
def client(server: HypercornServer) -> Iterator[requestx.Client]:
    with requestx.Client(base_url=server.url) as client:
        yield client
