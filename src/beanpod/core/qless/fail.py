"""fail and retry, the failed listing by group, and unfail.

A failed job is buried (beanstalkd view) and listed in its failure group, newest first;
it keeps its queue so unfail can put it back. Failed jobs never expire.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from beanpod.core.qless import channels, moves
from beanpod.core.qless.locks import owned
from beanpod.core.qless.put import set_data

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless


def fail(
    q: Qless, now: int, jid: str, worker: str, group: str, message: str,
    data: str | None = None, *, caller: Conn | None,
) -> str:  # fmt: skip
    """fail(jid, worker, group, message, [data]) -> jid. Dependents are not released."""
    q.at(now)
    job = owned(q, "Fail", jid, worker, "running with another worker")
    if data is not None:
        set_data(q, job, data)
    q.history(job, now, "failed", worker=worker, group=group)
    moves.detach(q, job, now)
    moves.to_failed(q, job, now, group, message, worker, caller=caller)
    q.save(job)
    failed_event(q, jid, worker, group, message)
    return jid


def failed_event(q: Qless, jid: str, worker: str, group: str, message: str) -> None:
    """The `log` message of a failure, then `failed` for a tracked job."""
    channels.log(q, message=message, jid=jid, group=group, event="failed", worker=worker)
    job = q.jobs.get(jid)
    if job is not None:
        channels.tracked(q, moves.ext_of(job), "failed")


def retry(
    q: Qless, now: int, jid: str, queue: str, worker: str, delay_ms: int = 0,
    group: str | None = None, message: str | None = None, *, caller: Conn | None,
) -> int:  # fmt: skip
    """retry(jid, queue, worker, [delay], [group], [message]) -> retries remaining; a
    negative number means the job ran out of retries and failed."""
    q.at(now)
    job = owned(q, "Retry", jid, worker, "has been given to another worker")
    ext = moves.ext_of(job)
    ext.remaining -= 1
    moves.detach(q, job, now)
    moves.set_queue(q, job, queue, now)
    if ext.remaining < 0:
        group = group or f"failed-retries-{queue}"
        if message is None:
            message, worker = f'Job exhausted retries in queue "{queue}"', ""
        q.history(job, now, "failed", group=group)
        moves.to_failed(q, job, now, group, message, worker, caller=caller)
        channels.tracked(q, ext, "failed")  # qless-core logs no `failed` event here
    else:
        if group is not None and message is not None:
            ext.failure = {"group": group, "message": message, "when": now // 1000,
                           "worker": worker}  # fmt: skip
        q.emit(caller, now, "release", job, pri=moves.engine_pri(ext.priority), delay_ms=delay_ms)
        moves.place(q, job, now, delay_ms)
    q.save(job)
    return ext.remaining


def failed(q: Qless, group: str | None = None, start: int = 0, limit: int = 25) -> Any:
    """failed() -> {group: count}; failed(group, start, limit) -> {total, jobs: [jid]},
    newest first."""
    if group is None:
        return {name: len(members) for name, members in q.groups.items()}
    members = q.groups.get(group)
    if members is None:
        return {"total": 0, "jobs": []}
    jids = list(islice(reversed(members), start, start + limit))
    return {"total": len(members), "jobs": jids}


def unfail(
    q: Qless, now: int, queue: str, group: str, count: int = 25, *, caller: Conn | None
) -> int:
    """unfail(queue, group, [count]) -> how many of the group's oldest jobs went back to
    `queue`, waiting. The failure is kept; stats are not touched."""
    q.at(now)
    members = q.groups.get(group)
    if not members:
        return 0
    jobs = list(islice(members.values(), max(0, count)))
    for job in jobs:
        ext = moves.ext_of(job)
        del members[ext.jid]
        moves.detach(q, job, now)  # already out of the group: stats stay as they are
        q.history(job, now, "put", q=queue)
        moves.set_queue(q, job, queue, now)
        ext.remaining = ext.retries
        q.emit(caller, now, "release", job, pri=moves.engine_pri(ext.priority), delay_ms=0)
        moves.to_waiting(q, job, now)
        q.save(job)
    if not members:
        del q.groups[group]
    return len(jobs)
