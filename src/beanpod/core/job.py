"""The job record and its state machine: every state change is declared here."""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.tube import Tube

URGENT_PRIORITY = 1024  # beanstalkd counts ready jobs with pri < 1024 as "urgent"


class JobState(IntEnum):
    """Where a job is in its life. Dialects name these differently (see docs)."""

    READY = 0
    DELAYED = 1
    RESERVED = 2
    BURIED = 3
    # Held by an extension (qless), in no engine queue: reserve never hands them out,
    # kick ignores them, peek and stats-job show them, delete removes them.
    DEPENDS = 4  # waiting for other jobs to complete
    COMPLETE = 5  # finished, kept for its history until completed-job expiry
    RECUR = 6  # a recurring-job template that spawns children


STATE_NAMES: tuple[str, ...] = (
    "ready", "delayed", "reserved", "buried", "depends", "complete", "recur"
)  # fmt: skip
HELD_STATES = frozenset({JobState.DEPENDS, JobState.COMPLETE, JobState.RECUR})

# Allowed transitions; None is "does not exist" (before put, after delete).
# qless moves (re-put, complete-with-next, unfail, dependency unlock) add the edges
# marked "qless"; plain beanstalkd and Workq use only the first ones.
_R, _D, _V, _B = JobState.READY, JobState.DELAYED, JobState.RESERVED, JobState.BURIED
_DEP, _DONE, _REC = JobState.DEPENDS, JobState.COMPLETE, JobState.RECUR
TRANSITIONS: dict[JobState | None, frozenset[JobState | None]] = {
    None: frozenset({_R, _D, _DEP, _REC}),
    # Workq: _R/_D -> _DONE (complete and fail need no lease)
    _R: frozenset({_V, None, _D, _DEP, _DONE}),  # qless: _D, _DEP (re-put)
    _D: frozenset({_R, _V, None, _DEP, _DONE}),  # qless: _DEP
    _V: frozenset({_R, _D, _B, None, _DEP, _DONE}),  # qless: _DEP, _DONE (complete)
    _B: frozenset({_R, _V, None, _D, _DEP}),  # qless: _D, _DEP (re-put)
    _DEP: frozenset({_R, _D, None}),
    _DONE: frozenset({_R, _D, _DEP, None}),
    _REC: frozenset({None}),
}


# Bit offsets of the counters packed in Job.counters (beanstalkd keeps them as u32).
RESERVES_SHIFT, TIMEOUTS_SHIFT, RELEASES_SHIFT, BURIES_SHIFT, KICKS_SHIFT = 0, 32, 64, 96, 128
ONE_RESERVE = 1 << RESERVES_SHIFT
RESERVES_MASK = 0xFFFFFFFF << RESERVES_SHIFT
_MASK = 0xFFFFFFFF

_READY = JobState.READY  # a module constant: cheaper than the enum attribute per job


class JobExt(Protocol):
    """Dialect extras carried by a job (Workq uuid/ttl/result, qless data...).

    `KIND` names the codec in EXT_DECODERS; `encode()` gives the bytes the write-ahead
    log stores with the job, so extras survive a restart like the job itself.
    """

    KIND: ClassVar[int]

    def encode(self) -> bytes: ...


# KIND -> decoder of JobExt.encode() output; each extension registers itself.
EXT_DECODERS: dict[int, Callable[[bytes], JobExt]] = {}


class Job:
    """One job. Times are integer milliseconds on the engine's clock.

    `entry` is the job's live entry in its tube's ready or delayed heap (lazy
    deletion: an entry is live only while `job.entry is entry`; while reserved, in no heap,
    it holds the reserve time when the engine keeps job timings); `timer` is its live
    entry in the engine's timer heap (delay promotion or TTR expiry).
    """

    __slots__ = (
        "body",
        "counters",
        "created",
        "deadline",
        "delay",
        "entry",
        "ext",
        "file",
        "id",
        "pri",
        "reserver",
        "state",
        "timer",
        "ttr",
        "tube",
    )

    def __init__(
        self,
        job_id: int,
        tube: Tube,
        pri: int,
        delay: int,
        ttr: int,
        body: bytes,
        now: int,
        ext: JobExt | None = None,
    ) -> None:
        self.id = job_id
        self.tube = tube
        self.pri = pri
        self.delay = delay
        self.ttr = ttr
        self.body = body
        self.state = _READY
        self.created = now
        self.deadline = 0  # due time when delayed, TTR expiry when reserved
        self.reserver: Conn | None = None
        self.entry: Any = None
        self.timer: Any = None
        self.counters = 0  # reserves, timeouts, releases, buries, kicks: 32 bits each
        self.file = 0  # WAL segment holding its latest full record (stats-job `file`)
        self.ext = ext  # dialect extras (Workq, qless); None if unused

    # The five per-job counters share one int (a small, cached int for most jobs): 32 bytes
    # less per job than five slots. The engine bumps `counters` directly on hot paths.
    @property
    def reserves(self) -> int:
        return self.counters & _MASK

    @reserves.setter
    def reserves(self, value: int) -> None:
        self._set_counter(RESERVES_SHIFT, value)

    @property
    def timeouts(self) -> int:
        return (self.counters >> TIMEOUTS_SHIFT) & _MASK

    @timeouts.setter
    def timeouts(self, value: int) -> None:
        self._set_counter(TIMEOUTS_SHIFT, value)

    @property
    def releases(self) -> int:
        return (self.counters >> RELEASES_SHIFT) & _MASK

    @releases.setter
    def releases(self, value: int) -> None:
        self._set_counter(RELEASES_SHIFT, value)

    @property
    def buries(self) -> int:
        return (self.counters >> BURIES_SHIFT) & _MASK

    @buries.setter
    def buries(self, value: int) -> None:
        self._set_counter(BURIES_SHIFT, value)

    @property
    def kicks(self) -> int:
        return (self.counters >> KICKS_SHIFT) & _MASK

    @kicks.setter
    def kicks(self, value: int) -> None:
        self._set_counter(KICKS_SHIFT, value)

    def _set_counter(self, shift: int, value: int) -> None:
        self.counters = (self.counters & ~(_MASK << shift)) | ((value & _MASK) << shift)

    def __repr__(self) -> str:
        return f"<Job {self.id} {self.tube.name} {STATE_NAMES[self.state]} pri={self.pri}>"
