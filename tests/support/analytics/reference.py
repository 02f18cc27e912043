"""A pure-Python implementation of the analytics contract (the test oracle).

Written from ``shared/specs/analytics-contract.md`` alone, with plain loops per job and
no shared code with the Spark transforms except the line validation of
``beanpod.events.schema`` (which *is* the contract's reader rule).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from beanpod.events.schema import read_line

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
EPOCH = date(1970, 1, 1)
ENDS = {"release", "bury", "timeout", "complete", "fail"}
COUNTERS = {
    "put": "put", "reserves": "reserve", "deletes": "delete", "releases": "release",
    "buries": "bury", "kicks": "kick", "timeouts": "timeout", "completes": "complete",
    "fails": "fail", "evictions": "evict",
}  # fmt: skip

Event = dict[str, Any]


def read_log(directory: Path) -> list[Event]:
    """Valid events of ``DIR/date=*/*.jsonl`` in log order (ts, file name, line)."""
    files = sorted(
        (folder.name, path.name, path)
        for folder in directory.glob("date=*")
        if folder.is_dir() and not folder.name.startswith((".", "_"))
        for path in folder.glob("*.jsonl")
        if not path.name.startswith((".", "_"))
    )
    events = []
    for rank, (_, _, path) in enumerate(files):
        for line_no, line in enumerate(path.read_bytes().split(b"\n")):
            event = read_line(line)
            if event is not None:
                event["_order"] = (event["ts"], rank, line_no)
                events.append(event)
    events.sort(key=lambda e: e["_order"])
    return events


def utc_day(ts: int) -> date:
    return EPOCH + timedelta(days=ts // DAY_MS)


def utc_hour(ts: int) -> datetime:
    return datetime.fromtimestamp((ts - ts % HOUR_MS) / 1000, tz=UTC)


def bucket(ms: int) -> str:
    s = ms // 1000
    if s < 60:
        return f"s{s}"
    if s < 3600:
        return f"m{s // 60}"
    if s < 86400:
        return f"h{s // 3600}"
    if s < 7 * 86400:
        return f"d{s // 86400}"
    return "d7+"


def percentile(values: list[int], p: float) -> float:
    ordered = sorted(values)
    position = p * (len(ordered) - 1)
    lo, hi = math.floor(position), math.ceil(position)
    return ordered[lo] + (position - lo) * (ordered[hi] - ordered[lo])


def describe(values: list[int]) -> tuple[Any, ...]:
    """count, mean, sample std (0 for one value), p50, p95, p99; None stats when empty."""
    if not values:
        return (0, None, None, None, None, None)
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return (
        len(values), statistics.fmean(values), std,
        percentile(values, 0.5), percentile(values, 0.95), percentile(values, 0.99),
    )  # fmt: skip


def annotate_reservations(events: list[Event]) -> None:
    """Set ``wait`` on reserves and ``run``/``run_queue``/``run_conn`` on ending events."""
    by_job: dict[int, list[Event]] = defaultdict(list)
    for event in events:
        event["wait"] = event["run"] = None
        if event["job"] is not None:
            by_job[event["job"]].append(event)
    for job_events in by_job.values():
        ready: int | None = None
        open_reserve: Event | None = None
        for e in job_events:
            name = e["event"]
            ends = name in ENDS or (name == "delete" and e["state"] == "reserved")
            if name == "reserve":
                e["wait"] = None if ready is None else max(0, e["ts"] - ready)
                open_reserve = e
            elif ends and open_reserve is not None:
                e["run"] = e["ts"] - open_reserve["ts"]
                e["run_queue"], e["run_conn"] = open_reserve["queue"], open_reserve["conn"]
                open_reserve = None
            if name in ("put", "release"):
                ready = e["ts"] + (e["delay_ms"] or 0)
            elif name in ("kick", "timeout"):
                ready = e["ts"]


def is_done(e: Event) -> bool:
    return (e["event"] == "delete" and e["state"] == "reserved") or e["event"] == "complete"


def tables(
    events: list[Event], day_from: date | None = None, day_to: date | None = None
) -> dict[str, list[tuple[Any, ...]]]:
    """Every output table as rows in the contract's column order."""
    events = [
        e for e in events
        if (day_from is None or utc_day(e["ts"]) >= day_from)
        and (day_to is None or utc_day(e["ts"]) <= day_to)
    ]  # fmt: skip
    annotate_reservations(events)
    return {
        "queue_daily": queue_daily(events),
        "histograms": histograms(events),
        "failures": failures(events),
        "throughput_hourly": throughput_hourly(events),
        "workers": workers(events),
        "jobs": jobs(events),
    }


def durations(events: list[Event]) -> list[tuple[str, date, str, int]]:
    out = []
    for e in events:
        if e["wait"] is not None:
            out.append((e["queue"], utc_day(e["ts"]), "wait", e["wait"]))
        if e["run"] is not None:
            out.append((e["run_queue"], utc_day(e["ts"]), "run", e["run"]))
    return out


def queue_daily(events: list[Event]) -> list[tuple[Any, ...]]:
    counts: dict[tuple[str, date], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for e in events:
        counts[(e["queue"], utc_day(e["ts"]))][e["event"]] += 1
    values: dict[tuple[str, date, str], list[int]] = defaultdict(list)
    for queue, day, kind, ms in durations(events):
        values[(queue, day, kind)].append(ms)
    return [
        (queue, day, *(c[name] for name in COUNTERS.values()),
         *describe(values[(queue, day, "wait")]), *describe(values[(queue, day, "run")]))
        for (queue, day), c in counts.items()
    ]  # fmt: skip


def histograms(events: list[Event]) -> list[tuple[Any, ...]]:
    counts: dict[tuple[str, date, str, str], int] = defaultdict(int)
    for queue, day, kind, ms in durations(events):
        counts[(queue, day, kind, bucket(ms))] += 1
    return [(*key, n) for key, n in counts.items()]


def failures(events: list[Event]) -> list[tuple[Any, ...]]:
    groups: dict[tuple[str, date, str], list[Any]] = {}
    for e in events:  # log order: the last assignment wins
        if e["event"] == "fail":
            key = (e["queue"], utc_day(e["ts"]), e["group"] if e["group"] is not None else "(none)")
            count = groups.get(key, [0, None])[0]
            groups[key] = [count + 1, e["message"]]
    return [(*key, n, message) for key, (n, message) in groups.items()]


def throughput_hourly(events: list[Event]) -> list[tuple[Any, ...]]:
    rows: dict[tuple[str, datetime], list[int]] = defaultdict(lambda: [0, 0, 0])
    for e in events:
        row = rows[(e["queue"], utc_hour(e["ts"]))]
        row[0] += e["event"] == "put"
        row[1] += e["event"] == "reserve"
        row[2] += is_done(e)
    return [(*key, *row) for key, row in rows.items()]


def workers(events: list[Event]) -> list[tuple[Any, ...]]:
    names: dict[int, str] = {}
    rows: dict[tuple[int, date], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for e in events:
        day = utc_day(e["ts"])
        if e["conn"] is not None and e["event"] == "reserve":
            rows[(e["conn"], day)][0] += 1
            name = e["worker"] if e["worker"] is not None else e["peer"]
            if name is not None:
                names[e["conn"]] = name
        if e["conn"] is not None and is_done(e):
            rows[(e["conn"], day)][1] += 1
        if e["run"] is not None and e["run_conn"] is not None:
            row = rows[(e["run_conn"], day)]
            row[2] += e["run"]
            row[3] += 1
    return [
        (conn, names.get(conn), day, r, d, busy) for (conn, day), (r, d, busy, _) in rows.items()
    ]


def jobs(events: list[Event]) -> list[tuple[Any, ...]]:
    by_job: dict[int, list[Event]] = defaultdict(list)
    for e in events:
        if e["job"] is not None:
            by_job[e["job"]].append(e)
    rows = []
    for job, evs in by_job.items():
        puts = [e["ts"] for e in evs if e["event"] == "put"]
        count = {n: sum(e["event"] == n for e in evs) for n in COUNTERS.values()}
        rows.append((
            job, evs[0]["queue"],
            datetime.fromtimestamp(puts[0] / 1000, tz=UTC) if puts else None,
            evs[-1]["event"], datetime.fromtimestamp(evs[-1]["ts"] / 1000, tz=UTC),
            count["reserve"], count["release"], count["timeout"], count["bury"], count["kick"],
            sum(e["wait"] or 0 for e in evs), sum(e["run"] or 0 for e in evs),
        ))  # fmt: skip
    return rows
