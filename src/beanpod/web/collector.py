"""The Prometheus collector: every beanpod_* family, built from core.query views and the
server's facts at scrape time. Tubes past `metrics_max_tubes` fold into tube="_other"."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from beanpod.core import query
from beanpod.web.context import WebContext

OTHER = "_other"


class BeanpodCollector(Collector):
    def __init__(self, ctx: WebContext) -> None:
        self.ctx = ctx

    def collect(self) -> Iterator[Metric]:
        ctx = self.ctx
        build = GaugeMetricFamily("beanpod_build_info", "beanpod's version.", labels=["version"])
        build.add_metric([ctx.info.version], 1)
        yield build
        yield from self._tubes()
        yield from self._commands()

    def _tubes(self) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            "beanpod_jobs", "Jobs by tube and state.", labels=["tube", "state"]
        )
        urgent = GaugeMetricFamily(
            "beanpod_jobs_urgent", "Ready jobs with priority < 1024.", labels=["tube"]
        )
        paused = GaugeMetricFamily(
            "beanpod_tube_paused", "1 while the tube is paused.", labels=["tube"]
        )
        puts = CounterMetricFamily("beanpod_jobs_put", "Jobs put into the tube.", labels=["tube"])
        deleted = CounterMetricFamily(
            "beanpod_jobs_deleted", "Jobs deleted from the tube.", labels=["tube"]
        )
        for view in query.tube_views(self.ctx.engine, self.ctx.now()):
            name = view.name
            for state in query.QUEUED_STATES:
                jobs.add_metric([name, state], getattr(view, state))
            urgent.add_metric([name], view.urgent)
            paused.add_metric([name], 1 if view.pause_ms else 0)
            puts.add_metric([name], view.total_jobs)
            deleted.add_metric([name], view.cmd_delete)
        yield from (jobs, urgent, paused, puts, deleted)

    def _commands(self) -> Iterator[Metric]:
        commands = CounterMetricFamily(
            "beanpod_commands", "Commands served, by verb.", labels=["command"]
        )
        for verb, count in sorted(self.ctx.facts.command_counts().items()):
            commands.add_metric([verb], count)
        yield commands
