"""After the write-ahead log restored the engine's jobs: rebuild the qless indexes from
the jobs' extras, put each job back in its queue and state, and re-take the locks that
were held (the engine's restore makes every reserved job ready).

Not in the log (documented in docs/qless.md): configuration overrides, statistics and
the worker registry's last-seen times start afresh.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from beanpod.core.job import Job, JobState
from beanpod.core.qless import moves, tags
from beanpod.core.qless.ext import QlessExt, RecurExt
from beanpod.core.qless.store import RECUR_DUE

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def reattach(q: Qless, now: int) -> int:
    """Index every qless job and template the engine holds; return how many."""
    found = 0
    for job in list(q.engine.jobs.values()):
        ext = job.ext
        if isinstance(ext, RecurExt):
            _template(q, job, ext)
        elif isinstance(ext, QlessExt):
            _job(q, job, ext, now)
        else:
            continue
        found += 1
    _sort_lists(q)
    return found


def _template(q: Qless, job: Job, ext: RecurExt) -> None:
    ext.job = job
    q.jobs[ext.jid] = job
    moves.retube(q, job, ext.queue)
    q.queue(ext.queue).recurring[ext.jid] = job
    q.engine.timers.arm(ext.next_at, RECUR_DUE, ext)


def _job(q: Qless, job: Job, ext: QlessExt, now: int) -> None:
    ext.job = job
    q.jobs[ext.jid] = job
    tags.index(q, ext.jid, ext.tags)
    if ext.tracked:
        q.tracked[ext.jid] = None
    if ext.data is not None:
        job.body = ext.data.encode()
    state = job.state
    q.engine._take_out(job)
    moves.retube(q, job, ext.queue)
    if ext.worker:  # its lock outlives the restart
        worker, ext.worker = ext.worker, ""
        q.touch_worker(worker, now)
        expires = ext.expires
        moves.lock(q, job, worker, now)
        moves.set_expiry(q, job, expires)
    else:
        _replace(q, job, state, now)


def _replace(q: Qless, job: Job, state: JobState, now: int) -> None:
    engine = q.engine
    if state is JobState.DELAYED:
        engine._make_delayed(job, job.deadline)
    elif state is JobState.BURIED:
        engine._make_buried(job)
        failure = moves.ext_of(job).failure
        if failure is not None:
            members = q.groups.setdefault(failure["group"], OrderedDict())
            members[moves.ext_of(job).jid] = job
    elif state is JobState.DEPENDS:
        moves.to_depends(q, job)
    elif state is JobState.COMPLETE:
        moves.to_complete(q, job)
    else:
        engine._make_ready(job, now)


def _sort_lists(q: Qless) -> None:
    """Failure groups by failure time and the completed list by completion time."""
    for members in q.groups.values():
        ordered = sorted(members.items(), key=lambda item: _failed_at(item[1]))
        members.clear()
        members.update(ordered)
    done = sorted(q.completed.items(), key=lambda item: moves.ext_of(item[1]).time)
    q.completed.clear()
    q.completed.update(done)


def _failed_at(job: Job) -> int:
    failure = moves.ext_of(job).failure or {}
    return int(failure.get("when", 0))
