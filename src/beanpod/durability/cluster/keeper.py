"""When a cluster's node writes a checkpoint, and telling the others: every `every`
batches past its last one, a checkpoint is encoded (on the loop, at once, from a state
that is the log up to a known seq), written to -b DIR off the loop, then published as
`/beanpod/<cluster>/ckpt/<node>` = {"seq", "http"}: the leader trims the log below the
seq two nodes hold (trim.py), and a node behind that point fetches a checkpoint from a
peer whose seq covers it, at the HTTP address published here (peers.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

from beanpod.durability.cluster import checkpoint
from beanpod.durability.cluster.etcd import Etcd, EtcdError

log = logging.getLogger("beanpod.cluster")


def checkpoint_key(prefix: bytes, node_id: str) -> bytes:
    return prefix + b"ckpt/" + node_id.encode()


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

    def due(self, seq: int) -> bool:
        return self.running is None and seq - max(self.last, self.tried) >= self.every

    def start(self, payload: list[bytes], seq: int | asyncio.Future[int]) -> None:
        """Write `payload` (encoded now, from a state that is the log up to `seq`; a
        leader's seq is known once the batch ending there has committed)."""
        self.running = asyncio.get_running_loop().create_task(self._write(payload, seq))

    async def _write(self, payload: list[bytes], covers: int | asyncio.Future[int]) -> None:
        started, seq = time.monotonic(), -1
        try:
            seq = covers if isinstance(covers, int) else await covers
            size = await asyncio.to_thread(checkpoint.write, self.directory, seq, payload)
        except (OSError, EtcdError) as exc:  # (EtcdError: the leader's journal failed)
            self.tried = seq  # the next try comes `every` batches later
            log.warning("cluster: checkpoint not written (%s); the old one stays", exc)
            return
        finally:
            self.running = None
        self.last = seq
        log.info("cluster: checkpoint of log/%d written: %.1f MB in %.2f s", seq, size / 1e6,
                 time.monotonic() - started)  # fmt: skip
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

    async def close(self) -> None:
        """Let a checkpoint being written finish (its file is renamed whole or not)."""
        if self.running is not None:
            await asyncio.shield(self.running)
