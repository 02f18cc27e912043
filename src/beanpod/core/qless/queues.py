"""Queues: counts per state, pause/unpause, forget, length, and job listings by state."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.expiry import completed_jids
from beanpod.core.qless.names import QUEUE_STATE, jid_of

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.queue_info import QueueInfo
    from beanpod.core.qless.store import Qless

PAUSE_MS = (2**32 - 1) * 1000  # "until unpaused": beanstalkd's longest pause
STATES = ("running", "stalled", "scheduled", "depends", "recurring", "waiting", "complete",
          "throttled")  # fmt: skip


def counts(info: QueueInfo) -> dict[str, Any]:
    tube = info.tube
    stalled = len(info.stalled)
    return {
        "name": info.name,
        "waiting": len(tube.ready),
        "running": tube.reserved - stalled,
        "stalled": stalled,
        "scheduled": len(tube.delayed),
        "depends": len(info.depends),
        "recurring": len(info.recurring),
        "throttled": len(info.throttled),
        "paused": tube.paused,
    }


def queues(q: Qless, now: int, name: str | None = None) -> Any:
    """queues() -> counts of every known queue (first seen first; at the same time by
    name, as Redis orders equal scores); queues(name)."""
    q.at(now)
    if name is None:
        known = sorted(q.queues.values(), key=lambda info: (info.since, info.name.encode()))
        return [counts(info) for info in known]
    info = q.queues.get(name)
    if info is not None:
        return counts(info)
    empty = dict.fromkeys(("waiting", "running", "stalled", "scheduled", "depends"), 0)
    return {"name": name, **empty, "recurring": 0, "throttled": 0, "paused": False}


def pause(q: Qless, now: int, names: list[str], paused: bool, *, caller: Conn | None) -> None:
    """pause/unpause: pop hands out nothing (beanstalkd reserve neither); peek, put and
    complete still work."""
    q.at(now)
    for name in names:
        q.queue(name, now)
        q.engine.pause_tube(caller, name, PAUSE_MS if paused else 0, now)


def forget(q: Qless, names: list[str]) -> None:
    """queue.forget: drop from the known-queue list only."""
    for name in names:
        info = q.queues.pop(name, None)
        if info is not None:
            q.engine.unref(info.tube)
            q.save_state(QUEUE_STATE + name, None)


def length(q: Qless, now: int, name: str) -> int:
    data = queues(q, now, name)
    fields = ("running", "waiting", "scheduled", "depends", "throttled")
    return int(sum(data[field] for field in fields))


def jobs(
    q: Qless, now: int, state: str, queue: str = "", offset: int = 0, count: int = 25
) -> list[str]:
    """jobs(state, queue, offset, count) -> jids; jobs('complete', offset, count)."""
    q.at(now)
    if state == "complete":
        return completed_jids(q, offset, count)
    if state not in STATES:
        raise QlessError(f"Jobs(): Unknown type {state!r}")
    info = q.queues.get(queue)
    if info is None:
        return []
    jids = [jid_of(job) for job in _in_state(info, state)]
    return list(islice(jids, offset, offset + count))


def _in_state(info: QueueInfo, state: str) -> list[Any]:
    if state == "running":
        live = [job for job in info.running.values() if job.id not in info.stalled]
        return sorted(live, key=lambda job: (job.deadline, job.id))
    if state == "stalled":
        return list(info.stalled.values())
    if state == "scheduled":
        return info.tube.delayed.in_order()
    if state == "waiting":
        return info.tube.ready.in_order()
    if state == "depends":
        return list(info.depends.values())
    if state == "throttled":
        return list(info.throttled.values())
    return list(info.recurring.values())
