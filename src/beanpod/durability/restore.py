"""Rebuilding the engine from WAL records at start-up (`restore(engine, records, now)`).

Records are folded straight into jobs (later ones override earlier ones; a PUT is a
job's whole image), kept in `engine.jobs` but in no queue, then each surviving job is
placed once: reserved jobs come back ready, delayed ones keep their wall-clock due time,
buried ones stay buried with their priority. Folding into the final `Job` objects (not
into intermediate images) keeps replay's peak memory at what the jobs need: no garbage
interleaved with them, so RSS after a restart stays near RSS before it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import compress, groupby, repeat
from operator import attrgetter, is_, is_not
from typing import TypeAlias

from beanpod.core.engine import Engine
from beanpod.core.job import (
    BURIED,
    EXT_DECODERS,
    READY,
    Job,
    JobExt,
    JobState,
    fold_logged_update,
    restored_job,
)
from beanpod.core.pqueue import ready_key
from beanpod.core.tube import Tube
from beanpod.durability.records import (
    DELETE,
    DELETE_FIXED,
    PUT,
    PUT_FIXED,
    PUT_OVERHEAD,
    DeleteRecord,
    NextIdRecord,
    PauseRecord,
    PutRecord,
    Record,
    RecordError,
    StateRecord,
    UpdateRecord,
    decode,
)

_STATES = tuple(JobState)
_STATE_OF, _TUBE_OF, _TUBE_INDEX = attrgetter("state"), attrgetter("tube"), attrgetter("tube.index")
_STATE_COUNT = len(_STATES)
_BURIED = int(BURIED)  # the state as a put record codes it
MAX_SHARED = 4096  # distinct pri/delay/ttr values shared before the table starts over
_unpack_put = PUT_FIXED.unpack_from
_PUT_SIZE = PUT_FIXED.size
_unpack_delete = DELETE_FIXED.unpack
_DELETE_SIZE = DELETE_FIXED.size


PinRun: TypeAlias = "tuple[int, list[Job], int | list[int]]"  # segment, jobs, size(s)


class BadRecord(Exception):
    """A record at `offset` of its segment that does not decode (`Restorer.fold`)."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


class RestoreError(Exception):
    """Records that cannot be turned back into jobs (e.g. an unknown extension kind)."""


@dataclass
class Restored:
    jobs: int = 0
    next_id: int = 1
    paused: dict[str, int] = field(default_factory=dict)  # tube name -> record's segment
    # STATE records still set: key -> (segment of the latest record, value)
    states: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    # segment -> {job whose latest full record it holds: that record's bytes (without
    # its extension bytes)}: the compaction ledger's start (segments pinned by a job)
    pins: dict[int, dict[Job, int]] = field(default_factory=dict)
    # a snapshot's jobs, pinned a run at a time: (segment, jobs, one size or each one's)
    runs: list[PinRun] = field(default_factory=list)
    # jobs of `runs` a replayed record deleted or replaced: no longer pinned there
    unpinned: list[Job] = field(default_factory=list)


def _pack(counters: tuple[int, int, int, int, int]) -> int:
    """The five record counters as `Job.counters` packs them (32 bits each)."""
    r, t, rel, b, k = counters
    return r | t << 32 | rel << 64 | b << 96 | k << 128


def _state(value: int) -> JobState:
    if not 0 <= value < len(_STATES):
        raise RecordError(f"unknown job state {value}")
    return _STATES[value]


