"""The snapshot payload: every live job, paused tube and named state in a column layout
that loads with a few C-level passes per column instead of Python code per job. Pure:
bytes in, bytes out (storage/snapshot.py frames and writes it; docs/wal.md).

    head     next_id:u64 tubes:u32 jobs:u64 pauses:u32 states:u32 counted:u64 exts:u64
    tubes    (name_len:u16 name) * tubes
    pauses   (file:u32 pause_ms:i64 pause_until:i64 tube:u32) * pauses
    states   (file:u32 key_len:u16 value_len:u32 key value) * states
    counted  (position:u64 reserves timeouts releases buries kicks:u32) * counted
    exts     (position:u64 kind:u16 len:u32) * exts, then every extension's bytes
    columns  id:u64 tube:u32 pri:u32 delay:i64 ttr:i64 created:i64 deadline:i64 state:u8
             file:u32 body_len:u32, each a column of `jobs` values, in this order
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
from collections.abc import Iterable, Sequence
from io import BytesIO
from itertools import chain, repeat
from operator import attrgetter
from typing import Any, TypeVar

from beanpod.core.engine import Engine
from beanpod.core.job import BURIED, READY, Job, JobState, restored_job
from beanpod.core.pqueue import ready_keys
from beanpod.core.records import PauseRecord, RecordError
from beanpod.core.restore import Restorer
from beanpod.core.tube import Tube

_HEAD = struct.Struct("<QIQIIQQ")
_LEN16 = struct.Struct("<H")
_PAUSE = struct.Struct("<IqqI")
_STATE = struct.Struct("<IHI")
_COUNTED = struct.Struct("<Q5I")
_EXT = struct.Struct("<QHI")
# (attribute, array typecode) of each column, in file order
COLUMNS = (("id", "Q"), ("tube", "I"), ("pri", "I"), ("delay", "q"), ("ttr", "q"),
           ("created", "q"), ("deadline", "q"), ("state", "B"), ("file", "I"),
           ("body", "I"))  # fmt: skip
_MASK = 0xFFFFFFFF
_STATES = tuple(JobState)
_SWAP = sys.byteorder != "little"
_T = TypeVar("_T")


def encode(
    engine: Engine, pauses: dict[str, int], states: dict[str, tuple[int, bytes]]
) -> list[bytes]:
    """The payload for the engine as it is: `pauses` maps a paused tube to the segment of
    its pause record, `states` a named state to (segment, value)."""
    jobs = _in_order(engine)
    tubes = engine.tube_list
    counted, extended = sum(1 for j in jobs if j.counters), sum(1 for j in jobs if j.ext)
    out = [_HEAD.pack(engine.next_id, len(tubes), len(jobs), len(pauses), len(states),
                      counted, extended)]  # fmt: skip
    out += [_LEN16.pack(len(t.name_bytes)) + t.name_bytes for t in tubes]
    out += [_PAUSE.pack(file, engine.tubes[name].pause_ms, engine.tubes[name].pause_until,
                        engine.tubes[name].index) for name, file in pauses.items()]  # fmt: skip
    for key, (file, value) in states.items():
        raw = key.encode()
        out.append(_STATE.pack(file, len(raw), len(value)) + raw + value)
    out += [_COUNTED.pack(i, *_counts(j.counters)) for i, j in enumerate(jobs) if j.counters]
    exts = [(i, j.ext.KIND, j.ext.encode()) for i, j in enumerate(jobs) if j.ext]
    out += [_EXT.pack(i, kind, len(raw)) for i, kind, raw in exts]
    out += [raw for _, _, raw in exts]
    out += [_column(jobs, name, code) for name, code in COLUMNS]
    out.append(b"".join(map(attrgetter("body"), jobs)))
    return out


def _in_order(engine: Engine) -> list[Job]:
    """Every job; buried ones last, each tube's in bury order (the order replay keeps)."""
    jobs = [job for job in engine.jobs.values() if job.state is not BURIED]
    jobs += chain.from_iterable(tube.buried.values() for tube in engine.tube_list)
    return jobs


