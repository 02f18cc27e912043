"""HAProxy in front of a cluster's three nodes, with deploy/haproxy-cluster.cfg as
shipped: one frontend per door (beanstalkd, Workq, Redis), each on a free port of
127.0.0.1, sending clients to the node whose GET /leader answers 200 (checked every
200 ms). Started here and stopped by its own PID (the tests, the fault run and bench/
share it)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from bench.cluster_nodes import Node
from bench.etcd_members import free_port

CONFIG = Path(__file__).parents[1] / "deploy" / "haproxy-cluster.cfg"
HOST = "127.0.0.1"


class Proxy:
    """`beanstalkd`, `workq`, `redis`: the (host, port) each frontend listens on."""

    def __init__(self, nodes: list[Node], log: Path) -> None:
        self.nodes = nodes
        self.beanstalkd, self.workq, self.redis = ((HOST, free_port(HOST)) for _ in range(3))
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                ["haproxy", "-f", str(CONFIG), "-db"], env={**os.environ, **self.env()},
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def env(self) -> dict[str, str]:
        """The variables the config reads (its header lists them)."""
        found = {"BEANPOD_PROXY": _shown(self.beanstalkd),
                 "BEANPOD_PROXY_WORKQ": _shown(self.workq),
                 "BEANPOD_PROXY_REDIS": _shown(self.redis)}  # fmt: skip
        for index, node in enumerate(self.nodes, 1):
            if node.workq is None or node.redis is None:
                raise ValueError(f"{node.node_id}: the proxy needs its Workq and Redis ports")
            name = f"BEANPOD_NODE{index}"
            found[name] = _shown(node.address)
            found[f"{name}_HTTP"] = str(node.http)
            found[f"{name}_WORKQ"] = _shown((node.host, node.workq))
            found[f"{name}_REDIS"] = _shown((node.host, node.redis))
        return found

    def wait_serving(self, seconds: float = 30) -> None:
        """Until connections through it reach the leader only: HAProxy starts with every
        node up, sending connections round robin, until its checks mark the followers
        down (and a follower closes a connection that asks anything but `stats`)."""
        deadline, passed = time.monotonic() + seconds, 0
        while passed < 2 * len(self.nodes):
            passed = passed + 1 if self._passes() else 0
            assert self.process.poll() is None, "haproxy exited"
            assert time.monotonic() < deadline, f"nothing served through {self.beanstalkd}"
            time.sleep(0.05)

    def _passes(self) -> bool:
        try:
            with socket.create_connection(self.beanstalkd, timeout=2) as sock:
                sock.sendall(b"list-tube-used\r\n")
                return sock.recv(64) == b"USING default\r\n"
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(10)


def _shown(address: tuple[str, int]) -> str:
    return f"{address[0]}:{address[1]}"
