"""``OUT/report.html``: charts per queue, PNGs embedded as base64 (no server needed)."""

from __future__ import annotations

import base64
import html
import io
import re
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from beanpod.analytics.report_extras import PERCENTILES, ReportExtras, Row, bin_edges_ms, format_ms
from beanpod.analytics.report_rows import ReportData

MAX_QUEUES = 12
_BUCKET_RE = re.compile(r"^([smhd])(\d+)(\+?)$")
_UNIT_RANK = {"s": 0, "m": 1, "h": 2, "d": 3}


def bucket_sort_key(bucket: str) -> tuple[int, int, int]:
    """Order qless buckets s0..s59, m1..m59, h1..h23, d1..d6, d7+."""
    match = _BUCKET_RE.match(bucket)
    if match is None:
        return (9, 0, 0)
    return (_UNIT_RANK[match.group(1)], int(match.group(2)), int(bool(match.group(3))))


def busiest_queues(data: ReportData, limit: int = MAX_QUEUES) -> list[str]:
    """Queues ordered by puts + reserves over the whole report, busiest first."""
    totals: dict[str, int] = defaultdict(int)
    for row in data.queue_daily:
        totals[row["queue"]] += row["put"] + row["reserves"]
    return sorted(totals, key=lambda q: (-totals[q], q))[:limit]


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)  # fixed margins: no tight bbox pass
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _bar_figure(bars: int, bottom: float) -> Figure:
    """A horizontal bar chart's figure: fixed margins in inches, room for long labels.

    Fixed margins, not a constrained layout: the layout solver drew every chart twice and
    took about half of the report's time.
    """
    height = 0.5 + bottom + 0.3 * max(1, bars)
    fig = Figure(figsize=(8, height))
    fig.subplots_adjust(left=0.3, right=0.97, top=1 - 0.35 / height, bottom=bottom / height)
    return fig


