"""What the rest of the server knows of a durable log, whoever keeps it: the local
write-ahead log (wal.py) today, a log in a consensus store tomorrow, as a new module
that implements these and is chosen in server/app.py. The engine writes through
core.journal.Journal; connections acknowledge through `Commits`; the composition root
opens, reports and closes a `DurableLog`. Nothing here does I/O.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, NamedTuple, Protocol

from beanpod.core.journal import Journal

if TYPE_CHECKING:
    from beanpod.durability.progress import ReplayProgress


class Holder(Protocol):
    """A session whose replies can be held: `held` counts its replies waiting here."""

    held: int
    closed: bool
    transport: asyncio.Transport | None

    def released(self, data: bytes, close: bool) -> None:
        """A held reply may go out: count it off `held`, then write `data` (and close,
        if asked) unless the connection is gone. (One call: compiled, the session's
        attributes read through this Protocol would each be a generic lookup.)"""
        ...


class Commits(Protocol):
    """A connection's view of the log: did my batch append records, and hold my replies
    until they are as durable as the log promises (written; with `-f 0`, fsynced)."""

    appended: int  # records appended so far: a session compares it around a batch, and
    # holds the batch's replies when it moved

    def hold(self, session: Holder, data: bytes, close: bool = False) -> None:
        """Send `data` to `session` (then close it, if asked) once every record appended
        so far is durable; later replies of the session queue behind it."""
        ...

    def settled(self) -> asyncio.Future[None]:
        """A future done once every record appended so far is durable (for callers
        without a connection, e.g. an HTTP action)."""
        ...

    def holds_every_reply(self) -> bool:
        """Whether a session hands every reply to `hold` (asked once, when it opens), not
        only those of a batch that appended records and those queued behind them. The
        cluster's log: yes, no client may see what a failover could erase (a reserve of a
        job whose put is in flight, or woken by it: the engine places a job, serving a
        waiter, before it records the put). The local WAL: no; as beanstalkd, a waiting
        worker gets a new job at once (the put's own reply still waits for the write)."""
        ...


class LogMetrics(NamedTuple):
    """The log as /metrics shows it."""

    segments: int  # files (or units) the log keeps
    size_bytes: int  # their size on disk
    written_bytes: int  # bytes appended since start
    records_written: int  # records appended since start
    sync_bounds: tuple[float, ...]  # a histogram of each sync round's seconds: bounds,
    sync_buckets: list[int]  # the count per bound then +Inf (not cumulative),
    sync_sum: float  # and their sum


class DurableLog(Journal, Commits, Protocol):
    """A log the composition root opens, reports on and closes."""

    progress: ReplayProgress  # start-up replay, for /readyz

    def binlog_stats(self) -> tuple[int, int, int, int, int]:
        """(oldest index, current index, records migrated, records written, max size)."""
        ...

    def metrics(self) -> LogMetrics: ...

    async def aclose(self) -> None:
        """Make everything durable, release held replies, stop."""
        ...
