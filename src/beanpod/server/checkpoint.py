"""A checkpoint while serving: a snapshot written without stopping the server, so a
restart after a crash loads it and replays only the segments written after it.

The server seals the log at P (the next record starts a new segment) and spawns
server/snapshot_builder.py, which folds the directory's snapshot and the segments up to P
from the files, as start-up would, and writes the snapshot of the log's state at P
(docs/wal.md "Checkpoint"). Serving pays for the seal and the spawn only: the fold and
the encoding run in that process, on CPU time nothing else wants (SCHED_IDLE). Records
written after P are replayed over it at the next start.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from pathlib import Path

import beanpod
from beanpod.storage.wal import WalWriter

log = logging.getLogger("beanpod.wal")

BUILDER = "beanpod.server.snapshot_builder"
HEADROOM = 1.25  # available memory needed, as a multiple of this server's resident size
UNLIMITED = 1 << 60  # a cgroup v1 limit this high is its "no limit" (9223372036854771712)


class Checkpoint:
    """One checkpoint, sealed at P by the constructor, built by `run` (an asyncio task)."""

    def __init__(self, writer: WalWriter, directory: Path) -> None:
        """Seal the log here (P); nothing is read yet."""
        self.directory = directory
        self.covered = writer.seal()
        self.last = max(self.covered, default=0)
        self.cancelled = False
        self.process: asyncio.subprocess.Process | None = None
        self.started = time.monotonic()

    def cancel(self) -> None:
        """Give it up (a clean shutdown): the builder is stopped, its file not used."""
        self.cancelled = True
        if self.process is not None and self.process.returncode is None:
            self.process.kill()

    async def run(self) -> int:
        """Build the snapshot in a separate process; return its size (0: none written)."""
        covered = "".join(f"{i} {end}\n" for i, end in sorted(self.covered.items()))
        try:
            self.process = process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", BUILDER, str(self.directory), env=_child_env(),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            if self.cancelled:  # given up while it was being spawned
                process.kill()
            out, err = await process.communicate(covered.encode())
        except OSError as exc:
            log.warning("WAL checkpoint not started (%s); the old snapshot stays", exc)
            return 0
        if self.cancelled:
            log.info("WAL checkpoint given up (shutting down)")
            return 0
        return self._outcome(process.returncode, out, err)

    def _outcome(self, status: int | None, out: bytes, err: bytes) -> int:
        """The builder's size on success, logged; 0, with its reason logged, otherwise."""
        if status != 0:
            why = err.decode(errors="replace").strip().splitlines() or ["no reason given"]
            log.warning("WAL checkpoint not written (%s, exit status %s); the old snapshot "
                        "stays", why[-1], status)  # fmt: skip
            return 0
        try:
            jobs, size = map(int, out.split())
        except ValueError:
            log.warning("WAL checkpoint: the builder said %r; not counted as written", out[:200])
            return 0
        log.info("WAL checkpoint written: %d jobs, %.1f MB, segments up to %d, in %.2f s",
                 jobs, size / 1e6, self.last, time.monotonic() - self.started)  # fmt: skip
        return size


def memory_short() -> str | None:
    """Why a builder should not start now (None: it may): it holds about what this
    server's jobs take, so the machine (and this process's memory cgroup, in a container)
    must have that much available, with a margin. Linux only; elsewhere not checked."""
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        available = int(fields["MemAvailable"].split()[0]) * 1024
        with open("/proc/self/statm") as f:
            resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, KeyError, ValueError):
        return None
    room = cgroup_room()
    if room is not None:
        available = min(available, room)
    if available >= resident * HEADROOM:
        return None
    return (f"{max(available, 0) >> 20} MiB of memory available, the builder needs about "
            f"{resident >> 20} MiB")  # fmt: skip


def cgroup_room(
    membership: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> int | None:
    """What this process's memory cgroup can still take (limit - usage; v2, or v1's
    memory controller), None without a limit. A container sees its own cgroup at the root
    of `root`, so that is read when the named path is not there."""
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and not controllers:
            base, names = root, ("memory.max", "memory.current")
        elif "memory" in controllers.split(","):
            base, names = root / "memory", ("memory.limit_in_bytes", "memory.usage_in_bytes")
        else:
            continue
        for directory in (base / path.lstrip("/"), base):
            limit, usage = (_read_int(directory / name) for name in names)
            if limit is not None and usage is not None and limit < UNLIMITED:
                return limit - usage
    return None


def _read_int(path: Path) -> int | None:
    """A cgroup file's number; None when missing or "max" (no limit)."""
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return None


def _child_env() -> dict[str, str]:
    """This environment, with the tree this server runs from first on the path."""
    source = str(Path(beanpod.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": source if not path else f"{source}{os.pathsep}{path}"}
