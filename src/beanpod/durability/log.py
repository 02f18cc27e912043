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
    from beanpod.durability.restore import Restored


class Holder(Protocol):
    """A session whose replies can be held: `held` counts its replies waiting here."""

    held: int
    closed: bool
    transport: asyncio.Transport | None


class Commits(Protocol):
    """A connection's view of the log: did my batch append records, and hold my replies
    until they are as durable as the log promises (written; with `-f 0`, fsynced)."""

    @property
    def appended(self) -> int:
        """Records appended so far: a session compares it around a batch, and holds the
        batch's replies when it moved."""
        ...

    def hold(self, session: Holder, data: bytes, close: bool = False) -> None:
        """Send `data` to `session` (then close it, if asked) once every record appended
        so far is durable; later replies of the session queue behind it."""
        ...

    def settled(self) -> asyncio.Future[None]:
        """A future done once every record appended so far is durable (for callers
        without a connection, e.g. an HTTP action)."""
        ...

    def holds_woken_replies(self) -> bool:
        """Whether the reply to a waiting command (a reserve woken by another connection's
        put) goes through `hold` like a batch's. The cluster's log: yes, no client may see
        what a failover could erase, and the put that woke it is journalled just after
        (the engine places a job, serving a waiter, before it records the put). The local
        WAL: no; as beanstalkd, a waiting worker gets a new job at once (the put's own
        reply still waits for the write)."""
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

    async def open_async(self, now: int) -> Restored:
        """Restore the engine from the log (letting the event loop run meanwhile), then
        become its journal."""
        ...

    def binlog_stats(self) -> tuple[int, int, int, int, int]:
        """(oldest index, current index, records migrated, records written, max size)."""
        ...

    def metrics(self) -> LogMetrics: ...

    async def aclose(self) -> None:
        """Make everything durable, release held replies, stop."""
        ...
