"""Jobs as the harness shows them: a plain snapshot, body included."""

from __future__ import annotations

from dataclasses import dataclass

from beanpod.core import query
from beanpod.core.engine import Engine


@dataclass(frozen=True)
class SeenJob:
    """One job at the moment it was looked at (times in seconds, as on the wire)."""

    id: int
    tube: str
    state: str  # ready, delayed, reserved, buried
    pri: int
    body: bytes
    delay: float
    ttr: float
    time_left: float  # until a delayed job is ready or a reserved job's TTR ends
    reserves: int
    timeouts: int
    releases: int
    buries: int
    kicks: int


def seen_job(engine: Engine, job_id: int, now: int) -> SeenJob | None:
    view = query.job_view(engine, job_id, now)
    body = query.body(engine, job_id)
    if view is None or body is None:
        return None
    return SeenJob(
        id=view.id, tube=view.tube, state=view.state, pri=view.pri, body=body,
        delay=view.delay_ms / 1000, ttr=view.ttr_ms / 1000, time_left=view.time_left_ms / 1000,
        reserves=view.reserves, timeouts=view.timeouts, releases=view.releases,
        buries=view.buries, kicks=view.kicks,
    )  # fmt: skip


def seen_jobs(engine: Engine, tube: str | None, state: str | None, now: int) -> list[SeenJob]:
    """Jobs of one tube (or all) in one state (or all), in the order the server hands
    them out within each tube and state."""
    tubes = [tube] if tube is not None else query.tube_names(engine)
    states = [state] if state is not None else list(query.QUEUED_STATES)
    found = []
    for name in tubes:
        for each in states:
            for job in query.jobs_in(engine, name, each):
                snapshot = seen_job(engine, job.id, now)
                if snapshot is not None:
                    found.append(snapshot)
    return found
