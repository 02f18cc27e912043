"""Three cluster nodes that also open their Workq and Redis doors (each its own ports)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.cluster_nodes import Node, Nodes
from bench.etcd_members import EtcdMembers, free_port

from beanpod.client.workq import Client as WorkqClient

_names = itertools.count()


class DoorNodes(Nodes):
    doors: dict[str, tuple[int, int]]  # node id -> (Workq port, Redis port)

    def node_options(self, node: Node) -> list[str]:
        if not hasattr(self, "doors"):
            self.doors = {}
        ports = self.doors.setdefault(node.node_id, (free_port(node.host), free_port(node.host)))
        return [*super().node_options(node), "--workq-port", str(ports[0]),
                "--redis-port", str(ports[1])]  # fmt: skip

    def workq_address(self, node: Node) -> tuple[str, int]:
        return node.host, self.doors[node.node_id][0]

    def workq(self, node: Node) -> WorkqClient:
        """A Workq client of this node alone that fails fast (no reconnect, no resend)."""
        return WorkqClient(self.workq_address(node), timeout=20, backoff=None)

    def qless(self, node: Node) -> Any:
        """qless-py's client through this node's Redis door."""
        import qless

        client = qless.Client(f"redis://{node.host}:{self.doors[node.node_id][1]}")
        client.worker_name = "w1"
        return client


def door_cluster(etcd: EtcdMembers, tmp_path: Path) -> Iterator[DoorNodes]:
    """For a fixture: three nodes of a fresh cluster (its own name in the shared etcd)."""
    nodes = DoorNodes(etcd.endpoints, f"d{next(_names)}-{tmp_path.name}", tmp_path)
    nodes.start()
    yield nodes
    nodes.stop()
