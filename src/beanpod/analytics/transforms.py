"""Pure ``DataFrame -> DataFrame`` transforms from events to the contract's tables.

Inputs are the rows of :func:`beanpod.analytics.read.read_events` with time columns
(:func:`with_time_columns`) and, for most tables, the narrow per-job window over them
(:func:`with_reservation_times`). UTC days and hours are computed from ``ts``
arithmetically, never through the session time zone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from beanpod.analytics.schema import (
    BURY,
    COMPLETE,
    DELETE,
    EVENT_NAMES,
    EVICT,
    FAIL,
    KICK,
    PUT,
    RELEASE,
    RESERVE,
    TIMEOUT,
)

MS_PER_HOUR = 3_600_000
MS_PER_DAY = 86_400_000
PERCENTILES = (0.5, 0.95, 0.99)
NO_GROUP = "(none)"

#: queue_daily counter column -> event name.
DAILY_COUNTERS = {
    "put": PUT,
    "reserves": RESERVE,
    "deletes": DELETE,
    "releases": RELEASE,
    "buries": BURY,
    "kicks": KICK,
    "timeouts": TIMEOUT,
    "completes": COMPLETE,
    "fails": FAIL,
    "evictions": EVICT,
}

#: What the per-job window reads. Narrow on purpose: it shuffles and sorts every event by
#: job, and each extra column (worker names, fail messages) costs there and in the cache.
WINDOW_INPUT = (
    "job", "ts", "file_rank", "line_id", "event", "state", "delay_ms", "queue", "conn", "day",
)  # fmt: skip
#: Columns of the enriched frame (:func:`with_reservation_times`): what the tables other
#: than ``failures`` and the worker names need, one row per event.
ENRICHED_COLUMNS = (
    "job", "ts", "day", "event", "queue", "conn", "pos", "is_done",
    "wait_ms", "run_ms", "run_queue", "run_conn",
)  # fmt: skip


def utc_day(ts: Column) -> Column:
    """The UTC date of a millisecond timestamp."""
    return F.date_add(F.lit(date(1970, 1, 1)), F.floor(ts / MS_PER_DAY).cast("int"))


def utc_hour(ts: Column) -> Column:
    """A millisecond timestamp truncated to its UTC hour, as a timestamp."""
    return F.timestamp_millis(ts - F.pmod(ts, F.lit(MS_PER_HOUR)))


def is_done(event: Column, state: Column) -> Column:
    """``delete`` from "reserved" or ``complete``."""
    return ((event == DELETE) & (state == "reserved")) | (event == COMPLETE)


def with_time_columns(events: DataFrame) -> DataFrame:
    """Add ``day`` (UTC date) and ``hour`` (UTC hour timestamp) from ``ts``."""
    return events.withColumns({"day": utc_day(F.col("ts")), "hour": utc_hour(F.col("ts"))})


def filter_days(events: DataFrame, day_from: date | None, day_to: date | None) -> DataFrame:
    """Keep events whose UTC ``day`` is within the inclusive range (None: open end)."""
    keep = F.lit(True)
    if day_from is not None:
        keep = keep & (F.col("day") >= F.lit(day_from))
    if day_to is not None:
        keep = keep & (F.col("day") <= F.lit(day_to))
    return events.where(keep)


def with_reservation_times(events: DataFrame) -> DataFrame:
    """Add wait (on reserve rows) and run (on the row ending a reservation) in one pass.

    One window per job, ordered by log order, computes for every row the job's latest
    ready time, the ts, queue and conn of its latest reserve, and whether the latest
    reserve-or-end before the row is a reserve (then an end row is the reservation's
    first end); a reserve's ``wait_ms`` and an end's ``run_ms`` (with the reserve's
    ``run_queue`` and ``run_conn``) follow from them.
    Needs ``day``; reads only :data:`WINDOW_INPUT` and returns :data:`ENRICHED_COLUMNS`.
    """
    ev, ts = F.col("event"), F.col("ts")
    reserve = ev == RESERVE
    ends = ev.isin(RELEASE, BURY, TIMEOUT, COMPLETE, FAIL) | (
        (ev == DELETE) & (F.col("state") == "reserved")
    )
    ready_at = F.when(ev.isin(PUT, RELEASE), ts + F.coalesce(F.col("delay_ms"), F.lit(0)))
    ready_at = ready_at.when(ev.isin(KICK, TIMEOUT), ts)

    order = Window.partitionBy("job").orderBy("ts", "file_rank", "line_id")
    upto = order.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    before = order.rowsBetween(Window.unboundedPreceding, -1)

    def last_reserve(column: str) -> Column:
        return F.last(F.when(reserve, F.col(column)), ignorenulls=True).over(upto)

    # Scalars, not structs of log-order keys: Spark computes each window function's input
    # before the shuffle, so these are what is shuffled and sorted (narrower rows).
    walked = events.select(
        *WINDOW_INPUT,
        F.last(ready_at, ignorenulls=True).over(upto).alias("_ready"),
        last_reserve("ts").alias("_res_ts"),
        last_reserve("queue").alias("_res_queue"),
        last_reserve("conn").alias("_res_conn"),
        F.last(F.when(reserve, F.lit(True)).when(ends, F.lit(False)), ignorenulls=True)
        .over(before)
        .alias("_open"),
        F.row_number().over(order).alias("pos"),
    )
    first_end = ends & F.coalesce(F.col("_open"), F.lit(False))
    return walked.select(
        *ENRICHED_COLUMNS[:7],  # job ... pos
        is_done(ev, F.col("state")).alias("is_done"),
        F.when(
            reserve & F.col("_ready").isNotNull(), F.greatest(F.lit(0), ts - F.col("_ready"))
        ).alias("wait_ms"),
        F.when(first_end, ts - F.col("_res_ts")).alias("run_ms"),
        F.when(first_end, F.col("_res_queue")).alias("run_queue"),
        F.when(first_end, F.col("_res_conn")).alias("run_conn"),
    )


def durations(enriched: DataFrame) -> DataFrame:
    """``queue``, ``day``, ``kind`` ("wait"/"run"), ``ms``: one row per wait and per run."""
    waits = enriched.where(F.col("wait_ms").isNotNull()).select(
        "queue", "day", F.lit("wait").alias("kind"), F.col("wait_ms").alias("ms")
    )
    runs = enriched.where(F.col("run_ms").isNotNull()).select(
        F.col("run_queue").alias("queue"),
        "day",
        F.lit("run").alias("kind"),
        F.col("run_ms").alias("ms"),
    )
    return waits.unionByName(runs)


def duration_stats(enriched: DataFrame) -> DataFrame:
    """Wait and run statistics side by side per queue and UTC day, in one aggregation.

    Count, mean, sample std (0 when count is 1) and exact percentiles; null when empty.
    """
    none = F.lit(None).cast("long")
    waits = enriched.where(F.col("wait_ms").isNotNull()).select(
        "queue", "day", "wait_ms", none.alias("run_ms")
    )
    runs = enriched.where(F.col("run_ms").isNotNull()).select(
        F.col("run_queue").alias("queue"), "day", none.alias("wait_ms"), "run_ms"
    )
    aggregates = []
    for kind in ("wait", "run"):
        ms = F.col(f"{kind}_ms")
        aggregates += [
            F.count(ms).alias(f"{kind}_count"),
            F.avg(ms).alias(f"{kind}_mean_ms"),
            F.stddev_samp(ms).alias(f"{kind}_std"),
            F.percentile(ms, list(PERCENTILES)).alias(f"{kind}_p"),
        ]
    stats = waits.unionByName(runs).groupBy("queue", "day").agg(*aggregates)
    columns: list[Column] = []
    for kind in ("wait", "run"):
        count, std = F.col(f"{kind}_count"), F.col(f"{kind}_std")
        columns += [
            count, F.col(f"{kind}_mean_ms"),
            F.when(count == 1, F.lit(0.0)).otherwise(std).alias(f"{kind}_std_ms"),
            *(F.col(f"{kind}_p")[i].alias(f"{kind}_p{round(q * 100)}_ms")
              for i, q in enumerate(PERCENTILES)),
        ]  # fmt: skip
    return stats.select("queue", "day", *columns)


def hourly_counters(enriched: DataFrame) -> DataFrame:
    """Per queue and UTC hour with any event: every :data:`DAILY_COUNTERS` counter and the
    done events. ``queue_daily``'s counters and ``throughput_hourly`` are both rolled up
    from it, so the enriched frame is scanned once for the two (cache it when both use it).
    """
    ev = F.col("event")
    return enriched.groupBy("queue", utc_hour(F.col("ts")).alias("hour")).agg(
        *(F.count_if(ev == name).alias(column) for column, name in DAILY_COUNTERS.items()),
        F.count_if(F.col("is_done")).alias("done"),
    )


def queue_daily(enriched: DataFrame, hourly: DataFrame | None = None) -> DataFrame:
    """One row per queue and UTC day with any event: counters and wait/run statistics.

    The counters are summed from ``hourly`` (:func:`hourly_counters`, computed if not given).
    """
    hourly = hourly if hourly is not None else hourly_counters(enriched)
    day = utc_day(F.unix_millis(F.col("hour"))).alias("day")  # UTC hours never span days
    counters = hourly.groupBy("queue", day).agg(*(F.sum(c).alias(c) for c in DAILY_COUNTERS))
    daily = counters.join(duration_stats(enriched), ["queue", "day"], "left")
    return daily.fillna(0, subset=["wait_count", "run_count"]).select(
        "queue", "day", *DAILY_COUNTERS,
        *(f"{kind}_{n}" for kind in ("wait", "run")
          for n in ("count", "mean_ms", "std_ms", "p50_ms", "p95_ms", "p99_ms")),
    )  # fmt: skip


def qless_bucket(ms: Column) -> Column:
    """qless histogram bucket of a duration in ms: s0..s59, m1..m59, h1..h23, d1..d6, d7+."""
    s = F.floor(ms / 1000).cast("long")

    def label(prefix: str, n: Column) -> Column:
        return F.concat(F.lit(prefix), n.cast("string"))

    return (
        F.when(s < 60, label("s", s))
        .when(s < 3600, label("m", F.floor(s / 60)))
        .when(s < 86400, label("h", F.floor(s / 3600)))
        .when(s < 7 * 86400, label("d", F.floor(s / 86400)))
        .otherwise(F.lit("d7+"))
    )


def histograms(durations_df: DataFrame) -> DataFrame:
    """Non-zero qless buckets per queue, day and kind."""
    bucketed = durations_df.withColumn("bucket", qless_bucket(F.col("ms")))
    counted = bucketed.groupBy("queue", "day", "kind", "bucket").agg(F.count("*").alias("count"))
    return counted.select("queue", "day", "kind", "bucket", "count")


def _latest_in_file(
    rows: DataFrame, keys: list[str | Column], value: str, name: str, *more: Column
) -> DataFrame:
    """Per ``keys`` (a file among them): ``more`` aggregates and the latest row's ``ts``,
    ``line_id`` and ``value`` (as ``last_ts``, ``last_line_id``, ``name``). ``(ts,
    line_id)`` is unique within a file, so the struct's maximum is the latest row."""
    grouped = rows.groupBy(*keys).agg(*more, F.max(F.struct("ts", "line_id", value)).alias("_l"))
    return grouped.select(
        *(c for c in grouped.columns if c != "_l"),
        F.col("_l.ts").alias("last_ts"),
        F.col("_l.line_id").alias("last_line_id"),
        F.col(f"_l.{value}").alias(name),
    )


