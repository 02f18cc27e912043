"""One Workq connection: parse every complete command of a read, run them in order,
answer the batch with one write. A blocking lease, run or result parks the session;
later pipelined commands wait behind it until its reply is delivered."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, cast

from beanpod.core.workq import Wait
from beanpod.protocols.workq.commands import Parser, Rejected
from beanpod.protocols.workq.context import Dialect
from beanpod.protocols.workq.handlers import handle
from beanpod.protocols.workq.wire import server_error

if TYPE_CHECKING:
    from beanpod.server.app import App

log = logging.getLogger("beanpod.workq")
INTERNAL_ERROR = server_error("Internal error")


class WorkqSession(asyncio.Protocol):
    def __init__(self, app: App, dialect: Dialect) -> None:
        self.app = app
        self.dialect = dialect
        self.parser = Parser()
        self.conn = dialect.workq.connect()
        self.now = 0
        self.wait: Wait | None = None
        self.transport: asyncio.Transport | None = None
        self.parked = False
        self.closed = False
        self.held = 0  # replies waiting for the WAL's group commit (server/commit.py)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.app.workq_sessions.add(self)
        log.debug("workq conn %d open", self.conn.id)

    def data_received(self, data: bytes) -> None:
        self.parser.feed(data)
        if not self.parked:
            self.now = self.app.clock.now()
            self._run()
            self.app.rearm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.parked = False
        self.app.workq_sessions.discard(self)
        self.dialect.workq.disconnect(self.conn, self.wait, self.app.clock.now())
        self.wait = None
        self.app.rearm()
        log.debug("workq conn %d closed", self.conn.id)

    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def deliver(self, reply: bytes) -> None:
        """Answer the parked command; later buffered commands run on the next loop turn."""
        self.wait = None
        self.parked = False
        if self.closed or self.transport is None:
            return
        self._send(reply)
        if self.parser.buffered:
            asyncio.get_running_loop().call_soon(self._resume)

    def _resume(self) -> None:
        if not self.parked and not self.closed:
            self.now = self.app.clock.now()
            self._run()
            self.app.rearm()

    def _send(self, data: bytes) -> None:
        """Write now, unless earlier replies are still held for the WAL (keep order)."""
        wal = self.app.wal
        if self.held and wal is not None:
            wal.commit.hold(self, data)
        elif self.transport is not None:
            self.transport.write(data)

    def _run(self) -> None:
        """Run every complete buffered command; write their replies at once (once their
        records are written, when the WAL is on)."""
        wal = self.app.wal
        mark = 0 if wal is None else wal.appended
        out: list[bytes] = []
        next_command = self.parser.next_command
        close = False
        while (cmd := next_command()) is not None:
            try:
                reply = handle(self, cmd)
            except Exception:  # a bug must cost one reply, never the server or the connection
                log.exception("workq conn %d: internal error", self.conn.id)
                reply = INTERNAL_ERROR
            if reply is None:
                self.parked = True
                break
            out.append(reply)
            if isinstance(cmd, Rejected) and cmd.close:
                close = True
                break
        transport = self.transport
        assert transport is not None
        if wal is not None and (self.held or wal.appended != mark) and (out or close):
            wal.commit.hold(self, b"".join(out), close)
            return
        if out:
            transport.write(out[0] if len(out) == 1 else b"".join(out))
        if close:
            transport.close()
