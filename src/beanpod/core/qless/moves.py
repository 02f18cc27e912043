"""Where a qless job sits, and moving it: every qless state change goes through here.

Order within a priority band: qless pops equal priorities in the order they last became
waiting. beanpod keeps one ready heap per tube, ordered (pri, key): plain jobs use their
id as the key (beanstalkd's order, untouched); a qless job that becomes waiting again
(re-put, retry, complete-with-next, unfail, dependency unlock, scheduled time reached)
gets a fresh key from the engine's id sequence (`ext.order`), so it ranks after every job
already waiting and before every job put later, for qless pop and beanstalkd reserve
alike. `make_waiting` is the one place that hands a qless order to the engine.

Engine placement (ready/delayed heaps, buried list, reservations) is done with the
engine's own primitives; the qless-only sets (stalled locks, depends, failure groups,
completed list) are kept beside them. `detach` undoes any placement; the `to_*`
functions place a detached job.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from beanpod.core.job import BURIED, COMPLETE, DEPENDS, PRI_PIVOT, RESERVED, Job
from beanpod.core.qless import throttles
from beanpod.core.qless.ext import QlessExt, qext
from beanpod.core.qless.names import LOCK_DUE, SCHED_DUE, plain_jid

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless

U32_MAX = 0xFFFFFFFF
DEFAULT_RETRIES = 5


def engine_pri(priority: float) -> int:
    """qless priority (larger first) -> engine priority (smaller first), as Workq maps."""
    return min(U32_MAX, max(0, PRI_PIVOT - int(priority)))


def ext_of(job: Job) -> QlessExt:
    ext = qext(job)
    assert ext is not None, job
    return ext


def require(q: Qless, fn: str, jid: str) -> tuple[Job, QlessExt]:
    """The qless job `jid` for qless function `fn` and its extras; a clear error if it
    does not exist or is a beanstalkd-put job qless pop has not handed out."""
    job = q.require(fn, jid)
    return job, ext_of(job)


def adopt(q: Qless, job: Job, now: int) -> QlessExt | None:
    """qless pop takes a plain (beanstalkd-put) job: give it qless extras (jid
    `beanstalkd:<id>`) so qless can run it; None for a job another dialect owns (Workq)."""
    if job.ext is not None:
        return qext(job)
    ext = QlessExt(plain_jid(job.id), "", job.tube.name)
    ext.priority = PRI_PIVOT - job.pri
    ext.time = job.created
    ext.job = job
    q.engine.attach(job, ext)
    q.jobs[ext.jid] = job
    q.queue(job.tube.name, now)
    return ext


# ---- leaving a place -------------------------------------------------------------------


def detach(q: Qless, job: Job, now: int) -> None:
    """Take `job` out of wherever it is: engine queue or reservation, qless sets (the
    jobs its throttle locks let in become waiting at `now`)."""
    state = job.state
    if state is RESERVED:
        unlock(q, job, now)
    else:
        if state is BURIED:
            leave_group(q, job)
        q.engine.take_out(job)
    unplace(q, job, now)


def unlock(q: Qless, job: Job, now: int, keep_throttles: bool = False) -> None:
    """End `job`'s reservation (a qless lock or a beanstalkd reserve); its throttle
    locks go too unless `keep_throttles` (a stalled job handed straight out again)."""
    q.engine.unreserve(job)
    info = q.queues.get(job.tube.name)
    if info is not None:
        info.running.pop(job.id, None)
        info.stalled.pop(job.id, None)
    ext = qext(job)
    if ext is not None:
        ext.worker = ""
        ext.expires = 0
        ext.grace = False
        if not keep_throttles:
            release_throttles(q, job, now)


def unplace(q: Qless, job: Job, now: int) -> None:
    """Forget `job` in the depends set, the completed list and its throttles
    (idempotent)."""
    ext = qext(job)
    if ext is None:
        return
    info = q.queues.get(ext.queue)
    if info is not None and info.depends.get(ext.jid) is job:
        del info.depends[ext.jid]
    if q.completed.get(ext.jid) is job:
        del q.completed[ext.jid]
    release_throttles(q, job, now)


def release_throttles(q: Qless, job: Job, now: int) -> None:
    """`job` gives up its throttle locks (or its place among the pending): the jobs
    that get them go back to waiting."""
    _let_in(q, throttles.release(q, job, now), now)


def throttle_release(q: Qless, now: int, tid: str, jids: list[str]) -> None:
    """throttle.release(tid, jid...) (throttles.release_jids)."""
    _let_in(q, throttles.release_jids(q, now, tid, jids), now)


def _let_in(q: Qless, jobs: list[Job], now: int) -> None:
    for job in jobs:
        to_waiting(q, job, now)
        q.save(job)


def leave_group(q: Qless, job: Job) -> None:
    """A failed job leaves its failure group; its queue's `failed` stat drops by one on
    the day it failed."""
    ext = qext(job)
    if ext is None or ext.failure is None:
        return
    group = ext.failure["group"]
    members = q.groups.get(group)
    if members is None or members.get(ext.jid) is not job:
        return
    del members[ext.jid]
    if not members:
        del q.groups[group]
    day = q.stats.existing(ext.queue, int(ext.failure["when"]) * 1000)
    if day is not None:
        day.failed -= 1


# ---- taking a place --------------------------------------------------------------------


def set_queue(q: Qless, job: Job, name: str, now: int) -> None:
    """Move a detached job to queue (tube) `name`."""
    ext_of(job).queue = name
    retube(q, job, name, now, counted=True)


def retube(q: Qless, job: Job, name: str, now: int, counted: bool = False) -> None:
    """Move a job that is in no engine queue to the tube of queue `name` (registered at
    `now` if new; `counted`: as a job put into it, stats-tube total-jobs)."""
    q.engine.retube(job, q.queue(name, now).tube, counted)


def place(q: Qless, job: Job, now: int, delay_ms: int) -> None:
    """Put a detached job where its dependencies and delay say: depends, scheduled or
    waiting."""
    ext = ext_of(job)
    if ext.dependencies:
        ext.scheduled = now + delay_ms if delay_ms > 0 else 0
        to_depends(q, job, now)
    elif delay_ms > 0:
        to_scheduled(q, job, now + delay_ms)
    else:
        to_waiting(q, job, now)


def to_waiting(q: Qless, job: Job, now: int) -> None:
    """A detached job becomes waiting now: last in its priority band."""
    ext = ext_of(job)
    q.engine.amend(job, pri=engine_pri(ext.priority), delay=0)
    ext.order = q.engine.allocate_id()
    ext.timed_out = 0
    make_waiting(q, job, now)


def make_waiting(q: Qless, job: Job, now: int) -> None:
    """Make a detached job ready, keyed by its `ext.order` (its id when 0)."""
    ext = qext(job)
    q.engine.make_ready(job, now, 0 if ext is None else ext.order)


def to_scheduled(q: Qless, job: Job, due: int) -> None:
    q.engine.amend(job, pri=engine_pri(ext_of(job).priority))
    make_scheduled(q, job, due)


def make_scheduled(q: Qless, job: Job, due: int) -> None:
    """Make a detached job delayed until `due`; then it waits behind those already
    waiting (scheduled_due), as qless moves due jobs in due-time order."""
    q.engine.make_delayed(job, due)
    q.engine.arm(due, SCHED_DUE, job)  # replaces the engine's own delay timer


def scheduled_due(q: Qless, job: Job, now: int) -> None:
    """Timer: a scheduled qless job's time has come."""
    q.engine.take_out(job)
    to_waiting(q, job, now)


