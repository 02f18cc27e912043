"""A node whose position is below the log's trim point cannot fold from etcd: it takes
the checkpoint of a peer whose published seq covers the point (keeper.py publishes
them), from that peer's HTTP listener (`GET /cluster/checkpoint`, with the cluster's
`--http-token` when one is set: a checkpoint holds every job's body), streamed into
its own -b DIR, checks its checksums and seq, and keeps it there.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import aiohttp

from beanpod.durability.cluster import checkpoint
from beanpod.durability.cluster.etcd import Etcd, EtcdError, prefix_end
from beanpod.storage.snapshot import Snapshot, SnapshotError

log = logging.getLogger("beanpod.cluster")

PATH = "/cluster/checkpoint"
FETCH_SECONDS = 120.0  # a checkpoint of millions of jobs is hundreds of MB
CHUNK = 1 << 20  # bytes written at a time while downloading


def trim_key(prefix: bytes) -> bytes:
    """`trim`: the first log seq kept (the leader deletes the batches before it)."""
    return prefix + b"trim"


class NoPeerCheckpoint(EtcdError):
    """No peer gave a checkpoint this node could use (none published far enough, none
    reachable, or no room to keep it: the reasons are in the message)."""


async def first_kept(etcd: Etcd, prefix: bytes) -> int:
    kvs, _, _ = await etcd.range(trim_key(prefix))
    return int(kvs[0].value) if kvs else 0


async def published(etcd: Etcd, prefix: bytes) -> dict[str, dict[str, object]]:
    """Every node's published checkpoint: node -> {"seq", "http"}."""
    start = prefix + b"ckpt/"
    kvs, _, _ = await etcd.range(start, prefix_end(start))
    found = {}
    for kv in kvs:
        try:
            found[kv.key[len(start) :].decode()] = json.loads(kv.value)
        except ValueError:
            continue
    return found


async def fetch(etcd: Etcd, prefix: bytes, node_id: str, directory: Path | None, at_least: int,
                token: str | None) -> Snapshot:  # fmt: skip
    """A peer's checkpoint covering log/`at_least`, the newest first; NoPeerCheckpoint if
    no peer gives one (the caller tries again later)."""
    peers = await published(etcd, prefix)
    order = sorted(peers.items(), key=lambda item: -_seq(item[1]))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    failures = []
    for node, info in order:
        if node == node_id or _seq(info) < at_least or not info.get("http"):
            continue
        url = f"http://{info['http']}{PATH}"
        try:
            snap = await _take(etcd.session, url, headers, directory, at_least)
        except (aiohttp.ClientError, TimeoutError, SnapshotError, OSError) as exc:
            failures.append(f"{node}: {exc!r}")
            continue
        log.info("cluster: took %s's checkpoint of log/%d (%d bytes)", node, _seq(info),
                 len(snap.data))  # fmt: skip
        return snap
    why = "; ".join(failures) or "none published"
    raise NoPeerCheckpoint(f"no peer's checkpoint of log/{at_least} or later taken: {why}")


async def _take(session: aiohttp.ClientSession, url: str, headers: dict[str, str],
                directory: Path | None, at_least: int) -> Snapshot:  # fmt: skip
    """Download a checkpoint: into DIR (streamed, then checked and kept), or into memory
    for a node without -b."""
    timeout = aiohttp.ClientTimeout(total=FETCH_SECONDS)
    async with session.get(url, headers=headers, timeout=timeout) as resp:
        if resp.status != 200:
            raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
        if directory is None:
            return checkpoint.accept(await resp.read(), at_least)
        with open(checkpoint.peer_file(directory), "wb") as out:
            async for chunk in resp.content.iter_chunked(CHUNK):
                out.write(chunk)
    return checkpoint.install(directory, at_least)


def _seq(info: dict[str, object]) -> int:
    seq = info.get("seq")
    return seq if isinstance(seq, int) else -1
