"""Start-up replay progress: what the log said so far, told while it happens.

Replaying a large log takes seconds; without a word it looks like a hang under systemd
or Kubernetes. `ReplayProgress` is updated by the WAL replay every few thousand records,
logs a line at least every `EVERY_S` seconds (segment k of N, jobs so far, MB/s) and a
final line with the totals when replay took longer than a second. `/readyz` reads
`replaying` (and the byte counts) from it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("beanpod.wal")

EVERY_S = 1.0  # at most this long between progress lines (the promise is 2 s)
QUIET_S = 1.0  # a replay shorter than this ends without a summary line


@dataclass
class ReplayProgress:
    """Where the start-up replay is (its docstring spares dataclasses formatting one)."""

    replaying: bool = False
    segments: int = 0  # segment files to read
    segment: int = 0  # the one being read (1-based)
    bytes_total: int = 0
    bytes_done: int = 0  # bytes of segments read so far
    records: int = 0
    jobs: int = 0  # live jobs folded so far
    started: float = 0.0
    elapsed: float = 0.0  # seconds, once finished
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    _told: float = 0.0

    def loading(self, jobs: int) -> None:
        """The snapshot's load so far (it comes before `begin` and the segments after
        it): `replaying` from the first call, a line at least every EVERY_S seconds."""
        now = self.clock()
        self.jobs = jobs
        if not self.replaying:
            self.replaying, self._told = True, now
        elif now - self._told >= EVERY_S:
            self._told = now
            log.info("WAL snapshot: %d jobs loaded so far", jobs)

    def begin(self, segments: int, bytes_total: int) -> None:
        self.replaying = True
        self.segments, self.bytes_total = segments, bytes_total
        self.started = self._told = self.clock()

    def update(self, segment: int, bytes_done: int, records: int, jobs: int) -> None:
        self.segment, self.bytes_done, self.records, self.jobs = segment, bytes_done, records, jobs
        now = self.clock()
        if now - self._told >= EVERY_S:
            self._told = now
            log.info("WAL replay: segment %d of %d, %d records, %d jobs so far, %.1f MB/s",
                     segment, self.segments, records, jobs, self._rate(now))  # fmt: skip

    def finish(self, jobs: int) -> None:
        now = self.clock()
        self.jobs, self.replaying = jobs, False
        self.elapsed = now - self.started
        if self.elapsed >= QUIET_S:
            log.info("WAL replay done: %d segments, %d records, %d jobs, %.1f MB in %.1f s "
                     "(%.1f MB/s)", self.segments, self.records, jobs, self.bytes_done / 1e6,
                     self.elapsed, self._rate(now))  # fmt: skip

    def _rate(self, now: float) -> float:
        return self.bytes_done / 1e6 / max(now - self.started, 1e-9)
