"""How the leader's journal appends a batch: one fenced transaction,
`Txn(create_revision(leader) == mine AND version(log/<seq>) == 0 → put log/<seq>)`,
reading the leader key and the log key when it fails (`Fence.wrote`). Through etcd's
gRPC API when its client (`aetcd`, in `beanpod[cluster]`) is installed, else through
the JSON gateway the rest of the cluster code uses."""

from __future__ import annotations

import logging
import os
from typing import Any, Protocol

from beanpod.durability.cluster.etcd import Etcd, b64
from beanpod.durability.cluster.fence import Appended, Fence

log = logging.getLogger("beanpod.cluster")


class Appends(Protocol):
    async def append(self, fence: Fence, key: bytes, batch: bytes) -> Appended:
        """Raises EtcdUnknown when the outcome is not known, EtcdError when refused."""

    async def close(self) -> None: ...


class GatewayAppends:
    """Appends through etcd's JSON gateway (`/v3/kv/txn`), with the node's Etcd."""

    def __init__(self, etcd: Etcd) -> None:
        self.etcd = etcd

    async def append(self, fence: Fence, key: bytes, batch: bytes) -> Appended:
        self.etcd.look_for_raft_leader()
        leads = fence.leads()
        compare = [leads, {"key": b64(key), "target": "VERSION", "version": 0}]
        put = [{"request_put": {"key": b64(key), "value": b64(batch)}}]
        reads = [{"request_range": {"key": leads["key"]}},
                 {"request_range": {"key": b64(key), "keys_only": True}}]  # fmt: skip
        ok, answer = await self.etcd.txn(compare, put, reads)
        return Appended(True) if ok else _read_back(answer)

    async def close(self) -> None:
        """The node closes its Etcd itself."""


def _read_back(answer: dict[str, Any]) -> Appended:
    """The failure branch's two ranges (the leader key, the log key) as the gateway
    answers them: 64-bit integers are strings in JSON."""
    found = [r.get("response_range", {}).get("kvs", []) for r in answer.get("responses", [])]
    leader, entry = found if len(found) == 2 else ([], [])
    revision = int(leader[0].get("create_revision", 0)) if leader else 0
    return Appended(False, revision, bool(entry))


def appends_for(etcd: Etcd) -> Appends:
    """gRPC when its client is installed (about 0.25 ms and a third of the leading
    member's CPU less per transaction: docs/cluster.md, "The etcd client")."""
    # The node forks its checkpoint writer, which never calls gRPC and leaves by
    # os._exit: gRPC's fork handlers (read at its import) would only log at every fork
    # that they were skipped
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    try:
        from beanpod.durability.cluster.grpc_appends import GrpcAppends
    except ImportError as exc:
        log.info("cluster: appends through etcd's JSON gateway (no gRPC client: %s)", exc)
        return GatewayAppends(etcd)
    log.info("cluster: appends through etcd's gRPC API")
    return GrpcAppends(etcd)
