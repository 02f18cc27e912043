"""The per-tube families of /metrics, filled one tube view at a time; tubes past the
cardinality limit share the `_other` label (counts add up; the oldest age is the max)."""

from __future__ import annotations

from functools import lru_cache
from typing import TypeVar

from beanpod.core.query import QUEUED_STATES, TubeView
from beanpod.web.families import AnyFamily, Family, label_text

K = TypeVar("K")
HELD_STATES = ("depends", "recur", "complete")  # exported for a tube only when not zero
# name -> (help, view attribute), for the per-tube counters
COUNTERS = {
    "beanpod_jobs_put": ("Jobs put into the tube (stats-tube total-jobs).", "total_jobs"),
    "beanpod_jobs_deleted": ("Jobs deleted from the tube (stats-tube cmd-delete).", "cmd_delete"),
    "beanpod_job_timeouts": ("Reservations of the tube's jobs that timed out.", "timeouts"),
    "beanpod_jobs_buried": ("Jobs of the tube buried.", "buries"),
    "beanpod_jobs_kicked": ("Jobs of the tube kicked.", "kicks"),
}


class TubeFamilies:
    def __init__(self) -> None:
        self.jobs: dict[tuple[str, str], int] = {}
        self.urgent: dict[str, int] = {}
        self.paused: dict[str, int] = {}
        self.age_ms: dict[str, int] = {}
        self.totals: dict[str, dict[str, int]] = {name: {} for name in COUNTERS}

    def add(self, view: TubeView, label: str, depends: int, recur: int) -> None:
        """One tube's numbers under `label` (its name, or `_other`)."""
        for state in QUEUED_STATES:
            _add(self.jobs, (label, state), getattr(view, state))
        held = {"depends": depends, "recur": recur, "complete": view.held - depends - recur}
        for state in HELD_STATES:
            if held[state]:
                _add(self.jobs, (label, state), held[state])
        _add(self.urgent, label, view.urgent)
        _add(self.paused, label, 1 if view.pause_ms else 0)
        self.age_ms[label] = max(self.age_ms.get(label, 0), view.head_age_ms)
        for name, (_, attribute) in COUNTERS.items():
            _add(self.totals[name], label, getattr(view, attribute))

    def families(self) -> list[AnyFamily]:
        jobs = Family("beanpod_jobs", "gauge", "Jobs by tube and state.", ("tube", "state"))
        for (tube, state), count in self.jobs.items():
            jobs.add((tube, state), count, f'{_tube_text(tube)},state="{state}"')
        found: list[AnyFamily] = [
            jobs,
            _by_tube("beanpod_jobs_urgent", "gauge", "Ready jobs with priority < 1024.",
                     self.urgent),
            _by_tube("beanpod_tube_paused", "gauge",
                     "1 while the tube is paused (with _other: how many are).", self.paused),
            _by_tube("beanpod_oldest_ready_job_age_seconds", "gauge",
                     "Seconds since the put of the job a reserve would get next (0: none "
                     "ready).", {t: ms / 1000 for t, ms in self.age_ms.items()}),
        ]  # fmt: skip
        for name, (doc, _) in COUNTERS.items():
            found.append(_by_tube(name, "counter", doc, self.totals[name]))
        return found


def _add(into: dict[K, int], key: K, value: int) -> None:
    into[key] = into.get(key, 0) + value


def _by_tube(name: str, kind: str, doc: str, values: dict[str, int] | dict[str, float]) -> Family:
    family = Family(name, kind, doc, ("tube",))
    family.samples.extend(((tube,), _tube_text(tube), value) for tube, value in values.items())
    return family


@lru_cache(maxsize=4096)
def _tube_text(tube: str) -> str:
    """`tube="name"` (tube names never need escaping; cached all the same)."""
    return label_text(("tube",), (tube,))
