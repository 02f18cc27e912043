"""Dependencies: a job in state `depends` waits until every job it depends on is
complete. Missing or complete dependencies are ignored ("assumed completed")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core.job import Job, JobState
from beanpod.core.qless import moves
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.ext import QlessExt, qext
from beanpod.core.qless.names import state_name

if TYPE_CHECKING:
    from collections.abc import Iterable

    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless


def link(q: Qless, ext: QlessExt, jids: Iterable[str]) -> None:
    """Make `ext`'s job wait for each of `jids` that exists and is not complete."""
    for jid in jids:
        other = q.jobs.get(jid)
        other_ext = None if other is None else qext(other)
        if other is None or other_ext is None or other.state is JobState.COMPLETE:
            continue
        ext.dependencies[jid] = None
        other_ext.dependents[ext.jid] = None
        q.save(other)


def unlink(q: Qless, ext: QlessExt, jid: str) -> None:
    """`ext`'s job stops waiting for `jid`."""
    ext.dependencies.pop(jid, None)
    other = q.jobs.get(jid)
    other_ext = None if other is None else qext(other)
    if other is not None and other_ext is not None:
        other_ext.dependents.pop(ext.jid, None)
        q.save(other)


def replace(q: Qless, ext: QlessExt, jids: list[str]) -> None:
    """Re-put with a non-empty `depends`: the new list replaces the old one."""
    keep = set(jids)
    for old in list(ext.dependencies):
        if old not in keep:
            unlink(q, ext, old)
    link(q, ext, jids)


def release_dependents(q: Qless, job: Job, now: int, *, caller: Conn | None) -> None:
    """`job` completed (or is gone): each dependent loses it, and one left with no
    dependency becomes waiting, or scheduled if it was put with a delay."""
    ext = moves.ext_of(job)
    dependents, ext.dependents = ext.dependents, {}
    for jid in dependents:
        other = q.jobs.get(jid)
        other_ext = None if other is None else qext(other)
        if other is None or other_ext is None:
            continue
        other_ext.dependencies.pop(ext.jid, None)
        if not other_ext.dependencies and state_name(other) == "depends":
            _unblock(q, other, now, caller=caller)
        q.save(other)
    if dependents:  # its own record lists them no more (a completed job is kept)
        q.save(job)


def _unblock(q: Qless, job: Job, now: int, *, caller: Conn | None) -> None:
    ext = moves.ext_of(job)
    moves.detach(q, job, now)
    due, ext.scheduled = ext.scheduled, 0
    if due > now:
        moves.to_scheduled(q, job, due)
    else:
        q.emit(
            caller, now, "release", job, pri=job.pri, delay_ms=0
        )  # its ready time, for analytics
        moves.to_waiting(q, job, now)


def depends(
    q: Qless, now: int, jid: str, command: str, jids: list[str], *, caller: Conn | None
) -> bool:
    """depends(jid, 'on', jid...) / ('off', jid...) / ('off', 'all'): only while the job
    is in state depends; removing the last dependency makes it waiting at once."""
    q.at(now)
    job = q.find(jid)
    state = "nil" if job is None or qext(job) is None else state_name(job)
    if state != "depends":  # a throttled job is held as depends too
        raise QlessError(f"Depends(): Job {jid} not in the depends state: {state}")
    assert job is not None
    ext = moves.ext_of(job)
    if command == "on":
        link(q, ext, jids)
    elif command == "off":
        targets = list(ext.dependencies) if jids == ["all"] else jids
        for other in targets:
            unlink(q, ext, other)
        if not ext.dependencies:
            ext.scheduled = 0  # a pending delay is lost (qless)
            _unblock(q, job, now, caller=caller)
    else:
        raise QlessError(f"Depends(): Argument {command!r} not recognized")
    q.save(job)
    return True
