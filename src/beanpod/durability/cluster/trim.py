"""The leader keeps etcd small: every `every` seconds it deletes the log's batches below
the seq that at least two nodes' published checkpoints cover, in one transaction fenced
on its leader key like an append (a deposed leader deletes nothing), recording the first
seq kept as `trim`; then it compacts etcd to that transaction's revision (deleted keys
free nothing until then). At most every `defrag_every` seconds after a trim it
defragments the members one at a time (each stops answering meanwhile), so the database
file shrinks too. The log key `trim` names stays: a node whose position is below it
sees the gap and takes a peer's checkpoint (peers.py).
"""

from __future__ import annotations

import asyncio
import logging
import time

from beanpod.durability.cluster.etcd import Etcd, EtcdError, b64
from beanpod.durability.cluster.fence import Fence
from beanpod.durability.cluster.journal import log_key
from beanpod.durability.cluster.peers import first_kept, published, trim_key

log = logging.getLogger("beanpod.cluster")

HOLDERS = 2  # checkpoints that must cover a batch before it goes


def trim_point(seqs: list[int]) -> int:
    """The highest seq at least HOLDERS checkpoints cover (-1: none)."""
    ranked = sorted(seqs, reverse=True)
    return ranked[HOLDERS - 1] if len(ranked) >= HOLDERS else -1


class Trimmer:
    def __init__(self, etcd: Etcd, prefix: bytes, fence: Fence, every: float,
                 defrag_every: float) -> None:  # fmt: skip
        self.etcd = etcd
        self.prefix = prefix
        self.fence = fence
        self.every = every
        self.defrag_every = defrag_every  # 0: never
        self.kept = -1  # the first seq kept (-1: not read yet)
        self.defragmented = time.monotonic()

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            try:
                await self.trim()
            except EtcdError as exc:
                log.warning("cluster: trimming the log: %s", exc)

    async def trim(self) -> None:
        if self.kept < 0:
            self.kept = await first_kept(self.etcd, self.prefix)
        seqs = [info.get("seq") for info in (await published(self.etcd, self.prefix)).values()]
        point = trim_point([seq for seq in seqs if isinstance(seq, int)])
        if point <= self.kept:
            return
        revision = await self._delete_below(point)
        if revision is None:
            return
        await self.etcd.compact(revision)
        log.info("cluster: log trimmed below log/%d, etcd compacted to revision %d", point,
                 revision)  # fmt: skip
        if self.defrag_every and time.monotonic() - self.defragmented >= self.defrag_every:
            await self.defragment()

    async def _delete_below(self, point: int) -> int | None:
        """Delete log/0 .. log/point-1 and record `trim` = point, fenced; the revision
        (None: fenced out, this node no longer leads: its journal steps down)."""
        below = {"key": b64(log_key(self.prefix, 0)), "range_end": b64(log_key(self.prefix, point))}
        delete = {"request_delete_range": below}
        record = {"request_put": {"key": b64(trim_key(self.prefix)), "value": b64(str(point))}}
        ok, answer = await self.etcd.txn([self.fence.leads()], [delete, record])
        if not ok:
            return None
        self.kept = point
        return int(answer["header"]["revision"])

    async def defragment(self) -> None:
        """Each member in turn (a member defragmenting answers nothing meanwhile)."""
        self.defragmented = time.monotonic()
        for endpoint in self.etcd.endpoints:
            started = time.monotonic()
            await self.etcd.defragment(endpoint)
            log.info("cluster: etcd member %s defragmented in %.2f s", endpoint,
                     time.monotonic() - started)  # fmt: skip
