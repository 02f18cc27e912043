"""pop and peek: stalled jobs first, then waiting ones, highest priority first; both
first spawn the queue's due recurring children (up to the count asked), as qless does.
pop hands a waiting job out only if it gets its throttle locks (throttles.py).

`pop_many` takes from several queues in one call, in the given order ("ordered") or
starting one queue further each call per worker ("round-robin"), which qless clients
otherwise do on their side.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from beanpod.core.job import Job
from beanpod.core.qless import channels, locks, moves, recurring, throttles
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.ext import qext
from beanpod.core.qless.view import job_view

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.queue_info import QueueInfo
    from beanpod.core.qless.store import Qless

ORDERS = ("ordered", "round-robin")


def pop(
    q: Qless, now: int, queue: str, worker: str, count: int, *, caller: Conn | None
) -> list[dict[str, Any]]:
    """pop(queue, worker, count) -> jobs, now locked by `worker`."""
    q.at(now)
    return [job_view(q, job, now) for job in _pop(q, now, queue, worker, count, caller=caller)]


def pop_many(
    q: Qless,
    now: int,
    queues: list[str],
    worker: str,
    count: int,
    order: str = "ordered",
    *,
    caller: Conn | None,
) -> list[dict[str, Any]]:
    """Pop up to `count` jobs across `queues`, in `order` (see module doc)."""
    if order not in ORDERS:
        raise QlessError(f"Pop(): unknown order {order!r} (use one of {', '.join(ORDERS)})")
    q.at(now)
    if order == "round-robin" and queues:
        start = q.rotation.get(worker, 0) % len(queues)
        q.rotation[worker] = start + 1
        queues = queues[start:] + queues[:start]
    jobs: list[Job] = []
    for queue in queues:
        if len(jobs) >= count:
            break
        jobs += _pop(q, now, queue, worker, count - len(jobs), caller=caller)
    return [job_view(q, job, now) for job in jobs]


def _pop(
    q: Qless, now: int, queue: str, worker: str, count: int, *, caller: Conn | None
) -> list[Job]:
    info = q.queue(queue, now)
    if info.tube.paused:
        return []
    q.touch_worker(worker, now)
    limit = int(q.config.number(f"{queue}-max-concurrency", 0))
    if limit > 0:
        count = min(count, max(0, limit - (len(info.running) - len(info.stalled))))
    if count <= 0:
        return []
    jobs = locks.invalidate(
        q, info, now, count, caller=caller
    )  # stalled jobs keep their throttle locks
    if _queue_open(q, info, now):
        recurring.spawn_due(q, info, now, count - len(jobs), caller=caller)
        jobs += _take_waiting(q, info, count - len(jobs), now)
    for job in jobs:
        _hand(q, job, worker, now)
    return jobs


def _queue_open(q: Qless, info: QueueInfo, now: int) -> bool:
    """False while the queue's throttle has no lock free: only stalled jobs go out."""
    return throttles.has_room(q, throttles.queue_throttle(info.name), now)


def _take_waiting(q: Qless, info: QueueInfo, count: int, now: int) -> list[Job]:
    """Up to `count` waiting jobs that get every throttle lock they need; each one that
    does not is throttled instead. `max-pop-retry` passes (default 1, as the qless fork),
    each over as many jobs as are still wanted."""
    taken: list[Job] = []
    ready = info.tube.ready
    passes = q.config.number(f"{info.name}-max-pop-retry", q.config.number("max-pop-retry", 1))
    for _ in range(max(1, int(passes))):
        wanted = count - len(taken)
        seen = 0
        while seen < wanted:
            job = ready.peek()
            if job is None or (job.ext is not None and qext(job) is None):
                break  # empty, or a Workq job next: qless does not run those
            q.engine.take_out(job)
            moves.adopt(q, job, now)
            seen += 1
            if throttles.acquire(q, job, now):
                taken.append(job)
        if seen == 0 or len(taken) >= count:
            break
    return taken


def _hand(q: Qless, job: Job, worker: str, now: int) -> None:
    ext = moves.ext_of(job)
    q.stats.day(ext.queue, now).wait.add(max(0, now - ext.time) / 1000)
    ext.time = now
    q.history(job, now, "popped", worker=worker)
    moves.lock(q, job, worker, now)
    channels.tracked(q, ext, "popped")
    q.save(job)


def peek(
    q: Qless, now: int, queue: str, count: int, *, caller: Conn | None
) -> list[dict[str, Any]]:
    """peek(queue, count): what pop would hand out, without taking it."""
    q.at(now)
    info = q.queue(queue, now)
    jobs = list(islice(info.stalled.values(), max(0, count)))
    recurring.spawn_due(q, info, now, count - len(jobs), caller=caller)
    jobs += _top_waiting(info, count - len(jobs))
    return [job_view(q, job, now) for job in jobs]


def _top_waiting(info: QueueInfo, count: int) -> list[Job]:
    """The first `count` ready jobs in order."""
    return info.tube.ready.first(count)
