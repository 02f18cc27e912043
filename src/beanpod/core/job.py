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


STATE_NAMES: tuple[str, ...] = ("ready", "delayed", "reserved", "buried")

# Allowed transitions; None is "does not exist" (before put, after delete).
TRANSITIONS: dict[JobState | None, frozenset[JobState | None]] = {
    None: frozenset({JobState.READY, JobState.DELAYED}),
    JobState.READY: frozenset({JobState.RESERVED, None}),
    JobState.DELAYED: frozenset({JobState.READY, JobState.RESERVED, None}),
    JobState.RESERVED: frozenset({JobState.READY, JobState.DELAYED, JobState.BURIED, None}),
    JobState.BURIED: frozenset({JobState.READY, JobState.RESERVED, None}),
}


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
    deletion: an entry is live only while `job.entry is entry`); `timer` is its live
    entry in the engine's timer heap (delay promotion or TTR expiry).
    """

    __slots__ = (
        "body",
        "buries",
        "created",
        "deadline",
        "delay",
        "entry",
        "ext",
        "id",
        "kicks",
        "pri",
        "releases",
        "reserver",
        "reserves",
        "state",
        "timeouts",
        "timer",
        "ttr",
        "tube",
    )

    def __init__(
        self, job_id: int, tube: Tube, pri: int, delay: int, ttr: int, body: bytes, now: int
    ) -> None:
        self.id = job_id
        self.tube = tube
        self.pri = pri
        self.delay = delay
        self.ttr = ttr
        self.body = body
        self.state = JobState.READY
        self.created = now
        self.deadline = 0  # due time when delayed, TTR expiry when reserved
        self.reserver: Conn | None = None
        self.entry: Any = None
        self.timer: Any = None
        self.reserves = 0
        self.timeouts = 0
        self.releases = 0
        self.buries = 0
        self.kicks = 0
        self.ext: JobExt | None = None  # dialect extras (Workq uuid/ttl/result, qless data); None if unused

    def __repr__(self) -> str:
        return f"<Job {self.id} {self.tube.name} {STATE_NAMES[self.state]} pri={self.pri}>"


def check_transition(old: JobState | None, new: JobState | None) -> None:
    """Raise if `old -> new` is not a declared transition (used by tests and asserts)."""
    if new not in TRANSITIONS[old]:
        raise AssertionError(f"illegal job transition {old!r} -> {new!r}")
