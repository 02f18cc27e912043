"""The Workq extras a job carries (`job.ext`), their write-ahead-log codec, and the
dialect's fixed mappings (priorities, states, synthetic ids of plain beanstalkd jobs)."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, ClassVar

from beanpod.core.job import EXT_DECODERS, PRI_PIVOT, JobState

if TYPE_CHECKING:
    from beanpod.core.job import Job

MAX_HARD_ATTEMPTS = 255  # a job is leased at most 255 times even with max-attempts 0

# Workq's numeric job states (`inspect`'s `state` key).
NEW, COMPLETED, FAILED, PENDING, LEASED = range(5)

# How a finished job ended (kept in the held COMPLETE state until its TTL runs out).
NO_OUTCOME, OUTCOME_COMPLETED, OUTCOME_FAILED = range(3)

# A plain (beanstalkd) job with integer id N is named by this version-4 UUID in Workq.
SYNTHETIC_PREFIX = b"00000000-0000-4000-8000-"
SYNTHETIC_MAX_ID = 16**12 - 1


def to_engine_pri(workq_pri: int) -> int:
    return PRI_PIVOT - workq_pri


def to_workq_pri(engine_pri: int) -> int:
    return PRI_PIVOT - engine_pri


def synthetic_uuid(job_id: int) -> bytes:
    return SYNTHETIC_PREFIX + b"%012x" % job_id


def synthetic_id(uuid: bytes) -> int | None:
    """The plain job id a synthetic UUID names, or None if `uuid` is not one."""
    if uuid.startswith(SYNTHETIC_PREFIX):
        return int(uuid[24:], 16)
    return None


# uuid(16) ttl expires scheduled max-attempts attempts max-fails fails outcome flags
_HEAD = struct.Struct("<16sQqqBHBHBB")
_RUN_FLAG = 1


class WorkqExt:
    """A Workq job's extras. Times are engine milliseconds; 0 means "none"."""

    KIND: ClassVar[int] = 1
    DIALECT: ClassVar[str] = "workq"

    __slots__ = (
        "attempts",
        "expires",
        "fails",
        "is_run",
        "job",
        "max_attempts",
        "max_fails",
        "outcome",
        "result",
        "scheduled",
        "timer",
        "ttl",
        "uuid",
    )

    def __init__(
        self,
        uuid: bytes,
        ttl: int = 0,
        expires: int = 0,
        scheduled: int = 0,
        max_attempts: int = 0,
        max_fails: int = 0,
        is_run: bool = False,
    ) -> None:
        self.uuid = uuid  # canonical lower-case form, 36 ASCII bytes
        self.ttl = ttl
        self.expires = expires  # TTL eviction instant (0: no TTL, e.g. run jobs)
        self.scheduled = scheduled  # the schedule command's time (0: added, not scheduled)
        self.max_attempts = max_attempts
        self.attempts = 0
        self.max_fails = max_fails
        self.fails = 0
        self.outcome = NO_OUTCOME
        self.result = b""
        self.is_run = is_run  # held by a `run` command: deleted when the run returns
        self.job: Job | None = None
        self.timer: Any = None  # the TTL eviction timer (this object is its target)

    @property
    def uuid_text(self) -> str:
        return self.uuid.decode("ascii")

    @property
    def key(self) -> str:
        return self.uuid_text

    @property
    def attempt_limit(self) -> int:
        return self.max_attempts or MAX_HARD_ATTEMPTS

    def encode(self) -> bytes:
        head = _HEAD.pack(
            bytes.fromhex(self.uuid.replace(b"-", b"").decode("ascii")),
            self.ttl, self.expires, self.scheduled, self.max_attempts,
            min(self.attempts, 0xFFFF), self.max_fails, min(self.fails, 0xFFFF),
            self.outcome, _RUN_FLAG if self.is_run else 0,
        )  # fmt: skip
        return head + self.result

    @classmethod
    def decode(cls, data: bytes) -> WorkqExt:
        raw, ttl, expires, scheduled, max_att, att, max_fails, fails, outcome, flags = (
            _HEAD.unpack_from(data)
        )
        h = raw.hex().encode("ascii")
        uuid = b"-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:]))
        ext = cls(uuid, ttl, expires, scheduled, max_att, max_fails, bool(flags & _RUN_FLAG))
        ext.attempts = att
        ext.fails = fails
        ext.outcome = outcome
        ext.result = bytes(data[_HEAD.size :])
        return ext


EXT_DECODERS[WorkqExt.KIND] = WorkqExt.decode


def workq_ext(job: Job) -> WorkqExt | None:
    ext = job.ext
    return ext if isinstance(ext, WorkqExt) else None


def attempts_of(job: Job) -> int:
    ext = workq_ext(job)
    return job.reserves if ext is None else ext.attempts


def uuid_of(job: Job) -> bytes:
    ext = workq_ext(job)
    return synthetic_uuid(job.id) if ext is None else ext.uuid


def is_finished(job: Job) -> bool:
    """Completed or failed through Workq (held COMPLETE), or buried through beanstalkd."""
    return job.state is JobState.COMPLETE or job.state is JobState.BURIED


def workq_state(job: Job) -> int:
    """The Workq state number of any job (plain beanstalkd jobs too)."""
    state = job.state
    if state is JobState.RESERVED:
        return LEASED
    if is_finished(job):
        ext = workq_ext(job)
        return COMPLETED if ext is not None and ext.outcome == OUTCOME_COMPLETED else FAILED
    return PENDING if attempts_of(job) else NEW
