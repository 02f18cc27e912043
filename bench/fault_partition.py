"""Cutting one machine of the fault run off the others (nftables), or, where nftables
cannot (no `nft`, not root), pausing both of its processes instead.

The cut is an `inet` table of its own (named after this process) on the output hook,
which on loopback sees every packet once: a packet sent by the machine's group (its etcd
member's and its node's sockets, whatever the destination) is dropped, and so is any
packet to the machine's address on one of its ports (its etcd client and peer ports, its
node's client and HTTP ports). Other helpers' servers on the same addresses use other
ports and other groups: they are not touched. The table is deleted when the cut heals.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

from bench.fault_cluster import Machine


def nft_usable() -> str | None:
    """Why a machine cannot be cut off with nftables here, or None."""
    if shutil.which("nft") is None:
        return "nft is not on PATH (Debian: apt-get install nftables)"
    if os.geteuid() != 0:
        return "nftables needs root"
    probe = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"nft cannot be used: {probe.stderr.strip()}"


class Partition:
    """`with Partition(machine):` the machine is cut off (or paused) inside the block."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.why_not_nft = nft_usable() if machine.gid is not None else "no group of its own"
        self.table = f"beanpod_faults_{os.getpid()}"

    @property
    def how(self) -> str:
        if self.why_not_nft is None:
            return "nftables"
        return f"SIGSTOP of its etcd member and node ({self.why_not_nft})"

    def __enter__(self) -> Partition:
        if self.why_not_nft is not None:
            for pid in self.machine.pids():
                os.kill(pid, signal.SIGSTOP)
            return self
        ports = ", ".join(str(port) for port in self.machine.ports())
        rules = (
            f"add table inet {self.table}\n"
            f"add chain inet {self.table} out {{ type filter hook output priority 0; }}\n"
            f"add rule inet {self.table} out meta skgid {self.machine.gid} drop\n"
            f"add rule inet {self.table} out ip daddr {self.machine.host} "
            f"tcp dport {{ {ports} }} drop\n"
        )
        subprocess.run(["nft", "-f", "-"], input=rules, text=True, check=True)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.why_not_nft is not None:
            for pid in self.machine.pids():
                os.kill(pid, signal.SIGCONT)
            return
        subprocess.run(["nft", "delete", "table", "inet", self.table], check=True)
