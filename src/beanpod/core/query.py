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

if TYPE_CHECKING:
    from beanpod.core.engine import Engine
    from beanpod.core.tube import Tube

QUEUED_STATES = ("ready", "delayed", "reserved", "buried")  # the beanstalkd states


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
    )  # fmt: skip


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
