"""When a cluster's node writes a checkpoint, and telling the others: every `every`
batches past its last one, a checkpoint of the state as it is then (the log up to a
known seq) is encoded and written to -b DIR by a forked child (forked.py), then
published as `/beanpod/<cluster>/ckpt/<node>` = {"seq", "http"}: the leader trims the
log below the seq two nodes hold (trim.py), and a node behind that point fetches a
checkpoint from a peer whose seq covers it, at the HTTP address published here
(peers.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

from beanpod.durability.cluster import forked
from beanpod.durability.cluster.etcd import Etcd, EtcdError

log = logging.getLogger("beanpod.cluster")


def checkpoint_key(prefix: bytes, node_id: str) -> bytes:
    return prefix + b"ckpt/" + node_id.encode()


def _retrieved(future: asyncio.Future[int]) -> None:
    if not future.cancelled():
        future.exception()


class Keeper:
    """A node's checkpoints: one written at a time, each published once durable."""

    def __init__(self, etcd: Etcd, prefix: bytes, node_id: str, http: str | None,
                 directory: Path, every: int) -> None:  # fmt: skip
        self.etcd = etcd
        self.key = checkpoint_key(prefix, node_id)
        self.http = http  # HOST:PORT where peers fetch it (None: no HTTP listener)
        self.directory = directory
        self.every = every
        self.last = -1  # the seq of the latest durable checkpoint
        self.tried = -1  # the seq of the latest checkpoint that failed
        self.running: asyncio.Task[None] | None = None
        self.child: forked.Forked | None = None  # while `running`

    def due(self, seq: int) -> bool:
        return self.running is None and seq - max(self.last, self.tried) >= self.every

    def start(self, encode: Callable[[], list[bytes]], seq: int | asyncio.Future[int]) -> None:
        """Write what `encode` makes of the state as it is now, the log up to `seq` (a
        leader's is known once the batch ending there has committed): encoded and
        written by a forked child (forked.py), the loop pays for the fork only."""
        started = time.perf_counter()
        try:
            child = forked.fork(encode, self.directory)
        except OSError as exc:  # (no memory or processes left for a fork)
            if isinstance(seq, int):
                self.tried = seq
            else:  # nobody awaits the boundary now: its failure (if any) is retrieved here
                self.tried = max(self.last, self.tried) + self.every
                seq.add_done_callback(_retrieved)
            log.warning("cluster: checkpoint not started (%s); the old one stays", exc)
            return
        forking = time.perf_counter() - started  # what the loop paid
        self.child = child
        self.running = asyncio.get_running_loop().create_task(self._write(child, seq, forking))

    async def _write(self, child: forked.Forked, covers: int | asyncio.Future[int],
                     forking: float) -> None:  # fmt: skip
        started, seq = time.monotonic(), -1
        try:
            try:
                seq = covers if isinstance(covers, int) else await covers
                child.covers(seq)
            finally:
                size = await child.result()  # (abandoned when no seq came: 0)
        except (OSError, EtcdError) as exc:  # (EtcdError: the leader's journal failed)
            self.tried = seq  # the next try comes `every` batches later
            log.warning("cluster: checkpoint not written (%s); the old one stays", exc)
            return
        finally:
            self.running = self.child = None
        if not size:
            return
        self.last = seq
        log.info("cluster: checkpoint of log/%d written: %.1f MB in %.2f s (the fork took "
                 "%.1f ms)", seq, size / 1e6, time.monotonic() - started,
                 forking * 1000)  # fmt: skip
        await self.publish()

    async def publish(self) -> None:
        """Tell the others (the next checkpoint tells them again if this fails)."""
        if self.last < 0:
            return
        value = json.dumps({"seq": self.last, "http": self.http}).encode()
        try:
            await self.etcd.put(self.key, value)
        except EtcdError as exc:
            log.warning("cluster: checkpoint of log/%d not published: %s", self.last, exc)

    def end_child(self) -> None:
        """Before a re-exec: a checkpoint being written is given up, its child reaped."""
        if self.child is not None:
            self.child.end()

    async def close(self) -> None:
        """Let a checkpoint being written finish (its file is renamed whole or not)."""
        if self.running is not None:
            await asyncio.shield(self.running)
