"""Three cluster nodes with clients of their Workq and Redis doors (each node opens both
on ports of its own: bench/cluster_nodes.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import EtcdMembers

from beanpod.client.workq import Client as WorkqClient
from tests.qless_clients import QlessClients

_names = itertools.count()


class DoorNodes(Nodes):
    qless_clients: QlessClients | None = None  # closed when the cluster stops

    def workq_address(self, node: Node) -> tuple[str, int]:
        assert node.workq is not None
        return node.host, node.workq

    def redis_address(self, node: Node) -> tuple[str, int]:
        assert node.redis is not None
        return node.host, node.redis

    def workq(self, node: Node) -> WorkqClient:
        """A Workq client of this node alone that fails fast (no reconnect, no resend)."""
        return WorkqClient(self.workq_address(node), timeout=20, backoff=None)

    def qless(self, node: Node) -> Any:
        """qless-py's client through this node's Redis door (closed with the cluster)."""
        if self.qless_clients is None:
            self.qless_clients = QlessClients()
        return qless_client(self.qless_clients, self.redis_address(node))


def qless_client(clients: QlessClients, address: tuple[str, int]) -> Any:
    """qless-py's client of a Redis door (a node's, or HAProxy's frontend), worker `w1`."""
    client = clients(f"redis://{address[0]}:{address[1]}")
    client.worker_name = "w1"
    return client


def door_cluster(etcd: EtcdMembers, tmp_path: Path) -> Iterator[DoorNodes]:
    """For a fixture: three nodes of a fresh cluster (its own name in the shared etcd)."""
    nodes = DoorNodes(etcd.endpoints, f"d{next(_names)}-{tmp_path.name}", tmp_path)
    nodes.start()
    yield nodes
    if nodes.qless_clients is not None:
        nodes.qless_clients.close()
    nodes.stop()
