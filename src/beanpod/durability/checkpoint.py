"""A checkpoint while serving: a snapshot written without stopping the server, so a
restart after a crash loads it and replays only the segments written after it.

The server seals the log at P (the next record starts a new segment) and spawns
durability/snapshot_builder.py, which folds the directory's snapshot and the segments up to P
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
from collections.abc import Callable
from pathlib import Path

import beanpod
from beanpod.storage.wal import WalWriter

log = logging.getLogger("beanpod.wal")

BUILDER = "beanpod.durability.snapshot_builder"
# A checkpoint once the log since the last snapshot exceeds 1/TAIL_SHARE of the live
# bytes (and the floor): a crash restart while writing replays at most about that on top
# of the snapshot (a record replays in ~2.5x the time a job loads), and checkpoints cost
# a few µs of background CPU per record written. Once nothing was written for IDLE_S, a
# checkpoint past 1/IDLE_SHARE: an idle server's crash restart costs what a clean one does.
TAIL_SHARE = 2
IDLE_S = 2.0
IDLE_SHARE = 64
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


class Checkpoints:
    """When to start a checkpoint, and the one being built. The log's owner
    (durability/wal.py) asks after a flush that wrote past the floor (`after_write`); `watch_idle`
    asks every IDLE_S."""

    def __init__(
        self, writer: WalWriter, directory: Path, floor: int, min_jobs: int,
        live_bytes: Callable[[], int], jobs: Callable[[], int], replayed: int,
    ) -> None:  # fmt: skip
        """`replayed`: bytes of segments start-up replayed on top of the snapshot (they
        count as written since it)."""
        self.writer = writer
        self.directory = directory
        self.floor = floor
        self.min_jobs = min_jobs
        self.live_bytes = live_bytes
        self.jobs = jobs
        self.mark = -replayed  # writer.bytes_appended at the last snapshot's P
        self.running: tuple[Checkpoint, asyncio.Task[int]] | None = None  # and its task
        self.closing = False
        self._idle_mark = 0  # writer.bytes_appended at the last idle check
        self._idle_timer: asyncio.TimerHandle | None = None
        self._told_short = False  # a checkpoint was skipped for want of memory

    def after_write(self) -> int:
        """A checkpoint when the log since the last snapshot is past the floor and
        1/TAIL_SHARE of the live bytes. Returns `writer.bytes_appended` up to which a call
        does nothing (`mark` only grows: a mark returned earlier stays safe)."""
        since = self.writer.bytes_appended - self.mark
        if since > self.floor and since > self.live_bytes() // TAIL_SHARE:
            self._start_if_free()
        return self.mark + self.floor

    def watch_idle(self) -> None:
        """From now on, every IDLE_S: when nothing was written since the last look, a
        checkpoint for what the log holds beyond 1/IDLE_SHARE of the live bytes."""
        self._idle_timer = asyncio.get_running_loop().call_later(IDLE_S, self._idle_check)

    def _idle_check(self) -> None:
        appended = self.writer.bytes_appended
        since = appended - self.mark
        if appended == self._idle_mark and since > self.live_bytes() // IDLE_SHARE:
            self._start_if_free()
        self._idle_mark = appended
        self.watch_idle()

    def _start_if_free(self) -> None:
        """A checkpoint, unless one runs, the server closes, or the log cannot be sealed
        whole here (records not written yet, a failed writer); few jobs need none."""
        writer = self.writer
        if (
            self.running is None
            and not self.closing
            and not writer.pending
            and writer.failed is None
            and self.jobs() >= self.min_jobs
        ):
            short = memory_short()
            if short is None:
                self.start()
            elif not self._told_short:  # once, until a checkpoint starts again
                log.warning("WAL checkpoint not started: %s", short)
            self._told_short = short is not None

    def start(self) -> asyncio.Task[int]:
        """Seal the log here and build a checkpoint in another process (one at a time)."""
        assert self.running is None
        self.mark = self.writer.bytes_appended
        job = Checkpoint(self.writer, self.directory)
        log.info("WAL checkpoint started: %d jobs, segments up to %d", self.jobs(), job.last)
        task = asyncio.get_running_loop().create_task(job.run())
        self.running = (job, task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[int]) -> None:
        self.running = None
        if self.floor:
            self.after_write()  # more may have been written meanwhile

    async def close(self) -> None:
        """A clean shutdown: no more checkpoints, and a running one is given up (its own
        snapshot follows), waiting for its process so the two never write the file at
        once."""
        self.closing = True
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if self.running is not None:
            job, task = self.running
            job.cancel()
            await task


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
    return (
        f"{max(available, 0) >> 20} MiB of memory available, the builder needs about "
        f"{resident >> 20} MiB"
    )


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
