"""The fault run's cluster: three "machines" on 127.0.0.11-13, each an etcd member and a
beanpod node on one address, with HAProxy in front (deploy/haproxy-cluster.cfg, checking
GET /leader every 200 ms). Run as root, each machine's two processes run with a group
of their own, so nftables can cut one machine off (bench/fault_partition.py): on loopback
every outgoing connection's source address is 127.0.0.1, only the socket's owner tells
which machine sent a packet. Everything started here is stopped by its own PID.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import etcd_gateway
from bench.cluster_nodes import Node, Nodes
from bench.cluster_proxy import Proxy
from bench.etcd_members import HOSTS, EtcdMembers, Member, etcdctl, raft_leader

# etcd's Raft timing for one LAN (here loopback): a heartbeat every 50 ms, an election after
# 500 ms without one (defaults: 100 / 1000 ms). When the cut-off or killed member was etcd's
# leader, the node's lease outlives it by an election plus one election timeout (etcd gives
# every lease that much on a new leader) plus its TTL: with the defaults over 5 s.
ETCD_TIMING = ("--heartbeat-interval", "50", "--election-timeout", "500")
# machine i runs with a group of its own (no group entry needed), distinct per run: two
# runs at once (a suite and a bench) must not cut each other's machines off
FIRST_GID = 1_000_000 + 4 * os.getpid()


def missing_tools() -> str | None:
    """Why the fault run cannot run here, or None."""
    for tool, package in (("etcd", "etcd-server"), ("haproxy", "haproxy")):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (Debian: apt-get install {package})"
    return None


@dataclass
class Machine:
    """One address: its etcd member and its beanpod node (a whole node)."""

    member: Member
    node: Node

    @property
    def host(self) -> str:
        return self.node.host

    @property
    def gid(self) -> int | None:
        return self.node.gid

    def ports(self) -> list[int]:
        """Every port its processes listen on."""
        member, node = self.member, self.node
        doors = [port for port in (node.workq, node.redis) if port is not None]
        return [member.client_port, member.peer_port, node.port, node.http, *doors]

    def pids(self) -> list[int]:
        return [p.pid for p in (self.member.process, self.node.process) if p is not None]


@dataclass(frozen=True)
class Trimming:
    """Every node keeps checkpoints (-b DIR) and the leader trims the log below them."""

    checkpoint_batches: int = 200
    trim_every: float = 2.0
    defrag_every: float = 30.0

    def options(self) -> tuple[str, ...]:
        return ("--checkpoint-batches", str(self.checkpoint_batches), "--trim-every",
                str(self.trim_every), "--defrag-every", str(self.defrag_every))  # fmt: skip


class FaultCluster:
    def __init__(self, workdir: Path, name: str = "faults",
                 trimming: Trimming | None = None) -> None:  # fmt: skip
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.members = EtcdMembers(workdir, options=ETCD_TIMING)
        self.nodes = Nodes("", name, workdir)
        if trimming is not None:
            self.nodes.checkpoints, self.nodes.extra = True, trimming.options()
        self.machines: list[Machine] = []
        self.haproxy: Proxy | None = None
        try:
            self._start()
        except BaseException:
            self.stop()  # what did start
            raise

    def _start(self) -> None:
        gids = tuple(FIRST_GID + i if os.geteuid() == 0 else None for i in range(3))
        self.members.start(gids=gids)
        self.nodes.etcd = self.members.endpoints
        for member, host, gid in zip(self.members.members, HOSTS, gids, strict=True):
            node = Node.fresh(len(self.machines) + 1, host, self.workdir, gid)
            self.nodes.nodes.append(node)
            self.machines.append(Machine(member, node))
            self.nodes.launch(node)
        self.haproxy = Proxy(self.nodes.nodes, self.workdir / "haproxy.log")

    @property
    def proxy(self) -> Proxy:
        assert self.haproxy is not None
        return self.haproxy

    # ---- who is where --------------------------------------------------------------------

    def leader(self, seconds: float = 30, besides: Node | None = None) -> Machine:
        return self.machine_of(self.nodes.leader(seconds, besides))

    def machine_of(self, node: Node) -> Machine:
        return next(m for m in self.machines if m.node is node)

    def settle(self, seconds: float = 300) -> Machine:
        """Once every node is up and names one leader: that leader's machine."""
        leader = self.nodes.leader(seconds)
        self.nodes.followers_agree(leader, seconds)
        return self.machine_of(leader)

    # ---- restarts --------------------------------------------------------------------------

    def restart_node(self, machine: Machine) -> None:
        if machine.node.process is not None:
            machine.node.process.wait()
        self.nodes.launch(machine.node)

    def make_raft_leader(self, machine: Machine) -> None:
        """Move etcd's Raft leadership to this machine's member (the worst case of its
        loss: an etcd election comes before the lease can expire)."""
        if raft_leader(self.members) is not machine.member:
            endpoints = self.members.endpoints
            listed = etcdctl("--endpoints", endpoints, "member", "list")["members"]
            target = format(next(m["ID"] for m in listed if m["name"] == machine.member.name), "x")
            move = ["etcdctl", "--endpoints", endpoints, "move-leader", target]
            subprocess.run(move, capture_output=True, check=True)

    def restart_member(self, machine: Machine) -> None:
        if machine.member.process is not None:
            machine.member.process.wait()
        self.members.launch(machine.member)
        self.members.wait_healthy()

    # ---- etcd's database ---------------------------------------------------------------

    def db_size(self) -> int:
        """The largest `dbSize` any live member reports (its gateway's maintenance status)."""
        sizes = [0]
        for member in self.members.members:
            url = f"http://{member.client}/v3/maintenance/status"
            request = urllib.request.Request(url, data=b"{}", method="POST")
            try:
                with urllib.request.urlopen(request, timeout=2) as resp:
                    sizes.append(int(json.loads(resp.read()).get("dbSize", 0)))
            except OSError:
                continue  # a member down or cut off just now
        return max(sizes)

    def trims(self) -> tuple[int, int]:
        """(how many times the log was trimmed, log keys left): read from a live member
        (the `trim` key is written once per trim)."""
        prefix = f"/beanpod/{self.nodes.name}/"
        for member in self.members.members:
            try:
                return (etcd_gateway.version(member.client, prefix + "trim"),
                        etcd_gateway.count(member.client, prefix + "log/"))  # fmt: skip
            except OSError:
                continue
        return 0, 0

    def stop(self) -> None:
        if self.haproxy is not None:
            self.haproxy.stop()
        self.nodes.stop()
        self.members.stop()


def wait_until(what: str, done: Callable[[], bool], seconds: float = 60) -> None:
    """Poll `done()` every 50 ms until it is true."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.05)
