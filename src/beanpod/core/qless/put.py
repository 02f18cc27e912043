"""put / requeue: create a job, or move an existing one (same jid = move, any state)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core.job import Job, JobState
from beanpod.core.qless import channels, deps, moves, tags, throttles
from beanpod.core.qless.errors import QlessError, check_new_jid, missing
from beanpod.core.qless.ext import QlessExt
from beanpod.core.qless.names import SCHED_DUE, worker_of

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless


class PutArgs:
    """put's optional arguments; None means "keep the job's own" on a move."""

    __slots__ = ("depends", "priority", "retries", "tags", "throttles")

    def __init__(
        self,
        priority: int | None = None,
        tags: list[str] | None = None,
        retries: int | None = None,
        depends: list[str] | None = None,
        throttle_ids: list[str] | None = None,
    ) -> None:
        self.priority = priority
        self.tags = tags
        self.retries = retries
        self.depends = depends
        self.throttles = throttle_ids


def put(
    q: Qless, now: int, worker: str, queue: str, jid: str, klass: str, data: str,
    delay_ms: int, opts: PutArgs | None = None, *, caller: Conn | None,
) -> str:  # fmt: skip
    """put(worker, queue, jid, klass, data, delay, [priority p] [tags t] [retries r]
    [depends d] [throttles t]) -> jid. A known jid is moved: priority, tags, retries and
    throttles are kept unless given (less the old queue's throttle, as the fork drops it
    from a moved job's list), `remaining` is reset, a new non-empty `depends` replaces
    the old."""
    check_new_jid("Put", jid)
    q.at(now)
    q.queue(queue, now)
    opts = opts or PutArgs()
    job = q.jobs.get(jid)
    if job is None:
        job = create(q, now, queue, jid, klass, data, delay_ms, opts, caller=caller)
        owner = ""
    else:
        owner = worker_of(job) if job.state is JobState.RESERVED else ""
        _move(q, now, job, worker, queue, klass, data, delay_ms, opts, caller=caller)
    ext = moves.ext_of(job)
    channels.log(q, jid=jid, event="put", queue=queue)
    channels.tracked(q, ext, "put")
    if owner != worker:  # no message when the owner moves its own job
        channels.lock_lost(q, jid, owner)
    return jid


def requeue(
    q: Qless, now: int, worker: str, queue: str, jid: str, klass: str, data: str,
    delay_ms: int, opts: PutArgs | None = None, *, caller: Conn | None,
) -> str:  # fmt: skip
    """put, but only for a job that still exists (a cancelled job is not resurrected)."""
    q.at(now)
    job = q.find(jid)
    if job is None or job.state is JobState.RECUR:
        raise missing("Requeue", jid)
    return put(q, now, worker, queue, jid, klass, data, delay_ms, opts, caller=caller)


def create(
    q: Qless, now: int, queue: str, jid: str, klass: str, data: str, delay_ms: int,
    opts: PutArgs, *, caller: Conn | None,
) -> Job:  # fmt: skip
    ext = QlessExt(jid, klass, queue)
    ext.priority = opts.priority or 0
    ext.retries = ext.remaining = 5 if opts.retries is None else opts.retries
    ext.time = now
    ext.tags = list(dict.fromkeys(opts.tags or ()))
    ext.throttles = list(dict.fromkeys(opts.throttles or ()))
    q.history_of(ext, now, "put", q=queue)
    deps.link(q, ext, opts.depends or ())
    held = JobState.DEPENDS if ext.dependencies else None
    if held is not None and delay_ms > 0:
        ext.scheduled = now + delay_ms
    engine = q.engine
    job = engine.put(
        caller, q.queue(queue, now).tube, moves.engine_pri(ext.priority),
        0 if held else delay_ms, ttr_for(q, queue), data.encode(), now, ext=ext, held=held,
    )  # fmt: skip
    ext.job = job
    q.jobs[jid] = job
    if job.state is JobState.DELAYED:  # waits from its due time (moves.scheduled_due)
        engine.arm(job.deadline, SCHED_DUE, job)
    tags.index(q, jid, ext.tags, now)
    if held is not None:
        q.queue(queue, now).depends[jid] = job
    throttles.check_put(q, job, now)
    return job


def _move(
    q: Qless, now: int, job: Job, worker: str, queue: str, klass: str, data: str,
    delay_ms: int, opts: PutArgs, *, caller: Conn | None,
) -> None:  # fmt: skip
    if job.state is JobState.RECUR:
        raise QlessError(f"Put(): {getattr(job.ext, 'jid', job.id)} names a recurring job")
    ext = moves.ext_of(job)  # jobs.get finds qless jobs only (never another dialect's)
    moves.detach(q, job, now)
    if opts.tags is not None:
        tags.set_tags(q, job, opts.tags, now)
    tags.stamp(q, ext.jid, ext.tags, now)
    if opts.priority is not None:
        ext.priority = opts.priority
    if opts.retries is not None:
        ext.retries = opts.retries
    given = ext.throttles if opts.throttles is None else opts.throttles
    ext.throttles = throttles.leaving(given, ext.queue)  # the new queue's is implied
    ext.remaining = ext.retries
    ext.klass = klass
    set_data(q, job, data)
    if opts.depends:
        deps.replace(q, ext, opts.depends)
    q.history(job, now, "put", q=queue)
    moves.set_queue(q, job, queue, now)
    q.engine.amend(job, ttr=ttr_for(q, queue))
    ext.time = now
    q.emit(caller, now, "release", job, pri=moves.engine_pri(ext.priority), delay_ms=delay_ms)
    moves.place(q, job, now, delay_ms)
    throttles.check_put(q, job, now)
    q.save(job)


def set_data(q: Qless, job: Job, data: str) -> None:
    """Replace a job's data (its body too, so beanstalkd readers see it)."""
    ext = moves.ext_of(job)
    ext.data = data
    q.engine.amend(job, body=data.encode())


def ttr_for(q: Qless, queue: str) -> int:
    """A beanstalkd reserver of a qless job gets the queue's heartbeat as its TTR."""
    return max(1000, q.config.heartbeat_ms(queue))


def set_priority(q: Qless, now: int, jid: str, priority: int) -> int:
    """priority(jid, p): change a job's priority; a waiting job is re-ranked."""
    q.at(now)
    job, ext = moves.require(q, "Priority", jid)
    ext.priority = priority
    if job.state is JobState.READY:  # re-ranked; keeps its place among equals
        q.engine.take_out(job)
        q.engine.amend(job, pri=moves.engine_pri(priority))
        moves.make_waiting(q, job, now)
    q.save(job)
    return priority
