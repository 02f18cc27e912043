"""HAProxy in front of three nodes, with the shipped deploy/haproxy-cluster.cfg (it checks
GET /leader every 200 ms), on 127.0.0.1 and a free port; stopped by its own PID."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from bench.cluster_nodes import Nodes
from bench.etcd_members import free_port

CONFIG = Path(__file__).parents[1] / "deploy" / "haproxy-cluster.cfg"


class Proxy:
    def __init__(self, nodes: Nodes, log: Path) -> None:
        self.nodes = nodes
        self.address = ("127.0.0.1", free_port("127.0.0.1"))
        env = {**os.environ, "BEANPOD_PROXY": f"{self.address[0]}:{self.address[1]}"}
        for index, node in enumerate(nodes.nodes, 1):
            env[f"BEANPOD_NODE{index}"] = f"{node.host}:{node.port}"
            env[f"BEANPOD_NODE{index}_HTTP"] = str(node.http)
        with log.open("ab") as out:
            self.process = subprocess.Popen(["haproxy", "-f", str(CONFIG), "-db"], env=env,
                                            stdout=out, stderr=subprocess.STDOUT)  # fmt: skip

    def wait_serving(self, seconds: float = 30) -> None:
        """Until connections through it reach the leader only: HAProxy starts with every
        node up, sending connections round robin, until its checks mark the followers
        down (and a follower closes a connection that asks anything but `stats`)."""
        deadline, passed = time.monotonic() + seconds, 0
        while passed < 2 * len(self.nodes.nodes):
            passed = passed + 1 if self._passes() else 0
            assert self.process.poll() is None, "haproxy exited"
            assert time.monotonic() < deadline, f"nothing served through {self.address}"
            time.sleep(0.05)

    def _passes(self) -> bool:
        try:
            with socket.create_connection(self.address, timeout=2) as sock:
                sock.sendall(b"list-tube-used\r\n")
                return sock.recv(64) == b"USING default\r\n"
        except OSError:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(10)
