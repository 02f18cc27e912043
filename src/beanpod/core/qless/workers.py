"""The worker registry: a worker is (re)registered by pop and heartbeat, listed with
its running (`jobs`) and expired (`stalled`) locks, and forgotten after
`max-worker-age` seconds without a sign of life, or on `worker.deregister`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beanpod.core.qless.names import jid_of

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def _prune(q: Qless, now: int) -> None:
    horizon = now - int(q.config.number("max-worker-age", 86400) * 1000)
    workers = q.workers
    while workers:
        name, seen = next(iter(workers.items()))
        if seen > horizon:
            break
        q.forget_worker(name)


def _locks(q: Qless, name: str, now: int) -> tuple[list[str], list[str]]:
    """(jids with live locks, jids with expired locks) held by worker `name`."""
    conn = q.conns.get(name)
    live: list[str] = []
    stalled: list[str] = []
    for job in () if conn is None else conn.reserved.values():
        jid = jid_of(job)
        (live if job.deadline > now else stalled).append(jid)
    return live, stalled


def workers(q: Qless, now: int, name: str | None = None) -> Any:
    """workers() -> [{name, jobs, stalled}] latest seen first; workers(name) ->
    {jobs: [jid], stalled: [jid]}."""
    q.at(now)
    _prune(q, now)
    if name is not None:
        live, stalled = _locks(q, name, now)
        return {"jobs": live, "stalled": stalled}
    listing = []
    # qless-core's zrevrange: latest seen first, ties in reverse byte order
    latest = sorted(q.workers, key=lambda w: (q.workers[w], w.encode()), reverse=True)
    for worker in latest:
        live, stalled = _locks(q, worker, now)
        listing.append({"name": worker, "jobs": len(live), "stalled": len(stalled)})
    return listing


def deregister(q: Qless, names: list[str]) -> None:
    for name in names:
        q.forget_worker(name)
