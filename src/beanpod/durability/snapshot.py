"""The snapshot payload: every live job, paused tube and named state in a column layout
that loads with a few C-level passes per column instead of Python code per job. Pure:
bytes in, bytes out (storage/snapshot.py frames and writes it; docs/wal.md).

    head     next_id:u64 tubes:u32 jobs:u64 pauses:u32 states:u32 counted:u64 exts:u64
    tubes    (name_len:u16 name) * tubes
    pauses   (file:u32 pause_ms:i64 pause_until:i64 tube:u32) * pauses
    states   (file:u32 key_len:u16 value_len:u32 key value) * states
    counted  (position:u64 reserves timeouts releases buries kicks:u32) * counted
    exts     (position:u64 kind:u16 len:u32) * exts, then every extension's bytes
    columns  id:u64 * jobs, then tube:u32 pri:u32 delay:i64 ttr:i64 created:i64
             deadline:i64 state:u8 file:u32 body_len:u32 in this order, each as runs of
             equal values: runs:u64 (value * runs) (count:u32 * runs), counts adding up
             to `jobs` (a column of one value is one run; equal neighbours share an int)
    bodies   every body, in job order (the file ends with them)

Jobs are in the order a replay of the same log would leave them for what it matters to:
each tube's buried jobs in bury order. A job's `file` is the segment holding its latest
full record, so the compaction ledger is the same as after a replay. Written from the live
engine at a clean shutdown, each job as a migration would rewrite it (a reserved job is
logged reserved and comes back ready, as after any restart).
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from io import BytesIO
from itertools import chain, groupby, repeat
from operator import add, attrgetter, mul
from typing import Any, Protocol, TypeAlias, TypeVar, cast

from beanpod.core.engine import Engine
from beanpod.core.job import BURIED, READY, Job, JobState, fold_logged_counters, restored_job
from beanpod.core.job_index import JobIndex
from beanpod.core.pqueue import ready_keys
from beanpod.core.tube import Tube
from beanpod.durability.records import PauseRecord, RecordError
from beanpod.durability.restore import Restorer

_HEAD = struct.Struct("<QIQIIQQ")
_LEN16 = struct.Struct("<H")
_PAUSE = struct.Struct("<IqqI")
_STATE = struct.Struct("<IHI")
_COUNTED = struct.Struct("<Q5I")
_EXT = struct.Struct("<QHI")
_RUNS = struct.Struct("<Q")
LOAD_CHUNK = 100_000  # jobs per step of the load (progress and event-loop turns between)
# (attribute, array typecode) of each column, in file order
COLUMNS = (("id", "Q"), ("tube", "I"), ("pri", "I"), ("delay", "q"), ("ttr", "q"),
           ("created", "q"), ("deadline", "q"), ("state", "B"), ("file", "I"),
           ("body", "I"))  # fmt: skip
_MASK = 0xFFFFFFFF
_STATES = tuple(JobState)
_TUBE_NAME = attrgetter("tube.name_bytes")
_SWAP = sys.byteorder != "little"
_T = TypeVar("_T")


def encode(
    engine: Engine, pauses: dict[str, int], states: dict[str, tuple[int, bytes]]
) -> list[bytes]:
    """The payload for the engine as it is: `pauses` maps a paused tube to the segment of
    its pause record, `states` a named state to (segment, value)."""
    encoder = Encoder(engine, paused(engine, pauses), states)
    encoder.add(in_order(engine))
    return encoder.payload()


def encode_folded(restorer: Restorer) -> list[bytes]:
    """The payload for what `restorer` folded, before `finish` places it (a checkpoint
    built from the log): each job in the state its latest record names, in the order
    `finish` places them in (`Restorer.in_order`: by id, buried ones last in bury
    order), with its extension's logged bytes."""
    engine = restorer.engine
    engine.ids_above(restorer.next_id - 1)
    pauses = [
        (name, file, rec.pause_ms, rec.pause_until) for name, (file, rec) in restorer.pauses.items()
    ]
    encoder = Encoder(engine, pauses, restorer.states)
    encoder.add(restorer.in_order(), restorer.ext)
    return encoder.payload()


def paused(engine: Engine, pauses: dict[str, int]) -> list[tuple[str, int, int, int]]:
    """(tube, segment of its pause record, pause_ms, pause_until) of each paused tube."""
    tubes = engine.tubes
    return [(n, f, tubes[n].pause_ms, tubes[n].pause_until) for n, f in pauses.items()]


def in_order(engine: Engine) -> list[Job]:
    """Every job; buried ones last, each tube's in bury order (the order replay keeps)."""
    jobs = [job for job in engine.jobs.values() if job.state is not BURIED]
    jobs += chain.from_iterable(tube.buried.values() for tube in engine.tube_list)
    return jobs


