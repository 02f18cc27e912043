"""Completed-job expiry: after each completion, completed jobs older than `jobs-history`
seconds go, then all but the newest `jobs-history-count`. Failed jobs never expire."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beanpod.core.qless import cancel

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def expire_completed(q: Qless, now: int) -> int:
    """Delete expired completed jobs (oldest first); return how many went."""
    horizon = now - int(q.config.number("jobs-history", 604800) * 1000)
    keep = max(0, int(q.config.number("jobs-history-count", 50000)))
    completed = q.completed
    gone = 0
    while completed:
        job = next(iter(completed.values()))
        ext_time = getattr(job.ext, "time", now)
        if ext_time > horizon and len(completed) <= keep:
            break
        del completed[next(iter(completed))]
        cancel.remove(q, job, now, event=None, caller=None)
        gone += 1
    return gone


def completed_jids(q: Qless, offset: int = 0, count: int = 25) -> list[str]:
    """jobs('complete', offset, count): completed jids, newest first."""
    return list(reversed(q.completed))[offset : offset + count]