def _merge_order() -> Column:
    """Log order (ts, file, line) of partial rows that carry ``file_rank``."""
    return F.struct("last_ts", "file_rank", "last_line_id")


def failure_partials(events: DataFrame, by: tuple[str, ...] = ("file_rank",)) -> DataFrame:
    """Fails per file (``by``), queue, UTC day and group, with the file's latest fail.

    Partial, mergeable by :func:`failures_from_partials`: the Parquet cache keeps one per
    log file, so a run need not scan every event for the few fails.
    Reads the log's rows with ``day`` (not the enriched frame, which has no messages).
    """
    fails = events.where(F.col("event") == FAIL)
    group = F.coalesce(F.col("group"), F.lit(NO_GROUP)).alias("group")
    keys: list[str | Column] = [*by, "queue", "day", group]
    return _latest_in_file(fails, keys, "message", "last_message", F.count("*").alias("count"))


@dataclass(frozen=True)
class Partials:
    """The per-file partial aggregates of the log (rows carry ``file_rank`` and ``day``)."""

    failures: DataFrame  # failure_partials
    worker_names: DataFrame  # worker_name_partials

    def in_days(self, day_from: date | None, day_to: date | None) -> Partials:
        return Partials(
            filter_days(self.failures, day_from, day_to),
            filter_days(self.worker_names, day_from, day_to),
        )

    def union(self, other: Partials) -> Partials:
        return Partials(
            self.failures.unionByName(other.failures),
            self.worker_names.unionByName(other.worker_names),
        )


