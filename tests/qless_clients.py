"""qless-py clients whose Redis connections are closed when the test ends. qless-py's
client sits in reference cycles: dropped, its sockets would wait for a garbage collection
and could warn there (an unclosed socket), in whichever test is running then."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


class QlessClients:
    def __init__(self) -> None:
        self.made: list[Any] = []

    def __call__(self, url: str, **options: Any) -> Any:
        import qless

        client = qless.Client(url, **options)
        self.made.append(client)
        return client

    def close(self) -> None:
        made, self.made = self.made, []
        for client in made:
            client.redis.connection_pool.disconnect()


@pytest.fixture
def qless_clients() -> Iterator[QlessClients]:
    clients = QlessClients()
    try:
        yield clients
    finally:
        clients.close()