class Restorer:
    """Folds records, in log order, into an empty engine; `finish` places the jobs."""

    def __init__(self, engine: Engine, record_overhead: int = 0) -> None:
        """`record_overhead`: the bytes framing adds to a payload (`pins` sizes)."""
        self.engine = engine
        self.jobs = engine.jobs  # folded jobs, by id
        # The folded jobs whose latest record names them buried, in that order (the
        # order they are placed in: bury order). Keyed by the job: no int per job.
        self.buried: dict[Job, None] = {}
        self.tubes: dict[str, Tube] = {}
        self.tubes_by_bytes: dict[bytes, Tube] = {}  # the same, by encoded name
        self.ext: dict[int, tuple[int, bytes]] = {}  # job id -> latest extension bytes
        self.pauses: dict[str, tuple[int, PauseRecord]] = {}
        self.states: dict[str, tuple[int, bytes]] = {}
        self.next_id = 1
        # Jobs share one int object per distinct pri/delay/ttr value, and consecutive jobs
        # put in the same millisecond one `created`, as jobs made by puts do (32 bytes
        # per field and job otherwise: ~100 MB for a million jobs).
        self.shared: dict[int, int] = {}
        self.created = 0
        self.pins: dict[int, dict[Job, int]] = {}  # see Restored.pins
        self.runs: list[PinRun] = []  # see Restored.runs
        self.unpinned: list[Job] = []  # see Restored.unpinned
        self.put_overhead = PUT_OVERHEAD + record_overhead  # a put record's bytes + name + body
        # the snapshot's jobs and their ready keys, when every one is ready in one tube
        self.in_one_tube: tuple[Tube, list[Job], list[int]] | None = None
        self.folded = 0  # records folded ...
        self.marks = 0  # ... of which next-id marks (they change no job)

    def fold(self, file: int, records: Iterable[tuple[int, bytes]]) -> int:  # noqa: C901 - the replay's one inner loop (a call per record costs seconds at 1M jobs)
        """Fold raw (offset, payload) records of segment `file`; return how many.

        The replay's inner loop, so it is one function with its lookups bound once: puts
        and deletes (nearly all of a log) are decoded in place, straight into their Job;
        anything else, or anything malformed, goes through `decode` and `feed`. A record
        that cannot be decoded raises BadRecord with its offset."""
        jobs, tubes, shared, ext = self.jobs, self.tubes_by_bytes, self.shared, self.ext
        created_last, next_id, count, offset = self.created, self.next_id, 0, 0
        pins, head = self.pins, self.put_overhead - _PUT_SIZE  # len(p) counts _PUT_SIZE
        here = pins.setdefault(file, {})
        try:
            for offset, p in records:  # noqa: B007 - the except clause reports it
                count += 1
                kind = p[0]
                if kind == DELETE and len(p) == _DELETE_SIZE:
                    jid = _unpack_delete(p)[1]
                    gone = jobs.pop(jid, None)
                    if gone is not None:
                        self._forget(gone)
                    if ext:
                        ext.pop(jid, None)
                    continue
                if kind != PUT or len(p) < _PUT_SIZE:
                    self.next_id = next_id
                    self.feed(file, decode(p))
                    next_id = self.next_id
                    continue
                (_, jid, pri, delay, ttr, created, deadline, state, r, t, rel, b, k,
                 ext_kind, name_len, ext_len) = _unpack_put(p)  # fmt: skip
                name_end = _PUT_SIZE + name_len
                body_at = name_end + ext_len
                tube = tubes.get(p[_PUT_SIZE:name_end])
                if tube is None or body_at > len(p) or state >= _STATE_COUNT:
                    self.next_id = next_id  # a new tube name (or damage): checked there
                    self.feed(file, decode(p))
                    next_id = self.next_id
                    continue
                if created != created_last:
                    created_last = created
                if len(shared) >= MAX_SHARED:
                    shared.clear()
                pri = shared.setdefault(pri, pri)
                job = restored_job(
                    jid, tube, pri, shared.setdefault(delay, delay),
                    shared.setdefault(ttr, ttr), p[body_at:], created_last, _STATES[state],
                    deadline if state else 0, file, None if state else ready_key(pri, jid),
                    r | t << 32 | rel << 64 | b << 96 | k << 128 if r or t or rel or b or k else 0,
                )  # fmt: skip
                gone = jobs.pop(jid, None)  # a migrated copy: it moves to the end
                if gone is not None:
                    self._forget(gone)
                jobs[jid] = job
                if state == _BURIED:
                    self.buried[job] = None
                here[job] = len(p) - ext_len + head
                if ext_kind:
                    ext[jid] = (ext_kind, p[name_end:body_at])
                elif ext:
                    ext.pop(jid, None)
                if jid >= next_id:
                    next_id = jid + 1
        except RecordError as exc:
            raise BadRecord(offset, str(exc)) from exc
        finally:
            self.created, self.next_id = created_last, next_id
            self.folded += count
        return count

    def adopt_tube(self, name: str) -> Tube:
        """The tube `name` (created in the engine), known to the fold by name and bytes."""
        tube = self.tubes.get(name)
        if tube is None:
            tube = self.tubes[name] = self.engine.tube(name)
            self.tubes_by_bytes[tube.name_bytes] = tube
        return tube

    def feed(self, file: int, rec: Record) -> None:
        if isinstance(rec, PutRecord):
            self._put(file, rec)
        elif isinstance(rec, DeleteRecord):
            self._forget(self.jobs.pop(rec.id, None))
            self.ext.pop(rec.id, None)
        elif isinstance(rec, UpdateRecord):
            self._update(rec)
        elif isinstance(rec, PauseRecord):
            self.pauses[rec.tube] = (file, rec)
        elif isinstance(rec, NextIdRecord):
            self.next_id = max(self.next_id, rec.next_id)
            self.marks += 1
        elif isinstance(rec, StateRecord):
            self.states.pop(rec.key, None)
            if rec.value:
                self.states[rec.key] = (file, rec.value)

    def _put(self, file: int, rec: PutRecord) -> None:
        jobs, jid = self.jobs, rec.id
        tube = self.adopt_tube(rec.tube)
        state = _state(rec.state)
        key = ready_key(rec.pri, jid) if state is READY else None
        job = restored_job(jid, tube, rec.pri, rec.delay, rec.ttr, rec.body, rec.created, state,
                           rec.deadline, file, key, _pack(rec.counters))  # fmt: skip
        self._forget(jobs.pop(jid, None))  # a migrated copy: it moves to the end
        jobs[jid] = job
        if state is BURIED:
            self.buried[job] = None
        size = self.put_overhead + len(tube.name_bytes) + len(rec.body)
        self.pins.setdefault(file, {})[job] = size
        if rec.ext_kind:
            self.ext[jid] = (rec.ext_kind, rec.ext)
        else:
            self.ext.pop(jid, None)
        if jid >= self.next_id:
            self.next_id = jid + 1

    def _forget(self, job: Job | None) -> None:
        """Unpin a job deleted or replaced (an update keeps its full record's segment)."""
        if job is None:
            return
        if self.buried:
            self.buried.pop(job, None)
        held = self.pins.get(job.file)
        if held is None or held.pop(job, None) is None:
            self.unpinned.append(job)  # a snapshot's job: the ledger takes it out of its run

    def pin_runs(self, runs: Iterable[PinRun]) -> None:
        """Pin a snapshot's jobs a run at a time: (segment, jobs, tube name + body bytes
        of each, or of all); kept as runs (`Restored.runs`) for the compaction ledger,
        which groups them lazily (`put_overhead` is added here)."""
        head = self.put_overhead
        for segment, jobs, sizes in runs:
            whole = head + sizes if isinstance(sizes, int) else list(map(head.__add__, sizes))
            self.runs.append((segment, jobs, whole))

    def _update(self, rec: UpdateRecord) -> None:
        job = self.jobs.get(rec.id)
        if job is None:
            return  # an update whose job's segment was already dropped
        state = _state(rec.state)
        buried = self.buried
        if buried:
            buried.pop(job, None)
        if state is BURIED:
            buried[job] = None  # last: buried jobs keep their bury order
        entry = ready_key(rec.pri, rec.id) if state is READY else None  # see finish
        fold_logged_update(job, rec.pri, rec.delay, rec.ttr, rec.deadline, state, entry,
                           _pack(rec.counters))  # fmt: skip
        if rec.ext_kind:
            self.ext[rec.id] = (rec.ext_kind, rec.ext)
        else:
            self.ext.pop(rec.id, None)

    def note_buried(self, jobs: list[Job]) -> None:
        """Jobs a snapshot made, in its order: the buried ones join the bury order."""
        self.buried.update(dict.fromkeys(compress(jobs, map(is_, map(_STATE_OF, jobs),
                                                             repeat(BURIED)))))  # fmt: skip

    def in_order(self) -> list[Job]:
        """Every folded job: by id, then the buried ones in bury order (`buried`)."""
        jobs = [job for job in self.jobs.values() if job.state is not BURIED]
        jobs += self.buried
        return jobs

    def finish(self, now: int) -> Restored:
        """Place every folded job in its queue and restore pauses; the engine serves next."""
        engine = self.engine
        for jid, (kind, data) in self.ext.items():
            self.jobs[jid].ext = _decode_ext(kind, data)
        unchanged = self.folded == self.marks  # no replayed record changed the snapshot's
        if unchanged and self.in_one_tube is not None:
            tube, jobs, keys = self.in_one_tube
            _place_ready(engine, tube, jobs, now, keys)
        else:
            _place_all(engine, self.in_order(), now, len(self.tubes) == 1)
        for tube in self.tubes.values():
            engine.drop_if_unused(tube)  # every job of it was deleted: it does not exist
        engine.ids_above(self.next_id - 1)
        pins = {segment: held for segment, held in self.pins.items() if held}
        result = Restored(len(self.jobs), engine.next_id, states=self.states, pins=pins,
                          runs=self.runs, unpinned=self.unpinned)  # fmt: skip
        for name, (file, pause) in self.pauses.items():
            paused = engine.tubes.get(name)
            if paused is not None and pause.pause_ms > 0 and pause.pause_until > now:
                engine.restore_pause(paused, pause.pause_ms, pause.pause_until)
                result.paused[name] = file
        return result


