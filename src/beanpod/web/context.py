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


class WalFacts(Protocol):
    """The write-ahead log, as /metrics shows it (only with `-b DIR`)."""

    def segment_count(self) -> int: ...
    def bytes_written(self) -> int: ...
    def fsync_seconds(self) -> FsyncTimes: ...


class FsyncTimes(Protocol):
    """A histogram of fsync durations in seconds, kept by the log's syncer."""

    bounds: tuple[float, ...]

    def snapshot(self) -> tuple[list[int], float]:
        """(cumulative count per bound then +Inf, sum of seconds)."""
        ...


class ServerFacts(Protocol):
    """Counters the server layer keeps (outside the engine), read at scrape time."""

    def command_counts(self) -> Mapping[str, int]:
        """Commands served by verb, every dialect (`put`, `reserve`, `workq:add`...)."""
        ...

    def command_errors(self) -> Mapping[tuple[str, str], int]:
        """Error replies by (verb, reply word): ("put", "JOB_TOO_BIG")."""
        ...

    def connections(self) -> Mapping[str, int]:
        """Open connections by role (producer, worker, idle, workq)."""
        ...

    def connections_accepted(self) -> int: ...
    def connections_rejected(self) -> int: ...
    def events_dropped(self) -> int | None:
        """Lost event-log records (None without --events)."""
        ...

    def wal(self) -> WalFacts | None: ...


@dataclass
class Readiness:
    """/readyz: ready once the WAL is replayed and the listeners serve; not while draining.
    The server flips `serving`; replay progress (records done of total) is optional."""

    serving: bool = False
    replay_done: int = 0
    replay_total: int = 0


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
    settle: Callable[[], Awaitable[None]] = field(default=lambda: _settled())

    def now(self) -> int:
        return self.clock()


async def _settled() -> None:
    """Without a server (tests of one route group): nothing to wait for."""
