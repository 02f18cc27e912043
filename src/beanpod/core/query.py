"""Read-only queries over the engine: the one module the web console, `/metrics`, the
admin API and the test harness (`beanpod.testing`) read the engine through.

Nothing here changes state; changes go through the engine's operations (as protocol
commands do), so the write-ahead log and the event log see every one. Views are plain
frozen dataclasses, safe to hand to another layer (they hold no engine objects).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from beanpod.core.job import STATE_NAMES, Job, JobState, owner
from beanpod.core.qless.api import READ_ONLY, call
from beanpod.core.qless.ext import QlessExt, RecurExt
from beanpod.core.qless.view import job_view as qless_view
from beanpod.core.qless.view import recur_view
from beanpod.core.timings import BOUNDS_MS, OTHER
from beanpod.core.timings import Histogram as Histogram  # re-exported for web/
from beanpod.core.timings import JobTimings as JobTimings
from beanpod.core.workq.ext import workq_ext

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.core.qless import Qless
    from beanpod.core.tube import Tube
    from beanpod.core.workq import Workq

OUTCOMES = ("none", "completed", "failed")  # WorkqExt.outcome

QUEUED_STATES = ("ready", "delayed", "reserved", "buried")  # the beanstalkd states
# The job wait/run histograms (core/timings.py), for /metrics.
TIMING_BOUNDS_MS = BOUNDS_MS  # bucket upper bounds
OTHER_TUBE = OTHER  # the label of tubes past the cardinality limit


@dataclass(frozen=True)
class TubeView:
    """One tube's counts (what `stats-tube` shows), times in ms."""

    name: str
    urgent: int
    ready: int
    reserved: int
    delayed: int
    buried: int
    total_jobs: int
    using: int
    watching: int
    waiting: int
    cmd_delete: int
    cmd_pause: int
    pause_ms: int
    pause_left_ms: int
    # Lifetime totals kept for /metrics; like total_jobs they restart with the tube.
    timeouts: int
    buries: int
    kicks: int
    held: int  # jobs held by an extension (qless depends/recur/complete, Workq complete)
    head_age_ms: int  # since put, of the job a reserve would get next (0: none ready)


@dataclass(frozen=True)
class HolderView:
    """Who holds a reserved job: its connection, where that client connects from, the
    qless worker name (qless jobs), since when (ms ago) and how long it has held it."""

    conn: int
    dialect: str  # beanstalkd, workq or qless (a qless worker's locks)
    peer: str  # host:port, `unix`; "" for a qless worker (its locks outlive connections)
    name: str  # the qless worker name; "" for beanstalkd and Workq clients
    connected_ms: int  # since the connection opened (qless: since the worker was first seen)
    held_ms: int  # since the reservation (or, without job timings, its last touch)


@dataclass(frozen=True)
class JobView:
    """One job (what `stats-job` knows), times in ms on the engine's clock."""

    id: int
    tube: str
    state: str
    pri: int
    age_ms: int
    delay_ms: int
    ttr_ms: int
    time_left_ms: int
    reserves: int
    timeouts: int
    releases: int
    buries: int
    kicks: int
    body_size: int
    created_ms: int
    file: int = 0  # the WAL segment holding its latest full record (stats-job `file`)
    dialect: str = "beanstalkd"  # who put it: beanstalkd, workq or qless
    key: str = ""  # the id its application knows: the qless jid or the Workq uuid
    holder: HolderView | None = None  # reserved jobs


def tube_names(engine: Engine) -> list[str]:
    """Every tube, in `list-tubes` order."""
    return [tube.name for tube in engine.tube_list]


def tube_view(engine: Engine, name: str, now: int) -> TubeView | None:
    tube = engine.tubes.get(name)
    return None if tube is None else _tube_view(tube, now)


def tube_views(engine: Engine, now: int) -> list[TubeView]:
    return [_tube_view(tube, now) for tube in engine.tube_list]


