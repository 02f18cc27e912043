"""Three beanpod nodes of one cluster on 127.0.0.11-13, as real processes (stopped by
their own PIDs), and what the tests and bench/cluster_failover.py ask of them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from beanpod.protocols.workq.wire import DEFAULT_PORT as WORKQ_PORT
from bench.etcd_members import HOSTS, free_port, have_etcd

# every test module here: `pytestmark = needs_etcd`
needs_etcd = pytest.mark.skipif(
    not have_etcd(), reason="etcd is not on PATH (Debian: apt-get install etcd-server etcd-client)"
)


@dataclass
class Node:
    node_id: str
    host: str
    port: int
    http: int
    log: Path
    process: subprocess.Popen[bytes] | None = None
    gid: int | None = None  # run with this group (the fault run tells machines apart by it)
    options: tuple[str, ...] = ()  # more serve options (the fault run's --events DIR)
    workq: int | None = None  # its Workq door's port (--workq-port; None: the default's)
    redis: int | None = None  # its Redis door's port (--redis-port; None: no door)

    @classmethod
    def fresh(cls, index: int, host: str, workdir: Path, gid: int | None = None) -> Node:
        """Node n<index> on `host`, every listener (clients, HTTP, Workq, Redis) on a
        free port, logging to WORKDIR/n<index>.log."""
        ports = [free_port(host) for _ in range(4)]
        return cls(f"n{index}", host, ports[0], ports[1], workdir / f"n{index}.log", gid=gid,
                   workq=ports[2], redis=ports[3])  # fmt: skip

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def key_value(self) -> dict[str, str]:
        """Its leader key's value (GET /leader's body) once it leads: its address and
        those of its Workq and Redis doors."""
        value = {"node": self.node_id, "address": f"{self.host}:{self.port}",
                 "workq": f"{self.host}:{self.workq or WORKQ_PORT}"}  # fmt: skip
        if self.redis is not None:
            value["redis"] = f"{self.host}:{self.redis}"
        return value

    def doors(self) -> list[str]:
        """The serve options opening its Workq and Redis doors on their ports."""
        workq = [] if self.workq is None else ["--workq-port", str(self.workq)]
        return workq + ([] if self.redis is None else ["--redis-port", str(self.redis)])

    def leader(self) -> tuple[int, dict[str, object]] | None:
        """GET /leader: (status, body), or None while the node does not answer."""
        url = f"http://{self.host}:{self.http}/leader"
        try:
            with urllib.request.urlopen(url, timeout=1) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())
        except OSError:
            return None

    def ready(self) -> bool:
        """GET /readyz answers 200: the node's listeners serve."""
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.http}/readyz", timeout=1):
                return True
        except OSError:  # (HTTPError too: 503 while starting)
            return False

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Nodes:
    etcd: str  # HOST:PORT,...
    name: str  # the cluster's name
    workdir: Path
    nodes: list[Node] = field(default_factory=list)
    extra: tuple[str, ...] = ()  # more `beanpod serve` options, for every node
    checkpoints: bool = False  # each node keeps its checkpoints in -b WORKDIR/<node id>

    def start(self) -> Nodes:
        for index, host in enumerate(HOSTS, 1):
            node = Node.fresh(index, host, self.workdir)
            self.nodes.append(node)
            self.launch(node)
        return self

    def launch(self, node: Node) -> None:
        log = node.log.open("ab")
        node.process = subprocess.Popen(
            [sys.executable, "-m", "beanpod", "serve", "--cluster",
             f"etcd://{self.etcd}/{self.name}", "--node-id", node.node_id, "-l", node.host,
             "-p", str(node.port), "--http", f"{node.host}:{node.http}",
             *node.doors(), *self.node_options(node), *node.options],
            stdout=log, stderr=subprocess.STDOUT,
            group=node.gid, extra_groups=[] if node.gid else None,
        )  # fmt: skip
        log.close()

    def node_options(self, node: Node) -> list[str]:
        data = ["-b", str(self.data_dir(node))] if self.checkpoints else []
        return [*data, *self.extra]

    def data_dir(self, node: Node) -> Path:
        return self.workdir / f"{node.node_id}-data"

    def leader(self, seconds: float = 30, besides: Node | None = None) -> Node:
        """The node whose /leader answers 200 (other than `besides`), once one does."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for node in self.nodes:
                if node is besides or not node.alive():
                    continue
                answer = node.leader()
                if answer is not None and answer[0] == 200:
                    return node
            time.sleep(0.05)
        raise AssertionError(f"no leader within {seconds} s: see {self.workdir}")

    def followers_agree(self, leader: Node, seconds: float = 30) -> None:
        """Every other live node serves and answers 503 naming `leader`."""
        deadline = time.monotonic() + seconds
        named = leader.key_value()
        for node in self.nodes:
            if node is leader or not node.alive():
                continue
            while node.leader() != (503, {"leader": named}) or not node.ready():
                assert time.monotonic() < deadline, f"{node.node_id} does not name the leader"
                time.sleep(0.05)

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is None:
                continue
            if node.process.poll() is None:
                node.process.send_signal(18)  # SIGCONT: a stopped node must hear SIGTERM
                node.process.terminate()
            try:
                node.process.wait(10)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()
