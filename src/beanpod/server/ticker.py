"""The server's ticker: one loop timer armed for the engine's earliest deadline, and the
turn's lifecycle events written once the turn ends. Every read a session answers ends
with `rearm`, so it is compiled (beanpod.build.COMPILED) with the clock it reads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from beanpod.core.engine import Engine
from beanpod.server.clock import Clock

if TYPE_CHECKING:  # the event log's modules load only with --events
    from beanpod.events.writer import EventWriter


class Ticker:
    def __init__(
        self, engine: Engine, clock: Clock, tick: Callable[[], None], flush: Callable[[], None]
    ) -> None:
        self.engine = engine
        self.clock = clock  # the server's clock (App.clock reads and sets this one)
        self.events: EventWriter | None = None  # the job event log, with --events DIR
        self.flush_due = False  # `flush` is scheduled for the end of this loop turn
        self.timer: asyncio.TimerHandle | None = None
        self.timer_at: int | None = None  # the deadline `timer` fires for
        self._tick = tick  # fires the engine's due timers, then rearms
        self._flush = flush  # writes the turn's events

    def rearm(self) -> None:
        """After engine work: make sure a loop timer fires by the engine's next deadline,
        and that this turn's lifecycle events are written once the turn ends."""
        events = self.events
        if events is not None and not self.flush_due and events.pending:
            self.flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)
        due = self.engine.next_deadline()
        timer_at = self.timer_at
        if due is None or (timer_at is not None and timer_at <= due):
            return
        clock = self.clock
        if clock.manual:  # nothing is due until the clock is moved
            return
        if self.timer is not None:
            self.timer.cancel()
        delay = max(0, due + 1 - clock.now()) / 1000  # see App._tick
        self.timer = asyncio.get_running_loop().call_later(delay, self._tick)
        self.timer_at = due

    def cancel(self) -> None:
        """Disarm the loop timer (an app being replaced must not tick on)."""
        if self.timer is not None:
            self.timer.cancel()
        self.fired()

    def fired(self) -> None:
        """The loop timer ran (or was cancelled): none is armed now."""
        self.timer = None
        self.timer_at = None
