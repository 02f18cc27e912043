"""qless's pub/sub channels, read by long-poll (`events`, docs/qless.md).

qless publishes on Redis channels (qless-semantics.md section 12): per tracked job
(`track untrack put popped stalled completed failed canceled`, data = the jid), `log`
(JSON `{event, jid, ...}` for put, completed, advanced, failed, canceled, lock_lost,
config_set, config_unset) and `w:<worker>` (lock_lost / canceled for that worker's job).
Names are given without Redis's `ql:` prefix (a `ql:` prefix is accepted and dropped);
`*` reads every channel, as Redis's `psubscribe ql:*` does.

Here every message gets a sequence number and goes into a bounded buffer. A reader asks
for the messages on some channels after its cursor (the last sequence number it saw);
when there are none yet it may wait: the poll is parked on its connection, like a
blocking reserve, and answered by the first matching publish or by its timeout. A reader
that falls more than BUFFER messages behind is told how many it missed. Delivery happens
when the change is made in memory (before a write-ahead log commit), as Redis publishes.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.ext import QlessExt
    from beanpod.core.qless.store import Qless
    from beanpod.core.waiters import ReserveOutcome

BUFFER = 10_000  # messages kept for readers that are behind
MAX_COUNT = 1000  # messages per answer
PREFIX = "ql:"
ANY = "*"  # as a channel name: every channel (Redis's `psubscribe *`)

Answer = Callable[[dict[str, Any]], None]


class Poll:
    """A parked reader: answered once, by a publish on one of its channels or its
    timeout; `alive()` turns False when its connection went away."""

    __slots__ = ("alive", "answer", "channels", "count", "cursor")

    def __init__(
        self, channels: frozenset[str], cursor: int, count: int, answer: Answer,
        alive: Callable[[], bool],
    ) -> None:  # fmt: skip
        self.channels = channels
        self.cursor = cursor
        self.count = count
        self.answer = answer
        self.alive = alive


class Channels:
    def __init__(self) -> None:
        self.seq = 0  # of the newest message
        self.buffer: deque[tuple[int, str, str]] = deque(maxlen=BUFFER)
        self.polls: dict[str, dict[int, Poll]] = {}  # channel -> parked readers
        # Told every message as it is published (the Redis door's subscribers).
        self.listeners: list[Callable[[str, str], None]] = []

    def publish(self, channel: str, data: str) -> None:
        self.seq += 1
        self.buffer.append((self.seq, channel, data))
        for listener in self.listeners:
            listener(channel, data)
        if not self.polls:  # nobody is parked: the usual case
            return
        waiting = self.polls.pop(channel, None)
        everything = self.polls.pop(ANY, None)
        if everything is not None:
            waiting = everything if waiting is None else {**waiting, **everything}
        for poll in () if waiting is None else waiting.values():
            self.withdraw(poll)
            if poll.alive():
                poll.answer(self.read(poll.channels, poll.cursor, poll.count))

    def read(self, channels: frozenset[str], cursor: int | None, count: int) -> dict[str, Any]:
        """Messages on `channels` after `cursor` (None: from now), at most `count`:
        {cursor: pass it next time, missed: messages dropped unread, messages: [...]}."""
        head = self.seq
        if cursor is None or cursor >= head:
            return {"cursor": head, "missed": 0, "messages": []}
        first = head - len(self.buffer) + 1  # sequence number of the oldest kept
        missed = max(0, first - 1 - max(0, cursor))
        start = max(0, cursor + 1 - first)
        found: list[dict[str, Any]] = []
        last = head
        every = ANY in channels
        for seq, channel, data in islice(self.buffer, start, None):
            if every or channel in channels:
                found.append({"seq": seq, "channel": channel, "data": data})
                if len(found) >= count:
                    last = seq
                    break
        return {"cursor": last, "missed": missed, "messages": found}

    def park(self, poll: Poll) -> None:
        for channel in poll.channels:
            waiting = self.polls.setdefault(channel, {})
            if len(waiting) >= 64:  # drop readers whose connection went away meanwhile
                for key in [key for key, other in waiting.items() if not other.alive()]:
                    del waiting[key]
            waiting[id(poll)] = poll

    def withdraw(self, poll: Poll) -> None:
        """Forget a parked reader (answered, timed out or gone)."""
        for channel in poll.channels:
            waiting = self.polls.get(channel)
            if waiting is not None:
                waiting.pop(id(poll), None)
                if not waiting:
                    del self.polls[channel]


def names(channels: Iterable[str]) -> frozenset[str]:
    """Channel names without Redis's `ql:` prefix."""
    return frozenset(c[len(PREFIX) :] if c.startswith(PREFIX) else c for c in channels)


def poll(
    q: Qless, now: int, conn: Conn | None, channels: frozenset[str], cursor: int | None,
    timeout_ms: int, count: int, answer: Answer | None,
) -> dict[str, Any] | None:  # fmt: skip
    """events(...): the messages now, or None after parking `conn` until a message on
    `channels` is published or `timeout_ms` passes; `answer` then gets the result. The
    poll rides on the engine's parked-reserve slot of the connection, so a disconnect
    withdraws it (it counts in `current-waiting` while parked)."""
    q.at(now)
    hub = q.channels
    found = hub.read(channels, cursor, count)
    if found["messages"] or found["missed"] or timeout_ms <= 0 or conn is None or answer is None:
        return found
    engine = q.engine
    reply: Answer = answer  # narrowed for the closures below

    def timed_out(outcome: ReserveOutcome) -> None:
        """Engine timer: the timeout passed (the engine has unparked the connection)."""
        hub.withdraw(parked)
        reply(hub.read(channels, parked.cursor, count))

    engine.park(conn, now + timeout_ms, timed_out, named=[])
    waiter = conn.waiter
    assert waiter is not None

    def published(result: dict[str, Any]) -> None:
        engine.unpark(waiter)
        reply(result)

    parked = Poll(channels, found["cursor"], count, published, lambda: waiter.active)
    hub.park(parked)
    return None


# ---- what qless publishes ----------------------------------------------------------------


def log(q: Qless, **fields: Any) -> None:
    """A `log` message: JSON `{event, ...}`, its keys in the order qless-core's cjson
    prints them (callers pass them so), for readers that compare the text."""
    q.channels.publish("log", json.dumps(fields, separators=(",", ":")))


def tracked(q: Qless, ext: QlessExt, channel: str) -> None:
    """A message on `channel` (data = jid) if the job is tracked."""
    if ext.tracked:
        q.channels.publish(channel, ext.jid)


def lock_lost(q: Qless, jid: str, worker: str) -> None:
    """Tell `worker` (and the log) that it lost its lock on `jid`."""
    if worker:
        data = json.dumps(
            {"jid": jid, "event": "lock_lost", "worker": worker}, separators=(",", ":")
        )
        q.channels.publish(f"w:{worker}", data)
        q.channels.publish("log", data)
