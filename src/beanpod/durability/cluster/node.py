"""One node of a cluster: its lease, its campaign for the leader key, the follower's
fold of the log, and the takeover (fold the rest, place the jobs, then journal to etcd).

Keys under /beanpod/<cluster>/: `leader` (JSON {"node", "address"}, plus "workq" and
"redis", the leader's other doors, when it serves them; on this node's lease; its create
revision fences every append) and `log/<seq>` (one batch of WAL records).
The fold is the restart code's (restore.Restorer): a follower folds each batch as it
arrives and places the jobs once, when it takes over, as a restart does after replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from beanpod.core.engine import Engine
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.cluster import checkpoint, peers, tuning
from beanpod.durability.cluster.appends import appends_for
from beanpod.durability.cluster.etcd import Etcd, EtcdError, KeyValue, b64, prefix_end, unb64
from beanpod.durability.cluster.fence import Fence
from beanpod.durability.cluster.journal import EtcdJournal, log_key
from beanpod.durability.cluster.keeper import Keeper
from beanpod.durability.cluster.trim import Trimmer
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
    # its other doors' HOST:PORT by name ("workq", "redis"): in the leader key beside
    # "address", so a follower's refusal on that door names the leader's own
    doors: dict[str, str] = field(default_factory=dict)
    lease_seconds: int = 2
    keepalive_every: float = 0.3  # several keep-alives per lease
    campaign_every: float = 0.2  # how often a follower tries the leader key
    margin: float = 0.3  # the lease counts as lost this long before etcd would expire it
    directory: Path | None = None  # -b DIR: this node's checkpoints (None: it keeps none)
    http: str | None = None  # HOST:PORT of its HTTP listener (peers fetch checkpoints there)
    token: str | None = None  # --http-token: the cluster's, sent to peers' listeners
    checkpoint_batches: int = tuning.CHECKPOINT_BATCHES
    trim_every: float = tuning.TRIM_EVERY
    defrag_every: float = tuning.DEFRAG_EVERY


class Behind(Exception):
    """The log's first batches were trimmed past this node's position (peers.py)."""


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
        # nodes start with different members: followers' watches and keep-alives spread
        # out, and the leader's journal moves itself to etcd's Raft leader
        self.etcd = Etcd(settings.endpoints, first=zlib.crc32(settings.node_id.encode()))
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
        self.loaded = False  # a checkpoint was looked for (and folded, if there was one)
        self.keeper = None if settings.directory is None else Keeper(
            self.etcd, self.prefix, settings.node_id, settings.http, settings.directory,
            settings.checkpoint_batches,
        )  # fmt: skip

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
                await self._load()
                await self._catch_up()
                break
            except Behind as exc:  # trimmed meanwhile: start again from a peer's
                return self.lost(str(exc))
            except peers.NoPeerCheckpoint as exc:  # etcd answers; the peers' copies do not
                log.warning("cluster: %s; trying again", exc)
                await asyncio.sleep(JOIN_RETRY_SECONDS)
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

    # ---- checkpoints ---------------------------------------------------------------------

    async def _load(self) -> None:
        """Start from a checkpoint: this node's own, or a peer's when the log was trimmed
        past it (or it has none), then fold the log past its seq."""
        if self.loaded:
            return
        settings, directory = self.settings, self.settings.directory
        kept = await peers.first_kept(self.etcd, self.prefix)
        snap = None if directory is None else checkpoint.read_local(directory)
        if snap is not None and checkpoint.seq_of(snap) + 1 < kept:
            snap.close()
            snap = None
        if snap is None and kept > 0:
            snap = await peers.fetch(self.etcd, self.prefix, settings.node_id, directory,
                                     kept - 1, settings.token)  # fmt: skip
        if snap is not None:
            self.position = await _drive(checkpoint.load(snap, self.restorer))
            log.info("cluster: checkpoint of log/%d loaded: %d jobs; folding the log after it",
                     self.position, len(self.restorer.jobs))  # fmt: skip
            self._drop_ledger()
        self.loaded = True
        if self.keeper is not None and snap is not None:
            self.keeper.last = self.position
            await self.keeper.publish()

    def _checkpoint_fold(self) -> None:
        """A follower's checkpoint: its fold as it is, the log up to `position`."""
        if self.keeper is not None and self.keeper.due(self.position) and not self.leading:
            restorer = self.restorer
            self.keeper.start(lambda: snapshot_payload.encode_folded(restorer), self.position)

    def _checkpoint_engine(self, seq: int) -> None:
        """A leader's checkpoint (after log/`seq` committed): its engine as it is, which
        is the log up to the batch its journal ends here."""
        journal = self.journal
        if self.keeper is None or journal is None or not self.keeper.due(seq):
            return
        engine = self.engine
        pauses = {tube.name: 0 for tube in engine.tube_list if tube.pause_until}
        states = {key: (0, value) for key, value in journal.state_values.items()}
        self.keeper.start(lambda: snapshot_payload.encode(engine, pauses, states),
                          journal.boundary())  # fmt: skip

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
            raise Behind(
                f"log/{seq} is the first batch kept, this node folded up to "
                f"log/{self.position}: restarting to take a peer's checkpoint"
            )
        self.restorer.fold(seq, iter_frames(kv.value, 0))
        self.position = seq
        self._drop_ledger()
        self._checkpoint_fold()

    def _drop_ledger(self) -> None:
        """What the fold keeps for a WAL's compaction ledger (jobs by segment, the
        checkpoint's runs of jobs), which a cluster never uses: it would hold every
        deleted job of a follower that runs for days."""
        restorer = self.restorer
        restorer.pins.clear()
        restorer.runs.clear()
        restorer.unpinned.clear()
        restorer.in_one_tube = None

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
            except Behind as exc:
                return self.lost(str(exc))
            except Exception as exc:  # etcd's or aiohttp's: the watch broke, read again
                log.warning("cluster: following the log again after: %r", exc)
            await asyncio.sleep(RETRY_SECONDS)

    # ---- campaigning and taking over -----------------------------------------------------

    async def _campaign(self) -> None:
        key = b64(self.leader_key)
        who = self.settings
        value = json.dumps({"node": who.node_id, "address": who.address, **who.doors})
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
        except (EtcdError, Behind) as exc:
            return self.lost(f"taking over: the log could not be read: {exc}")
        restored = self.restorer.finish(self.now())
        states = {key: state for key, (_, state) in restored.states.items()}
        fence = Fence(self.leader_key, revision)
        self.journal = EtcdJournal(
            self.engine,
            appends_for(self.etcd),
            self.prefix,
            fence,
            self.position + 1,
            states,
            self.lost,
        )
        self.journal.progress = self.progress
        self.journal.committed = self._checkpoint_engine
        trimmer = Trimmer(self.etcd, self.prefix, fence, self.settings.trim_every,
                          self.settings.defrag_every)  # fmt: skip
        self.tasks.append(self.loop.create_task(trimmer.run()))
        self.engine.keep_journal(self.journal)
        try:
            self.lead()
        except Exception as exc:  # a leader half taken over (no watchdog) must not serve
            log.exception("cluster: taking over failed")
            return self.lost(f"taking over failed: {exc!r}")
        self.leader = json.loads(value)
        self.watchdog()
        log.info("cluster %s: %s leads (fence %d): %d jobs, log up to %d, next id %d",
                 self.settings.name, self.settings.node_id, revision, restored.jobs,
                 self.position, restored.next_id)  # fmt: skip
        self.won.set()

    # ---- stopping ----------------------------------------------------------------------

    def before_exec(self) -> None:
        """The process is about to re-execute itself (stepping down): end what its new
        image could not (a checkpoint child it would never reap)."""
        if self.keeper is not None:
            self.keeper.end_child()

    async def aclose(self) -> None:
        """A clean stop: let the last batch commit, give the leader key up at once."""
        for task in [*self.tasks, self.follower]:
            if task is not None:
                task.cancel()
        if self.journal is not None:
            await self.journal.aclose()
            await self.journal.appends.close()
        if self.keeper is not None:
            await self.keeper.close()
        with contextlib.suppress(EtcdError):
            await self.etcd.revoke(self.lease)
        await self.etcd.close()


async def _drive(steps: Generator[int, None, int]) -> int:
    """Take a generator's steps, letting the loop run between them; its value."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return int(done.value)
        await asyncio.sleep(0)
