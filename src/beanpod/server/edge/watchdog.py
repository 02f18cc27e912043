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
        limits = [t for t in (settings.request_timeout_s, settings.idle_timeout_s) if t > 0]
        self.interval = min([MAX_SWEEP_S, *(t / 4 for t in limits)])

    @property
    def needed(self) -> bool:
        s = self.settings
        return bool(s.request_timeout_s or s.idle_timeout_s or self.meter or s.output_hard_limit)

    def start(self) -> None:
        if self.needed:
            self._handle = asyncio.get_running_loop().call_later(self.interval, self._sweep)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _sweep(self) -> None:
        try:
            self.sweep(asyncio.get_running_loop().time())
        finally:
            self.start()

    def sweep(self, now: float) -> None:
        io_bytes = 0
        stalls: dict[Any, Stall] = {}
        for session in list(self.sessions()):
            transport = session.transport
            if session.closed or transport is None:
                continue
            out = transport.get_write_buffer_size()
            io_bytes += out + session.parser.buffered
            if out > self.settings.output_hard_limit:
                self.closed_output += 1
                self._close(session, f"{out} bytes of replies unread")
            elif not session.parked:
                self._check_command(session, now, stalls)
        self.stalls = stalls
        if self.meter is not None:
            self.meter.io_bytes = io_bytes

    def _check_command(self, session: Any, now: float, stalls: dict[Any, Stall]) -> None:
        timeout, idle = self.settings.request_timeout_s, self.settings.idle_timeout_s
        token = session.parser.started()
        if token is None:
            if idle and self.clock_ms() - session.now >= idle * 1000:
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