class Encoder:
    """The payload built a batch of jobs at a time: a checkpoint while serving encodes
    the jobs in chunks between event-loop turns, each as it is then (a shutdown, all at
    once). Equal values that meet at a chunk boundary join one run, so a column of one
    value stays one run (the loader's fast path)."""

    def __init__(
        self,
        engine: Engine,
        pauses: list[tuple[str, int, int, int]],
        states: dict[str, tuple[int, bytes]],
    ) -> None:
        """Takes what is not a job now: next id, tubes (list-tubes order), `pauses`
        ((tube, segment, pause_ms, pause_until): `paused`) and named `states`."""
        self.next_id = engine.next_id
        self.pauses = pauses
        self.states = dict(states)
        # its own numbering (engine indexes move as tubes go); a tube left without jobs
        # is dropped again by the loader
        self.tubes = {tube.name_bytes: i for i, tube in enumerate(engine.tube_list)}
        for name, *_ in pauses:
            self.tubes.setdefault(name.encode(), len(self.tubes))
        self.ids = array("Q")
        self.runs = {name: (array(code), array("I")) for name, code in COLUMNS[1:]}
        self.counted: list[bytes] = []
        self.exts: list[tuple[int, int, bytes]] = []
        self.bodies: list[bytes] = []

    def add(
        self, jobs: Sequence[Job], raw_exts: dict[int, tuple[int, bytes]] | None = None
    ) -> None:
        """Append these jobs, in this order, each as it is now; `raw_exts`: their
        extensions as logged (kind, bytes) by id, when not decoded into `job.ext`."""
        at = len(self.ids)
        names = list(map(_TUBE_NAME, jobs))
        tubes = self.tubes
        for name in dict.fromkeys(names):
            tubes.setdefault(name, len(tubes))
        self.ids.extend(map(attrgetter("id"), jobs))
        for name, _ in COLUMNS[1:]:
            if name == "tube":
                values: Iterable[int] = map(tubes.__getitem__, names)
            elif name == "body":
                values = map(len, map(attrgetter("body"), jobs))
            else:
                values = map(attrgetter(name), jobs)
            _extend_runs(*self.runs[name], values)
        self.counted += [
            _COUNTED.pack(at + i, *_counts(j.counters)) for i, j in enumerate(jobs) if j.counters
        ]
        self.exts += [(at + i, j.ext.KIND, j.ext.encode()) for i, j in enumerate(jobs) if j.ext]
        if raw_exts:
            self.exts += [(at + i, *raw_exts[j.id]) for i, j in enumerate(jobs) if j.id in raw_exts]
        self.bodies += map(attrgetter("body"), jobs)

    def payload(self) -> list[bytes]:
        """The payload's parts (their concatenation is the payload)."""
        tubes, pauses, states = self.tubes, self.pauses, self.states
        out = [_HEAD.pack(self.next_id, len(tubes), len(self.ids), len(pauses), len(states),
                          len(self.counted), len(self.exts))]  # fmt: skip
        out += [_LEN16.pack(len(name)) + name for name in tubes]
        out += [
            _PAUSE.pack(file, ms, until, tubes[name.encode()]) for name, file, ms, until in pauses
        ]
        for key, (file, value) in states.items():
            raw = key.encode()
            out.append(_STATE.pack(file, len(raw), len(value)) + raw + value)
        out += self.counted
        out += [_EXT.pack(i, kind, len(raw)) for i, kind, raw in self.exts]
        out += [raw for _, _, raw in self.exts]
        out.append(_bytes(self.ids))
        for values, counts in self.runs.values():
            out.append(_RUNS.pack(len(values)) + _bytes(values) + _bytes(counts))
        out.append(b"".join(self.bodies))  # one part: a crc and write call, not one a job
        return out


def _extend_runs(firsts: array[int], counts: array[int], values: Iterable[int]) -> None:
    """Append `values` as runs, joining the last run when the first value continues it."""
    for value, run in groupby(values):
        n = len(list(run))
        if firsts and firsts[-1] == value:
            counts[-1] += n
        else:
            firsts.append(value)
            counts.append(n)


def _bytes(column: array[int]) -> bytes:
    if _SWAP:
        column.byteswap()
    return column.tobytes()


def _counts(c: int) -> tuple[int, int, int, int, int]:
    return c & _MASK, (c >> 32) & _MASK, (c >> 64) & _MASK, (c >> 96) & _MASK, c >> 128


class Payload(Protocol):
    """A file's bytes read front to back (a mapped file: mmap.mmap)."""

    def __len__(self) -> int: ...
    def read(self, n: int, /) -> bytes: ...
    def seek(self, pos: int, /) -> object: ...
    def tell(self) -> int: ...


