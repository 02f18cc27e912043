"""Where the engine reports effects: mutations for the write-ahead log, lifecycle events
for the event log. The engine never writes files; these seams are filled by the server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.tube import Tube


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
