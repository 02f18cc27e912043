"""cancel (all or nothing over a dependency clique), and the clean-up every removal of
a qless job shares: cancel, completed-job expiry, beanstalkd `delete` (engine destroy
hook) and beanstalkd `kick` of a failed job (engine kick hook)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from beanpod.core.job import Job, JobState
from beanpod.core.qless import channels, deps, moves, tags
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.ext import QlessExt, RecurExt, qext, rext
from beanpod.core.qless.names import state_name

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless


def cancel(q: Qless, now: int, jids: list[str], *, caller: Conn | None) -> list[str]:
    """cancel(jid...) -> the jids given. Refused if a job has a dependent that is not
    cancelled with it; complete jobs are left alone; missing jids are fine."""
    q.at(now)
    named = set(jids)
    jobs = [job for jid in jids if (job := q.jobs.get(jid)) is not None and qext(job) is not None]
    for job in jobs:
        ext = moves.ext_of(job)
        for dependent in ext.dependents:
            if dependent not in named:
                raise QlessError(
                    f"Cancel(): {ext.jid} is a dependency of {dependent} "
                    "but is not mentioned to be canceled"
                )
    for job in jobs:
        if job.state is not JobState.COMPLETE and job.id in q.engine.jobs:
            ext = moves.ext_of(job)
            ext.dependents = {}  # all cancelled too: nothing to release
            worker = ext.worker if job.state is JobState.RESERVED else ""
            moves.detach(q, job, now)
            remove(q, job, now, event="delete", caller=caller)
            _canceled(q, ext, worker)
    return jids


def _canceled(q: Qless, ext: QlessExt, worker: str) -> None:
    """`log` and the owner's channel hear of a cancel; then `canceled` if tracked."""
    data = json.dumps(
        {"jid": ext.jid, "queue": ext.queue, "event": "canceled", "worker": worker},
        separators=(",", ":"),
    )
    q.channels.publish("log", data)
    if worker:
        q.channels.publish(f"w:{worker}", data)
    channels.tracked(q, ext, "canceled")


def remove(q: Qless, job: Job, now: int, event: str | None, *, caller: Conn | None) -> None:
    """Delete a detached job from the engine (the destroy hook cleans the indexes)."""
    engine = q.engine
    if engine.journal is not None:
        engine.journal.record_delete(job)
    if event is not None:
        q.emit(caller, now, event, job, state=state_name(job))
    engine.destroy(job, now)


def forget(q: Qless, job: Job, now: int) -> None:
    """Engine destroy hook: drop every index entry of a qless job or template."""
    recur = rext(job)
    if recur is not None:
        forget_template(q, job, recur)
        return
    ext = qext(job)
    if ext is None or q.jobs.get(ext.jid) is not job:
        return
    if job.state is JobState.BURIED:
        moves.leave_group(q, job)
    info = q.queues.get(ext.queue)
    if info is not None:
        info.running.pop(job.id, None)
        info.stalled.pop(job.id, None)
    moves.unplace(q, job, now)
    del q.jobs[ext.jid]
    tags.unindex(q, ext.jid, ext.tags)
    for jid in list(ext.dependencies):
        deps.unlink(q, ext, jid)
    if ext.dependents:  # deleted from beanstalkd: dependents treat it as gone (= done)
        deps.release_dependents(q, job, now, caller=None)  # a delete of another dialect
    q.flush_stats()  # a failed job left its group (beanstalkd delete)


def kicked(q: Qless, job: Job, now: int) -> None:
    """Engine kick hook: a failed job kicked by a beanstalkd client leaves its group."""
    if job.state is JobState.BURIED and qext(job) is not None:
        moves.leave_group(q, job)
        q.flush_stats()


def forget_template(q: Qless, job: Job, ext: RecurExt) -> None:
    """Destroy hook part: a template is gone (unrecur or beanstalkd delete)."""
    q.engine.disarm(ext)
    if q.jobs.get(ext.jid) is job:
        del q.jobs[ext.jid]
    info = q.queues.get(ext.queue)
    if info is not None:
        info.recurring.pop(ext.jid, None)
