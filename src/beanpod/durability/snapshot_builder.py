"""A checkpoint's snapshot, built from the log by a separate process.

`python -m beanpod.durability.snapshot_builder DIR` reads what it covers from stdin (one
`segment end` pair a line: the segments the server sealed at P), folds the directory's
snapshot (when it still matches the log) and the covered segments after it, exactly as
start-up would, and writes DIR/snapshot covering them. It prints `jobs size` and exits 0;
anything else is a failure the server logs (the old snapshot stays).

The state it writes is the log's at P, not a live engine's: nothing in the server is read
or paused for it, so serving pays only for sealing a segment and spawning this process.
The server keeps every segment it covers until it exits (compaction drops none meanwhile)
and never writes the snapshot itself while it runs. The builder runs on idle CPU time only
and gives up before the rename when the server that started it is gone.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TypeVar

from beanpod.core.engine import Engine
from beanpod.durability import snapshot as snapshot_payload
from beanpod.durability.progress import ReplayProgress
from beanpod.durability.replay import load_snapshot, replay_segments
from beanpod.durability.restore import Restorer
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.framing import FRAME_SIZE
from beanpod.storage.recovery import CorruptLog, LogReader
from beanpod.storage.segments import segment_name

_T = TypeVar("_T")

NICENESS = 19  # the lowest, where SCHED_IDLE is not available


class BuildFailed(Exception):
    """The covered log could not be folded (a damaged record): no snapshot written."""


def fold(directory: Path, covered: dict[int, int]) -> Restorer:
    """The log's `covered` segments folded by start-up's own steps: the snapshot, when it
    still matches the log, then the segments after it up to the last covered one, each
    of which must end where `covered` says (the server wrote them before sealing)."""
    restorer, progress = Restorer(Engine(), FRAME_SIZE), ReplayProgress()
    try:
        after = max(_run(load_snapshot(directory, restorer, progress)), default=0)
    except CorruptLog:  # a snapshot that does not decode (start-up refuses it): without it
        restorer, after = Restorer(Engine(), FRAME_SIZE), 0
    reader = LogReader(directory, after, max(covered))
    _run(replay_segments(reader, restorer, progress))
    for report in reader.reports:
        if report.end != covered.get(report.index, report.end):
            raise BuildFailed(
                f"segment {report.index} ends at offset {report.end}, "
                f"not at {covered[report.index]} as sealed"
            )
    return restorer


def _run(steps: Generator[None, None, _T]) -> _T:
    """Take every step at once (the builder has no event loop to let run between)."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            result: _T = done.value
            return result


def build(
    directory: Path, covered: dict[int, int], keep_going: Callable[[], bool] = lambda: True
) -> tuple[int, int]:
    """Write the snapshot of the log's state at the end of `covered`; (jobs, bytes)."""
    try:
        restorer = fold(directory, covered)
    except CorruptLog as exc:
        raise BuildFailed(str(exc)) from exc
    payload = snapshot_payload.encode_folded(restorer)
    for index in sorted(covered):
        _fsync(directory / segment_name(index))
    size = snapshot_file.write(directory, covered, payload, keep_going)
    return len(restorer.jobs), size


def _fsync(path: Path) -> None:
    """Make a covered segment durable before the snapshot that skips it is."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def lower_priority() -> None:
    """Run only on CPU time nothing else wants: SCHED_IDLE where there is one (Linux),
    else the highest niceness; and be the out-of-memory killer's first choice, so that if
    memory runs out while it holds its copy of the jobs, it goes and the server stays."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(NICENESS)
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as f:
        f.write("1000")


def parse_covered(text: str) -> dict[int, int]:
    covered = {}
    for line in text.split("\n"):
        if line.strip():
            index, end = line.split()
            covered[int(index)] = int(end)
    if not covered:
        raise ValueError("no segment to cover")
    return covered


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m beanpod.durability.snapshot_builder DIR < covered", file=sys.stderr)
        return 2
    parent = os.getppid()
    lower_priority()
    gc.disable()  # millions of objects, no cycles
    try:
        covered = parse_covered(sys.stdin.read())
        jobs, size = build(Path(argv[0]), covered, lambda: os.getppid() == parent)
    except (BuildFailed, OSError, ValueError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not size:
        print("the server is gone", file=sys.stderr)
        return 1
    print(jobs, size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
