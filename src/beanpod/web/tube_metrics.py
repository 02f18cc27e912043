"""The per-tube families of /metrics, filled one tube view at a time; tubes past the
cardinality limit share the `_other` label (counts add up; the oldest age is the max)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from beanpod.core.query import QUEUED_STATES, TubeView

K = TypeVar("K")
HELD_STATES = ("depends", "recur", "complete")
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
        held = {"depends": depends, "recur": recur, "complete": view.held - depends - recur}
        for state in QUEUED_STATES:
            _add(self.jobs, (label, state), getattr(view, state))
        for state in HELD_STATES:
            _add(self.jobs, (label, state), held[state])
        _add(self.urgent, label, view.urgent)
        _add(self.paused, label, 1 if view.pause_ms else 0)
        self.age_ms[label] = max(self.age_ms.get(label, 0), view.head_age_ms)
        for name, (_, attribute) in COUNTERS.items():
            _add(self.totals[name], label, getattr(view, attribute))

    def metrics(self) -> Iterable[Metric]:
        jobs = GaugeMetricFamily(
            "beanpod_jobs", "Jobs by tube and state.", labels=["tube", "state"]
        )
        for (tube, state), count in self.jobs.items():
            jobs.add_metric([tube, state], count)
        yield jobs
        yield _gauge("beanpod_jobs_urgent", "Ready jobs with priority < 1024.", self.urgent)
        yield _gauge(
            "beanpod_tube_paused",
            "1 while the tube is paused (with _other: how many are).",
            self.paused,
        )
        yield _gauge(
            "beanpod_oldest_ready_job_age_seconds",
            "Seconds since the put of the job a reserve would get next (0: none ready).",
            {t: ms / 1000 for t, ms in self.age_ms.items()},
        )
        for name, (doc, _) in COUNTERS.items():
            family = CounterMetricFamily(name, doc, labels=["tube"])
            for tube, value in self.totals[name].items():
                family.add_metric([tube], value)
            yield family


def _add(into: dict[K, int], key: K, value: int) -> None:
    into[key] = into.get(key, 0) + value


def _gauge(name: str, doc: str, values: dict[str, float] | dict[str, int]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, doc, labels=["tube"])
    for tube, value in values.items():
        family.add_metric([tube], value)
    return family
