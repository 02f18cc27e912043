"""Tracked jobs: `track`/`untrack` a job; list tracked jobs and those since gone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beanpod.core.qless import moves
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.names import TRACK_STATE
from beanpod.core.qless.view import job_view

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def track(q: Qless, now: int, command: str, jid: str) -> bool:
    q.at(now)
    job, ext = moves.require(q, "Track", jid)
    if command == "track":
        ext.tracked = True
        q.tracked[ext.jid] = None
        q.save_state(TRACK_STATE + ext.jid, now)  # listed as expired once the job is gone
    elif command == "untrack":
        ext.tracked = False
        q.tracked.pop(ext.jid, None)
        q.save_state(TRACK_STATE + ext.jid, None)
    else:
        raise QlessError(f"Track(): Unknown action {command!r}")
    q.channels.publish(command, ext.jid)
    q.save(job)
    return True


def tracked(q: Qless, now: int) -> dict[str, Any]:
    """{jobs: [job...], expired: [jid whose job is gone]}."""
    q.at(now)
    jobs, expired = [], []
    for jid in q.tracked:
        job = q.jobs.get(jid)
        if job is None:
            expired.append(jid)
        else:
            jobs.append(job_view(q, job, now))
    return {"jobs": jobs, "expired": expired}
