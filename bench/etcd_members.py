"""Three etcd members on 127.0.0.11-13 (one per address, free ports), for the cluster's
spike, its tests and its try-out: started here, stopped by their own PIDs."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOSTS = ("127.0.0.11", "127.0.0.12", "127.0.0.13")
SNAPSHOT_COUNT = 5000  # 3.4 keeps 100,000 entries in memory by default: too many for batches
# --pre-vote: a member cut off and back must not force an election (3.4 has it off): without
# it, its raised term deposes etcd's leader and the cluster's leader loses its lease


def free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def have_etcd() -> bool:
    return shutil.which("etcd") is not None


@dataclass
class Member:
    name: str
    host: str
    client_port: int
    peer_port: int
    process: subprocess.Popen[bytes] | None = None
    gid: int | None = None  # run with this group (the fault run tells machines apart by it)

    @property
    def client(self) -> str:
        return f"{self.host}:{self.client_port}"

    @property
    def peer(self) -> str:
        return f"http://{self.host}:{self.peer_port}"


@dataclass
class EtcdMembers:
    workdir: Path
    members: list[Member] = field(default_factory=list)
    options: tuple[str, ...] = ()  # more etcd options (the fault run's timing)

    @property
    def endpoints(self) -> str:
        return ",".join(m.client for m in self.members)

    def start(
        self, hosts: tuple[str, ...] = HOSTS, gids: tuple[int | None, ...] = (None, None, None)
    ) -> EtcdMembers:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.members = [Member(f"e{i}", host, free_port(host), free_port(host), gid=gid)
                        for i, (host, gid) in enumerate(zip(hosts, gids, strict=True))]  # fmt: skip
        for member in self.members:
            self.launch(member)
        self.wait_healthy()
        return self

    def launch(self, member: Member) -> None:
        """Start (or restart, on its data directory and ports) one member."""
        initial = ",".join(f"{m.name}={m.peer}" for m in self.members)
        data = self.workdir / member.name
        log = (self.workdir / f"{member.name}.log").open("ab")
        member.process = subprocess.Popen(
            ["etcd", "--name", member.name, "--data-dir", str(data),
             "--listen-client-urls", f"http://{member.client}",
             "--advertise-client-urls", f"http://{member.client}",
             "--listen-peer-urls", member.peer, "--initial-advertise-peer-urls", member.peer,
             "--initial-cluster", initial, "--initial-cluster-state", "new",
             "--initial-cluster-token", f"beanpod-{self.workdir.name}",
             "--snapshot-count", str(SNAPSHOT_COUNT), "--pre-vote",
             *self.options],
            stdout=log, stderr=subprocess.STDOUT,
            group=member.gid, extra_groups=[] if member.gid else None,
        )  # fmt: skip
        log.close()

    def wait_healthy(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        for member in self.members:
            while not _healthy(member):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"etcd member {member.name} not healthy: see {self.workdir}")
                time.sleep(0.1)

    def stop(self) -> None:
        for member in self.members:
            if member.process is not None and member.process.poll() is None:
                member.process.terminate()
        for member in self.members:
            if member.process is not None:
                try:
                    member.process.wait(10)
                except subprocess.TimeoutExpired:
                    member.process.kill()
                    member.process.wait()


def _healthy(member: Member) -> bool:
    try:
        with urllib.request.urlopen(f"http://{member.client}/health", timeout=1) as resp:
            return b'"true"' in resp.read()
    except OSError:
        return False


def etcdctl(*args: str) -> Any:
    """etcdctl's JSON answer."""
    out = subprocess.run(["etcdctl", *args, "-w", "json"], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    return json.loads(out)


def raft_leader(members: EtcdMembers) -> Member:
    """The member etcd's Raft has elected leader now."""
    for status in etcdctl("--endpoints", members.endpoints, "endpoint", "status"):
        if status["Status"]["header"]["member_id"] == status["Status"]["leader"]:
            return next(m for m in members.members if m.client in status["Endpoint"])
    raise RuntimeError("etcd has no leader")


def move_raft_leader(away_from: Member) -> None:
    """Make another member etcd's Raft leader (`etcdctl move-leader`)."""
    listed = etcdctl("--endpoints", away_from.client, "member", "list")["members"]
    target = next(m for m in listed if m["name"] != away_from.name)
    subprocess.run(["etcdctl", "--endpoints", away_from.client, "move-leader",
                    format(target["ID"], "x")], capture_output=True, check=True)  # fmt: skip
