"""The job record and its state machine: every state change is declared here."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol

from mypy_extensions import mypyc_attr

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.tube import Tube

URGENT_PRIORITY: Final = 1024  # beanstalkd counts ready jobs with pri < 1024 as "urgent"
# Workq and qless priorities are larger first; engine priorities are u32, smaller first.
# `engine = PRI_PIVOT - workq` is the order-reversing bijection between the two ranges:
# Workq 2147483647 -> 0 (most urgent), Workq 0 -> 2147483647, Workq -2^31 -> 2^32-1.
PRI_PIVOT = 2**31 - 1


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
HELD_STATES: Final = frozenset({JobState.DEPENDS, JobState.COMPLETE, JobState.RECUR})

# Every state change a job may make: old -> allowed new states. `move()` below is the
# one function that changes `job.state`; it checks this table when the engine has a
# MoveCheck.
# None is "does not exist": the row None lists what a put creates; every row's None is
# a delete (or a Workq/qless removal). A restart re-creates each job in the state its
# last record names (RESTART_STATES: never RESERVED, a restart ends reservations).
# Plain beanstalkd uses the first four states and the edges without a comment; the
# comments name the extension moves that add the others. A same-state edge is a job
# taken out and placed again.
# Final (here and below): compiled, a module constant is a C static, not a dict lookup.
READY: Final = JobState.READY
DELAYED: Final = JobState.DELAYED
RESERVED: Final = JobState.RESERVED
BURIED: Final = JobState.BURIED
DEPENDS: Final = JobState.DEPENDS
COMPLETE: Final = JobState.COMPLETE
RECUR: Final = JobState.RECUR
TRANSITIONS: dict[JobState | None, frozenset[JobState | None]] = {
    None: frozenset({READY, DELAYED, DEPENDS, RECUR}),  # qless: DEPENDS, RECUR
    READY: frozenset({
        RESERVED, None, DELAYED,
        DEPENDS,  # qless re-put
        COMPLETE,  # Workq complete/fail need no lease
        READY,  # qless re-put or a spawned recurring child: re-ranked in its band
    }),
    DELAYED: frozenset({
        READY, RESERVED, None,
        DEPENDS, COMPLETE,  # qless re-put, Workq complete/fail
        DELAYED,  # qless re-put with a new delay
    }),
    RESERVED: frozenset({
        READY, DELAYED, BURIED, None,
        DEPENDS, COMPLETE,  # qless complete(-with-next), Workq complete/fail
        RESERVED,  # qless: a stalled job's lock handed straight to another worker
    }),
    BURIED: frozenset({READY, RESERVED, None, DELAYED, DEPENDS}),  # qless re-put: DELAYED, DEP.
    DEPENDS: frozenset({READY, DELAYED, None, DEPENDS}),  # qless re-put with dependencies
    COMPLETE: frozenset({READY, DELAYED, DEPENDS, None}),  # qless re-put of a completed job
    RECUR: frozenset({None}),  # a qless recurring template is only ever removed
}  # fmt: skip
RESTART_STATES = frozenset({READY, DELAYED, BURIED, DEPENDS, COMPLETE, RECUR})


class IllegalMove(Exception):  # Exception: a compiled class may not derive from AssertionError
    """A job state change that TRANSITIONS does not declare (a bug in the engine)."""


# Bit offsets of the counters packed in Job.counters (beanstalkd keeps them as u32).
RESERVES_SHIFT, TIMEOUTS_SHIFT, RELEASES_SHIFT, BURIES_SHIFT, KICKS_SHIFT = 0, 32, 64, 96, 128
ONE_RESERVE: Final = 1 << RESERVES_SHIFT
RESERVES_MASK: Final = 0xFFFFFFFF << RESERVES_SHIFT
_MASK: Final = 0xFFFFFFFF


class JobExt(Protocol):
    """Dialect extras carried by a job (Workq uuid/ttl/result, qless data...).

    `KIND` names the codec in EXT_DECODERS; `encode()` gives the bytes the write-ahead
    log stores with the job, so extras survive a restart like the job itself. `DIALECT`
    owns the jobs carrying it, and knows each by its `key` (see `owner`).
    """

    KIND: ClassVar[int]
    DIALECT: ClassVar[str]  # "workq", "qless"

    @property
    def key(self) -> str:
        """The id the dialect's clients know the job by (a qless jid, a Workq uuid)."""
        ...

    def encode(self) -> bytes: ...


# KIND -> decoder of JobExt.encode() output; each extension registers itself.
EXT_DECODERS: dict[int, Callable[[bytes], JobExt]] = {}


