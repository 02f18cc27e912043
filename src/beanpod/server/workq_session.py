"""One Workq connection: parse every complete command of a read, run them in order,
answer the batch with one write. A blocking lease, run or result parks the session;
later pipelined commands wait behind it until its reply is delivered."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from beanpod.core.workq import Wait
from beanpod.protocols.workq.commands import Parser, Rejected
from beanpod.protocols.workq.context import Dialect
from beanpod.protocols.workq.handlers import handle
from beanpod.protocols.workq.wire import server_error
from beanpod.server.batch_session import BatchSession
from beanpod.server.peers import forget_peer, note_peer, peer_name

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.server.app import App

log = logging.getLogger("beanpod.workq")
INTERNAL_ERROR = server_error("Internal error")


class WorkqSession(BatchSession):
    def __init__(self, app: App, dialect: Dialect) -> None:
        super().__init__(app, app.workq_sessions)
        self.dialect = dialect
        self.parser = Parser()
        self.conn: Conn  # made in connection_made, which knows the peer
        self.wait: Wait | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.conn = self.dialect.workq.connect(peer_name(transport), self.app.clock.now())
        super().connection_made(transport)
        log.debug("workq conn %d open", self.conn.id)
        note_peer(self.app.events, self.conn.id, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.lost:
            return
        super().connection_lost(exc)
        self.dialect.workq.disconnect(self.conn, self.wait, self.app.clock.now())
        self.wait = None
        self.app.rearm()
        log.debug("workq conn %d closed", self.conn.id)
        forget_peer(self.app.events, self.conn.id)

    def eof_received(self) -> bool | None:
        """The client half-closed: a payload it cut short is refused, as the reference."""
        if not self.parked and (cut := self.parser.at_eof()) is not None:
            self._flush([cut.reply], False, self._mark())
        return super().eof_received()

    def deliver(self, reply: bytes) -> None:
        """Answer the parked command; later buffered commands run on the next loop turn."""
        self.wait = None
        self._answer(reply)

    def _run(self) -> None:
        self._run_each(self._one, INTERNAL_ERROR, log)

    def _one(self, cmd: Any) -> tuple[bytes | None, bool]:
        """A command's reply (None: it parked) and whether the connection closes after it
        (b"": the output limit; a rejected command that closes, as the reference)."""
        reply = handle(self, cmd)
        return reply, reply == b"" or (isinstance(cmd, Rejected) and cmd.close)
