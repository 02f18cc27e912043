"""One connection to the Redis-protocol door (protocols/resp): parse every whole request
of a read, run them in order, answer the batch with one write. A BRPOP parks the session;
pub/sub messages are written as they are published."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from beanpod.protocols.resp import keys, pubsub
from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.commands import dispatch
from beanpod.protocols.resp.reader import Rejected, RequestReader
from beanpod.server.batch_session import BatchSession
from beanpod.server.peers import peer_name

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.protocols.resp.context import Door
    from beanpod.server.app import App

log = logging.getLogger("beanpod.redis")
INTERNAL_ERROR = w.error("ERR internal error (see the server's log)")


class RedisSession(BatchSession):
    def __init__(self, app: App, door: Door) -> None:
        super().__init__(app, app.redis_sessions)
        self.door = door
        self.parser = RequestReader()
        self.conn: Conn  # made in connection_made, which knows the peer
        self.proto = 2
        self.authed = False
        self.client_id = door.client_id()
        self.channels: set[bytes] = set()
        self.multi: list[list[bytes]] | None = None
        self.waiting_on: list[bytes] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.conn = self.app.engine.connect(peer_name(transport), self.app.clock.now())
        super().connection_made(transport)
        log.debug("redis conn %d open", self.conn.id)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.lost:
            return
        super().connection_lost(exc)
        keys.withdraw(self)
        for channel in list(self.channels):
            pubsub.forget(self, channel)
        self.app.engine.disconnect(self.conn, self.app.clock.now())
        self.app.rearm()
        log.debug("redis conn %d closed", self.conn.id)

    def push(self, reply: bytes) -> None:
        if not self.closed and self.transport is not None:
            self._send(reply)

    def answer(self, reply: bytes) -> None:
        self._answer(reply)

    def _run(self) -> None:
        """Run every whole buffered request; answer them with one write."""
        mark = self._mark()
        out: list[bytes] = []
        close = False
        while (req := self.parser.next_command()) is not None:
            if isinstance(req, Rejected):
                out.append(w.error(req.message))
                close = True
                break
            try:
                reply = dispatch(self, req)
            except Exception:  # a bug must cost one reply, never the server or the connection
                log.exception("redis conn %d: internal error", self.conn.id)
                reply = INTERNAL_ERROR
            if reply is None:
                self.parked = True
                break
            out.append(reply)
            if req[0].lower() == b"quit":
                close = True
                break
        self._flush(out, close, mark)