class _Cursor:
    """Reads the payload front to back (BytesIO over the file's bytes shares them)."""

    def __init__(self, data: bytes | Payload, start: int) -> None:
        self.stream: BytesIO | Payload = BytesIO(data) if isinstance(data, bytes) else data
        self.stream.seek(start)
        self.size = len(data)
        self.read = self.stream.read

    def left(self) -> int:
        return self.size - self.stream.tell()

    def unpack(self, fmt: struct.Struct) -> tuple[Any, ...]:
        raw = self.read(fmt.size)
        if len(raw) != fmt.size:
            raise RecordError("snapshot payload cut short")
        return fmt.unpack(raw)

    def column(self, code: str, count: int) -> array[int]:
        column = array(code)
        raw = self.read(count * column.itemsize)
        if len(raw) != count * column.itemsize:
            raise RecordError("snapshot column cut short")
        column.frombytes(raw)
        if _SWAP:
            column.byteswap()
        return column


def load(restorer: Restorer, data: bytes | Payload, start: int) -> Iterator[int]:
    """Fold the payload at `data[start:]` into an empty restorer, LOAD_CHUNK jobs at a
    time: yields how many are loaded after each chunk (start-up reports progress and
    lets the event loop run). Raises RecordError when it does not hold what its head says."""
    cur = _Cursor(data, start)
    next_id: int
    njobs: int
    next_id, ntubes, njobs, npauses, nstates, ncounted, nexts = cur.unpack(_HEAD)
    tubes = [restorer.adopt_tube(cur.read(cur.unpack(_LEN16)[0]).decode()) for _ in range(ntubes)]
    for _ in range(npauses):
        file, ms, until, tube = cur.unpack(_PAUSE)
        name = _tube(tubes, tube).name
        restorer.pauses[name] = (file, PauseRecord(name, ms, until))
    for _ in range(nstates):
        file, key_len, value_len = cur.unpack(_STATE)
        key = cur.read(key_len).decode()  # before the value (an assignment reads it first)
        restorer.states[key] = (file, cur.read(value_len))
    counted = [cur.unpack(_COUNTED) for _ in range(ncounted)]
    exts = [cur.unpack(_EXT) for _ in range(nexts)]
    ext_bytes = [cur.read(size) for _, _, size in exts]
    columns = _Columns(cur, tubes, njobs)
    jobs: list[Job] = []
    keys: list[int] = []  # while every job is ready in one tube: the ready keys
    for at in range(0, njobs, LOAD_CHUNK):
        made, made_keys = columns.jobs(at, min(at + LOAD_CHUNK, njobs), restorer.jobs)
        jobs += made
        if columns.one_ready_tube:  # then every key is an int
            keys += cast("list[int]", made_keys)
        else:
            restorer.note_buried(made)
        yield len(jobs)
    for at, r, t, rel, b, k in counted:
        fold_logged_counters(jobs[at], r | t << 32 | rel << 64 | b << 96 | k << 128)
    for (at, kind, _), raw in zip(exts, ext_bytes, strict=True):
        restorer.ext[columns.ids[at]] = (kind, raw)
    restorer.next_id = max(restorer.next_id, next_id)
    columns.pin(restorer, jobs, [len(t.name_bytes) for t in tubes])
    if columns.one_ready_tube and jobs:
        restorer.in_one_tube = (jobs[0].tube, jobs, keys)


def load_all(restorer: Restorer, data: bytes | Payload, start: int) -> int:
    """`load` in one go (`wal verify` and `wal dump`); return the jobs loaded."""
    jobs = 0
    for jobs in load(restorer, data, start):  # noqa: B007 - the last count is the total
        pass
    return jobs


def _tube(tubes: list[Tube], index: int) -> Tube:
    if index >= len(tubes):
        raise RecordError(f"snapshot names tube {index} of {len(tubes)}")
    return tubes[index]


Spread: TypeAlias = "list[_T] | repeat[_T]"  # a column's values; a repeat: all one
Runs: TypeAlias = tuple[list[int], list[int]]  # a column as runs: (values, counts)
Keys: TypeAlias = "list[int] | list[int | None] | repeat[None]"  # ready keys, None: not READY


def _part(values: Spread[_T], start: int, end: int) -> Spread[_T]:
    return values if isinstance(values, repeat) else values[start:end]