class Job:
    """One job. Times are integer milliseconds on the engine's clock.

    `state` is unset until the job's first `move()` (its put or its restore).

    `entry` is the job's live entry in its tube's ready or delayed heap (lazy
    deletion: an entry is live only while `job.entry is entry`; while reserved, in no heap,
    it holds the reserve time, in ms after `created`, when the engine keeps job timings);
    `timer` is its live entry in the engine's timer heap (delay promotion or TTR expiry).
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
    state: JobState  # set by move() only

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
        state = state_name(getattr(self, "state", None))
        return f"<Job {self.id} {self.tube.name} {state} pri={self.pri}>"


@mypyc_attr(allow_interpreted_subclasses=True)  # tests record moves in a subclass
class MoveCheck:
    """The state table's check of one engine's moves (`Engine(check=MoveCheck())`): on in
    every test (tests/conftest.py) and with `beanpod serve --check-moves`; off (None) in
    production, where it would cost more than 1 % (docs/architecture.md). `restarting`:
    the moves re-create jobs from the write-ahead log (`Engine.restarting()`)."""

    __slots__ = ("restarting",)

    def __init__(self) -> None:
        self.restarting = False

    def __call__(self, job: Job, new: JobState) -> None:
        """Raise IllegalMove unless `job` may go from its state to `new`."""
        check_move(job, new, self.restarting)


def move(job: Job, new: JobState, check: MoveCheck | None) -> None:
    """The one place a job's state changes: the engine's moves (make_ready, ...,
    `Engine.hold` for the extensions' held states) call it with the engine's `check`."""
    if check is not None:
        check(job, new)
    job.state = new


def owner(job: Job) -> tuple[str, str]:
    """Which dialect owns `job`, and the id it knows the job by: ("beanstalkd", "") for a
    plain job, else its extension's (("qless", jid), ("workq", uuid)). The one answer the
    console, the job filters and the operator's moves read."""
    ext = job.ext
    return ("beanstalkd", "") if ext is None else (ext.DIALECT, ext.key)


def fold_logged_state(job: Job, logged: JobState) -> None:
    """Write-ahead-log replay only: the state the job's latest record names, while the
    restart folds records into jobs that are in no queue yet. The moves in between were
    never logged (a reserve is not), so nothing is checked here; the restart's placing
    move (inside `Engine.restarting()`) is."""
    job.state = logged


def fold_logged_update(
    job: Job,
    pri: int,
    delay: int,
    ttr: int,
    deadline: int,
    logged: JobState,
    entry: int | None,
    counters: int,
) -> None:
    """Write-ahead-log replay only: an update record folded into its job (unchecked, as
    `fold_logged_state`); `entry` is the ready key its placement will use, when READY."""
    job.pri, job.delay, job.ttr, job.deadline = pri, delay, ttr, deadline
    fold_logged_state(job, logged)
    job.entry = entry
    job.counters = counters


def fold_logged_counters(job: Job, counters: int) -> None:
    """Write-ahead-log replay only: a snapshot's packed counters (`Job.counters`)."""
    job.counters = counters


def restored_job(
    job_id: int,
    tube: Tube,
    pri: int,
    delay: int,
    ttr: int,
    body: bytes,
    created: int,
    logged: JobState,
    deadline: int,
    file: int,
    entry: int | None = None,
    counters: int = 0,
) -> Job:
    """A job re-created from the write-ahead log (a replay's fold, a snapshot's load) in
    one call: in the state its latest record names (unchecked, as `fold_logged_state`;
    the restart's placing move checks it), with its deadline, segment and, when READY, the
    ready key its placement will use (`Engine.make_ready_restored`). About 0.25 µs a
    job against 0.4 for `Job()` plus the three stores after it (uncompiled; compiled,
    allocating runs `__init__`, so it is called)."""
    if _COMPILED:
        job = Job(job_id, tube, pri, delay, ttr, body, created)
        job.deadline, job.entry, job.counters, job.file = deadline, entry, counters, file
    else:
        job = _new_object(Job)
        job.id = job_id
        job.tube = tube
        job.pri = pri
        job.delay = delay
        job.ttr = ttr
        job.body = body
        job.created = created
        job.deadline = deadline
        job.reserver = None
        job.entry = entry
        job.timer = None
        job.counters = counters
        job.file = file
        job.ext = None
    job.state = logged
    return job


_new_object = object.__new__
_COMPILED = not __file__.endswith(".py")  # this module built by mypyc (setup.py)


def check_placed(jobs: Iterable[Job], new: JobState, check: MoveCheck | None) -> None:
    """The placing move of jobs `restored_job` made in state `new` already (a restart's
    bulk placement): checked against the table when the engine checks, one by one, so
    the check sees each; nothing to store (they are in it)."""
    if check is not None:
        for job in jobs:
            check(job, new)
            if job.state is not new:
                raise IllegalMove(
                    f"job {job.id}: placed {state_name(new)} while {state_name(job.state)}"
                )


def check_move(job: Job, new: JobState, restarting: bool = False) -> None:
    """Raise IllegalMove unless `job` may go from its state to `new` (`restarting`: a
    restart re-creates it from the log)."""
    old: JobState | None = getattr(job, "state", None)  # unset before its first move
    allowed = TRANSITIONS[old]
    if restarting and (old is None or old is new):
        allowed = RESTART_STATES  # re-created from the log, or re-placed by its extension
    if new not in allowed:
        raise IllegalMove(f"job {job.id}: {state_name(old)} -> {state_name(new)} is not declared")


def state_name(state: JobState | None) -> str:
    return "(none)" if state is None else STATE_NAMES[state]
