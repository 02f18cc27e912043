"""The cluster's journal as the sessions see it (Commits): `appended` is a plain count,
read as often as wanted; every reply is handed to `hold`, which sends it at the end of
the turn when nothing is in flight and after the commit otherwise."""

from __future__ import annotations

import asyncio

from beanpod.core.engine import Engine
from beanpod.durability.cluster.fence import Appended, Fence
from beanpod.durability.cluster.journal import EtcdJournal
from tests.support.holder import FakeHolder


class Transport:
    def __init__(self) -> None:
        self.data: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.data.append(data)


class Session(FakeHolder):
    def __init__(self) -> None:
        super().__init__()
        self.transport = Transport()


class Etcd1:
    """Appends that commit when the test says so."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.txns = 0

    async def append(self, fence: Fence, key: bytes, batch: bytes) -> Appended:
        await self.go.wait()
        self.txns += 1
        return Appended(True)

    async def close(self) -> None:
        pass


def test_appended_is_a_count_and_replies_wait_for_the_records_in_flight() -> None:
    async def run() -> None:
        engine, etcd, lost = Engine(), Etcd1(), []
        journal = EtcdJournal(engine, etcd, b"/p/", Fence(b"/p/leader", 1), 1, {},
                              lost.append)  # fmt: skip
        assert journal.holds_every_reply()
        session = Session()
        journal.hold(session, b"idle\r\n")  # nothing in flight: sent after this turn
        assert session.held == 1
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert session.transport.data == [b"idle\r\n"] and session.held == 0
        job = engine.put(None, engine.tube("t"), 0, 0, 1000, b"x", 0)
        journal.record_put(job)
        assert journal.appended == journal.appended == 1  # reading changes nothing
        journal.hold(session, b"after\r\n")  # a reply of a batch that appended nothing
        await asyncio.sleep(0)
        assert session.transport.data == [b"idle\r\n"] and session.held == 1
        etcd.go.set()
        await journal.aclose()
        assert session.transport.data == [b"idle\r\n", b"after\r\n"] and session.held == 0
        assert (etcd.txns, journal.appended, lost) == (1, 1, [])

    asyncio.run(run())


def test_a_woken_reply_waits_for_the_put_recorded_after_it() -> None:
    """The engine serves a parked reserve before it records the put that woke it: the
    reply handed over first still waits for that put's commit."""

    async def run() -> None:
        engine, etcd = Engine(), Etcd1()
        journal = EtcdJournal(engine, etcd, b"/p/", Fence(b"/p/leader", 1), 1, {},
                              lambda why: None)  # fmt: skip
        worker = Session()
        journal.hold(worker, b"RESERVED 1 1\r\nx\r\n")  # the woken reserve's reply...
        journal.record_put(engine.put(None, engine.tube("t"), 0, 0, 1000, b"x", 0))  # ...its put
        for _ in range(3):
            await asyncio.sleep(0)
        assert worker.transport.data == [] and worker.held == 1
        etcd.go.set()
        await journal.aclose()
        assert worker.transport.data == [b"RESERVED 1 1\r\nx\r\n"] and etcd.txns == 1

    asyncio.run(run())
