"""Locks: heartbeat, lock expiry, the grace period and forced timeouts.

A popped job is reserved by its worker's engine connection until `expires`. When the
lock expires (a LOCK_DUE timer) the job is only marked stalled: as in qless, the next
pop on its queue notices it. The first notice is a courtesy (history `timed-out`, queue
`retries` stat +1, lock extended by `grace-period`); the next one uses up a retry and
hands the job to the popping worker, or fails it once its retries are exhausted.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from beanpod.core.job import Job, JobState
from beanpod.core.qless import channels, moves
from beanpod.core.qless.errors import QlessError, missing
from beanpod.core.qless.ext import qext
from beanpod.core.qless.names import state_name
from beanpod.core.qless.put import set_data
from beanpod.core.qless.view import seconds

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.queue_info import QueueInfo
    from beanpod.core.qless.store import Qless


def lock_due(q: Qless, job: Job, now: int) -> None:
    """Timer: `job`'s lock expired; it waits in its queue's stalled set."""
    ext = qext(job)
    if ext is not None and job.state is JobState.RESERVED and ext.worker:
        q.queue(ext.queue, now).stalled[job.id] = job


def invalidate(
    q: Qless, info: QueueInfo, now: int, count: int, *, caller: Conn | None
) -> list[Job]:
    """Deal with up to `count` stalled jobs of a queue; return those to hand out."""
    grace_ms = int(q.config.number("grace-period", 10) * 1000)
    handed = []
    for job in list(islice(info.stalled.values(), max(0, count))):
        ext = moves.ext_of(job)
        courtesy = grace_ms <= 0 or not ext.grace
        if courtesy:
            channels.tracked(q, ext, "stalled")
            channels.lock_lost(q, ext.jid, ext.worker)
            q.history(job, now, "timed-out")
            q.stats.day(ext.queue, now).retries += 1
            ext.grace = True
            if grace_ms > 0:
                moves.set_expiry(q, job, now + grace_ms)
                q.save(job)
                continue
        if _expire(q, job, now, caller=caller):
            handed.append(job)
    return handed


def _expire(q: Qless, job: Job, now: int, *, caller: Conn | None) -> bool:
    """The lock is gone for good: True if the job may be handed out again, False if it
    ran out of retries and failed."""
    ext = moves.ext_of(job)
    ext.remaining -= 1
    owner = ext.worker
    moves.unlock(q, job, now, keep_throttles=ext.remaining >= 0)  # handed out again at once
    q.emit(caller, now, "timeout", job)
    if ext.remaining >= 0:
        return True
    group = f"failed-retries-{ext.queue}"
    q.history(job, now, "failed", group=group)
    message = f'Job exhausted retries in queue "{ext.queue}"'
    moves.to_failed(q, job, now, group, message, "", caller=caller)
    q.save(job)
    channels.log(q, message=message, jid=ext.jid, group=group, event="failed", worker=owner)
    channels.tracked(q, ext, "failed")
    return False


def heartbeat(q: Qless, now: int, jid: str, worker: str, data: str | None = None) -> float:
    """heartbeat(jid, worker, [data]) -> new expiry (seconds); renews the lock."""
    q.at(now)
    job = owned(q, "Heartbeat", jid, worker, "given out to another worker")
    ext = moves.ext_of(job)
    if data is not None:
        set_data(q, job, data)
    q.touch_worker(worker, now)
    moves.set_expiry(q, job, now + q.config.heartbeat_ms(ext.queue))
    q.save(job)
    return seconds(ext.expires)


def owned(q: Qless, fn: str, jid: str, worker: str, other: str) -> Job:
    """The job `jid` if it is running under `worker`'s lock; else the qless error
    (`does not exist`, `not currently running: <state>`, `<other>: <owner>`)."""
    job = q.find(jid)
    if job is None or job.state is JobState.RECUR:
        raise missing(fn, jid)
    if job.state is not JobState.RESERVED:
        raise QlessError(f"{fn}(): Job {jid} is not currently running: {state_name(job)}")
    ext = qext(job)
    owner = "" if ext is None else ext.worker
    if owner != worker or not owner:
        raise QlessError(f"{fn}(): Job {jid} {other}: {owner}")
    return job


def timeout(q: Qless, now: int, jids: list[str], *, caller: Conn | None) -> None:
    """timeout(jid...): expire running jobs now; they are handed out first again."""
    q.at(now)
    jobs = [_running(q, jid) for jid in jids]
    for job in jobs:
        ext = moves.ext_of(job)
        owner = ext.worker
        q.history(job, now, "timed-out")
        moves.unlock(q, job, now)
        ext.timed_out_worker = owner  # qless keeps the old owner in `worker`
        channels.lock_lost(q, ext.jid, owner)
        q.emit(caller, now, "timeout", job)
        q.engine.amend(job, pri=0)  # before every waiting job, as qless's +inf score
        ext.order = 0
        ext.timed_out = job.reserves  # shown as 'stalled' until handed out again
        q.engine.make_ready(job, now)
        q.save(job)


def _running(q: Qless, jid: str) -> Job:
    job = q.find(jid)
    if job is None or qext(job) is None:
        raise missing("Timeout", jid)
    if job.state is not JobState.RESERVED:
        raise QlessError(f"Timeout(): Job {jid} not running")
    return job
