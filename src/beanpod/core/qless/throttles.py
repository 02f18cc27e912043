"""Throttles (the qless fork's feature, qless-core PR #46): cap how many jobs holding a
throttle run at once, across queues.

A job names throttles at put or recur (`throttles`); its queue's throttle `ql:q:<queue>`
is always implied. Pop hands a waiting job out only if every one of its throttles has a
lock free (`maximum` 0 = unlimited), taking one lock of each; otherwise the job becomes
`throttled`: pending on the first full throttle and listed in its queue's throttled set
(engine state: held, like depends). Put throttles a new waiting job at once when one of
its throttles is full. Stalled jobs handed out again keep their locks.

A job gives its locks back, or leaves the pending list, whenever it stops running or
being throttled (complete, fail, retry, cancel, timeout, lock loss that fails it, re-put,
beanstalkd delete); then up to `maximum - locks` pending jobs of that throttle (10 when
unlimited) go back to waiting. Raising a maximum therefore lets pending jobs in at the
next release; lowering it lets running jobs finish.

Persistence: a throttle's settings are a STATE record (`qless.throttle/<id>`); who
holds or waits for it is rebuilt from the jobs (running jobs hold their throttles'
locks; a throttled job names the throttle it waits for, `ext.throttled_on`).
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from beanpod.core.job import DEPENDS, Job, JobState
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.ext import QlessExt, RecurExt, qext

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless

QUEUE_PREFIX = "ql:q:"
THROTTLE_STATE = "qless.throttle/"  # + id; value: {"maximum": m, "expires": ms or 0}
UNLIMITED_RELEASE = 10  # pending jobs let in per release by an unlimited throttle


class Throttle:
    __slots__ = ("expires", "id", "locks", "maximum", "pending")

    def __init__(self, tid: str) -> None:
        self.id = tid
        self.maximum = 0  # 0: unlimited (also once deleted or expired)
        self.expires = 0  # engine ms when its settings lapse (0: never)
        self.locks: dict[str, None] = {}  # jids running under it, acquisition order
        self.pending: dict[str, None] = {}  # jids throttled on it, arrival order


def queue_throttle(queue: str) -> str:
    return QUEUE_PREFIX + queue


def of_job(ext: QlessExt | RecurExt) -> list[str]:
    """A job's (or template's) throttles: its own, then its queue's (always last, once)."""
    own = queue_throttle(ext.queue)
    return [*(tid for tid in ext.throttles if tid != own), own]


def leaving(tids: list[str], queue: str) -> list[str]:
    """A job's own throttles as it leaves `queue`: without that queue's throttle (the
    fork drops the old queue's from the list a move gives, then adds the new one's)."""
    old = queue_throttle(queue)
    return [tid for tid in dict.fromkeys(tids) if tid != old]


def _find(q: Qless, tid: str, now: int) -> Throttle | None:
    """The throttle `tid` if it has settings, locks or waiters (lapsed settings reset)."""
    found = q.throttles.get(tid)
    if found is not None and found.expires and now >= found.expires:
        found.maximum = found.expires = 0
        q.save_state(THROTTLE_STATE + tid, None)
        _drop_if_idle(q, found)
    return found


def _get(q: Qless, tid: str, now: int) -> Throttle:
    found = _find(q, tid, now)
    if found is None:
        found = q.throttles[tid] = Throttle(tid)
    return found


def _drop_if_idle(q: Qless, t: Throttle) -> None:
    if not (t.maximum or t.expires or t.locks or t.pending):
        q.throttles.pop(t.id, None)


def _available(t: Throttle | None) -> bool:
    return t is None or t.maximum == 0 or len(t.locks) < t.maximum


# ---- the API (throttle.*, queue.throttle.*) --------------------------------------------


def set_throttle(q: Qless, now: int, tid: str, maximum: int, expiration_ms: int = 0) -> None:
    """throttle.set(tid, maximum, [expiration s]): settings lapse after `expiration`."""
    q.at(now)
    if maximum < 0:
        raise QlessError(f"Throttle.set(): Arg 'maximum' must not be negative: {maximum}")
    t = _get(q, tid, now)
    t.maximum = maximum
    t.expires = now + expiration_ms if expiration_ms > 0 else 0
    q.save_state(THROTTLE_STATE + tid, {"maximum": maximum, "expires": t.expires})
    _drop_if_idle(q, t)


def get(q: Qless, now: int, tid: str) -> dict[str, Any]:
    """throttle.get(tid) -> {id, maximum} (an unknown throttle is unlimited: 0)."""
    q.at(now)
    t = _find(q, tid, now)
    return {"id": tid, "maximum": 0 if t is None else t.maximum}


def delete(q: Qless, now: int, tid: str) -> None:
    """throttle.delete(tid): forget its settings (locks and waiters stay)."""
    q.at(now)
    t = _find(q, tid, now)
    if t is not None and (t.maximum or t.expires):
        t.maximum = t.expires = 0
        q.save_state(THROTTLE_STATE + tid, None)
        _drop_if_idle(q, t)


