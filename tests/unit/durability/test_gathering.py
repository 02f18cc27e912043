"""After a batch commits, the leader waits (at most LINGER) for the clients it answered:
at depth 1 they come back one round trip later, and the next batch takes them all."""

from __future__ import annotations

import asyncio
import time

from beanpod.core.engine import Engine
from beanpod.durability.cluster import gathering
from beanpod.durability.cluster.fence import Appended, Fence
from beanpod.durability.cluster.gathering import Gathering
from beanpod.durability.cluster.journal import EtcdJournal
from tests.unit.durability.test_etcd_journal import Session


def test_wait_ends_when_the_target_is_held() -> None:
    async def run() -> list[int]:
        gathering_, loop, seen = Gathering(), asyncio.get_running_loop(), []
        loop.call_soon(gathering_.held, 1)  # short of the target: still waiting
        loop.call_soon(lambda: seen.append(1))
        loop.call_later(0.0001, gathering_.held, 2)
        loop.call_later(0.0001, lambda: seen.append(2))
        await gathering_.wait(2, 0)
        assert gathering_.arrived is None
        return seen

    assert asyncio.run(run()) == [1, 2]  # not before the second arrival


def test_wait_returns_at_once_when_enough_are_held_and_at_linger_otherwise() -> None:
    async def run() -> float:
        gathering_ = Gathering()
        await gathering_.wait(3, 3)
        assert gathering_.arrived is None  # nothing to wait for
        start = time.monotonic()
        await gathering_.wait(1, 0)  # nobody comes
        return time.monotonic() - start

    assert asyncio.run(run()) >= gathering.LINGER * 0.9


class CountingAppends:
    """Commits each append after half a millisecond; counts them."""

    def __init__(self) -> None:
        self.txns = 0

    async def append(self, fence: Fence, key: bytes, batch: bytes) -> Appended:
        await asyncio.sleep(0.0005)
        self.txns += 1
        return Appended(True)

    async def close(self) -> None:
        pass


def test_clients_answered_together_stay_in_one_batch() -> None:
    """Eight depth-1 clients, each sending its next put a moment after its reply (a
    round trip, some later than others): every batch after the first takes all eight."""

    async def run() -> tuple[int, int]:
        engine, etcd = Engine(), CountingAppends()
        journal = EtcdJournal(engine, etcd, b"/p/", Fence(b"/p/leader", 1), 1, {},
                              lambda why: None)  # fmt: skip
        tube, loop = engine.tube("t"), asyncio.get_running_loop()
        answered: asyncio.Queue[Session] = asyncio.Queue()

        def put(session: Session) -> None:
            journal.record_put(engine.put(None, tube, 0, 0, 1000, b"x", 0))
            journal.hold(session, b"INSERTED\r\n")
            loop.call_soon(answered.put_nowait, session)  # stands for the reply's arrival

        sessions = [Session() for _ in range(8)]
        for index, session in enumerate(sessions):  # the first puts arrive one by one
            loop.call_later(0.0001 * index, put, session)
        rounds = 5
        for _ in range(8 * rounds):
            session = await answered.get()
            while session.held:  # its reply not sent yet
                await asyncio.sleep(0)
            if len(session.transport.data) < rounds:  # comes back a little later
                loop.call_later(0.0001 * (id(session) % 3), put, session)
        await journal.aclose()
        return etcd.txns, sum(len(s.transport.data) for s in sessions)

    txns, replies = asyncio.run(run())
    assert replies == 8 * 5
    assert txns <= 5 + 2  # without the wait: the clients split into turns, ~2 batches a round