def to_depends(q: Qless, job: Job, now: int) -> None:
    ext = ext_of(job)
    q.engine.hold(job, DEPENDS)
    q.queue(ext.queue, now).depends[ext.jid] = job


def to_complete(q: Qless, job: Job) -> None:
    q.engine.hold(job, COMPLETE)
    q.completed[ext_of(job).jid] = job


def to_failed(
    q: Qless, job: Job, now: int, group: str, message: str, worker: str, *, caller: Conn | None
) -> None:
    """Fail a detached job into `group`: newest first in the group, stats +1."""
    ext = ext_of(job)
    ext.failure = {"group": group, "message": message, "when": now // 1000, "worker": worker}
    q.engine.make_buried(job)
    members = q.groups.setdefault(group, OrderedDict())
    members[ext.jid] = job
    day = q.stats.day(ext.queue, now)
    day.failures += 1
    day.failed += 1
    q.emit(caller, now, "fail", job, group=group, message=message, bytes=None)


def lock(q: Qless, job: Job, worker: str, now: int) -> None:
    """Hand a detached job to qless `worker` until now + the queue's heartbeat."""
    ext = ext_of(job)
    q.engine.make_reserved(q.conn_for(worker, now), job, now, worker)
    q.queue(ext.queue, now).running[job.id] = job
    ext.worker = worker
    set_expiry(q, job, now + q.config.heartbeat_ms(ext.queue))


def set_expiry(q: Qless, job: Job, expires: int) -> None:
    """(Re)arm the lock of a job a qless worker holds."""
    q.engine.move_deadline(job, expires, LOCK_DUE)
    ext = ext_of(job)
    ext.expires = expires
    info = q.queues.get(ext.queue)
    if info is not None:
        info.stalled.pop(job.id, None)
