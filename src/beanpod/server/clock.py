"""The server's clock: wall-clock milliseconds that never jump (monotonic underneath)."""

from __future__ import annotations

import time


class Clock:
    """Milliseconds since the epoch at start-up, advanced by the monotonic clock, so
    timers are immune to wall-clock jumps while delayed due times stay meaningful
    across restarts (they are stored as wall-clock instants)."""

    def __init__(self) -> None:
        wall_base = time.time_ns() // 1_000_000
        self._offset = wall_base - time.monotonic_ns() // 1_000_000  # wall - monotonic

    def now(self) -> int:
        return self._offset + time.monotonic_ns() // 1_000_000