def partials(events: DataFrame) -> Partials:
    """Every partial computed from the log's rows (with ``day``, ``file_rank``, ``line_id``)."""
    return Partials(failure_partials(events), worker_name_partials(events))


def partials_of_log(events: DataFrame) -> Partials:
    """:func:`partials` of the rows as read (they get their time columns here)."""
    return partials(with_time_columns(events))


def failures_from_partials(partials: DataFrame) -> DataFrame:
    """The ``failures`` table from :func:`failure_partials` rows that carry ``file_rank``."""
    grouped = partials.groupBy("queue", "day", "group").agg(
        F.sum("count").alias("count"),
        F.max_by("last_message", _merge_order()).alias("last_message"),
    )
    return grouped.select("queue", "day", "group", "count", "last_message")


def failures(events: DataFrame) -> DataFrame:
    """Fails per queue, day and group, with the message of the group's last fail that day."""
    return failures_from_partials(failure_partials(events))


def throughput_hourly(enriched: DataFrame, hourly: DataFrame | None = None) -> DataFrame:
    """Puts, reserves and done events per queue and UTC hour with any event (from
    ``hourly``, :func:`hourly_counters`, computed if not given)."""
    hourly = hourly if hourly is not None else hourly_counters(enriched)
    return hourly.select("queue", "hour", "put", "reserves", "done")