def _tube_view(tube: Tube, now: int) -> TubeView:
    return TubeView(
        name=tube.name, urgent=tube.urgent, ready=len(tube.ready), reserved=tube.reserved,
        delayed=len(tube.delayed), buried=len(tube.buried), total_jobs=tube.total_jobs,
        using=tube.using, watching=tube.watching, waiting=tube.waiting,
        cmd_delete=tube.cmd_delete, cmd_pause=tube.cmd_pause, pause_ms=tube.pause_ms,
        pause_left_ms=max(0, tube.pause_until - now) if tube.pause_ms else 0,
        timeouts=tube.timeouts, buries=tube.buries, kicks=tube.kicks,
        held=tube.jobs - len(tube.ready) - len(tube.delayed) - len(tube.buried) - tube.reserved,
        head_age_ms=_head_age(tube, now),
    )  # fmt: skip


def _head_age(tube: Tube, now: int) -> int:
    head = tube.ready.peek()
    return 0 if head is None else max(0, now - head.created)


def job_view(engine: Engine, job_id: int, now: int) -> JobView | None:
    job = engine.jobs.get(job_id)
    return None if job is None else _job_view(job, now)


def _job_view(job: Job, now: int) -> JobView:
    timed = job.state in (JobState.RESERVED, JobState.DELAYED)
    return JobView(
        id=job.id, tube=job.tube.name, state=STATE_NAMES[job.state], pri=job.pri,
        age_ms=now - job.created, delay_ms=job.delay, ttr_ms=job.ttr,
        time_left_ms=max(0, job.deadline - now) if timed else 0, reserves=job.reserves,
        timeouts=job.timeouts, releases=job.releases, buries=job.buries, kicks=job.kicks,
        body_size=len(job.body), created_ms=job.created,
        file=job.file,
        **_identity(job), holder=None if job.reserver is None else _holder(job, now),
    )  # fmt: skip


def _identity(job: Job) -> dict[str, str]:
    dialect, key = owner(job)
    return {"dialect": dialect, "key": key}


def _holder(job: Job, now: int) -> HolderView:
    conn = job.reserver
    assert conn is not None
    # While reserved, `entry` holds the reserve time (ms after the put) when the engine
    # keeps job timings (always, with the HTTP console on); else the TTR's start is the
    # best known.
    since = job.created + job.entry if type(job.entry) is int else job.deadline - job.ttr
    return HolderView(
        conn.id, conn.dialect, conn.peer, conn.name, max(0, now - conn.since), max(0, now - since)
    )


def held(
    engine: Engine, now: int, qless: Qless | None = None, workq: Workq | None = None
) -> list[JobView]:
    """Every job a client holds now (not the console's operator), read from the holders'
    reservations: the client connections, the qless workers' lock holders and the Workq
    lease holders (O(connections + held jobs), not O(jobs))."""
    conns = [*engine.clients.values()]
    conns += [] if qless is None else qless.conns.values()
    conns += [] if workq is None else workq.holders()
    return [_job_view(job, now) for conn in conns for job in conn.reserved.values()]


def find_job(
    engine: Engine, qless: Qless | None, workq: Workq | None, text: str
) -> list[tuple[int, str]]:
    """The jobs `text` names, as (id, "jid" | "uuid" | "id"): a qless jid, a Workq uuid
    (any case) or a job id; dict lookups only."""
    found: list[tuple[int, str]] = []
    job = None if qless is None else qless.find(text)  # beanstalkd:<id> included
    if job is not None:
        found.append((job.id, "jid"))
    job = None if workq is None or len(text) != 36 else workq.find(text.lower().encode())
    if job is not None:  # a beanstalkd job's synthetic uuid included
        found.append((job.id, "uuid"))
    if text.isdigit() and len(text) <= 20 and int(text) in engine.jobs:
        found.append((int(text), "id"))
    return found


def ready_after(engine: Engine, name: str, after: int | None, count: int) -> list[tuple[int, int]]:
    """Up to `count` (key, id) of tube `name`'s ready jobs in reserve order (priority,
    then id), after the key `after` (a page cursor; None: from the first)."""
    tube = engine.tubes.get(name)
    if tube is None:
        return []
    return [(key, job.id) for key, job in tube.ready.after(after, count)]


def body(engine: Engine, job_id: int) -> bytes | None:
    job = engine.jobs.get(job_id)
    return None if job is None else job.body


