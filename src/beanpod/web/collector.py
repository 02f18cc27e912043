"""The Prometheus collector: every beanpod_* family, built at scrape time from core.query
views and the server's facts (docs/http.md lists them). Tubes past `metrics_max_tubes`
(in list-tubes order) add up under tube="_other"; no label ever holds a job id."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from beanpod.core import query
from beanpod.core.timings import BOUNDS_MS, OTHER, Histogram
from beanpod.web.context import HistogramSnapshot, WebContext
from beanpod.web.tube_metrics import TubeFamilies

MS = 1000.0


class BeanpodCollector(Collector):
    def __init__(self, ctx: WebContext) -> None:
        self.ctx = ctx

    def collect(self) -> Iterator[Metric]:
        ctx = self.ctx
        build = GaugeMetricFamily(
            "beanpod_build_info", "The running beanpod's version (1).", labels=["version"]
        )
        build.add_metric([ctx.info.version], 1)
        yield build
        yield from self._tubes()
        yield from self._timings()
        yield from self._commands()
        yield from self._connections()
        yield from self._wal()
        yield from self._events()

    def _tubes(self) -> Iterable[Metric]:
        ctx = self.ctx
        families = TubeFamilies()
        limit = ctx.settings.metrics_max_tubes
        for index, view in enumerate(query.tube_views(ctx.engine, ctx.now())):
            depends, recur = (0, 0) if ctx.qless is None else query.qless_held(ctx.qless, view.name)
            families.add(view, view.name if index < limit else OTHER, depends, recur)
        return families.metrics()

    def _timings(self) -> Iterator[Metric]:
        timings = query.timings(self.ctx.engine)
        if timings is None:
            return
        yield _histogram(
            "beanpod_job_wait_seconds", "Time from put to first reserve, per tube.", timings.waits
        )
        yield _histogram(
            "beanpod_job_run_seconds", "Time from reserve to delete, per tube.", timings.runs
        )

    def _commands(self) -> Iterator[Metric]:
        facts = self.ctx.facts
        commands = CounterMetricFamily(
            "beanpod_commands", "beanstalkd commands served, by verb.", labels=["command"]
        )
        for verb, count in sorted(facts.command_counts().items()):
            commands.add_metric([verb], count)
        yield commands
        errors = CounterMetricFamily(
            "beanpod_command_errors",
            "beanstalkd error replies, by verb and reply.",
            labels=["command", "reply"],
        )
        for (verb, reply), count in sorted(facts.command_errors().items()):
            errors.add_metric([verb, reply], count)
        yield errors

    def _connections(self) -> Iterator[Metric]:
        facts = self.ctx.facts
        open_ = GaugeMetricFamily(
            "beanpod_connections",
            "Open connections by protocol and role.",
            labels=["protocol", "role"],
        )
        for (protocol, role), count in sorted(facts.connections().items()):
            open_.add_metric([protocol, role], count)
        yield open_
        accepted = CounterMetricFamily(
            "beanpod_connections_accepted",
            "Connections accepted since start, by protocol.",
            labels=["protocol"],
        )
        for protocol, count in sorted(facts.connections_accepted().items()):
            accepted.add_metric([protocol], count)
        yield accepted
        rejected = facts.connections_rejected()
        if rejected is not None:
            yield CounterMetricFamily(
                "beanpod_connections_rejected", "Connections refused by a limit.", value=rejected
            )

    def _wal(self) -> Iterator[Metric]:
        wal = self.ctx.facts.wal()
        if wal is None:
            return
        yield GaugeMetricFamily("beanpod_wal_segments", "WAL segment files.", value=wal.segments)
        yield GaugeMetricFamily(
            "beanpod_wal_size_bytes", "WAL segment files' size on disk.", value=wal.size_bytes
        )
        yield CounterMetricFamily(
            "beanpod_wal_written_bytes", "Bytes appended to the WAL.", value=wal.written_bytes
        )
        yield CounterMetricFamily(
            "beanpod_wal_records_written", "Records appended to the WAL.", value=wal.records_written
        )
        yield _snapshot("beanpod_wal_fsync_seconds", "Duration of each WAL sync round.", wal.fsync)

    def _events(self) -> Iterator[Metric]:
        dropped = self.ctx.facts.events_dropped()
        if dropped is not None:
            yield CounterMetricFamily(
                "beanpod_events_dropped", "Event-log records lost to write failures.", value=dropped
            )


def _histogram(name: str, doc: str, hists: dict[str, Histogram]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=["tube"])
    for tube, hist in sorted(hists.items()):
        counts = hist.cumulative()
        buckets = [
            (_le(bound / MS), count) for bound, count in zip(BOUNDS_MS, counts, strict=False)
        ]
        buckets.append(("+Inf", counts[-1]))
        family.add_metric([tube], buckets, hist.sum_ms / MS)
    return family


def _snapshot(name: str, doc: str, snap: HistogramSnapshot) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc)
    total, buckets = 0, []
    for bound, count in zip((*snap.bounds, None), snap.buckets, strict=True):
        total += count
        buckets.append(("+Inf" if bound is None else _le(bound), total))
    family.add_metric([], buckets, snap.sum)
    return family


def _le(bound: float) -> str:
    return repr(float(bound))
