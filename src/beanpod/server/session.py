"""One beanstalkd connection: parse every complete command of a read, run them in order,
answer the batch with one write. A blocking reserve parks the session; later pipelined
commands wait behind it until the engine delivers the reserve's outcome."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, cast

from beanpod.core.waiters import ReserveOutcome
from beanpod.protocols.beanstalkd import wire
from beanpod.protocols.beanstalkd.commands import Parser
from beanpod.protocols.beanstalkd.handlers import CLOSE, HANDLERS, encode_outcome

if TYPE_CHECKING:
    from beanpod.server.app import App

log = logging.getLogger("beanpod.session")


class BeanstalkdSession(asyncio.Protocol):
    def __init__(self, app: App) -> None:
        self.app = app
        self.dialect = app.dialect
        self.parser = Parser(app.dialect.max_job_size)
        self.conn = app.engine.connect()
        self.now = 0
        self.transport: asyncio.Transport | None = None
        self.parked = False  # a reserve is waiting; later commands wait behind it
        self.eof = False
        self.closed = False
        self.held = 0  # replies waiting for the WAL's group commit (server/commit.py)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.app.sessions.add(self)
        log.debug("conn %d open", self.conn.id)

    def data_received(self, data: bytes) -> None:
        self.parser.feed(data)
        if not self.parked:
            self.now = self.app.clock.now()
            self._run()
            self.app.rearm()

    def eof_received(self) -> bool:
        """A half-closed client gets TIMED_OUT for a waiting reserve, then we close."""
        self.eof = True
        if self.parked:
            self.app.engine.cancel_wait(self.conn)
            self.parked = False
            self._send(wire.TIMED_OUT)
            self.now = self.app.clock.now()
            self._run()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.parked = False
        self.app.sessions.discard(self)
        self.app.engine.disconnect(self.conn, self.app.clock.now())
        self.app.rearm()
        log.debug("conn %d closed", self.conn.id)

    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()  # the client is not reading its replies

    def resume_writing(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def deliver(self, outcome: ReserveOutcome) -> None:
        """Called by the engine when this session's parked reserve is answered."""
        self.parked = False
        if self.closed or self.transport is None:
            return
        self._send(encode_outcome(outcome))
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
        handlers = HANDLERS
        close = False
        while (cmd := next_command()) is not None:
            try:
                reply = handlers[cmd[0]](self, cmd)
            except Exception:  # a bug must cost one reply, never the server or the connection
                log.exception("conn %d: internal error on %r", self.conn.id, cmd[0])
                reply = wire.INTERNAL_ERROR
            if reply is None:
                if not self.eof:
                    self.parked = True
                    break
                self.app.engine.cancel_wait(self.conn)
                reply = wire.TIMED_OUT
            elif reply is CLOSE:
                close = True
                break
            out.append(reply)
        transport = self.transport
        assert transport is not None
        if wal is not None and (self.held or wal.appended != mark) and (out or close):
            wal.commit.hold(self, b"".join(out), close)
            return
        if out:
            transport.write(out[0] if len(out) == 1 else b"".join(out))
        if close:
            transport.close()