def ttl(q: Qless, now: int, tid: str) -> int:
    """throttle.ttl(tid): whole seconds until its settings lapse; -1 if they never do,
    -2 if it has none (Redis's TTL answers)."""
    q.at(now)
    t = _find(q, tid, now)
    if t is None or not (t.maximum or t.expires):
        return -2
    return -1 if not t.expires else max(0, (t.expires - now) // 1000)


def members(q: Qless, now: int, tid: str, which: str) -> list[str]:
    """throttle.locks / throttle.pending -> jids, oldest first."""
    q.at(now)
    t = _find(q, tid, now)
    return [] if t is None else list(t.locks if which == "locks" else t.pending)


# ---- jobs taking and giving back locks --------------------------------------------------


def acquire(q: Qless, job: Job, now: int) -> bool:
    """Take a lock of each of a detached job's throttles, or throttle the job (pending
    on the first full one) and return False."""
    ext = qext(job)
    if ext is None:
        return True
    tids = of_job(ext)
    found = [_find(q, tid, now) for tid in tids]
    for tid, t in zip(tids, found, strict=True):
        if not _available(t):
            to_throttled(q, job, tid, now)
            return False
    for tid in tids:
        _get(q, tid, now).locks[ext.jid] = None
    ext.unlocked = []
    return True


def has_room(q: Qless, tid: str, now: int) -> bool:
    """Has throttle `tid` a lock free (always, when it is unknown or unlimited)?"""
    return not q.throttles or _available(_find(q, tid, now))


def full_for(q: Qless, ext: QlessExt, now: int) -> str | None:
    """The first of a job's throttles with no lock free, or None."""
    for tid in of_job(ext):
        if not _available(_find(q, tid, now)):
            return tid
    return None


def to_throttled(q: Qless, job: Job, tid: str, now: int) -> None:
    """A detached job waits for a lock of `tid` (held out of every engine queue)."""
    ext = qext(job)
    assert ext is not None
    ext.throttled_on = tid
    ext.order = q.engine.allocate_id()  # its place among the pending, across restarts
    q.engine.hold(job, DEPENDS)
    _get(q, tid, now).pending[ext.jid] = None
    q.queue(ext.queue, now).throttled[ext.jid] = job
    q.history(job, now, "throttled", queue=ext.queue)
    q.save(job)


def relock(q: Qless, job: Job, now: int) -> None:
    """Restore: a running job holds its throttles' locks again."""
    ext = qext(job)
    if ext is not None:
        for tid in of_job(ext):
            if tid not in ext.unlocked:  # given back by throttle.release
                _get(q, tid, now).locks[ext.jid] = None


def repend(q: Qless, job: Job, now: int) -> None:
    """Restore: a throttled job waits again (call in `ext.order` order)."""
    ext = qext(job)
    assert ext is not None
    _get(q, ext.throttled_on, now).pending[ext.jid] = None
    q.queue(ext.queue, now).throttled[ext.jid] = job


def release(q: Qless, job: Job, now: int) -> list[Job]:
    """`job` holds no lock and waits for none any more: return the pending jobs its
    freed locks let in (out of their throttle; the caller makes them waiting)."""
    ext = qext(job)
    if ext is None or not q.throttles:
        return []
    if ext.throttled_on:
        info = q.queues.get(ext.queue)
        if info is not None:
            info.throttled.pop(ext.jid, None)
        ext.throttled_on = ""
    freed = []
    jid = ext.jid
    for tid in of_job(ext):
        t = _find(q, tid, now)
        if t is None:
            continue
        if jid in t.locks:
            del t.locks[jid]
        elif jid in t.pending:
            del t.pending[jid]
        else:
            continue
        freed.append(t)
    let_in: list[Job] = []
    for t in freed:
        let_in += _let_in(q, t, now)
        _drop_if_idle(q, t)
    return let_in


def _let_in(q: Qless, t: Throttle, now: int) -> list[Job]:
    """Up to `maximum - locks` pending jobs (10 when unlimited) leave the throttle."""
    let_in = []
    room = UNLIMITED_RELEASE if t.maximum == 0 else t.maximum - len(t.locks)
    for jid in list(islice(t.pending, max(0, room))):
        job = _out_of_line(q, t, jid, now)
        if job is not None:
            let_in.append(job)
    return let_in


def _out_of_line(q: Qless, t: Throttle, jid: str, now: int) -> Job | None:
    """`jid` leaves `t`'s line: its job, if it was throttled on `t` (no longer)."""
    del t.pending[jid]
    job = q.jobs.get(jid)
    ext = None if job is None else qext(job)
    if job is None or ext is None or ext.throttled_on != t.id:
        return None
    q.queue(ext.queue, now).throttled.pop(jid, None)
    ext.throttled_on = ""
    return job


def release_jids(q: Qless, now: int, tid: str, jids: list[str]) -> list[Job]:
    """throttle.release(tid, jid...), the fork's: each jid gives back its lock of `tid`
    (a running job runs on without it, also after a restart) or leaves its line; then
    the line moves as on any release. Returns the jobs to make waiting: those let in,
    and a throttled job taken out of the line (the fork would leave it throttled with
    no line to leave by)."""
    q.at(now)
    t = _find(q, tid, now)
    if t is None:
        return []
    out: list[Job] = []
    for jid in jids:
        if jid in t.locks:
            del t.locks[jid]
            _unlocked(q, jid, tid)
        elif jid in t.pending and (job := _out_of_line(q, t, jid, now)) is not None:
            out.append(job)
        out += _let_in(q, t, now)
    _drop_if_idle(q, t)
    return out


def _unlocked(q: Qless, jid: str, tid: str) -> None:
    """A running job holds no lock of `tid` until it next takes its locks."""
    job = q.jobs.get(jid)
    ext = None if job is None else qext(job)
    if job is not None and ext is not None:
        ext.unlocked = [*ext.unlocked, tid]
        q.save(job)


def check_put(q: Qless, job: Job, now: int) -> None:
    """A job put waiting is throttled at once when one of its throttles is full."""
    ext = qext(job)
    if ext is None or job.state is not JobState.READY or not q.throttles:
        return
    tid = full_for(q, ext, now)
    if tid is not None:
        q.engine.take_out(job)
        to_throttled(q, job, tid, now)