class _Columns:
    """The job columns, read and checked, each spread back to one value per job."""

    def __init__(self, cur: _Cursor, tubes: list[Tube], count: int) -> None:
        self.ids: list[int] = cur.column("Q", count).tolist()
        self.tube_runs = _runs(cur, "I", count, len(tubes))
        self.tube = _objects(self.tube_runs, tubes)
        self.pri, self.delay, self.ttr, self.created, self.deadline = (
            _ints(_runs(cur, code, count)) for code in ("I", "q", "q", "q", "q")
        )
        self.states = _objects(_runs(cur, "B", count, len(_STATES)), _STATES)
        self.file_runs = _runs(cur, "I", count)
        self.file = _ints(self.file_runs)
        self.length_runs = lengths = _runs(cur, "I", count)
        if sum(map(mul, *lengths)) != cur.left():
            raise RecordError("snapshot bodies do not fill the rest of the file")
        self.lengths = _ints(lengths)
        self.read = cur.read

    @property
    def one_ready_tube(self) -> bool:
        """Is every job ready in one tube (the common case, placed at once)?"""
        states = self.states
        return (
            isinstance(self.tube, repeat) and isinstance(states, repeat) and next(states) is READY
        )

    def jobs(self, start: int, end: int, into: JobIndex) -> tuple[list[Job], Keys]:
        """Jobs `start` to `end` made (`restored_job`) and added to `into` by id, with
        their ready keys."""
        ids, pri = self.ids[start:end], _part(self.pri, start, end)
        state = _part(self.states, start, end)
        keys = _keys(pri, ids, state)
        jobs = list(map(restored_job, ids, _part(self.tube, start, end), pri,
                        _part(self.delay, start, end), _part(self.ttr, start, end),
                        map(self.read, _part(self.lengths, start, end)),
                        _part(self.created, start, end), state,
                        _part(self.deadline, start, end), _part(self.file, start, end),
                        keys))  # fmt: skip
        into.update(zip(ids, jobs, strict=True))
        return jobs, keys

    def pin(self, restorer: Restorer, jobs: list[Job], name_lens: list[int]) -> None:
        """Pin every job in its segment (what the compaction ledger starts from), a run
        of the file column at a time, each job's size its tube name and body bytes."""
        files, counts = self.file_runs
        sizes = self._sizes(name_lens)
        size = next(sizes) if isinstance(sizes, repeat) else sizes
        restorer.pin_runs(_runs_of(jobs, files, counts, size))

    def _sizes(self, name_lens: list[int]) -> Spread[int]:
        tube_at, counts = self.tube_runs
        lengths = self.lengths
        if len(tube_at) == 1 and isinstance(lengths, repeat):
            return repeat(name_lens[tube_at[0]] + next(lengths))
        names = _spread(list(map(name_lens.__getitem__, tube_at)), counts)
        return list(map(add, names, lengths))


def _runs_of(
    jobs: list[Job], files: list[int], counts: list[int], sizes: int | list[int]
) -> Iterator[tuple[int, list[Job], int | list[int]]]:
    """(segment, its run of jobs, their sizes: one int for all, or a list)."""
    at = 0
    for segment, count in zip(files, counts, strict=True):
        yield (
            segment,
            jobs[at : at + count],
            sizes if isinstance(sizes, int) else sizes[at : at + count],
        )
        at += count


def _runs(cur: _Cursor, code: str, count: int, below: int | None = None) -> Runs:
    """A column's runs, (values, counts), checked: they hold `count` values, each
    below `below` when given."""
    (runs,) = cur.unpack(_RUNS)
    values, counts = cur.column(code, runs), cur.column("I", runs)
    if sum(counts) != count or (below is not None and runs and max(values) >= below):
        raise RecordError("snapshot column does not hold one known value per job")
    return values.tolist(), counts.tolist()


def _spread(values: Sequence[_T], counts: list[int]) -> Spread[_T]:
    """One value per job: one endless repeat when the column is one run."""
    if len(values) == 1:
        return repeat(values[0])
    return list(chain.from_iterable(map(repeat, values, counts)))


def _ints(runs: Runs) -> Spread[int]:
    """The column's ints, one object per distinct value (as jobs made by puts share
    them): 32 bytes per job and field otherwise."""
    values, counts = runs
    seen: dict[int, int] = {}
    return _spread(list(map(seen.setdefault, values, values)), counts)


def _objects(runs: Runs, objects: Sequence[_T]) -> Spread[_T]:
    """The objects the column's values index (tubes, states)."""
    values, counts = runs
    return _spread(list(map(objects.__getitem__, values)), counts)


def _keys(pri: Spread[int], ids: list[int], states: Spread[JobState]) -> Keys:
    """Each job's ready key, None for a job not READY (`restored_job`)."""
    if isinstance(states, repeat):
        return ready_keys(pri, ids) if next(states) is READY else repeat(None)
    keys = ready_keys(pri, ids)
    return [key if s is READY else None for key, s in zip(keys, states, strict=True)]
