"""In-process servers with a write-ahead log, an injectable FileIO and a settable clock."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from beanpod.server.app import App
from beanpod.storage.segments import FileIO
from tests.support.servers import InProcessServer
from tests.support.wire_client import RawClient


class FakeClock:
    manual = False  # a real clock as the server sees it (loop timers are armed)

    def __init__(self, now: int) -> None:
        self.ms = now

    def now(self) -> int:
        return self.ms


class WalServer(InProcessServer):
    def __init__(self, wal: Path, io: FileIO | None = None, clock: FakeClock | None = None,
                 **config: Any) -> None:  # fmt: skip
        super().__init__(binlog_dir=str(wal), **config)
        self.io = io
        self.clock = clock
        self.clients: list[RawClient] = []

    def start(self) -> WalServer:
        self._thread.start()
        self.app = app = self.call(App, self.config)
        app.wal_io = self.io
        if self.clock is not None:
            app.clock = self.clock  # type: ignore[assignment]
        try:
            addresses = self.run(app.start(install_signals=False))
        except BaseException:
            self.app = None
            self.stop()
            raise
        self.port = int(addresses[0].rsplit(":", 1)[1])
        return self

    def client(self) -> RawClient:
        client = RawClient(socket.create_connection(("127.0.0.1", self.port), timeout=10))
        self.clients.append(client)
        return client

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        super().stop()


def stats(client: RawClient, cmd: bytes) -> dict[str, str]:
    """A stats* reply as a dict of strings."""
    reply = client.cmd(cmd)
    assert reply.startswith(b"OK "), reply
    lines = reply.split(b"\r\n", 1)[1].decode().split("\n")
    return dict(line.split(": ", 1) for line in lines if ": " in line)