def jobs_in(engine: Engine, name: str, state: str) -> Iterator[Job]:
    """The jobs of tube `name` in `state` (a beanstalkd state name), in the order the
    server would hand them out: ready by (pri, id), delayed by due time, buried oldest
    bury first, reserved by id. Unknown tube: nothing."""
    tube = engine.tubes.get(name)
    if tube is None:
        return iter(())
    if state == "ready":
        return iter(tube.ready.in_order())
    if state == "delayed":
        return iter(tube.delayed.in_order())
    if state == "buried":
        return iter(list(tube.buried.values()))
    if state == "reserved":
        return iter(sorted(_reserved_in(engine, tube), key=lambda job: job.id))
    raise ValueError(f"unknown state {state!r} (expected one of {', '.join(QUEUED_STATES)})")


def _reserved_in(engine: Engine, tube: Tube) -> Iterator[Job]:
    return (
        job for job in engine.jobs.values() if job.tube is tube and job.state is JobState.RESERVED
    )


# ---- listings for the admin API: pages by id, body search, bulk selections ----------


@dataclass(frozen=True)
class JobFilter:
    """Which jobs of a tube an operator means: one state, optionally only bodies holding
    `contains`, at most `limit` of them (None: all)."""

    tube: str
    state: str
    contains: bytes | None = None
    limit: int | None = None
    skip_qless: bool = False  # leave out qless jobs (failed ones are listed by group)


def jobs_of(engine: Engine, name: str, state: str, newest: bool = False) -> Iterator[Job]:
    """The jobs of tube `name` in `state`, in no particular order (no sort: the cheap
    form of `jobs_in` for pages and filters; buried ones in bury order, reversed when
    `newest`). Consume it before the engine changes."""
    tube = engine.tubes.get(name)
    if tube is None:
        return iter(())
    if state == "ready":
        return (job for _, job in tube.ready.live_items())
    if state == "delayed":
        return (job for _, job in tube.delayed.live_items())
    if state == "buried":
        return reversed(tube.buried.values()) if newest else iter(tube.buried.values())
    if state == "reserved":
        return _reserved_in(engine, tube)
    raise ValueError(f"unknown state {state!r} (expected one of {', '.join(QUEUED_STATES)})")


def candidate_ids(engine: Engine, flt: JobFilter) -> list[int]:
    """A snapshot of the ids of the tube's jobs in the filter's state, oldest first,
    before the body test (`matches`): cheap enough to take in one loop turn."""
    tube = engine.tubes.get(flt.tube)
    if tube is None:
        return []
    ids = (
        list(tube.buried)
        if flt.state == "buried"
        else [j.id for j in jobs_of(engine, flt.tube, flt.state)]
    )
    ids.sort()
    return ids


def matches(engine: Engine, flt: JobFilter, job_id: int) -> bool:
    """Is job `job_id` (still) one the filter selects?"""
    job = engine.jobs.get(job_id)
    return (
        job is not None
        and job.tube.name == flt.tube
        and STATE_NAMES[job.state] == flt.state
        and (not flt.contains or flt.contains in job.body)
        and not (flt.skip_qless and owner(job)[0] == "qless")
    )


def where(engine: Engine, job_id: int) -> tuple[str, str] | None:
    """(tube, state name) of a job, or None."""
    job = engine.jobs.get(job_id)
    return None if job is None else (job.tube.name, STATE_NAMES[job.state])


def job_counts(engine: Engine) -> dict[str, int]:
    """Jobs by beanstalkd state, server-wide (the `stats` counters)."""
    n = engine.counts
    return {"ready": n.ready, "urgent": n.urgent, "reserved": n.reserved,
            "delayed": n.delayed, "buried": n.buried, "total": len(engine.jobs)}  # fmt: skip


def connection_counts(engine: Engine) -> dict[str, int]:
    """Client connections now (beanstalkd and Workq), as `stats` counts them."""
    n = engine.counts
    return {"open": n.conns, "producers": n.producers, "workers": n.workers,
            "waiting": n.waiting, "total": n.total_connections}  # fmt: skip


def total_jobs(engine: Engine) -> int:
    """Jobs ever put, by any dialect (`stats` total-jobs)."""
    return engine.counts.total_jobs