def _column(jobs: list[Job], name: str, code: str) -> bytes:
    if name == "tube":
        values: Iterable[int] = (job.tube.index for job in jobs)
    elif name == "body":
        values = map(len, map(attrgetter("body"), jobs))
    else:
        values = map(attrgetter(name), jobs)
    column = array(code, values)
    if _SWAP:
        column.byteswap()
    return column.tobytes()


def _counts(c: int) -> tuple[int, int, int, int, int]:
    return c & _MASK, (c >> 32) & _MASK, (c >> 64) & _MASK, (c >> 96) & _MASK, c >> 128


class _Cursor:
    """Reads the payload front to back (BytesIO over the file's bytes shares them)."""

    def __init__(self, data: bytes, start: int) -> None:
        self.stream = BytesIO(data)
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


def load(restorer: Restorer, data: bytes, start: int) -> int:
    """Fold the payload at `data[start:]` into an empty restorer; return the jobs.
    Raises RecordError when it does not hold what its head says."""
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
        restorer.states[cur.read(key_len).decode()] = (file, cur.read(value_len))
    counted = [cur.unpack(_COUNTED) for _ in range(ncounted)]
    exts = [cur.unpack(_EXT) for _ in range(nexts)]
    ext_bytes = [cur.read(size) for _, _, size in exts]
    ids, jobs = _jobs(cur, tubes, njobs)
    for at, r, t, rel, b, k in counted:
        jobs[at].counters = r | t << 32 | rel << 64 | b << 96 | k << 128
    for (at, kind, _), raw in zip(exts, ext_bytes, strict=True):
        restorer.ext[ids[at]] = (kind, raw)
    restorer.jobs.update(zip(ids, jobs, strict=False))
    restorer.next_id = max(restorer.next_id, next_id)
    return njobs


def _tube(tubes: list[Tube], index: int) -> Tube:
    if index >= len(tubes):
        raise RecordError(f"snapshot names tube {index} of {len(tubes)}")
    return tubes[index]


def _shared(column: array[int]) -> Iterable[int]:
    """The column's values, one int object per distinct value (as jobs made by puts
    share them): one endless repeat of one object when they are all equal (a C-level
    count). A list or a repeat: either may be read more than once."""
    if column and column.count(column[0]) == len(column):
        return repeat(column[0])
    values = column.tolist()
    seen: dict[int, int] = {}
    return list(map(seen.setdefault, values, values))


def _each(column: array[int], values: Sequence[_T]) -> Iterable[_T]:
    """values[i] for each i of the column (one repeated value when the column is even)."""
    if column and column.count(column[0]) == len(column):
        return repeat(values[column[0]])
    return map(values.__getitem__, column)


def _keys(pris: Iterable[int], ids: list[int], state: array[int]) -> Iterable[int | None]:
    """Each job's ready key, None for a job not READY (`restored_job`)."""
    keys = ready_keys(pris, ids)
    if state.count(READY) == len(ids):
        return keys
    return [key if s == READY else None for key, s in zip(keys, state, strict=True)]


def _jobs(cur: _Cursor, tubes: list[Tube], count: int) -> tuple[list[int], list[Job]]:
    columns = [cur.column(code, count) for _, code in COLUMNS]
    ids_column, tube_at, pri, delay, ttr, created, deadline, state, file, lengths = columns
    if count and (max(tube_at) >= len(tubes) or max(state) >= len(_STATES)):
        raise RecordError("snapshot job names a tube or a state it does not know")
    if sum(lengths) != cur.left():
        raise RecordError("snapshot bodies do not fill the rest of the file")
    ids, pris = ids_column.tolist(), _shared(pri)  # pris is read twice (list or repeat)
    jobs = list(map(restored_job, ids, _each(tube_at, tubes), pris, _shared(delay),
                    _shared(ttr), map(cur.read, lengths), _shared(created),
                    _each(state, _STATES), _shared(deadline), _shared(file),
                    _keys(pris, ids, state)))  # fmt: skip
    return ids, jobs
