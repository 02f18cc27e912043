"""Fixtures for the Workq socket tests: an in-process server with both listeners."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Iterator

import pytest

from beanpod.client.workq import Client
from tests.support.servers import InProcessServer


class WorkqServer(InProcessServer):
    @property
    def workq_port(self) -> int:
        assert self.app is not None
        return int(self.app.workq_addresses[0].rsplit(":", 1)[1])

    def client(self) -> Client:
        return Client(("127.0.0.1", self.workq_port), timeout=10)

    def raw(self) -> RawWorkq:
        return RawWorkq(socket.create_connection(("127.0.0.1", self.workq_port), timeout=10))


class RawWorkq:
    """Send bytes, read exactly what is expected (Workq replies are self-framing only
    with knowledge of the command, so tests say how many bytes/lines they expect)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def expect(self, data: bytes, reply: bytes) -> None:
        self.send(data)
        assert self.read(len(reply)) == reply

    def closed_by_server(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def close(self) -> None:
        self.sock.close()


def new_id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def wq_server() -> Iterator[WorkqServer]:
    srv = WorkqServer(workq_port=0)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def wq(wq_server: WorkqServer) -> Iterator[Callable[[], Client]]:
    clients: list[Client] = []

    def make() -> Client:
        client = wq_server.client()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()
