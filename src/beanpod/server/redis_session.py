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
        self.conn = self.app.engine.connect(
            peer_name(transport), self.app.clock.now(), dialect="redis"
        )
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
        self._run_each(self._one, INTERNAL_ERROR, log)

    def _one(self, req: Rejected | list[bytes]) -> tuple[bytes | None, bool]:
        """A request's reply (None: it parked) and whether the connection closes after it."""
        if isinstance(req, Rejected):
            return w.error(req.message), True
        reply = dispatch(self, req)
        return reply, req[0].lower() == b"quit"
