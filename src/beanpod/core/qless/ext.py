"""The qless extras a job carries (`job.ext`) and their write-ahead-log codec.

A qless job is an ordinary engine Job in tube = queue; `QlessExt` holds what qless adds
(jid, klass, tags, dependencies, retries, failure, history, ...). A recurring-job
template is an engine Job in state RECUR carrying a `RecurExt`. Both encode as compact
JSON, so the log stays readable with `beanpod wal dump` and fields can be added freely.
Times are engine milliseconds unless a name says otherwise.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from beanpod.core.job import EXT_DECODERS

if TYPE_CHECKING:
    from beanpod.core.job import Job

Failure = dict[str, Any]  # {group, message, when (s), worker}
HistoryEntry = dict[str, Any]  # {what, when (s), ...}

_JOB_FIELDS = (
    "jid", "klass", "data", "priority", "tags", "retries", "remaining", "worker",
    "failure", "history", "tracked", "spawned_from", "dependencies", "dependents",
    "queue", "scheduled", "time", "grace", "expires", "order", "timed_out",
    "timed_out_worker", "throttles", "throttled_on", "unlocked",
)  # fmt: skip


class QlessExt:
    """A qless job's extras. `data` is None while the job's body is its current data
    (set once the data is replaced, so the replacement survives a restart)."""

    KIND: ClassVar[int] = 2
    DIALECT: ClassVar[str] = "qless"

    __slots__ = (*_JOB_FIELDS, "job")

    def __init__(self, jid: str, klass: str, queue: str) -> None:
        self.jid = jid
        self.klass = klass
        self.queue = queue
        self.data: str | None = None
        self.priority = 0
        self.tags: list[str] = []
        self.retries = 5
        self.remaining = 5
        self.worker = ""  # the qless worker holding its lock ('' when none)
        self.failure: Failure | None = None
        self.history: list[HistoryEntry] = []
        self.tracked = False
        self.spawned_from: str | None = None
        self.dependencies: dict[str, None] = {}  # jids it waits for (insertion order)
        self.dependents: dict[str, None] = {}  # jids waiting for it
        self.scheduled = 0  # due time remembered by a delayed job waiting on dependencies
        self.time = 0  # qless 'time': put / pop / complete instant (wait and run stats)
        self.grace = False  # lock lost once: the courtesy step was taken
        self.expires = 0  # lock expiry while a qless worker holds it
        self.order = 0  # ready-heap key within its priority band (0: the job id; moves.py)
        self.timed_out = 0  # `timeout`: its reserve count then (stalled until reserved again)
        self.timed_out_worker = ""  # the owner `timeout` took it from (shown while stalled)
        self.throttles: list[str] = []  # named throttles (the queue's is implied)
        self.throttled_on = ""  # the throttle it waits for while throttled ('' when not)
        self.unlocked: list[str] = []  # throttles whose lock throttle.release took back
        self.job: Job | None = None

    @property
    def key(self) -> str:
        return self.jid

    def encode(self) -> bytes:
        doc = {name: getattr(self, name) for name in _JOB_FIELDS}
        doc["dependencies"] = list(self.dependencies)
        doc["dependents"] = list(self.dependents)
        return json.dumps(doc, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> QlessExt:
        doc = json.loads(raw)
        ext = cls(doc["jid"], doc["klass"], doc["queue"])
        for name in _JOB_FIELDS:
            if name in doc:
                setattr(ext, name, doc[name])
        ext.dependencies = dict.fromkeys(doc.get("dependencies", ()))
        ext.dependents = dict.fromkeys(doc.get("dependents", ()))
        return ext


_RECUR_FIELDS = (
    "jid", "klass", "data", "priority", "tags", "retries", "queue", "interval", "backlog",
    "next_at", "count", "throttles",
)  # fmt: skip


class RecurExt:
    """A recurring-job template: spawns `<jid>-<count>` every `interval` ms from
    `next_at`. It is the target of its own spawn timer."""

    KIND: ClassVar[int] = 3
    DIALECT: ClassVar[str] = "qless"

    __slots__ = (*_RECUR_FIELDS, "job", "timer")

    def __init__(self, jid: str, klass: str, queue: str, interval: int) -> None:
        self.jid = jid
        self.klass = klass
        self.queue = queue
        self.interval = interval
        self.data = "{}"
        self.priority = 0
        self.tags: list[str] = []
        self.retries = 0
        self.backlog = 0
        self.next_at = 0
        self.count = 0  # children spawned so far; never reset
        self.throttles: list[str] = []  # given to each child
        self.job: Job | None = None
        self.timer: Any = None

    @property
    def key(self) -> str:
        return self.jid

    def encode(self) -> bytes:
        doc = {name: getattr(self, name) for name in _RECUR_FIELDS}
        return json.dumps(doc, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> RecurExt:
        doc = json.loads(raw)
        ext = cls(doc["jid"], doc["klass"], doc["queue"], doc["interval"])
        for name in _RECUR_FIELDS:
            if name in doc:  # fields added later are absent from older records
                setattr(ext, name, doc[name])
        return ext


EXT_DECODERS[QlessExt.KIND] = QlessExt.decode
EXT_DECODERS[RecurExt.KIND] = RecurExt.decode


def qext(job: Job) -> QlessExt | None:
    ext = job.ext
    return ext if isinstance(ext, QlessExt) else None


def rext(job: Job) -> RecurExt | None:
    ext = job.ext
    return ext if isinstance(ext, RecurExt) else None
