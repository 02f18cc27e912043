"""A follower's disk full: the node is restarted with its directory on a small tmpfs
(its event log and its -b DIR, its checkpoints, there), which is then
filled to the last byte; freed when the fault ends, unmounted when the run ends."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

from bench.fault_cluster import FaultCluster, Machine

SIZE = "64m"  # room for a peer's checkpoint once freed (a long run's outgrew 4 MiB)
FILLER = "filler"


class FullDisk:
    def __init__(self, cluster: FaultCluster, machine: Machine) -> None:
        self.cluster = cluster
        self.machine = machine
        self.mount = cluster.workdir / f"disk-{machine.node.node_id}"

    def attach(self) -> None:
        """Restart the follower (SIGTERM: it is not the leader) on the tmpfs."""
        self.mount.mkdir(exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0755", "tmpfs",
                        str(self.mount)], check=True)  # fmt: skip
        node = self.machine.node
        node.options = ("--events", str(self._dir("events")), "-b", str(self._dir("node")))
        assert node.process is not None
        node.process.terminate()
        self.cluster.restart_node(self.machine)

    def _dir(self, name: str) -> Path:
        path = self.mount / name
        path.mkdir(exist_ok=True)
        return path

    def fill(self) -> int:
        """Write until the filesystem says ENOSPC; the bytes written."""
        written = 0
        chunk = b"\0" * 65536
        with (self.mount / FILLER).open("wb", buffering=0) as out:
            while True:
                try:
                    written += out.write(chunk) or 0
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    return written

    def free(self) -> None:
        (self.mount / FILLER).unlink(missing_ok=True)

    def detach(self) -> None:
        """After the node stopped."""
        subprocess.run(["umount", "-l", str(self.mount)], check=False)
