"""What a beanstalkd handler sees: the engine, the connection, and server facts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final, Protocol

from mypy_extensions import mypyc_attr, trait

from beanpod.protocols.beanstalkd import wire as w

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.engine import Engine
    from beanpod.core.job import Job
    from beanpod.core.qless import Qless
    from beanpod.core.waiters import ReserveOutcome

# Counted commands, in the order `stats` prints their cmd-* keys.
COUNTED: tuple[tuple[bytes, bytes], ...] = (
    (w.PUT, b"cmd-put"),
    (w.PEEK, b"cmd-peek"),
    (w.PEEK_READY, b"cmd-peek-ready"),
    (w.PEEK_DELAYED, b"cmd-peek-delayed"),
    (w.PEEK_BURIED, b"cmd-peek-buried"),
    (w.RESERVE, b"cmd-reserve"),
    (w.RESERVE_WITH_TIMEOUT, b"cmd-reserve-with-timeout"),
    (w.DELETE, b"cmd-delete"),
    (w.RELEASE, b"cmd-release"),
    (w.USE, b"cmd-use"),
    (w.WATCH, b"cmd-watch"),
    (w.IGNORE, b"cmd-ignore"),
    (w.BURY, b"cmd-bury"),
    (w.KICK, b"cmd-kick"),
    (w.TOUCH, b"cmd-touch"),
    (w.STATS, b"cmd-stats"),
    (w.STATS_JOB, b"cmd-stats-job"),
    (w.STATS_TUBE, b"cmd-stats-tube"),
    (w.LIST_TUBES, b"cmd-list-tubes"),
    (w.LIST_TUBE_USED, b"cmd-list-tube-used"),
    (w.LIST_TUBES_WATCHED, b"cmd-list-tubes-watched"),
    (w.PAUSE_TUBE, b"cmd-pause-tube"),
)


class ServerInfo(Protocol):
    """Process facts the stats commands report; supplied by the server layer."""

    pid: int
    version: str
    instance_id: str
    hostname: str
    os_name: str
    platform: str

    def rusage(self) -> tuple[float, float]: ...
    def uptime(self, now: int) -> int: ...
    def binlog_stats(self) -> tuple[int, int, int, int, int]:
        """(oldest index, current index, records migrated, records written, max size)."""
        ...

    def job_file(self, job: Job) -> int: ...
    def extra_stats(self) -> list[tuple[bytes, int]]:
        """beanpod's own keys, printed after beanstalkd's (none unless a feature is on)."""
        ...


class Dialect:
    """State shared by every beanstalkd connection of one server."""

    def __init__(
        self, engine: Engine, info: ServerInfo, max_job_size: int, qless: Callable[[], Qless]
    ) -> None:
        self.engine = engine
        self.info = info
        self.max_job_size = max_job_size
        # Every verb but the hot ones gets a slot (also reserve-job and kick-job, which
        # 1.12 counts but never prints), so handlers can count with one dict update.
        self.cmd_counts: dict[bytes, int] = {verb: 0 for verb in _ALL_VERBS if verb not in HOT}
        # The hot verbs' counts (HOT): native ints compiled, where a dict update is a
        # generic get, add and set; `command_counts()` reports them all.
        self.puts = 0
        self.reserves = 0
        self.reserves_with_timeout = 0
        self.deletes = 0
        self._qless = qless  # builds the qless extension on first use (server/app.py)
        # Error replies by (verb, reply), counted where a handler refuses (off the success
        # path); parser rejections count under commands.ERROR.
        self.errors: dict[tuple[bytes, bytes], int] = {}
        self.output_limit = 1 << 62  # bytes of peek replies one batch may produce
        self.audit: Callable[..., None] | None = None  # --audit-log: admin verbs are told

    @property
    def qless(self) -> Qless:
        """qless job features (the `qless` extension command)."""
        return self._qless()

    def command_counts(self) -> dict[bytes, int]:
        """Commands counted so far, by verb (every verb of `cmd_counts` and HOT)."""
        return {
            **self.cmd_counts, w.PUT: self.puts, w.RESERVE: self.reserves,
            w.RESERVE_WITH_TIMEOUT: self.reserves_with_timeout, w.DELETE: self.deletes,
        }  # fmt: skip

    def failed(self, verb: bytes, reply: bytes) -> bytes:
        """Count the error `reply` to `verb`, and return it."""
        key = (verb, reply)
        self.errors[key] = self.errors.get(key, 0) + 1
        return reply


_ALL_VERBS = (*(verb for verb, _ in COUNTED), w.RESERVE_JOB, w.KICK_JOB, w.QUIT)
# Counted in Dialect's own int attributes, not in `cmd_counts`.
HOT: Final = frozenset({w.PUT, w.RESERVE, w.RESERVE_WITH_TIMEOUT, w.DELETE})


@trait  # compiled, the session's class derives from it: handlers read these natively
@mypyc_attr(allow_interpreted_subclasses=True)  # (through a Protocol, a generic lookup each)
class Context:
    """One connection's session as handlers use it."""

    dialect: Dialect
    conn: Conn
    now: int
    batch_bytes: int  # bytes of peek replies in the current batch (reset by the session)
    deliver: Callable[[ReserveOutcome], None]  # a reserve's outcome, when it was parked

    def answer(self, reply: bytes) -> None:
        """Answer the parked command with `reply` (a long-poll extension call)."""
        ...

    def client_time(self, now: int) -> None:
        """A request's client-supplied time (ms): moves a manual clock there (never
        backwards) and `now` with it; the real clock ignores it."""
        ...
