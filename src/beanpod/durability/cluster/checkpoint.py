"""A cluster node's checkpoints in its `-b DIR`: the single node's snapshot file
(storage/snapshot.py: checksummed, written to a temporary file, fsynced, renamed) and
payload (durability/snapshot.py), whose table of covered segments holds one entry,
COVERED -> the last log seq the checkpoint folded. DIR/cluster names the cluster the
directory belongs to, so a node never folds one cluster's log over another's state.

A follower's checkpoint is its fold (encode_folded); a leader's is its live engine at a
batch boundary of its journal (the records appended up to then end a batch), as a clean
shutdown writes it. Either way a restart loads it and folds the log past its seq.
"""

from __future__ import annotations

import logging
import mmap
import os
from collections.abc import Callable, Generator
from pathlib import Path

from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.restore import Restorer
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.segments import OsFileIO, list_segments

log = logging.getLogger("beanpod.cluster")

COVERED = 0  # the table's one index: its `end` is the seq covered (a u64)
OWNER = "cluster"  # DIR/cluster: the cluster's name
PEER_TMP = "snapshot.peer"  # a peer's checkpoint, downloaded, until it is checked


class CheckpointDirError(ValueError):
    """-b DIR cannot hold this node's checkpoints (another cluster's, a WAL's)."""


def claim(directory: Path, name: str) -> None:
    """Make DIR this cluster's (created if needed); refuse another's or a WAL's."""
    owner = directory / OWNER
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not owner.exists():
            if list_segments(directory):
                raise CheckpointDirError(f"{directory} holds a single node's WAL")
            owner.write_text(name + "\n")
        held = owner.read_text().strip()
    except OSError as exc:
        raise CheckpointDirError(f"cannot use {directory}: {exc.strerror or exc}") from exc
    if held != name:
        raise CheckpointDirError(f"{directory} holds checkpoints of cluster {held!r}")


def path_of(directory: Path) -> Path:
    return snapshot_file.path_of(directory)


def seq_of(snap: snapshot_file.Snapshot) -> int:
    if set(snap.covered) != {COVERED}:
        raise snapshot_file.SnapshotError("not a cluster node's checkpoint")
    return snap.covered[COVERED]


def read_local(directory: Path) -> snapshot_file.Snapshot | None:
    """DIR's checkpoint (None without a usable one: a damaged one is logged, not used)."""
    try:
        snap = snapshot_file.read(directory)
        if snap is not None:
            seq_of(snap)
        return snap
    except (snapshot_file.SnapshotError, OSError) as exc:
        log.warning("cluster: checkpoint %s not used (%s)", path_of(directory), exc)
        return None


def load(snap: snapshot_file.Snapshot, restorer: Restorer) -> Generator[int, None, int]:
    """Fold a checkpoint into an empty restorer, a chunk of jobs a step (yielding how
    many so far); return its seq. Raises RecordError if its payload does not decode."""
    try:
        seq = seq_of(snap)
        yield from snapshot_payload.load(restorer, snap.data, snap.start)
    finally:
        snap.close()
    return seq


def write(directory: Path, seq: int, payload: list[bytes],
          keep_going: Callable[[], bool] = lambda: True) -> int:  # fmt: skip
    """Write the checkpoint covering the log up to `seq` durably; return its size (0:
    `keep_going` said no once it was synced, and the old one stays)."""
    return snapshot_file.write(directory, {COVERED: seq}, payload, keep_going)


def accept(data: bytes | mmap.mmap, at_least: int) -> snapshot_file.Snapshot:
    """A peer's checkpoint, checked: its checksums, and that it covers log/`at_least`.
    Raises SnapshotError if it is not usable."""
    snap = snapshot_file.decode(data)
    seq = seq_of(snap)
    if seq < at_least:
        raise snapshot_file.SnapshotError(f"it covers up to log/{seq}, not log/{at_least}")
    return snap


def peer_file(directory: Path) -> Path:
    """Where a peer's checkpoint is downloaded before it is checked."""
    return directory / PEER_TMP


def install(directory: Path, at_least: int) -> snapshot_file.Snapshot:
    """The downloaded peer's checkpoint (`peer_file`), checked (`accept`), becomes DIR's
    checkpoint (fsynced, renamed). Raises SnapshotError if it is not usable (the
    download is removed), OSError if it cannot be kept."""
    tmp = peer_file(directory)
    try:
        with open(tmp, "rb") as f:
            if os.fstat(f.fileno()).st_size < snapshot_file.HEADER_SIZE:
                raise snapshot_file.SnapshotError("shorter than a checkpoint's header")
            os.fsync(f.fileno())
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            snap = accept(data, at_least)
        except snapshot_file.SnapshotError:
            data.close()
            raise
    except snapshot_file.SnapshotError:
        os.unlink(tmp)
        raise
    os.replace(tmp, path_of(directory))
    OsFileIO().sync_dir(str(directory))
    return snap