def _img(fig: Figure, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{_png(fig)}">'


_WIDTH_NAMES = {1_000: "second", 10_000: "10 s", 60_000: "minute", 300_000: "5 min",
                900_000: "15 min", 3_600_000: "hour"}  # fmt: skip


def throughput_chart(rows: list[Row], queue: str, extras: ReportExtras) -> str:
    """Puts, reserves and done per time bucket, the axis spanning the log's first to last
    event (buckets from a second to an hour, by span); hourly rows when no extras."""
    width = extras.bucket_ms
    if extras.throughput:
        points = sorted((r for r in extras.throughput if r["queue"] == queue), key=_t)
        times = [_days(r["t"]) for r in points]
    else:
        points, width = sorted(rows, key=lambda r: r["hour"]), 3_600_000
        times = [_days(_ms_of(r["hour"])) for r in points]
    fig = Figure(figsize=(8, 2.8))
    fig.subplots_adjust(left=0.09, right=0.98, top=0.9, bottom=0.24)
    ax = fig.subplots()
    for column, style in (("put", "-"), ("reserves", "--"), ("done", ":")):
        ax.plot(times, [r[column] for r in points], style, label=column, marker=".")
    if extras.first_ts is not None and extras.last_ts is not None:
        end = max(extras.last_ts, extras.first_ts + width)
        ax.set_xlim(_days(extras.first_ts), _days(end))
    ax.xaxis_date(UTC)
    name = _WIDTH_NAMES.get(width, f"{width // 1000} s")
    ax.set_title(f"{queue}: throughput per {name} (UTC)")
    ax.set_ylabel(f"events / {name}")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left")
    fig.autofmt_xdate(bottom=0.24)
    return _img(fig, f"throughput of {queue} per {name}")


def _t(row: Row) -> int:
    return int(row["t"])


def _days(ms: int) -> float:
    """Matplotlib's date number (days since its 1970 epoch) of a millisecond instant."""
    return ms / 86_400_000


def _ms_of(moment: datetime) -> int:
    """A table's timestamp (naive ones are UTC: the session's time zone) in ms."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


#: Log-axis ticks people read at a glance (ms -> label), instead of powers of ten of ms.
_TIME_TICKS = {0.1: "0.1ms", 1: "1ms", 10: "10ms", 100: "100ms", 1_000: "1s", 10_000: "10s",
               60_000: "1min", 600_000: "10min", 3_600_000: "1h", 36_000_000: "10h",
               86_400_000: "1d", 604_800_000: "7d"}  # fmt: skip


def _time_ticks(ax: Any, low: float, high: float) -> None:
    ticks = [t for t in _TIME_TICKS if low <= t <= high]
    ax.set_xticks(ticks, [_TIME_TICKS[t] for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())


def fine_histogram_chart(rows: list[Row], queue: str) -> str:
    """Wait and run histograms on a log time axis, three bins per decade from 1 ms (the
    tables keep qless's one-second buckets, too coarse for millisecond jobs)."""
    fig = Figure(figsize=(8, 2.8))
    fig.subplots_adjust(left=0.11, right=0.98, top=0.8, bottom=0.18, wspace=0.35)
    axes = fig.subplots(1, 2)
    for ax, kind in zip(axes, ("wait", "run"), strict=True):
        counts = {r["bin"]: r["count"] for r in rows if r["kind"] == kind}
        if not counts:
            ax.set_axis_off()
            continue
        bins = range(min(counts), max(counts) + 1)
        edges = [bin_edges_ms(bins[0])[0] or 0.1] + [bin_edges_ms(b)[1] for b in bins]
        color = "tab:blue" if kind == "wait" else "tab:green"
        ax.stairs([counts.get(b, 0) for b in bins], edges, fill=True, color=color)
        ax.set_xscale("log")
        _time_ticks(ax, edges[0], edges[-1])
        ax.set_title(f"{kind} time")
        ax.set_xlabel(f"{kind} time (log scale)")
        ax.set_ylabel("reservations")
    fig.suptitle(f"{queue}: wait and run histograms")
    return _img(fig, f"histograms of {queue}")


def histogram_chart(rows: list[Row], queue: str) -> str:
    """Wait and run histograms over qless buckets, summed over days."""
    fig = Figure(figsize=(8, 2.8))
    fig.subplots_adjust(left=0.11, right=0.98, top=0.8, bottom=0.18, wspace=0.35)
    axes = fig.subplots(1, 2)
    for ax, kind in zip(axes, ("wait", "run"), strict=True):
        counts: dict[str, int] = defaultdict(int)
        for row in rows:
            if row["kind"] == kind:
                counts[row["bucket"]] += row["count"]
        buckets = sorted(counts, key=bucket_sort_key)
        color = "tab:blue" if kind == "wait" else "tab:green"
        # One filled step patch, not a rectangle per bucket (~110 buckets: a third faster).
        edges = [i - 0.5 for i in range(len(buckets) + 1)]
        ax.stairs([counts[b] for b in buckets], edges, fill=True, color=color)
        step = max(1, len(buckets) // 12)
        ax.set_xticks(range(0, len(buckets), step), buckets[::step], fontsize=7, rotation=90)
        ax.set_title(f"{kind} time (qless buckets)")
        ax.set_ylabel("reservations")
    fig.suptitle(f"{queue}: wait and run histograms")
    return _img(fig, f"histograms of {queue}")


def percentile_chart(rows: list[Row], queue: str) -> str:
    """p50/p95/p99 of wait and run per UTC day, in seconds."""
    rows = sorted(rows, key=lambda r: r["day"])
    fig = Figure(figsize=(8, 3.0))
    fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=0.3, wspace=0.25)
    axes = fig.subplots(1, 2)
    for ax, kind in zip(axes, ("wait", "run"), strict=True):
        for p in ("p50", "p95", "p99"):
            points = [
                (r["day"], r[f"{kind}_{p}_ms"] / 1000)
                for r in rows
                if r[f"{kind}_{p}_ms"] is not None
            ]
            ax.plot([str(d) for d, _ in points], [v for _, v in points], marker="o", label=p)
        ax.set_yscale("symlog", linthresh=1.0)
        # Plain numbers: symlog's default labels are mathtext, parsed per tick per draw.
        ax.yaxis.set_major_formatter("{x:g}")
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_title(f"{kind} percentiles by UTC day")
        ax.set_ylabel("seconds")
        ax.set_xlabel("UTC day")
        ax.legend(loc="upper left", fontsize=7)
        ax.tick_params(axis="x", labelrotation=45, labelsize=7)
    return _img(fig, f"percentiles of {queue}")


def failure_counts(failures: list[Row], daily: list[Row]) -> dict[str, int]:
    """Fails per group, and buried jobs as failures ("buried": beanstalkd's way to fail)."""
    counts: dict[str, int] = defaultdict(int)
    for row in failures:
        counts[row["group"]] += row["count"]
    buries = sum(r["buries"] for r in daily)
    if buries:
        counts["buried"] += buries
    return counts


def failures_chart(counts: dict[str, int], queue: str) -> str:
    """Failures per group over the report's span."""
    groups = sorted(counts, key=lambda g: (-counts[g], g))[:15]
    fig = _bar_figure(len(groups), bottom=0.3)
    ax = fig.subplots()
    ax.barh(groups[::-1], [counts[g] for g in groups[::-1]], color="tab:red")
    ax.set_title(f"{queue}: failures by group")
    return _img(fig, f"failures of {queue}")


def workers_chart(rows: list[Row]) -> str:
    """Busiest connections by busy time."""
    labels = [r["worker"] or f"connection {r['conn']}" for r in rows][::-1]
    fig = _bar_figure(len(rows), bottom=0.55)
    ax = fig.subplots()
    ax.barh(labels, [r["busy_ms"] / 1000 for r in rows][::-1], color="tab:purple")
    ax.set_xlabel("busy seconds (sum of run of its reservations)")
    ax.set_title("busiest workers")
    return _img(fig, "busiest workers: " + ", ".join(labels[::-1]))


_PCT_NAMES = [f"p{round(p * 100)}" for p in PERCENTILES]
_COUNT_COLUMNS = ("put", "reserves", "done", "failed", "timeouts")


def _summary_table(data: ReportData, queues: list[str]) -> str:
    """Per queue: wait and run percentiles over the whole span first, then counts."""
    head = (
        '<tr><th rowspan="2">queue</th><th colspan="3">wait</th><th colspan="3">run</th>'
        f'<th colspan="{len(_COUNT_COLUMNS)}">jobs</th></tr><tr>'
        + "".join(f"<th>{p}</th>" for p in _PCT_NAMES * 2)
        + "".join(f"<th>{c}</th>" for c in _COUNT_COLUMNS)
        + "</tr>"
    )
    body = [_summary_row(data, queue) for queue in queues]
    return f"<table>{head}{''.join(body)}</table>"


def _summary_row(data: ReportData, queue: str) -> str:
    rows = [r for r in data.queue_daily if r["queue"] == queue]

    def total(*columns: str) -> int:
        return sum(r[c] for r in rows for c in columns)

    counts = {
        "put": total("put"), "reserves": total("reserves"), "done": total("deletes", "completes"),
        "failed": total("fails", "buries"), "timeouts": total("timeouts"),
    }  # fmt: skip
    cells = []
    for kind in ("wait", "run"):
        values = data.extras.percentiles.get((queue, kind), [None] * len(PERCENTILES))
        cells += [f"<td>{format_ms(v)}</td>" for v in values]
    cells += [f"<td>{counts[c]:,}</td>" for c in _COUNT_COLUMNS]
    return f"<tr><td>{html.escape(queue)}</td>{''.join(cells)}</tr>"


def _queue_section(data: ReportData, queue: str) -> str:
    def of(rows: list[Row]) -> list[Row]:
        return [r for r in rows if r["queue"] == queue]

    parts = [f"<h2>Queue {html.escape(queue)}</h2>"]
    parts.append(throughput_chart(of(data.throughput_hourly), queue, data.extras))
    fine = of(data.extras.fine_histograms)
    if fine:
        parts.append(fine_histogram_chart(fine, queue))
    elif of(data.histograms):
        parts.append(histogram_chart(of(data.histograms), queue))
    daily = of(data.queue_daily)
    if len({r["day"] for r in daily}) > 1 and of(data.histograms):
        parts.append(percentile_chart(daily, queue))  # one day: the summary has them
    failures = failure_counts(of(data.failures), daily)
    if failures:
        parts.append(failures_chart(failures, queue))
    return "<section>" + "\n".join(parts) + "</section>"


def render_html(data: ReportData) -> str:
    """The whole report as one self-contained HTML page."""
    queues = busiest_queues(data)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    span = _span(data)
    sections = [_queue_section(data, q) for q in queues]
    workers = workers_chart(data.workers) if data.workers else "<p>No reservations.</p>"
    return _PAGE.format(
        span=html.escape(span), generated=generated, summary=_summary_table(data, queues),
        sections="\n".join(sections), workers=workers, shown=len(queues),
        total=len({r["queue"] for r in data.queue_daily}),
    )  # fmt: skip


def _span(data: ReportData) -> str:
    first, last = data.extras.first_ts, data.extras.last_ts
    if first is None or last is None:
        days = sorted({r["day"] for r in data.queue_daily})
        return f"{days[0]} to {days[-1]} (UTC days)" if days else "no events"
    start = datetime.fromtimestamp(first / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    end = datetime.fromtimestamp(last / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return f"{start} to {end} UTC ({format_ms(last - first)})"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>beanpod queue report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:auto;padding:1em}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}
td:first-child{{text-align:left}}img{{max-width:100%;display:block;margin:0.5em 0}}
section{{border-top:1px solid #ddd;margin-top:1em}}</style></head><body>
<h1>beanpod queue report</h1>
<p>Events from {span}; generated {generated}. Showing the {shown} busiest of
{total} queues. Wait: from ready to reserved; run: from reserved to its end (delete,
release, bury, timeout, complete, fail). Percentiles over the whole span (approximate to
0.01 %); failed counts fails and buried jobs.</p>
{summary}
{sections}
<section><h2>Workers</h2>{workers}</section>
</body></html>
"""
