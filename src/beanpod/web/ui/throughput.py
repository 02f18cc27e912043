"""The last hour of throughput, kept in memory for the dashboard's chart: every
SAMPLE_SECONDS the server's running totals are read (no per-command work) and the
rates since the previous sample appended to a ring of one hour."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any

SAMPLE_SECONDS = 10
HOUR_POINTS = 3600 // SAMPLE_SECONDS
Totals = Callable[[], tuple[int, int, int]]  # (puts, reserves, deletes) so far


class Throughput:
    def __init__(self, totals: Totals, interval: float = SAMPLE_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:  # fmt: skip
        self.totals = totals
        self.interval = interval
        self.clock = clock
        self.points: deque[tuple[float, ...]] = deque(maxlen=HOUR_POINTS)
        self._last = (clock(), *totals())
        self._timer: asyncio.TimerHandle | None = None

    def sample(self) -> None:
        now, current = self.clock(), self.totals()
        then, *before = self._last
        span = max(now - then, 1e-9)
        rates = [(c - b) / span for c, b in zip(current, before, strict=True)]
        self.points.append((round(now, 3), *(round(r, 3) for r in rates)))
        self._last = (now, *current)

    def start(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self.interval, self._tick)

    def _tick(self) -> None:
        self.sample()
        self.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def as_json(self) -> dict[str, Any]:
        puts, reserves, deletes = self.totals()  # live: the page's rates between its polls
        return {
            "interval_s": self.interval,
            "series": ["put", "reserve", "delete"],
            "points": [list(p) for p in self.points],
            "totals": {"put": puts, "reserve": reserves, "delete": deletes},
        }
