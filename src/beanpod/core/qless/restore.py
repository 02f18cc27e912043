"""After the write-ahead log restored the engine's jobs: rebuild the qless indexes from
the jobs' extras, put each job back in its queue and state, and re-take the locks that
were held (the engine's restore makes every reserved job ready).

Configuration overrides, the worker registry, per-queue statistics and throttles come
back from the log's named states (STATE records, see store.py).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import TYPE_CHECKING

from beanpod.core.job import Job, JobState
from beanpod.core.qless import moves, tags, throttles
from beanpod.core.qless.ext import QlessExt, RecurExt
from beanpod.core.qless.names import (
    CONFIG_STATE,
    QUEUE_STATE,
    REGISTRY_STATE,
    STATS_STATE,
    TRACK_STATE,
    WORKER_STATE,
)
from beanpod.core.qless.queue_info import QueueInfo
from beanpod.core.qless.throttles import THROTTLE_STATE, Throttle

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless

# The time a restart's re-indexing judges by: none. A queue it finds only through its
# jobs (a log from before queues were journalled) counts as seen first of all, and a
# throttle's lapsed settings are reset by the next call, not by the restart.
NO_TIME = 0


def reattach(q: Qless, now: int) -> int:
    """Index every qless job and template the engine holds; return how many."""
    q.restoring = True
    try:
        return _reattach(q, now)
    finally:
        q.restoring = False


def _reattach(q: Qless, now: int) -> int:
    registry = _states(q)
    found = 0
    jobs = [job for job in q.engine.jobs.values() if job.ext is not None]  # one fast pass
    for job in jobs:  # ready-heap keys come from the id sequence: ids continue above them
        ext = job.ext
        if isinstance(ext, QlessExt):
            q.engine.ids_above(ext.order)
    with q.engine.restarting():  # re-placing what the engine restored is not a move of its own
        for job in jobs:
            ext = job.ext
            if isinstance(ext, RecurExt):
                _template(q, job, ext)
            elif isinstance(ext, QlessExt):
                _job(q, job, ext, now, registry)
            else:
                continue
            found += 1
        _sort_lists(q)
        _repend(q, jobs)
    return found


def _states(q: Qless) -> bool:
    """Config overrides and worker last-seen times, as the log last recorded them; True
    if the log holds a worker registry (then it says who is registered)."""
    journal = q.engine.journal
    if journal is None:
        return False
    for key, raw in journal.states(CONFIG_STATE).items():
        q.config.set(key[len(CONFIG_STATE) :], json.loads(raw))
    q.stats.history_days = int(q.config.number("stats-history", 30))
    q.registry_logged = bool(journal.states(REGISTRY_STATE))
    seen = [
        (int(json.loads(raw)), key[len(WORKER_STATE) :])
        for key, raw in journal.states(WORKER_STATE).items()
    ]
    for when, name in sorted(seen):
        q.workers[name] = when
        q.worker_saved[name] = when
    bins = []
    for key, raw in journal.states(STATS_STATE).items():
        days, _, queue = key[len(STATS_STATE) :].partition("/")
        bins.append((int(days), queue, raw))
    for day, queue, raw in sorted(bins):
        q.stats.load(queue, day, json.loads(raw))
    q.flush_stats()  # bins past stats-history were dropped: forget their records
    marks = [
        (int(json.loads(raw)), key[len(TRACK_STATE) :])
        for key, raw in journal.states(TRACK_STATE).items()
    ]
    q.tracked.update((jid, None) for _, jid in sorted(marks))
    for key, raw in sorted(journal.states(QUEUE_STATE).items()):
        name = key[len(QUEUE_STATE) :]
        q.queues[name] = QueueInfo(name, q.engine, int(json.loads(raw)))
    for key, raw in journal.states(THROTTLE_STATE).items():
        settings = json.loads(raw)
        t = q.throttles[key[len(THROTTLE_STATE) :]] = Throttle(key[len(THROTTLE_STATE) :])
        t.maximum, t.expires = int(settings["maximum"]), int(settings["expires"])
    return q.registry_logged


def _template(q: Qless, job: Job, ext: RecurExt) -> None:
    ext.job = job
    q.jobs[ext.jid] = job
    moves.retube(q, job, ext.queue, NO_TIME)
    q.queue(ext.queue, NO_TIME).recurring[ext.jid] = job


def _job(q: Qless, job: Job, ext: QlessExt, now: int, registry: bool) -> None:
    ext.job = job
    q.jobs[ext.jid] = job
    tags.index(q, ext.jid, ext.tags)
    if ext.tracked:
        q.tracked[ext.jid] = None
    if ext.data is not None:
        q.engine.amend(job, body=ext.data.encode())
    state = job.state
    q.engine.take_out(job)
    moves.retube(q, job, ext.queue, NO_TIME)
    if ext.worker:  # its lock outlives the restart
        worker, ext.worker = ext.worker, ""
        if not registry and worker not in q.workers:  # a log from before the registry
            q.touch_worker(worker, now)
        expires = ext.expires
        moves.lock(q, job, worker, now)
        moves.set_expiry(q, job, expires)
        throttles.relock(q, job, NO_TIME)
    else:
        _replace(q, job, state, now)


def _replace(q: Qless, job: Job, state: JobState, now: int) -> None:
    engine = q.engine
    if state is JobState.DELAYED:
        moves.make_scheduled(q, job, job.deadline)
    elif state is JobState.BURIED:
        engine.make_buried(job)
        failure = moves.ext_of(job).failure
        if failure is not None:
            members = q.groups.setdefault(failure["group"], OrderedDict())
            members[moves.ext_of(job).jid] = job
    elif state is JobState.DEPENDS and moves.ext_of(job).throttled_on:
        q.engine.hold(job, JobState.DEPENDS)  # waits for its throttle again: _repend
    elif state is JobState.DEPENDS:
        moves.to_depends(q, job, NO_TIME)
    elif state is JobState.COMPLETE:
        moves.to_complete(q, job)
    else:
        moves.make_waiting(q, job, now)


def _repend(q: Qless, jobs: list[Job]) -> None:
    """Throttled jobs wait for their throttle again, in the order they were throttled."""
    waiting = [job for job in jobs if isinstance(job.ext, QlessExt) and job.ext.throttled_on]
    waiting.sort(key=lambda job: moves.ext_of(job).order)
    for job in waiting:
        throttles.repend(q, job, NO_TIME)


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
