"""How an HTTP action is acknowledged like a protocol command: after engine work the
ticker is rearmed and the turn's events flushed (`App.rearm`), and the answer waits,
as a held protocol reply does, until the write-ahead log holds the turn's records (and,
with `-f 0`, has fsynced them)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from beanpod.server.app import App


class _Acknowledgement:
    """A stand-in session for GroupCommit.hold: its one 'reply' resolves a future."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.held = 0
        self.closed = False
        self.transport = self
        self.done = done

    def write(self, data: bytes) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def close(self) -> None:  # GroupCommit closes a transport only when asked to
        pass


async def settle(app: App) -> None:
    """Return once what the engine did so far is as durable as a protocol reply."""
    app.rearm()
    wal = app.wal
    if wal is None:
        return
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    wal.commit.hold(_Acknowledgement(done), b"")  # type: ignore[arg-type]
    await done