def restore(engine: Engine, records: Iterable[tuple[int, Record]], now: int) -> Restored:
    """Apply `(segment index, record)` pairs, in log order, to an empty engine."""
    restorer = Restorer(engine)
    feed = restorer.feed
    for file, rec in records:
        feed(file, rec)
    return restorer.finish(now)


def _decode_ext(kind: int, data: bytes) -> JobExt | None:
    decoder = EXT_DECODERS.get(kind)
    if decoder is None:
        raise RestoreError(f"job extension kind {kind} has no registered decoder")
    try:
        return decoder(data)
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        raise RestoreError(f"job extension kind {kind} does not decode: {exc}") from exc


def _place_all(engine: Engine, jobs: list[Job], now: int, one_tube: bool = False) -> None:
    """Put each folded job in its queue. The moves are made `engine.restarting()`: the state
    table lets a job re-enter its logged state. Ready jobs (nearly all, usually) are
    placed a tube at once with the keys they were made with; the rest one by one, in
    order (buried jobs keep their bury order)."""
    states = list(map(_STATE_OF, jobs))
    ready, others = jobs, []
    if states.count(READY) != len(jobs):
        ready = list(compress(jobs, map(is_, states, repeat(READY))))
        others = list(compress(jobs, map(is_not, states, repeat(READY))))
    for tube, group in _by_tube(ready, one_tube):
        _place_ready(engine, tube, group, now)
    with engine.restarting():
        _place_each(engine, others, now)


def _place_ready(
    engine: Engine, tube: Tube, jobs: list[Job], now: int, keys: list[int] | None = None
) -> None:
    """Place jobs of `tube` made READY at once (`keys`: theirs, when known)."""
    with engine.restarting():
        engine.make_ready_restored(tube, jobs, now, keys)


def _by_tube(jobs: list[Job], one_tube: bool) -> list[tuple[Tube, list[Job]]]:
    """`jobs` grouped by tube (C-level passes: one check when they share one; none when
    the log names `one_tube`)."""
    if not jobs:
        return []
    first = jobs[0].tube
    if one_tube or list(map(_TUBE_OF, jobs)).count(first) == len(jobs):
        return [(first, jobs)]
    ordered = sorted(jobs, key=_TUBE_INDEX)
    return [(tube, list(group)) for tube, group in groupby(ordered, _TUBE_OF)]


def _place_each(engine: Engine, jobs: Iterable[Job], now: int) -> None:
    """The jobs not READY, one move each, in order (buried jobs keep their bury order)."""
    place = engine.place_restored
    for job in jobs:
        place(job, now)
