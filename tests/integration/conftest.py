from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.servers import InProcessServer
from tests.support.wire_client import RawClient

# A sample application's own test suite, run by test_testing_plugin.py through pytester.
collect_ignore = ["testing_sample"]


@pytest.fixture
def server() -> Iterator[InProcessServer]:
    srv = InProcessServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def connect(server: InProcessServer) -> Iterator[Callable[[], RawClient]]:
    clients: list[RawClient] = []

    def make() -> RawClient:
        client = RawClient(server.connect())
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
