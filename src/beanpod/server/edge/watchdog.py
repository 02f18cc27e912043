"""A sweep over the open connections, off the command path: closes a connection whose
started command is not complete after --request-timeout (slowloris; its half-sent job
is never stored), one idle past --idle-timeout (never one waiting in a reserve), and
one whose unread replies pass the hard output limit; with --max-memory it also samples
the connections' buffered bytes for the memory meter."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from beanpod.core.memory import MemoryMeter
from beanpod.server.edge.settings import EdgeSettings

log = logging.getLogger("beanpod.edge")
MAX_SWEEP_S = 1.0
CHUNK = 1000  # connections checked per loop turn (about a millisecond)


class Stall:
    """Where a connection's unfinished command began, and when the sweep first saw it."""

    __slots__ = ("since", "token")

    def __init__(self, token: int, since: float) -> None:
        self.token = token
        self.since = since


class Watchdog:
    def __init__(
        self,
        settings: EdgeSettings,
        sessions: Callable[[], Iterable[Any]],
        meter: MemoryMeter | None,
        clock_ms: Callable[[], int],
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.meter = meter
        self.clock_ms = clock_ms  # the engine clock, as sessions stamp `now` with it
        self.stalls: dict[Any, Stall] = {}
        self.closed_request_timeout = 0
        self.closed_idle = 0
        self.closed_output = 0
        self._handle: asyncio.TimerHandle | None = None
        self._round: list[Any] = []  # the sweep in progress: its connections, position...
        self._at = self._io = 0
        self._now = 0.0
        self._next: dict[Any, Stall] = {}
        self._stopped = False
        limits = [t for t in (settings.request_timeout_s, settings.idle_timeout_s) if t > 0]
        self.interval = min([MAX_SWEEP_S, *(t / 4 for t in limits)])

    @property
    def needed(self) -> bool:
        s = self.settings
        return bool(s.request_timeout_s or s.idle_timeout_s or self.meter or s.output_hard_limit)

    def start(self) -> None:
        if self.needed and not self._stopped:
            self._handle = asyncio.get_running_loop().call_later(self.interval, self._sweep)

    def stop(self) -> None:
        self._stopped = True
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _sweep(self) -> None:
        """One sweep, in chunks of CHUNK connections per loop turn: with tens of
        thousands of connections no single turn stalls the others' commands."""
        self._round = list(self.sessions())
        self._at, self._io, self._next = 0, 0, {}
        self._now = asyncio.get_running_loop().time()
        self._chunk()

    def _chunk(self) -> None:
        if self._stopped:
            return
        end = self._at + CHUNK
        try:
            for session in self._round[self._at : end]:
                self._io += self.visit(session, self._now, self._next)
        except Exception:  # a bug must not stop the sweeps
            log.exception("edge sweep failed")
        self._at = end
        if end < len(self._round):
            asyncio.get_running_loop().call_soon(self._chunk)
            return
        self.stalls, self._round = self._next, []
        if self.meter is not None:
            self.meter.io_bytes = self._io
        self.start()

    def sweep(self, now: float) -> None:
        """A whole sweep at once (tests, measurements)."""
        stalls: dict[Any, Stall] = {}
        io_bytes = sum(self.visit(session, now, stalls) for session in list(self.sessions()))
        self.stalls = stalls
        if self.meter is not None:
            self.meter.io_bytes = io_bytes

    def visit(self, session: Any, now: float, stalls: dict[Any, Stall]) -> int:
        """Check one connection; its buffered bytes (for the memory meter)."""
        transport = session.transport
        if session.closed or transport is None:
            return 0
        out: int = transport.get_write_buffer_size()
        if out > self.settings.output_hard_limit:
            self.closed_output += 1
            self._close(session, f"{out} bytes of replies unread")
        elif not session.parked:
            self._check_command(session, now, stalls)
        return out + int(session.parser.buffered)

    def _check_command(self, session: Any, now: float, stalls: dict[Any, Stall]) -> None:
        timeout, idle = self.settings.request_timeout_s, self.settings.idle_timeout_s
        token = session.parser.started()
        if token is None:
            if idle and self.clock_ms() - session.now >= idle * 1000 and not session.listening:
                self.closed_idle += 1
                self._close(session, "idle timeout")
            return
        stall = self.stalls.get(session)
        if stall is None or stall.token != token:
            stall = Stall(token, now)
        if timeout and now - stall.since >= timeout:
            self.closed_request_timeout += 1
            self._close(session, "request timeout (command not completed)")
            return
        stalls[session] = stall

    def _close(self, session: Any, why: str) -> None:
        log.info("closing connection: %s", why)
        session.transport.abort()  # what it had not finished sending is dropped


def watched(*registries: set[Any]) -> Callable[[], Iterable[Any]]:
    def sessions() -> Iterable[Any]:
        for registry in registries:
            yield from registry

    return sessions
