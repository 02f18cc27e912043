"""The server's clocks. The engine takes `now` (integer ms) on every call; the server
reads it from one of these.

- `Clock` (real time): wall-clock milliseconds that never jump (monotonic underneath).
- `ManualClock`: moves only when told (`advance`, `move_to`), never backwards. The test
  harness's virtual clock, and `beanpod serve --clock manual`, where a qless request's
  client-supplied `now` moves it. Whoever owns the server listens with `on_move` to fire
  the engine's due timers at once (no loop timers are armed on a manual clock).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import ClassVar, Final

from mypy_extensions import mypyc_attr

# Final: compiled, a C static (no lookup of `time`'s attribute on every read).
_monotonic_ns: Final = time.monotonic_ns
REAL, MANUAL = "real", "manual"  # the names `--clock` accepts (also `manual:SECONDS`)


@mypyc_attr(allow_interpreted_subclasses=True)  # tests subclass it
class Clock:
    """Milliseconds since the epoch at start-up, advanced by the monotonic clock, so
    timers are immune to wall-clock jumps while delayed due times stay meaningful
    across restarts (they are stored as wall-clock instants). Compiled (every read a
    session answers reads it)."""

    manual: ClassVar[bool] = False

    def __init__(self) -> None:
        wall_base = time.time_ns() // 1_000_000
        self._offset = wall_base - time.monotonic_ns() // 1_000_000  # wall - monotonic

    def now(self) -> int:
        return self._offset + _monotonic_ns() // 1_000_000


class ManualClock(Clock):
    """A clock that stands still until moved. It starts at the wall-clock time (or
    `start_ms`) so ids and timestamps derived from it still look like real instants."""

    manual: ClassVar[bool] = True

    def __init__(self, start_ms: int | None = None) -> None:
        self._now = time.time_ns() // 1_000_000 if start_ms is None else start_ms
        self.on_move: Callable[[int], None] | None = None  # called with the new `now`

    def now(self) -> int:
        return self._now

    def advance(self, ms: int) -> int:
        """Move forward by `ms` milliseconds (>= 0); returns the new time."""
        if ms < 0:
            raise ValueError(f"a clock cannot move backwards (advance by {ms} ms)")
        return self.move_to(self._now + ms)

    def move_to(self, ms: int) -> int:
        """Move to `ms` if it is later than now (a moment in the past leaves the clock
        where it is); returns the time after the move."""
        if ms > self._now:
            self._now = ms
            if self.on_move is not None:
                self.on_move(ms)
        return self._now


def make_clock(kind: str) -> Clock:
    """The clock `--clock KIND` names: `real`, `manual` (starting at the wall-clock
    time) or `manual:SECONDS` (starting at that many seconds since the epoch, e.g.
    `manual:0` for qless-core's suite, whose times start at 0)."""
    if kind == REAL:
        return Clock()
    name, colon, start = kind.partition(":")
    if name == MANUAL:
        return ManualClock(_start_ms(start) if colon else None)
    raise ValueError(
        f"unknown clock {kind!r} (expected {REAL!r}, {MANUAL!r} or {MANUAL!r}:SECONDS)"
    )


def _start_ms(seconds: str) -> int:
    try:
        value = float(seconds)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"a manual clock starts at seconds >= 0 since the epoch, not {seconds!r}")
    return round(value * 1000)
