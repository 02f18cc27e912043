"""The clock a test holds: `server.clock.advance(seconds)` moves the server's virtual
clock on the server's loop, firing what fell due (delays, TTR expiry, DEADLINE_SOON,
pause ends, Workq TTLs and schedules, qless lock expiry and recurring jobs) before it
returns."""

from __future__ import annotations

from collections.abc import Callable

from beanpod.server.clock import Clock, ManualClock
from beanpod.testing.errors import RealClockError

VIRTUAL, REAL = "virtual", "real"  # the clock= a server is started with


class TestClock:
    """The server's clock as the test sees it: seconds, moved only on the loop."""

    __test__ = False  # not a pytest test class

    def __init__(self, clock: Clock, run_on_loop: Callable[[Callable[[], int]], int]) -> None:
        self.clock = clock
        self._run = run_on_loop

    @property
    def virtual(self) -> bool:
        return isinstance(self.clock, ManualClock)

    def now_ms(self) -> int:
        """The server's time, ms since the epoch."""
        return self._run(self.clock.now)

    def advance(self, seconds: float) -> None:
        """Move the virtual clock forward; what fell due happens before this returns."""
        clock = self.clock
        if not isinstance(clock, ManualClock):
            raise RealClockError(
                "this server runs on the real clock (clock='real'), which cannot be "
                "advanced; start it with clock='virtual' (the default) to move time"
            )
        if seconds < 0:
            raise ValueError(f"time only moves forward (advance({seconds}))")
        self._run(lambda: clock.advance(round(seconds * 1000)))
