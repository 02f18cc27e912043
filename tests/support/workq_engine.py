"""Shared set-up for the Workq engine tests: an engine with recording seams."""

from __future__ import annotations

from typing import Any

from beanpod.core.engine import Engine
from beanpod.core.job import Job, MoveCheck
from beanpod.core.tube import Tube
from beanpod.core.workq import Workq

U1 = b"6ba7b810-9dad-41d1-80b4-00c04fd430c1"
U2 = b"6ba7b810-9dad-41d1-80b4-00c04fd430c2"
U3 = b"6ba7b810-9dad-41d1-80b4-00c04fd430c3"


class RecordingJournal:
    def __init__(self) -> None:
        self.records: list[tuple[str, int, bytes | None]] = []
        self.named: dict[str, bytes] = {}

    def _ext(self, job: Job) -> bytes | None:
        return None if job.ext is None else job.ext.encode()

    def record_put(self, job: Job) -> None:
        self.records.append(("put", job.id, self._ext(job)))

    def record_update(self, job: Job) -> None:
        self.records.append(("update", job.id, self._ext(job)))

    def record_delete(self, job: Job) -> None:
        self.records.append(("delete", job.id, None))

    def record_pause(self, tube: Tube) -> None:
        self.records.append(("pause", 0, None))

    def record_state(self, key: str, value: bytes) -> None:
        self.records.append(("state", 0, key.encode()))
        self.named[key] = value

    def states(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, v in self.named.items() if k.startswith(prefix) and v}

    def room(self, nbytes: int) -> bool:
        return self.has_room

    has_room = True


class RecordingEvents:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(
        self, ts: int, event: str, job: int | None, queue: str, conn: int | None, **extra: Any
    ) -> None:
        self.events.append({"ts": ts, "event": event, "job": job, "queue": queue, **extra})

    def emit_put(
        self, ts: int, job: int, queue: str, conn: int | None, pri: int, delay_ms: int,
        ttr_ms: int, nbytes: int, uuid: str | None = None,
    ) -> None:  # fmt: skip
        self.emit(ts, "put", job, queue, conn, pri=pri, delay_ms=delay_ms, ttr_ms=ttr_ms,
                  bytes=nbytes, uuid=uuid)  # fmt: skip

    def emit_reserve(
        self, ts: int, job: int, queue: str, conn: int | None, worker: str | None = None
    ) -> None:
        self.emit(ts, "reserve", job, queue, conn, worker=worker)

    def emit_delete(self, ts: int, job: int, queue: str, conn: int | None, state: str) -> None:
        self.emit(ts, "delete", job, queue, conn, state=state)

    def names(self) -> list[str]:
        return [e["event"] for e in self.events]


def make() -> tuple[Engine, Workq]:
    engine = Engine(MoveCheck())
    return engine, Workq(engine)


class Outcomes:
    """A deliver callback that remembers what it was given."""

    def __init__(self) -> None:
        self.got: list[Any] = []

    def __call__(self, outcome: Any) -> None:
        self.got.append(outcome)
