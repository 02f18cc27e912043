"""What every dialect's connection shares: a batch of commands per read, one write per
batch, parking behind a blocking command, and replies held for the WAL's group commit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from mypy_extensions import mypyc_attr

from beanpod.server.clock import ManualClock
from beanpod.server.peers import peer_name
from beanpod.server.ticker import Ticker

if TYPE_CHECKING:
    from beanpod.durability.log import Commits
    from beanpod.server.app import App


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by interpreted code
class BatchSession(asyncio.Protocol):
    """Subclasses set `parser` and implement `_run()` (run every buffered command, then
    `_flush(out, close, mark)`); a parked command is answered through `_answer()`."""

    parser: Any

    def __init__(self, app: App, registry: set[Any]) -> None:
        self.app = app
        self.ticker: Ticker = app.ticker  # the clock and the loop timer, compiled
        self.now: int = 0
        self.transport: asyncio.Transport | None = None
        self.parked = False  # a blocking command waits; later commands wait behind it
        self.closed = False
        self.held = 0  # replies waiting for the WAL's group commit (durability/commit.py)
        self.commits: Commits | None = app.wal  # the write-ahead log, with -b DIR
        # every reply goes through the log's `hold` (a cluster's: Commits.holds_every_reply)
        self.hold_all = app.wal is not None and app.wal.holds_every_reply()
        self.early: bytes | None = None  # a parked command's reply, sent with the next batch
        self.batch_bytes: int = 0  # see protocols/beanstalkd/inspect.py _found
        self.admitted = False  # counted in by the edge (server/edge/gate.py)
        self.lost = False  # connection_lost ran (it must run once: TLS may call it late)
        self.listening = False  # subscribed to pub/sub: never idle (as Redis's `timeout`)
        self._registry = registry

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.now = self.app.clock.now()  # the idle timeout counts from here
        if self.app.edge.admit(self, self.transport):
            self.ready(self.transport)

    def ready(self, transport: asyncio.Transport) -> None:
        """Admitted (and, on a TLS listener, past the handshake): serve it."""
        self.transport = transport  # pauses reading past 64 KiB unread (pause_writing)
        self._registry.add(self)

    def data_received(self, data: bytes) -> None:
        self.parser.feed(data)
        if not self.parked:
            self._turn()

    def _turn(self) -> None:
        """Run what is buffered at the clock's time, then rearm the loop timer."""
        ticker = self.ticker
        self.now = ticker.clock.now()
        self._run()
        ticker.rearm()

    def eof_received(self) -> bool | None:
        """The client half-closed: what is answered so far still goes out."""
        self._send_early()
        return self._close_after_held()

    def _close_after_held(self) -> bool:
        """At EOF: close now (False: asyncio closes the transport), or, with replies still
        held for the log, once they are sent (True keeps it open until then)."""
        commits = self.commits
        if commits is None or not self.held:
            return False
        commits.hold(self, b"", True)
        return True

    def released(self, data: bytes, close: bool) -> None:
        """A reply held for the log may go out (durability/log.py, Holder)."""
        self.held -= 1
        transport = self.transport
        if transport is None or self.closed:
            return
        transport.write(data)
        if close:
            transport.close()

    def _send_early(self) -> None:
        if self.early is not None and self.transport is not None and not self.closed:
            self.transport.write(self.early)
        self.early = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = self.closed = True
        self.parked = False
        self._registry.discard(self)
        if self.admitted:
            self.admitted = False
            self.app.edge.left()

    def pause_writing(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()  # the client is not reading its replies

    def resume_writing(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def client_time(self, now: int) -> None:
        """A qless request's client time (ms): moves a manual clock there (never
        backwards) and `now` with it; the real clock ignores it."""
        clock = self.app.clock
        if isinstance(clock, ManualClock):  # its move fires what fell due
            self.now = clock.move_to(now)

    def _run(self) -> None:
        raise NotImplementedError

    def _run_each(
        self, handle: Callable[[Any], tuple[bytes | None, bool]], failed: bytes, log: logging.Logger
    ) -> None:
        """Run every whole buffered command through `handle` (its reply, None when it
        parks, and whether the connection closes after it) and answer them with one write;
        a handler that raises costs that command `failed`, never the server or the
        connection. (The beanstalkd session, the hot path, has its own loop.)"""
        mark = self._mark()
        out: list[bytes] = []
        close = False
        while (command := self.parser.next_command()) is not None:
            try:
                reply, close = handle(command)
            except Exception:
                where = "?" if self.transport is None else peer_name(self.transport)
                log.exception("internal error (client %s)", where)
                reply, close = failed, False
            if reply is None:
                self.parked = True
                break
            out.append(reply)
            if close:
                break
        self._flush(out, close, mark)

    def _answer(self, reply: bytes) -> None:
        """Send the reply of the parked command; later buffered commands run next turn."""
        self.parked = False
        if self.closed or self.transport is None:
            return
        if not self.parser.buffered:
            self._send(reply)
        elif self.commits is None:  # commands wait behind it: one write for all their replies
            self.early = reply
            asyncio.get_running_loop().call_soon(self._resume)
        else:  # with the WAL, replies keep their own commit order
            self._send(reply)
            asyncio.get_running_loop().call_soon(self._resume)

    def _resume(self) -> None:
        if not self.parked and not self.closed:
            self._turn()

    def _send(self, data: bytes) -> None:
        """Write now, unless earlier replies are still held for the WAL (keep order) or
        the log wants every reply to wait for what it appended (a cluster)."""
        commits = self.commits
        if commits is not None and (self.held or self.hold_all):
            commits.hold(self, data)
        elif self.transport is not None:
            self.transport.write(data)

    def _mark(self) -> int:
        """Where the WAL stood before a batch (to tell whether the batch wrote records)."""
        commits = self.commits
        return 0 if commits is None else commits.appended

    def _holding(self, mark: int) -> Commits | None:
        """The log, when this turn's replies must wait for it: the turn appended records
        (`appended` moved past `mark`), earlier replies are still held (order), or the log
        holds every reply (a cluster's); None: they may be written at once."""
        commits = self.commits
        if commits is not None and (self.held or commits.appended != mark or self.hold_all):
            return commits
        return None

    def _flush(self, out: list[bytes], close: bool, mark: int) -> None:
        """Write a batch's replies at once; with the WAL on, after its records are written
        (and with `-f 0` fsynced) if the batch wrote any."""
        if self.batch_bytes:
            self.batch_bytes = 0
        if self.early is not None:  # a parked command answered since the last batch
            out.insert(0, self.early)
            self.early = None
        commits = self._holding(mark)
        if commits is not None and (out or close):
            commits.hold(self, b"".join(out), close)
            return
        transport = self.transport
        assert transport is not None
        if out:
            transport.write(out[0] if len(out) == 1 else b"".join(out))
        if close:
            transport.close()
