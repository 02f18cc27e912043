"""The fsync thread: runs one `SyncJob` at a time and reports back through a callback.

A dedicated thread woken through a lock, instead of a ThreadPoolExecutor: with `-f 0`
there is one handoff per group-commit batch, and the executor's per-call futures,
conditions and work queue cost more CPU than the rest of a small batch. Loop-agnostic:
`done` runs on this thread, so the caller passes something thread-safe (for asyncio,
a `call_soon_threadsafe` wrapper).
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from typing import Protocol

Done = Callable[[BaseException | None], None]


class Runnable(Protocol):
    def run(self) -> None: ...


class SyncTimes:
    """How long each sync round (fsyncs, directory sync, unlinks) took: a fixed-bucket
    histogram in seconds, written by the sync thread, read by /metrics."""

    BOUNDS: tuple[float, ...] = (
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
    )  # fmt: skip

    def __init__(self) -> None:
        self.buckets = [0] * (len(self.BOUNDS) + 1)  # per bound, then +Inf (not cumulative)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.buckets[bisect_left(self.BOUNDS, seconds)] += 1
        self.sum += seconds


class SyncThread:
    def __init__(self, name: str = "beanpod-wal") -> None:
        self._wake = threading.Lock()
        self._wake.acquire()  # released once per submitted job (or to stop)
        self._work: tuple[Runnable, Done] | None = None
        self.busy = False
        self.times = SyncTimes()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Runnable, done: Done) -> None:
        """Run `job` on the thread, then call `done(exception or None)` there.
        One job at a time: the caller waits for `done` before the next submit."""
        assert not self.busy, "one sync at a time"
        self.busy = True
        self._work = (job, done)
        self._wake.release()

    def _main(self) -> None:
        while True:
            self._wake.acquire()
            work = self._work
            if work is None:
                return
            job, done = work
            self._work = None
            started = time.perf_counter()
            try:
                job.run()
                self.times.observe(time.perf_counter() - started)
            except BaseException as exc:  # reported, never lost with the thread
                self.busy = False
                done(exc)
            else:
                self.busy = False
                done(None)

    def stop(self) -> None:
        """End the thread after the job it runs (if any); callers wait for `done` first."""
        if self._thread.is_alive():
            self._work = None
            if self._wake.locked():
                self._wake.release()
            self._thread.join()
