"""Group commit with `-f 0`: the records of every connection in one loop turn share one
fsync, and no reply leaves before that fsync has finished."""

from __future__ import annotations

import asyncio
from pathlib import Path

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability.wal import Durability, WalSettings
from tests.support.faultio import FaultIO
from tests.support.holder import FakeHolder


class Transport:
    def __init__(self, io: FaultIO) -> None:
        self.io = io
        self.out: list[tuple[bytes, int]] = []  # (reply, fsyncs finished when it left)

    def write(self, data: bytes) -> None:
        self.out.append((data, self.io.fsyncs))

    def close(self) -> None:
        pass


class Session(FakeHolder):
    def __init__(self, io: FaultIO) -> None:
        super().__init__()
        self.transport = Transport(io)


async def one_turn_of_puts(wal_dir: Path, connections: int) -> tuple[int, list[Session]]:
    engine, io = Engine(MoveCheck()), FaultIO()
    wal = Durability(engine, WalSettings(wal_dir, fsync_ms=0), io)
    wal.open(1000)
    sessions = [Session(io) for _ in range(connections)]
    before = io.fsyncs
    for session in sessions:  # every connection's batch, all in this loop turn
        conn = engine.connect()
        job = engine.put(conn, conn.use, 0, 0, 60_000, b"body", 1000)
        wal.commit.hold(session, b"INSERTED %d\r\n" % job.id)  # type: ignore[arg-type]
    while any(s.held for s in sessions):
        await asyncio.sleep(0.001)
    fsyncs = io.fsyncs - before
    await wal.aclose()
    return fsyncs, sessions


def test_one_fsync_for_every_connection_of_a_turn_and_replies_after_it(tmp_path: Path) -> None:
    fsyncs, sessions = asyncio.run(one_turn_of_puts(tmp_path / "wal", 5))
    assert fsyncs == 1
    for i, session in enumerate(sessions, start=1):
        assert session.transport.out == [(b"INSERTED %d\r\n" % i, 1)]


async def settle_a_put(wal_dir: Path) -> tuple[int, int, list[tuple[bytes, int]]]:
    """A put, a held reply and a `settled()` future in one turn: (fsyncs finished when the
    future was done, fsyncs before the put, the held reply as it left)."""
    engine, io = Engine(MoveCheck()), FaultIO()
    wal = Durability(engine, WalSettings(wal_dir, fsync_ms=0), io)
    wal.open(1000)
    before = io.fsyncs
    conn = engine.connect()
    job = engine.put(conn, conn.use, 0, 0, 60_000, b"body", 1000)
    session = Session(io)
    wal.hold(session, b"INSERTED %d\r\n" % job.id)  # type: ignore[arg-type]
    settled = wal.settled()
    assert not settled.done()  # nothing is written before the turn ends
    await settled
    at_settle = io.fsyncs
    await wal.aclose()
    return at_settle, before, session.transport.out


def test_a_settled_future_is_done_with_the_replies_held_before_it(tmp_path: Path) -> None:
    """The HTTP admin path's wait: done after the fsync that covers the put, as the
    connection's held reply is, and not before."""
    at_settle, before, out = asyncio.run(settle_a_put(tmp_path / "wal"))
    assert at_settle == before + 1
    assert out == [(b"INSERTED 1\r\n", before + 1)]
