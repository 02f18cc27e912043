"""The leader's appends through etcd's gRPC API with `aetcd` (one channel per member,
opened when first used). Which member comes first is the node's Etcd's choice (the
Raft leader, found by `look_for_raft_leader`); a call that fails moves it to the next.
Any failure of the transport leaves the outcome unknown (the request may have been
applied); etcd's own refusals are mapped as the gateway's are (`etcd.refusal`)."""

from __future__ import annotations

from typing import Any

import aetcd
from aetcd import rpc

from beanpod.durability.cluster.etcd import CALL_SECONDS, Etcd, EtcdError, EtcdUnknown, refusal
from beanpod.durability.cluster.fence import Appended, Fence

# Status codes that say nothing of whether the request was applied
TRANSPORT = frozenset({rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED,
                       rpc.StatusCode.CANCELLED, rpc.StatusCode.UNKNOWN,
                       rpc.StatusCode.INTERNAL, rpc.StatusCode.ABORTED})  # fmt: skip


def failure(where: str, exc: BaseException) -> EtcdError:
    """An aetcd error (its cause: grpc's AioRpcError) as EtcdUnknown or EtcdError."""
    cause = exc.__cause__
    if not isinstance(cause, rpc.AioRpcError):
        return EtcdUnknown(f"{where}: {exc!r}")
    details = cause.details() or ""
    if cause.code() in TRANSPORT:
        return EtcdUnknown(f"{where}: {cause.code().name} {details}")
    return refusal(where, details)


def host_port(endpoint: str) -> tuple[str, int]:
    """'http://host:port' -> (host, port)."""
    host, _, port = endpoint.split("//", 1)[-1].rpartition(":")
    return host, int(port)


class GrpcAppends:
    def __init__(self, etcd: Etcd) -> None:
        self.etcd = etcd
        self.clients: dict[int, Any] = {}  # member index -> aetcd.Client

    def _client(self, index: int) -> Any:
        client = self.clients.get(index)
        if client is None:
            host, port = host_port(self.etcd.endpoints[index])
            client = self.clients[index] = aetcd.Client(host, port, timeout=CALL_SECONDS)
        return client

    async def append(self, fence: Fence, key: bytes, batch: bytes) -> Appended:
        self.etcd.look_for_raft_leader()
        index = self.etcd.current
        client = self._client(index)
        ops = client.transactions
        try:
            ok, responses = await client.transaction(
                compare=[ops.create(fence.leader_key) == fence.revision, ops.version(key) == 0],
                success=[ops.put(key, batch)],
                failure=[ops.get(fence.leader_key), ops.get(key)],
            )
        except (TimeoutError, aetcd.ClientError) as exc:
            self.etcd.skip(index)
            raise failure(self.etcd.endpoints[index], exc) from exc
        return Appended(True) if ok else _read_back(responses)

    async def close(self) -> None:
        clients, self.clients = list(self.clients.values()), {}
        for client in clients:
            await client.close()


def _read_back(responses: list[Any]) -> Appended:
    """aetcd's answer to the failure branch: per range, a list of (value, KeyValue)."""
    leader, entry = responses if len(responses) == 2 else ([], [])
    revision = int(leader[0][1].create_revision) if leader else 0
    return Appended(False, revision, bool(entry))