def worker_name_partials(events: DataFrame, by: tuple[str, ...] = ("file_rank",)) -> DataFrame:
    """Per file (``by``), connection and UTC day: the worker name of the latest reserve,
    else its peer address (a beanstalkd client gives no name; the server knows where it
    connects from).

    Partial like :func:`failure_partials` (the cache keeps one per log file); merged by
    :func:`worker_names`. Reads the log's rows (``worker``, ``peer``) with ``day``.
    """
    name = F.coalesce(F.col("worker"), F.col("peer"))
    named = events.where((F.col("event") == RESERVE) & name.isNotNull() & F.col("conn").isNotNull())
    return _latest_in_file(
        named.withColumn("worker", name), [*by, "conn", "day"], "worker", "worker"
    )


def worker_names(partials: DataFrame) -> DataFrame:
    """``conn``, ``worker``: the name its latest reserve gave, from name partials."""
    return partials.groupBy("conn").agg(F.max_by("worker", _merge_order()).alias("worker"))


def workers(enriched: DataFrame, names: DataFrame) -> DataFrame:
    """Per connection and UTC day: reserves, done events and busy time of its reservations.

    Worker names come from ``names`` (:func:`worker_names`).
    """
    own = enriched.where(F.col("conn").isNotNull()).select(
        "conn",
        "day",
        (F.col("event") == RESERVE).cast("long").alias("r"),
        F.col("is_done").cast("long").alias("d"),
        F.lit(None).cast("long").alias("run_ms"),
    )
    runs = enriched.where(F.col("run_conn").isNotNull()).select(
        F.col("run_conn").alias("conn"), "day", F.lit(0).cast("long").alias("r"),
        F.lit(0).cast("long").alias("d"), "run_ms",
    )  # fmt: skip
    per_day = (
        own.unionByName(runs)
        .groupBy("conn", "day")
        .agg(
            F.sum("r").alias("reserves"),
            F.sum("d").alias("done"),
            F.coalesce(F.sum("run_ms"), F.lit(0)).alias("busy_ms"),
            F.count("run_ms").alias("runs"),
        )
        .where((F.col("reserves") > 0) | (F.col("done") > 0) | (F.col("runs") > 0))
    )
    joined = per_day.join(names, "conn", "left")
    return joined.select("conn", "worker", "day", "reserves", "done", "busy_ms")


def jobs(enriched: DataFrame) -> DataFrame:
    """One row per job id: its queue, first put, last event and per-job totals.

    Every aggregation buffer is a number, so Spark generates code for the aggregation
    (a string picked by ``min_by``/``max_by`` makes it interpreted, twice the CPU): the
    last event is picked as its index in :data:`EVENT_NAMES`, and the queue comes from
    the job's first row (``pos`` 1) by a join on ``job``, which both sides are already
    clustered and ordered by when the enriched frame is cached.
    """
    ev, pos = F.col("event"), F.col("pos")
    names = F.array(*(F.lit(name) for name in EVENT_NAMES))
    with_job = enriched.where(F.col("job").isNotNull())
    per_job = with_job.groupBy("job").agg(
        F.max_by(F.array_position(names, ev), pos).alias("last_event_index"),
        F.min(F.when(ev == PUT, F.col("ts"))).alias("put_ms"),
        F.max("ts").alias("last_ms"),
        F.count_if(ev == RESERVE).alias("reserves"),
        F.count_if(ev == RELEASE).alias("releases"),
        F.count_if(ev == TIMEOUT).alias("timeouts"),
        F.count_if(ev == BURY).alias("buries"),
        F.count_if(ev == KICK).alias("kicks"),
        F.coalesce(F.sum("wait_ms"), F.lit(0)).alias("total_wait_ms"),
        F.coalesce(F.sum("run_ms"), F.lit(0)).alias("total_run_ms"),
    )
    first_queue = with_job.where(pos == 1).select("job", "queue")
    return per_job.join(first_queue, "job").select(
        "job", "queue", F.timestamp_millis("put_ms").alias("put_ts"),
        F.get(names, F.col("last_event_index") - 1).alias("last_event"),
        F.timestamp_millis("last_ms").alias("last_ts"),
        "reserves", "releases", "timeouts", "buries", "kicks", "total_wait_ms", "total_run_ms",
    )  # fmt: skip
