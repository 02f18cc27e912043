"""complete: finish a running job, or advance it to a next queue (with a delay or
dependencies). A plain completion keeps the job (state complete) for its history until
completed-job expiry, and releases the jobs that depend on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core.qless import channels, deps, expiry, moves
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.locks import owned
from beanpod.core.qless.put import set_data

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.job import Job
    from beanpod.core.qless.store import Qless


def complete(
    q: Qless, now: int, jid: str, worker: str, queue: str, data: str | None = None,
    next_queue: str | None = None, delay_ms: int | None = None,
    depends: list[str] | None = None, *, caller: Conn | None,
) -> str:  # fmt: skip
    """complete(jid, worker, queue, data, ['next' q] ['delay' d] ['depends' jids]) ->
    the new state: complete, waiting, scheduled or depends."""
    if next_queue is None and delay_ms is not None:
        raise QlessError('Complete(): "delay" cannot be used without a "next".')
    if next_queue is None and depends is not None:
        raise QlessError('Complete(): "depends" cannot be used without a "next".')
    q.at(now)
    job = owned(q, "Complete", jid, worker, "has been handed out to another worker")
    ext = moves.ext_of(job)
    if ext.queue != queue:
        raise QlessError(f"Complete(): Job {jid} running in another queue: {ext.queue}")
    if data is not None:
        set_data(q, job, data)
    q.history(job, now, "done")
    moves.detach(q, job, now)
    q.stats.day(queue, now).run.add(max(0, now - ext.time) / 1000)
    ext.time = now
    q.emit(caller, now, "complete", job, bytes=len(job.body))
    channels.tracked(q, ext, "completed")
    if next_queue is not None:
        channels.log(q, jid=jid, to=next_queue, event="advanced", queue=queue)
        return _advance(q, now, job, next_queue, delay_ms or 0, depends or [], caller=caller)
    channels.log(q, jid=jid, event="completed", queue=queue)
    return _finish(q, now, job, caller=caller)


def _advance(
    q: Qless, now: int, job: Job, queue: str, delay_ms: int, jids: list[str], *, caller: Conn | None
) -> str:
    ext = moves.ext_of(job)
    q.history(job, now, "put", q=queue)
    moves.set_queue(q, job, queue, now)
    ext.failure = None
    ext.remaining = ext.retries
    deps.link(q, ext, jids)
    q.emit(caller, now, "release", job, pri=moves.engine_pri(ext.priority), delay_ms=delay_ms)
    moves.place(q, job, now, delay_ms)
    q.save(job)
    return "depends" if ext.dependencies else "scheduled" if delay_ms > 0 else "waiting"


def _finish(q: Qless, now: int, job: Job, *, caller: Conn | None) -> str:
    ext = moves.ext_of(job)
    ext.failure = None
    ext.remaining = ext.retries
    moves.to_complete(q, job)
    q.save(job)
    deps.release_dependents(q, job, now, caller=caller)
    expiry.expire_completed(q, now)
    return "complete"
