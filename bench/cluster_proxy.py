"""HAProxy in front of a cluster's three nodes, with deploy/haproxy-cluster.cfg as
shipped: one frontend per door (beanstalkd, Workq, Redis), each on a free port of
127.0.0.1, sending clients to the node whose GET /leader answers 200. Started here and
stopped by its own PID (the tests, the fault run and bench/ share it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bench.cluster_nodes import Node
from bench.etcd_members import free_port

CONFIG = Path(__file__).parents[1] / "deploy" / "haproxy-cluster.cfg"
HOST = "127.0.0.1"


class Proxy:
    """`beanstalkd`, `workq`, `redis`: the (host, port) each frontend listens on."""

    def __init__(self, nodes: list[Node], log: Path) -> None:
        self.beanstalkd, self.workq, self.redis = ((HOST, free_port(HOST)) for _ in range(3))
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                ["haproxy", "-f", str(CONFIG), "-db"], env={**os.environ, **self.env(nodes)},
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def env(self, nodes: list[Node]) -> dict[str, str]:
        """The variables the config reads (its header lists them)."""
        found = {"BEANPOD_PROXY": _shown(self.beanstalkd),
                 "BEANPOD_PROXY_WORKQ": _shown(self.workq),
                 "BEANPOD_PROXY_REDIS": _shown(self.redis)}  # fmt: skip
        for index, node in enumerate(nodes, 1):
            if node.workq is None or node.redis is None:
                raise ValueError(f"{node.node_id}: the proxy needs its Workq and Redis ports")
            name = f"BEANPOD_NODE{index}"
            found[name] = _shown(node.address)
            found[f"{name}_HTTP"] = str(node.http)
            found[f"{name}_WORKQ"] = _shown((node.host, node.workq))
            found[f"{name}_REDIS"] = _shown((node.host, node.redis))
        return found

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def _shown(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"
