"""One beanstalkd connection: parse every complete command of a read, run them in order,
answer the batch with one write. A blocking reserve parks the session; later pipelined
commands wait behind it until the engine delivers the reserve's outcome."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from mypy_extensions import mypyc_attr

from beanpod.core.waiters import ReserveOutcome
from beanpod.protocols.beanstalkd import wire
from beanpod.protocols.beanstalkd.commands import Parser
from beanpod.protocols.beanstalkd.context import Context
from beanpod.protocols.beanstalkd.handlers import (
    CLOSE,
    HANDLERS,
    Handler,
    delete,
    encode_outcome,
    put,
    reserve_with_timeout,
)
from beanpod.server.batch_session import BatchSession
from beanpod.server.peers import forget_peer, note_peer, peer_name

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.server.app import App

log = logging.getLogger("beanpod.session")
PUT: Final = wire.PUT
DELETE: Final = wire.DELETE
RESERVE_WITH_TIMEOUT: Final = wire.RESERVE_WITH_TIMEOUT
OWN_HANDLERS: Final = HANDLERS  # Final: compiled, a C static (an import is a dict lookup)


def _closed(outcome: ReserveOutcome) -> None:
    """A closed session's deliver: the engine forgot its waiter, so never called."""


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by interpreted code
class BeanstalkdSession(BatchSession, Context):
    def __init__(self, app: App) -> None:
        super().__init__(app, app.sessions)
        self.dialect = app.dialect
        self.parser = self.commands = Parser(app.dialect.max_job_size)
        self.conn: Conn  # made in connection_made, which knows the peer
        # The test harness's sessions wrap these (beanpod/testing); an instance attribute,
        # so compiled it is a native read (a class attribute is a dict lookup).
        self.handlers: dict[bytes, Handler] = HANDLERS
        self.eof = False
        # One bound method handed to every reserve (reading `self.deliver` would make a
        # new one each time: ~2 % of a reserve+delete pair).
        self.deliver = self._deliver

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.conn = self.app.engine.connect(peer_name(transport), self.app.clock.now())
        self.opened(transport)

    def opened(self, transport: asyncio.BaseTransport) -> None:
        """The connection is known to the engine (`self.conn`): serve the transport."""
        super().connection_made(transport)
        log.debug("conn %d open", self.conn.id)
        note_peer(self.app.events, self.conn.id, transport)

    def data_received(self, data: bytes) -> None:
        self.commands.hold(data)  # `commands` is typed: a native call (`parser` is Any)
        if not self.parked:
            self._turn()

    def eof_received(self) -> bool:
        """A half-closed client gets TIMED_OUT for a waiting reserve, then we close (after
        the replies held for the log: a cluster holds every one, `-f 0` those of a put)."""
        self.eof = True
        if self.parked:
            self.app.engine.cancel_wait(self.conn)
            self.parked = False
            self._send(wire.TIMED_OUT)
        if self.early is not None or self.parser.buffered:
            self.now = self.app.clock.now()
            self._run()  # answers what is buffered (a reserve now times out), then we close
        return self._close_after_held()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.lost:
            return
        super().connection_lost(exc)
        self.app.engine.disconnect(self.conn, self.app.clock.now())
        self.deliver = _closed  # no cycle through the bound method: freed by refcount
        self.app.rearm()
        log.debug("conn %d closed", self.conn.id)
        forget_peer(self.app.events, self.conn.id)

    def _deliver(self, outcome: ReserveOutcome) -> None:
        """Called by the engine when this session's parked reserve is answered."""
        self._answer(encode_outcome(outcome))

    def answer(self, reply: bytes) -> None:
        """Called when a parked extension command (a qless events poll) is answered."""
        self._answer(reply)

    def _run(self) -> None:
        """Run every complete buffered command; answer them with one write."""
        mark = self._mark()
        parser = self.commands  # typed: native calls into the parser
        cmd = parser.whole_command()  # depth 1: the read is one common command
        if cmd is not None:
            self._run_one(cmd, mark)
            return
        out: list[bytes] = []
        handlers = self.handlers
        close = stop = False
        while not stop and (batch := parser.take()):
            i, n = 0, len(batch)  # by index: compiled, a list index is native
            while i < n:
                cmd = batch[i]
                i += 1
                reply = self._reply(cmd, handlers)
                if reply is None:
                    if not self.eof:
                        self.parked = stop = True
                        parser.give_back(batch[i:])  # they run after the reserve
                        break
                    self.app.engine.cancel_wait(self.conn)
                    reply = wire.TIMED_OUT
                elif reply is CLOSE:
                    close = stop = True
                    break
                out.append(reply)
            if parser.drained:
                break
        self._flush(out, close, mark)

    def _run_one(self, cmd: tuple[Any, ...], mark: int) -> None:
        """`_run` for a read of one command: no lists, and its reply written at once
        when nothing else is pending (no early reply; with the WAL, no record appended
        and no reply held), else handed to the log's `hold` as `_flush` would."""
        reply = self._reply(cmd, self.handlers)
        if reply is None:
            if not self.eof:
                self.parked = True
                self._flush([], False, mark)
                return
            self.app.engine.cancel_wait(self.conn)
            reply = wire.TIMED_OUT
        elif reply is CLOSE:
            self._flush([], True, mark)
            return
        transport = self.transport
        if self.early is not None or transport is None:
            self._flush([reply], False, mark)
            return
        self.batch_bytes = 0
        commits = self._holding(mark)  # `_flush` for one reply, without its list and join
        if commits is not None:
            commits.hold(self, reply)
        else:
            transport.write(reply)

    def _reply(self, cmd: tuple[Any, ...], handlers: dict[bytes, Handler]) -> bytes | None:
        """`cmd`'s reply (None: it parked). Compiled, the hot verbs' handlers are native
        calls, unless the test harness wrapped the handlers."""
        verb: bytes = cmd[0]
        try:
            if handlers is not OWN_HANDLERS:
                return handlers[verb](self, cmd)
            if verb == PUT:
                return put(self, cmd)
            if verb == DELETE:
                return delete(self, cmd)
            if verb == RESERVE_WITH_TIMEOUT:
                return reserve_with_timeout(self, cmd)
            return handlers[verb](self, cmd)
        except Exception:  # a bug must cost one reply, never the server or the connection
            log.exception("conn %d: internal error on %r", self.conn.id, verb)
            return wire.INTERNAL_ERROR
