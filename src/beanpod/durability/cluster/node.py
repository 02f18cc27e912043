"""One node of a cluster: its lease, its campaign for the leader key, the follower's
fold of the log, and the takeover (fold the rest, place the jobs, then journal to etcd).

Keys under /beanpod/<cluster>/: `leader` (JSON {"node", "address"}, on this node's lease;
its create revision fences every append) and `log/<seq>` (one batch of WAL records).
The fold is the restart code's (restore.Restorer): a follower folds each batch as it
arrives and places the jobs once, when it takes over, as a restart does after replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from beanpod.core.engine import Engine
from beanpod.durability.cluster.etcd import Etcd, EtcdError, KeyValue, b64, prefix_end, unb64
from beanpod.durability.cluster.journal import EtcdJournal, Fence, log_key
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.restore import Restorer
from beanpod.storage.framing import FRAME_SIZE, iter_frames

log = logging.getLogger("beanpod.cluster")

PAGE = 8  # batches per range read (each up to 1 MiB)
RETRY_SECONDS = 0.2  # after the log's watch broke
JOIN_RETRY_SECONDS = 1.0  # while etcd cannot be reached at start-up


@dataclass(frozen=True)
class ClusterSettings:
    endpoints: tuple[str, ...]  # etcd client URLs
    name: str  # the cluster: its keys are under /beanpod/<name>/
    node_id: str
    address: str  # HOST:PORT where this node serves clients (shown by GET /leader)
    lease_seconds: int = 2
    keepalive_every: float = 0.3  # several keep-alives per lease
    campaign_every: float = 0.2  # how often a follower tries the leader key
    margin: float = 0.3  # the lease counts as lost this long before etcd would expire it


class ClusterNode:
    """A follower until it wins the leader key; then `journal` is the engine's journal
    and `lead()` is called. `lost(why)` is called once leadership may be gone: the node
    must stop serving."""

    def __init__(self, engine: Engine, settings: ClusterSettings, now: Callable[[], int],
                 lead: Callable[[], None], lost: Callable[[str], None]) -> None:  # fmt: skip
        self.engine = engine
        self.now = now  # the server's clock (ms): placing delayed jobs on takeover
        self.lead = lead  # called once this node leads, in the turn its journal takes over
        self.settings = settings
        self.lost = lost
        self.etcd = Etcd(settings.endpoints)
        self.prefix = f"/beanpod/{settings.name}/".encode()
        self.leader_key = self.prefix + b"leader"
        self.log_prefix = self.prefix + b"log/"
        self.restorer = Restorer(engine, FRAME_SIZE)
        self.position = -1  # the last batch folded
        self.lease = 0
        # time.monotonic() until which the lease surely holds (not the loop's time: uvloop
        # caches it, and a node woken from SIGSTOP must see the time now)
        self.valid_until = 0.0
        self.journal: EtcdJournal | None = None
        self.leader: dict[str, str] | None = None  # the leader key's value, as last seen
        self.progress = ReplayProgress()  # (a follower folds as it goes: no replay to show)
        self.tasks: list[asyncio.Task[None]] = []
        self.follower: asyncio.Task[None] | None = None
        self.won = asyncio.Event()
        self.loop = asyncio.get_running_loop()

    @property
    def leading(self) -> bool:
        return self.journal is not None

    def lease_valid(self) -> bool:
        """On this node's own monotonic clock: may the lease still be held?"""
        return time.monotonic() < self.valid_until

    # ---- start: lease, catch up, follow, campaign -----------------------------------------

    async def start(self) -> None:
        """Take a lease and fold the log so far, waiting while no etcd member answers
        (a node restarting after stepping down may find etcd without its quorum)."""
        while True:
            try:
                await self._grant()
                await self._catch_up()
                break
            except EtcdError as exc:
                log.warning("cluster: etcd not usable yet (%s); trying again", exc)
                await asyncio.sleep(JOIN_RETRY_SECONDS)
        self.follower = self.loop.create_task(self._follow())
        self.tasks += [
            self.loop.create_task(self._keep_alive()),
            self.loop.create_task(self._campaign()),
        ]

    async def _grant(self) -> None:
        sent = time.monotonic()
        self.lease = await self.etcd.grant(self.settings.lease_seconds)
        self.valid_until = sent + self.settings.lease_seconds - self.settings.margin

    async def _keep_alive(self) -> None:
        every = self.settings.keepalive_every
        while True:
            await asyncio.sleep(every)
            sent = time.monotonic()
            try:
                ttl = await self.etcd.keepalive(self.lease)
                if ttl <= 0 and not self.leading:
                    await self._grant()  # a follower's lease ran out: campaign on a new one
            except EtcdError as exc:
                log.warning("cluster: lease keep-alive failed: %s", exc)
                continue
            if ttl > 0:
                self.valid_until = max(self.valid_until, sent + ttl - self.settings.margin)
            elif self.leading:
                return self.lost("the lease expired in etcd")

    def watchdog(self) -> None:
        """On the leader: step down once the lease may have run out on this node's clock."""
        if not self.lease_valid():
            self.lost("the lease may have run out (no keep-alive acknowledged in time)")
            return
        self.loop.call_later(self.valid_until - time.monotonic(), self.watchdog)

    # ---- following -----------------------------------------------------------------------

    async def _catch_up(self) -> int:
        """Fold every batch past `position`; return the revision the reads saw."""
        end = prefix_end(self.log_prefix)
        while True:
            kvs, more, revision = await self.etcd.range(
                log_key(self.prefix, self.position + 1), end, PAGE
            )
            for kv in kvs:
                self._fold(kv)
            if not more:
                return revision

    def _fold(self, kv: KeyValue) -> None:
        seq = int(kv.key[len(self.log_prefix) :])
        if seq <= self.position:
            return  # folded already (a watch replays from the revision read)
        if seq != self.position + 1:
            raise EtcdError(f"log/{seq} arrived before log/{self.position + 1}")
        self.restorer.fold(seq, iter_frames(kv.value, 0))
        self.position = seq

    async def _follow(self) -> None:
        """Fold batches as they are appended: a watch from the position (re-read after any
        break, so nothing is skipped)."""
        end = prefix_end(self.log_prefix)
        while True:
            try:
                revision = await self._catch_up()
                async for kvs in self.etcd.watch(self.log_prefix, end, revision + 1):
                    for kv in kvs:
                        self._fold(kv)
            except Exception as exc:  # etcd's or aiohttp's: the watch broke, read again
                log.warning("cluster: following the log again after: %r", exc)
            await asyncio.sleep(RETRY_SECONDS)

    # ---- campaigning and taking over -----------------------------------------------------

    async def _campaign(self) -> None:
        key = b64(self.leader_key)
        value = json.dumps({"node": self.settings.node_id, "address": self.settings.address})
        compare = [{"key": key, "target": "CREATE", "create_revision": 0}]
        put = [{"request_put": {"key": key, "value": b64(value), "lease": self.lease}}]
        seen = [{"request_range": {"key": key}}]
        while not self.leading:
            try:
                put[0]["request_put"]["lease"] = self.lease
                won, answer = await self.etcd.txn(compare, put, seen)
            except EtcdError as exc:
                log.warning("cluster: campaign: %s", exc)
                won = False
            else:
                if won and self.lease_valid():
                    await self._take_over(int(answer["header"]["revision"]), value)
                    return
                self._saw_leader(answer)
            await asyncio.sleep(self.settings.campaign_every)

    def _saw_leader(self, answer: dict[str, Any]) -> None:
        """Remember who leads (from the failed campaign's read of the key), for /leader."""
        for response in answer.get("responses", []):
            for raw in response.get("response_range", {}).get("kvs", []):
                try:
                    self.leader = json.loads(unb64(raw.get("value")))
                except ValueError:
                    self.leader = None

    async def _take_over(self, revision: int, value: str) -> None:
        """Fold what the old leader appended, place the jobs, then journal to etcd."""
        if self.follower is not None:
            self.follower.cancel()
        try:
            await self._catch_up()
        except EtcdError as exc:
            return self.lost(f"taking over: the log could not be read: {exc}")
        restored = self.restorer.finish(self.now())
        states = {key: state for key, (_, state) in restored.states.items()}
        fence = Fence(self.leader_key, revision)
        self.journal = EtcdJournal(
            self.engine, self.etcd, self.prefix, fence, self.position + 1, states, self.lost
        )
        self.journal.progress = self.progress
        self.engine.keep_journal(self.journal)
        self.lead()
        self.leader = json.loads(value)
        self.watchdog()
        log.info("cluster %s: %s leads (fence %d): %d jobs, log up to %d, next id %d",
                 self.settings.name, self.settings.node_id, revision, restored.jobs,
                 self.position, restored.next_id)  # fmt: skip
        self.won.set()

    # ---- stopping ----------------------------------------------------------------------

    async def aclose(self) -> None:
        """A clean stop: let the last batch commit, give the leader key up at once."""
        for task in [*self.tasks, self.follower]:
            if task is not None:
                task.cancel()
        if self.journal is not None:
            await self.journal.aclose()
        with contextlib.suppress(EtcdError):
            await self.etcd.revoke(self.lease)
        await self.etcd.close()
