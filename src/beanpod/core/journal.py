"""Where the engine reports effects: mutations for the write-ahead log, lifecycle events
for the event log. The engine never writes files; these seams are filled by the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.tube import Tube

MAX_STATE_KEY = 0xFFFF  # bytes of a named state's key (UTF-8): the log's record limit


class Journal(Protocol):
    """Receives every durable mutation, in order."""

    def record_put(self, job: Job) -> None: ...
    def record_update(self, job: Job) -> None: ...
    def record_delete(self, job: Job) -> None: ...
    def record_pause(self, tube: Tube) -> None: ...
    def record_state(self, key: str, value: bytes) -> None:
        """Set the named state `key` (outside jobs, e.g. a qless config override) to
        `value`; b"" removes it. Restored by `states()` after a restart."""
        ...

    def states(self, prefix: str) -> dict[str, bytes]:
        """The named states restored or recorded so far whose key starts with `prefix`."""
        ...

    def room(self, nbytes: int) -> bool:
        """Can a mutation carrying `nbytes` of payload be recorded? Asked *before*
        mutating; False means answer OUT_OF_MEMORY and change nothing (disk full)."""
        ...


class EventSink(Protocol):
    """Receives lifecycle events (the analytics contract)."""

    def emit(
        self, ts: int, event: str, job: int | None, queue: str, conn: int | None, **extra: Any
    ) -> None: ...

    # The three events of every job's life, without keyword packing (the hot path).
    def emit_put(
        self, ts: int, job: int, queue: str, conn: int | None, pri: int, delay_ms: int,
        ttr_ms: int, nbytes: int, uuid: str | None = None,
    ) -> None: ...  # fmt: skip

    def emit_reserve(
        self, ts: int, job: int, queue: str, conn: int | None, worker: str | None = None
    ) -> None: ...

    def emit_delete(self, ts: int, job: int, queue: str, conn: int | None, state: str) -> None: ...
