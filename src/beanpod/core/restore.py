"""Rebuilding the engine from WAL records at start-up (`restore(engine, records, now)`).

Records are folded first (later ones override earlier ones; a PUT is a job's whole
image), then each surviving job is placed once: reserved jobs come back ready, delayed
ones keep their wall-clock due time, buried ones stay buried with their priority.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from beanpod.core.engine import Engine
from beanpod.core.job import EXT_DECODERS, HELD_STATES, Job, JobExt, JobState, move, restarting
from beanpod.core.records import (
    DeleteRecord,
    NextIdRecord,
    PauseRecord,
    PutRecord,
    Record,
    StateRecord,
    UpdateRecord,
)
from beanpod.core.timers import PAUSE_END


class RestoreError(Exception):
    """Records that cannot be turned back into jobs (e.g. an unknown extension kind)."""


@dataclass
class Restored:
    jobs: int = 0
    next_id: int = 1
    paused: dict[str, int] = field(default_factory=dict)  # tube name -> record's segment
    # STATE records still set: key -> (segment of the latest record, value)
    states: dict[str, tuple[int, bytes]] = field(default_factory=dict)


class _Image:
    """A job as the records describe it so far."""

    __slots__ = ("file", "put", "update")

    def __init__(self, file: int, put: PutRecord) -> None:
        self.file = file
        self.put = put
        self.update: UpdateRecord | None = None


def restore(engine: Engine, records: Iterable[tuple[int, Record]], now: int) -> Restored:
    """Apply `(segment index, record)` pairs, in log order, to an empty engine."""
    log = _Folded()
    for file, rec in records:
        log.fold(file, rec)
    result = Restored(states=log.states)
    with restarting():
        for image in log.images.values():
            _place(engine, image, now)
    result.jobs = len(log.images)
    engine.next_id = result.next_id = max(engine.next_id, log.next_id)
    for name, (file, pause) in log.pauses.items():
        tube = engine.tubes.get(name)
        if tube is not None and pause.pause_ms > 0 and pause.pause_until > now:
            tube.pause_ms = pause.pause_ms
            tube.pause_until = pause.pause_until
            engine.timers.arm(pause.pause_until, PAUSE_END, tube)
            result.paused[name] = file
    return result


class _Folded:
    """What the records say so far: later records override earlier ones."""

    def __init__(self) -> None:
        self.images: dict[int, _Image] = {}
        self.pauses: dict[str, tuple[int, PauseRecord]] = {}
        self.next_id = 1
        self.states: dict[str, tuple[int, bytes]] = {}

    def fold(self, file: int, rec: Record) -> None:
        images = self.images
        if isinstance(rec, PutRecord):
            images.pop(rec.id, None)
            images[rec.id] = _Image(file, rec)
            self.next_id = max(self.next_id, rec.id + 1)
        elif isinstance(rec, UpdateRecord):
            image = images.pop(rec.id, None)
            if image is not None:  # an update whose job's segment was already dropped
                image.update = rec
                images[rec.id] = image  # re-insert: buried jobs keep their bury order
        elif isinstance(rec, DeleteRecord):
            images.pop(rec.id, None)
        else:
            self._fold_other(file, rec)

    def _fold_other(self, file: int, rec: Record) -> None:
        if isinstance(rec, PauseRecord):
            self.pauses[rec.tube] = (file, rec)
        elif isinstance(rec, NextIdRecord):
            self.next_id = max(self.next_id, rec.next_id)
        elif isinstance(rec, StateRecord):
            self.states.pop(rec.key, None)
            if rec.value:
                self.states[rec.key] = (file, rec.value)


def _decode_ext(kind: int, data: bytes) -> JobExt | None:
    if not kind:
        return None
    decoder = EXT_DECODERS.get(kind)
    if decoder is None:
        raise RestoreError(f"job extension kind {kind} has no registered decoder")
    return decoder(data)


def _place(engine: Engine, image: _Image, now: int) -> None:
    put, latest = image.put, image.update or image.put
    tube = engine.tube(put.tube)
    job = Job(put.id, tube, latest.pri, latest.delay, latest.ttr, put.body, put.created)
    job.reserves, job.timeouts, job.releases, job.buries, job.kicks = latest.counters
    job.ext = _decode_ext(latest.ext_kind, latest.ext)
    job.file = image.file
    engine.jobs[job.id] = job
    tube.jobs += 1
    tube.refs += 1
    state = latest.state
    if state in HELD_STATES:
        move(job, JobState(state))  # an extension's state: it re-places the job itself
    elif state == JobState.DELAYED:
        engine.make_delayed(job, latest.deadline)
    elif state == JobState.BURIED:
        engine.make_buried(job)
    else:  # ready, and reserved (a restart ends every reservation)
        if state == JobState.RESERVED and engine.events is not None:
            engine.events.emit(now, "timeout", job.id, tube.name, None)
        engine.make_ready(job, now)
