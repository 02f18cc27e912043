"""Recurring jobs: a template (engine job in state RECUR, extras `RecurExt`) spawns a
child `<jid>-<n>` every interval, the first at put time + offset. As in qless, children
are spawned lazily by a pop or peek on the template's queue (`spawn_due`), up to the
number of jobs asked for, at their intended times; `backlog` bounds how many missed
intervals are made up. `recur.get`'s count is therefore what qless reports."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from beanpod.core.job import Job, JobState
from beanpod.core.qless import cancel, moves, put, throttles
from beanpod.core.qless.errors import QlessError, check_new_jid
from beanpod.core.qless.ext import RecurExt, rext
from beanpod.core.qless.view import recur_view

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.queue_info import QueueInfo
    from beanpod.core.qless.store import Qless

UPDATABLE = ("priority", "interval", "retries", "data", "klass", "queue", "backlog", "throttles")


def recur(
    q: Qless, now: int, queue: str, jid: str, klass: str, data: str, interval_ms: int,
    offset_ms: int, priority: int = 0, tag_list: list[str] | None = None, retries: int = 0,
    backlog: int = 0, throttle_ids: list[str] | None = None, *, caller: Conn | None,
) -> str:  # fmt: skip
    """recur(queue, jid, klass, data, 'interval', interval, offset, ...) -> jid. An
    existing template is updated and moved; its child counter is kept. Like a job, a
    template shows its queue's throttle after its own (its children get both)."""
    if interval_ms <= 0:
        raise QlessError("Recur(): Arg 'interval' must be greater than 0")
    check_new_jid("Recur", jid)
    q.at(now)
    q.queue(queue, now)
    job = q.jobs.get(jid)
    if job is not None and rext(job) is None:
        raise QlessError(f"Recur(): {jid} names a job, not a recurring template")
    ext = _template(q, now, job, queue, jid, klass, data, caller=caller)
    ext.klass, ext.data, ext.priority, ext.retries = klass, data, priority, retries
    ext.interval, ext.backlog = interval_ms, backlog
    ext.tags = list(dict.fromkeys(tag_list or ()))
    ext.throttles = list(dict.fromkeys(throttle_ids or ()))
    _move(q, ext, queue, now)
    _arm(q, ext, now + offset_ms)
    return jid


def _template(
    q: Qless,
    now: int,
    job: Job | None,
    queue: str,
    jid: str,
    klass: str,
    data: str,
    *,
    caller: Conn | None,
) -> RecurExt:
    if job is not None:
        found = rext(job)
        assert found is not None
        return found
    ext = RecurExt(jid, klass, queue, 1)
    engine = q.engine
    job = engine.put(caller, q.queue(queue, now).tube, 0, 0, 1000, data.encode(), now, ext=ext,
                     held=JobState.RECUR)  # fmt: skip
    ext.job = job
    q.jobs[jid] = job
    q.queue(queue, now).recurring[jid] = job
    return ext


def _move(q: Qless, ext: RecurExt, queue: str, now: int) -> None:
    job = ext.job
    assert job is not None
    old = q.queues.get(ext.queue)
    if old is not None:
        old.recurring.pop(ext.jid, None)
    q.queue(queue, now).recurring[ext.jid] = job
    moves.retube(q, job, queue, now)
    ext.throttles = throttles.leaving(ext.throttles, ext.queue)  # the new queue's is implied
    ext.queue = queue


def _arm(q: Qless, ext: RecurExt, when: int) -> None:
    ext.next_at = when
    if ext.job is not None:
        q.save(ext.job)


def spawn_due(q: Qless, info: QueueInfo, now: int, count: int, *, caller: Conn | None) -> int:
    """Spawn up to `count` children due by `now` from `info`'s templates (earliest due
    first, as qless-core's check_recurring); return how many."""
    if count <= 0 or not info.recurring:
        return 0
    due = [ext for job in info.recurring.values() if (ext := rext(job)) and ext.next_at <= now]
    due.sort(key=lambda ext: ext.next_at)
    moved = 0
    for ext in due[:count]:
        score = ext.next_at
        if ext.backlog > 0:
            missed = (now - score) / ext.interval
            if missed > ext.backlog:
                score += math.ceil(missed - ext.backlog) * ext.interval
        while score <= now and moved < count:
            _spawn(q, ext, score, now, caller=caller)
            moved += 1
            score += ext.interval
        _arm(q, ext, score)
    return moved


def _spawn(q: Qless, ext: RecurExt, when: int, now: int, *, caller: Conn | None) -> None:
    """A child of `ext` meant at `when`, spawned by a call at `now`."""
    ext.count += 1
    opts = put.PutArgs(ext.priority, ext.tags, ext.retries, throttle_ids=ext.throttles)
    jid = f"{ext.jid}-{ext.count}"
    put.create(q, when, ext.queue, jid, ext.klass, ext.data, 0, opts, caller=caller)
    child = q.jobs[jid]
    child_ext = moves.ext_of(child)
    child_ext.spawned_from = ext.jid
    key = q.timeline.key_at(when, now)
    if child.state is JobState.READY and key is not None:  # rank by its intended time
        q.engine.take_out(child)
        child_ext.order = key
        moves.make_waiting(q, child, when)
    q.save(child)


def get(q: Qless, jid: str) -> dict[str, Any] | None:
    job = q.jobs.get(jid)
    ext = None if job is None else rext(job)
    return None if ext is None else recur_view(ext)


def update(q: Qless, now: int, jid: str, changes: list[tuple[str, Any]]) -> bool:
    """recur.update(jid, key, value, ...) for the keys in UPDATABLE."""
    q.at(now)
    ext = _require(q, "Recur", jid)
    for key, value in changes:
        if key not in UPDATABLE:
            raise QlessError(f"Recur(): Unrecognized option {key!r}")
        if key == "interval":
            _arm(q, ext, ext.next_at + int(value) - ext.interval)
            ext.interval = int(value)
        elif key == "queue":
            _move(q, ext, str(value), now)
        else:
            setattr(ext, key, value)
    assert ext.job is not None
    q.save(ext.job)
    return True


def retag(q: Qless, now: int, jid: str, add: list[str], remove: list[str]) -> list[str]:
    """recur.tag / recur.untag -> the template's tags."""
    q.at(now)
    ext = _require(q, "Recur", jid)
    drop = set(remove)
    ext.tags = [t for t in dict.fromkeys([*ext.tags, *add]) if t not in drop]
    assert ext.job is not None
    q.save(ext.job)
    return list(ext.tags)


def unrecur(q: Qless, now: int, jid: str) -> bool:
    """unrecur(jid): always true."""
    q.at(now)
    job = q.jobs.get(jid)
    if job is not None and rext(job) is not None:
        cancel.remove(q, job, now, event=None, caller=None)
    return True


def _require(q: Qless, fn: str, jid: str) -> RecurExt:
    job = q.jobs.get(jid)
    ext = None if job is None else rext(job)
    if ext is None:
        raise QlessError(f"{fn}(): No recurring job {jid}")
    return ext
