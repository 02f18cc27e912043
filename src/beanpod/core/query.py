"""Read-only queries over the engine: the one module the web console, `/metrics`, the
admin API and the test harness (`beanpod.testing`) read the engine through.

Nothing here changes state; changes go through the engine's operations (as protocol
commands do), so the write-ahead log and the event log see every one. Views are plain
frozen dataclasses, safe to hand to another layer (they hold no engine objects).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from beanpod.core.job import STATE_NAMES, Job, JobState
from beanpod.core.timings import BOUNDS_MS, OTHER
from beanpod.core.timings import Histogram as Histogram  # re-exported for web/
from beanpod.core.timings import JobTimings as JobTimings

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.core.qless import Qless
    from beanpod.core.tube import Tube

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
    )  # fmt: skip


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
