"""Every beanpod_* family of /metrics (docs/http.md lists them), built at scrape time from
core.query views and the server's facts. Tubes past `metrics_max_tubes` (in list-tubes
order) add up under tube="_other"; no label ever holds a job id.

`families(ctx)` feeds the fast writer (families.render); `BeanpodCollector` is the same
data as a prometheus-client collector, for a CollectorRegistry."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from beanpod.core import query
from beanpod.web.context import HistogramSnapshot, WebContext
from beanpod.web.families import AnyFamily, Family, HistogramFamily, to_client_family
from beanpod.web.tube_metrics import TubeFamilies

MS = 1000.0
SECONDS_BOUNDS = tuple(bound / MS for bound in query.TIMING_BOUNDS_MS)


class BeanpodCollector(Collector):
    def __init__(self, ctx: WebContext) -> None:
        self.ctx = ctx

    def collect(self) -> Iterator[Metric]:
        for family in families(self.ctx):
            yield to_client_family(family)


def families(ctx: WebContext) -> list[AnyFamily]:
    build = Family(
        "beanpod_build_info", "gauge", "The running beanpod's version (1).", ("version",)
    )
    build.add((ctx.info.version,), 1)
    return [
        build, *_tubes(ctx), *_timings(ctx), *_commands(ctx), *_connections(ctx),
        *_wal(ctx), *_events(ctx),
    ]  # fmt: skip


def _tubes(ctx: WebContext) -> list[AnyFamily]:
    tubes = TubeFamilies()
    limit = ctx.settings.metrics_max_tubes
    for index, view in enumerate(query.tube_views(ctx.engine, ctx.now())):
        depends, recur = (0, 0) if ctx.qless is None else query.qless_held(ctx.qless, view.name)
        tubes.add(view, view.name if index < limit else query.OTHER_TUBE, depends, recur)
    return tubes.families()


def _timings(ctx: WebContext) -> list[AnyFamily]:
    timings = query.timings(ctx.engine)
    if timings is None:
        return []
    timings.fold()
    return [
        _histogram(
            "beanpod_job_wait_seconds", "Time from put to first reserve, per tube.", timings.waits
        ),
        _histogram(
            "beanpod_job_run_seconds", "Time from reserve to delete, per tube.", timings.runs
        ),
    ]


def _histogram(name: str, doc: str, hists: dict[str, query.Histogram]) -> HistogramFamily:
    family = HistogramFamily(name, doc, SECONDS_BOUNDS, ("tube",))
    for tube, hist in hists.items():
        counts = hist.cumulative()
        if counts[-1]:  # a tube no job has waited or run in yet has no series
            family.samples.append(((tube,), counts, hist.sum_ms / MS))
    return family


def _commands(ctx: WebContext) -> list[AnyFamily]:
    commands = Family(
        "beanpod_commands", "counter", "beanstalkd commands served, by verb.", ("command",)
    )
    for verb, count in sorted(ctx.facts.command_counts().items()):
        commands.add((verb,), count)
    doc = "beanstalkd error replies, by verb and reply."
    errors = Family("beanpod_command_errors", "counter", doc, ("command", "reply"))
    for (verb, reply), count in sorted(ctx.facts.command_errors().items()):
        errors.add((verb, reply), count)
    return [commands, errors]


def _connections(ctx: WebContext) -> list[AnyFamily]:
    facts = ctx.facts
    open_ = Family("beanpod_connections", "gauge", "Open connections by protocol and role.",
                   ("protocol", "role"))  # fmt: skip
    for (protocol, role), count in sorted(facts.connections().items()):
        open_.add((protocol, role), count)
    accepted = Family("beanpod_connections_accepted", "counter",
                      "Connections accepted since start, by protocol.", ("protocol",))  # fmt: skip
    for protocol, count in sorted(facts.connections_accepted().items()):
        accepted.add((protocol,), count)
    found: list[AnyFamily] = [open_, accepted]
    rejected = facts.connections_rejected()
    if rejected is not None:
        found.append(_single("beanpod_connections_rejected", "counter",
                             "Connections refused by a limit.", rejected))  # fmt: skip
    return found


def _wal(ctx: WebContext) -> list[AnyFamily]:
    wal = ctx.facts.wal()
    if wal is None:
        return []
    return [
        _single("beanpod_wal_segments", "gauge", "WAL segment files.", wal.segments),
        _single("beanpod_wal_size_bytes", "gauge", "WAL segment files' size on disk.",
                wal.size_bytes),
        _single("beanpod_wal_written_bytes", "counter", "Bytes appended to the WAL.",
                wal.written_bytes),
        _single("beanpod_wal_records_written", "counter", "Records appended to the WAL.",
                wal.records_written),
        _snapshot("beanpod_wal_fsync_seconds", "Duration of each WAL sync round.", wal.fsync),
    ]  # fmt: skip


def _events(ctx: WebContext) -> list[AnyFamily]:
    dropped = ctx.facts.events_dropped()
    if dropped is None:
        return []
    return [_single("beanpod_events_dropped", "counter",
                    "Event-log records lost to write failures.", dropped)]  # fmt: skip


def _single(name: str, kind: str, doc: str, value: int) -> Family:
    family = Family(name, kind, doc)
    family.add((), value)
    return family


def _snapshot(name: str, doc: str, snap: HistogramSnapshot) -> HistogramFamily:
    total, counts = 0, []
    for count in snap.buckets:
        total += count
        counts.append(total)
    family = HistogramFamily(name, doc, snap.bounds)
    family.samples.append(((), counts, snap.sum))
    return family
