"""What every HTTP handler sees: the engine (read through core.query), server facts, the
engine's extensions, readiness, and the listener's settings."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.core.qless import Qless
    from beanpod.core.workq import Workq
    from beanpod.protocols.beanstalkd.context import ServerInfo


@dataclass(frozen=True)
class HistogramSnapshot:
    bounds: tuple[float, ...]  # upper bounds (`le`), in seconds
    buckets: list[int]  # count per bound, then +Inf (not cumulative)
    sum: float  # seconds


@dataclass(frozen=True)
class WalStats:
    """The write-ahead log, as /metrics shows it (only with `-b DIR`)."""

    segments: int  # segment files
    size_bytes: int  # their size on disk (preallocated)
    written_bytes: int  # bytes appended since start
    records_written: int  # records appended since start (stats binlog-records-written)
    fsync: HistogramSnapshot  # duration of each sync round


class ServerFacts(Protocol):
    """Counters the server layer keeps (outside the engine), read at scrape time."""

    def command_counts(self) -> Mapping[str, int]:
        """Commands served by verb (beanstalkd's cmd-* counters)."""
        ...

    def command_errors(self) -> Mapping[tuple[str, str], int]:
        """Error replies by (verb, reply word): ("put", "JOB_TOO_BIG")."""
        ...

    def connections(self) -> Mapping[tuple[str, str], int]:
        """Open connections by (protocol, role); roles do not overlap."""
        ...

    def connections_accepted(self) -> Mapping[str, int]:
        """Connections accepted since start, by protocol."""
        ...

    def connections_rejected(self) -> int | None:
        """Connections refused (None: the server has no limit that refuses any)."""
        ...

    def events_dropped(self) -> int | None:
        """Lost event-log records (None without --events)."""
        ...

    def wal(self) -> WalStats | None: ...


@dataclass
class Readiness:
    """/readyz: ready once the WAL is replayed and the listeners serve; not while draining.
    The server flips `serving` and gives `progress`: bytes of the log replayed, of its
    total ((0, 0): none shown)."""

    serving: bool = False
    progress: Callable[[], tuple[int, int]] = lambda: (0, 0)
    # GET /leader, on a cluster's node: (this node leads, the leader's {"node", "address", ...}
    # as last seen); None on a single node
    leader: Callable[[], tuple[bool, dict[str, str] | None]] | None = None
    # GET /cluster/checkpoint, on a cluster's node: the file of its latest checkpoint
    # (None: it has none yet)
    checkpoint: Callable[[], str | None] | None = None


@dataclass(frozen=True)
class WebSettings:
    metrics_max_tubes: int = 500  # tubes exported by name; the rest fold into "_other"
    token: str | None = None  # every request needs it when set (--http-token FILE)
    analytics_dir: str | None = None  # --analytics DIR: the dashboard's analytics page


@dataclass
class WebContext:
    engine: Engine
    clock: Callable[[], int]  # the server's clock, integer ms (the engine's `now`)
    info: ServerInfo  # version, pid, uptime, rusage, binlog stats (as `stats` shows)
    facts: ServerFacts
    qless: Qless | None = None
    workq: Workq | None = None
    readiness: Readiness = field(default_factory=Readiness)
    settings: WebSettings = field(default_factory=WebSettings)
    rearm: Callable[[], None] = lambda: None  # after engine work: arm timers, flush events
    audit: Callable[..., None] = lambda action, **fields: None  # --audit-log: one line each
    settle: Callable[[], Awaitable[None]] = field(default=lambda: _settled())

    def now(self) -> int:
        return self.clock()


async def _settled() -> None:
    """Without a server (tests of one route group): nothing to wait for."""