def job_extras(engine: Engine, job_id: int) -> dict[str, Any] | None:
    """What the Workq dialect keeps with a job (uuid, limits, outcome, result), or None."""
    job = engine.jobs.get(job_id)
    ext = None if job is None else workq_ext(job)
    if ext is None:
        return None
    return {
        "uuid": ext.uuid_text, "ttl_ms": ext.ttl, "expires_ms": ext.expires,
        "scheduled_ms": ext.scheduled, "attempts": ext.attempts,
        "max_attempts": ext.max_attempts, "fails": ext.fails, "max_fails": ext.max_fails,
        "outcome": OUTCOMES[ext.outcome], "result": ext.result,
    }  # fmt: skip


def workq_results(workq: Workq, after: int | None, size: int) -> list[dict[str, Any]]:
    """Finished Workq jobs (completed or failed, kept until their TTL), by id: a scan of
    the Workq jobs only (its uuid index), not of every job."""
    found = heapq.nsmallest(size, (j.id for j in workq.index.values() if _finished_workq(j, after)))
    engine = workq.engine
    return [
        {"id": i, "tube": engine.jobs[i].tube.name, **(job_extras(engine, i) or {})} for i in found
    ]


def _finished_workq(job: Job, after: int | None) -> bool:
    return (
        job.state is JobState.COMPLETE
        and workq_ext(job) is not None
        and (after is None or job.id > after)
    )


# ---- qless views (read-only qless functions, as the `qless` command runs them) ------


def qless_read(q: Qless, fn: str, args: list[Any], now: int) -> Any:
    """A read-only qless function (`failed`, `workers`, `track` with no arguments,
    `stats`, `queues`, `get`, `recur.get`, ...): the value the `qless` command returns."""
    if fn not in READ_ONLY and not (fn == "track" and not args):
        raise ValueError(f"{fn} is not a read-only qless function")
    return call(q, fn, args, now)


def qless_job(q: Qless, job_id: int, now: int) -> dict[str, Any] | None:
    """The qless view of a job carrying qless extras (history, tags, dependencies,
    failure, ...), or None for a plain or Workq job."""
    job = q.engine.jobs.get(job_id)
    if job is None or not isinstance(job.ext, (QlessExt, RecurExt)):
        return None
    if isinstance(job.ext, RecurExt):
        return recur_view(job.ext)
    return qless_view(q, job, now)


def recurring(q: Qless) -> list[dict[str, Any]]:
    """Every recurring-job template, queue by queue."""
    return [
        recur_view(job.ext)
        for info in q.queues.values()
        for job in info.recurring.values()
        if isinstance(job.ext, RecurExt)
    ]


def qless_failed_by_queue(q: Qless) -> dict[str, int]:
    """Failed qless jobs (buried in the beanstalkd view) per queue: O(failed jobs)."""
    counts: dict[str, int] = {}
    for group in q.groups.values():
        for job in group.values():
            counts[job.tube.name] = counts.get(job.tube.name, 0) + 1
    return counts


def qless_queue_names(q: Qless) -> list[str]:
    return list(q.queues)


def is_draining(engine: Engine) -> bool:
    """SIGUSR1 drain mode: put answers DRAINING."""
    return engine.draining


def qless_held(qless: Qless, name: str) -> tuple[int, int]:
    """(depends, recur): a qless queue's jobs waiting for dependencies or a throttle, and
    its recurring templates; (0, 0) for a tube qless does not know."""
    queue = qless.queues.get(name)
    if queue is None:
        return 0, 0
    return len(queue.depends) + len(queue.throttled), len(queue.recurring)


def timings(engine: Engine) -> JobTimings | None:
    """The wait/run histograms, when the server keeps them."""
    return engine.timings


@dataclass(frozen=True)
class MemoryView:
    """The memory meter (--max-memory / --max-jobs-per-tube), for `/metrics`."""

    used: int  # accounted bytes: bodies, per-job overhead, buffered connection bytes
    cap: int | None
    max_jobs_per_tube: int | None
    refused: int  # puts refused for memory or a full tube


def memory_view(engine: Engine) -> MemoryView | None:
    """None when neither option is on (nothing is metered)."""
    meter = engine.meter
    if meter is None:
        return None
    return MemoryView(meter.used, meter.cap, meter.max_jobs_per_tube, meter.refused)
