"""The cluster leader's journal ends a batch where a checkpoint was taken (`boundary`),
so the engine as encoded then is the log up to that batch; and the trim point."""

from __future__ import annotations

import asyncio

from beanpod.core.engine import Engine
from beanpod.durability.cluster.fence import Appended, Fence
from beanpod.durability.cluster.journal import EtcdJournal
from beanpod.durability.cluster.trim import trim_point
from beanpod.storage.framing import iter_frames


class GatedEtcd:
    """Commits every append once `gate` is open; keeps each batch's records."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.batches: list[list[bytes]] = []

    async def append(self, fence: Fence, key: bytes, batch: bytes) -> Appended:
        await self.gate.wait()
        self.batches.append([payload for _, payload in iter_frames(batch, 0)])
        return Appended(True)

    async def close(self) -> None:
        pass


async def batches_around_a_boundary() -> tuple[int, list[int]]:
    engine, etcd = Engine(), GatedEtcd()
    journal = EtcdJournal(engine, etcd, b"/p/", Fence(b"/p/leader", 1), 0, {},
                          lambda why: None)  # fmt: skip
    engine.journal = journal
    tube = engine.tube("default")
    engine.put(None, tube, 0, 0, 1000, b"a", 0)
    await asyncio.sleep(0.01)  # log/0 (a) is in flight
    engine.put(None, tube, 0, 0, 1000, b"b", 0)
    engine.put(None, tube, 0, 0, 1000, b"c", 0)
    boundary = journal.boundary()  # the engine now: a, b, c
    engine.put(None, tube, 0, 0, 1000, b"d", 0)
    etcd.gate.set()
    seq = await boundary
    await journal.settled()
    return seq, [len(batch) for batch in etcd.batches]


def test_a_boundary_ends_its_batch() -> None:
    seq, sizes = asyncio.run(batches_around_a_boundary())
    assert sizes == [1, 2, 1]  # d waited for the next batch although it was pending
    assert seq == 1  # log/1 ends with c


def test_the_trim_point_is_the_second_highest_checkpoint() -> None:
    assert trim_point([]) == -1
    assert trim_point([40]) == -1  # one node's checkpoint trims nothing
    assert trim_point([40, 90, 60]) == 60
    assert trim_point([90, 90, 10]) == 90
