"""Each transform on tiny hand-built frames, compared with explicit expected frames."""

from __future__ import annotations

from datetime import UTC, date, datetime

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual
from tests.support.analytics.frames import DAY_MS, T0, enriched_df, ev, events_df, timed_df

from beanpod.analytics import transforms

D1, D2 = date(2025, 1, 1), date(2025, 1, 2)


def test_with_reservation_times_one_pass_per_job(spark: SparkSession) -> None:
    rows = [
        ev(T0, "put", 1, delay_ms=5_000),
        ev(T0 + 7_000, "reserve", 1, conn=2),  # ready at +5 s: wait 2 s
        ev(T0 + 8_000, "release", 1, conn=2, delay_ms=1_000),  # run 1 s; ready at +9 s
        ev(T0 + 8_500, "reserve", 1, conn=3),  # reserved before due: wait 0
        ev(T0 + 9_000, "touch", 1, conn=3),
        ev(T0 + 68_500, "timeout", 1, conn=None),  # run 60 s, ready now
        ev(T0 + 68_500, "reserve", 1, conn=2, worker="w"),  # same ms as the timeout: wait 0
        ev(T0 + 68_500, "delete", 1, conn=2, state="reserved"),  # same ms again: run 0
        ev(T0 + 70_000, "delete", 1, conn=2, state="reserved"),  # second end: no run
        ev(T0, "reserve", 2, queue="r", conn=4),  # no put in the log: no wait
        ev(T0 + 10, "bury", 2, queue="r", conn=4),
        ev(T0 + 20, "kick", 2, queue="r", conn=1),
        ev(T0 + 50, "reserve", 2, queue="r", conn=4),
    ]
    actual = enriched_df(spark, rows).select(
        "job", "ts", "event", "wait_ms", "run_ms", "run_queue", "run_conn"
    )
    expected = spark.createDataFrame(
        [
            (1, T0, "put", None, None, None, None),
            (1, T0 + 7_000, "reserve", 2_000, None, None, None),
            (1, T0 + 8_000, "release", None, 1_000, "q", 2),
            (1, T0 + 8_500, "reserve", 0, None, None, None),
            (1, T0 + 9_000, "touch", None, None, None, None),
            (1, T0 + 68_500, "timeout", None, 60_000, "q", 3),
            (1, T0 + 68_500, "reserve", 0, None, None, None),
            (1, T0 + 68_500, "delete", None, 0, "q", 2),
            (1, T0 + 70_000, "delete", None, None, None, None),
            (2, T0, "reserve", None, None, None, None),
            (2, T0 + 10, "bury", None, 10, "r", 4),
            (2, T0 + 20, "kick", None, None, None, None),
            (2, T0 + 50, "reserve", 30, None, None, None),
        ],
        actual.schema,
    )
    assertDataFrameEqual(actual, expected)


def test_file_and_line_break_ties_in_ts(spark: SparkSession) -> None:
    rows = [ev(T0, "put", 1), ev(T0, "reserve", 1), ev(T0, "delete", 1, state="reserved")]
    frame = events_df(spark, rows[::-1])  # written in reverse line order ...
    ranked = frame.withColumn("file_rank", 2 - F.col("line_id"))  # ... but in later files
    enriched = transforms.with_reservation_times(transforms.with_time_columns(ranked))
    actual = enriched.select("event", "pos", "wait_ms", "run_ms")
    expected = spark.createDataFrame(
        [("put", 1, None, None), ("reserve", 2, 0, None), ("delete", 3, None, 0)], actual.schema
    )
    assertDataFrameEqual(actual, expected)


def test_qless_wait_statistics(spark: SparkSession) -> None:
    """qless's check: waits of 0..19 s have mean 9500 ms and sample std 5916.0797 ms."""
    rows = [ev(T0, "put", job) for job in range(20)]
    rows += [ev(T0 + job * 1_000, "reserve", job, conn=7) for job in range(20)]
    actual = transforms.queue_daily(enriched_df(spark, rows)).select(
        "queue", "day", "put", "reserves", "wait_count", "wait_mean_ms", "wait_std_ms",
        "wait_p50_ms", "wait_p95_ms", "wait_p99_ms", "run_count", "run_mean_ms", "run_std_ms",
    )  # fmt: skip
    expected = spark.createDataFrame(
        [("q", D1, 20, 20, 20, 9500.0, 5916.079783099616, 9500.0, 18050.0, 18810.0, 0, None,
          None)],
        actual.schema,
    )  # fmt: skip
    assertDataFrameEqual(actual, expected, rtol=1e-12)


def test_queue_daily_counters_days_and_single_value_std(spark: SparkSession) -> None:
    rows = [
        ev(T0 + DAY_MS - 1_000, "put", 1),
        ev(T0 + DAY_MS - 500, "reserve", 1, conn=2),  # wait 500 ms on D1
        ev(T0 + DAY_MS + 1_500, "delete", 1, conn=2, state="reserved"),  # run 2 s on D2
        ev(T0 + DAY_MS + 2_000, "pause", None, conn=9, delay_ms=10),
        ev(T0 + DAY_MS + 3_000, "evict", 2, conn=None),
    ]
    actual = transforms.queue_daily(enriched_df(spark, rows))
    expected = spark.createDataFrame(
        [
            ("q", D1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0,
             1, 500.0, 0.0, 500.0, 500.0, 500.0, 0, None, None, None, None, None),
            ("q", D2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1,
             0, None, None, None, None, None, 1, 2000.0, 0.0, 2000.0, 2000.0, 2000.0),
        ],
        actual.schema,
    )  # fmt: skip
    assertDataFrameEqual(actual, expected)


def test_histograms_use_qless_buckets(spark: SparkSession) -> None:
    waits = [0, 999, 1_000, 59_999, 60_000, 3_599_999, 3_600_000, 86_400_000, 604_800_000]
    rows = [ev(T0, "put", job) for job in range(len(waits))]
    rows += [ev(T0 + w, "reserve", job) for job, w in enumerate(waits)]
    actual = transforms.histograms(transforms.durations(enriched_df(spark, rows)))
    day = {w: date(2025, 1, 1 + (w // DAY_MS)) for w in waits}
    buckets = ["s0", "s0", "s1", "s59", "m1", "m59", "h1", "d1", "d7+"]
    counts: dict[tuple[date, str], int] = {}
    for w, b in zip(waits, buckets, strict=True):
        counts[(day[w], b)] = counts.get((day[w], b), 0) + 1
    expected = spark.createDataFrame(
        [("q", d, "wait", b, n) for (d, b), n in counts.items()], actual.schema
    )
    assertDataFrameEqual(actual, expected)


def test_failures_group_none_and_last_message(spark: SparkSession) -> None:
    rows = [
        ev(T0, "fail", 1, group="oom", message="first"),
        ev(T0 + 1, "fail", 2, group="oom", message=None),  # last one has no message
        ev(T0 + 2, "fail", 3, group=None, message="x"),
        ev(T0 + 3, "fail", 4, group=None, message="y"),
        ev(T0 + DAY_MS, "fail", 5, group="oom", message="next day"),
    ]
    actual = transforms.failures(timed_df(spark, rows))
    expected = spark.createDataFrame(
        [("q", D1, "oom", 2, None), ("q", D1, "(none)", 2, "y"), ("q", D2, "oom", 1, "next day")],
        actual.schema,
    )
    assertDataFrameEqual(actual, expected)


def test_partials_of_two_files_merge_in_log_order(spark: SparkSession) -> None:
    file0 = timed_df(spark, [
        ev(T0, "fail", 1, group="g", message="a"),
        ev(T0 + 5, "fail", 2, group="g", message="b"),
        ev(T0 + 5, "reserve", 3, conn=7, worker="w0"),
        ev(T0 + 9, "reserve", 6, conn=8, worker="late"),
    ])  # fmt: skip
    file1 = timed_df(spark, [
        ev(T0 + 5, "fail", 3, group="g", message="c"),  # same ms as "b", a later file
        ev(T0 + 1, "fail", 4, group="g", message="d"),
        ev(T0 + 5, "reserve", 4, conn=7, worker="w1"),  # same ms as "w0", a later file
        ev(T0 + 1, "reserve", 5, conn=8, worker="early"),  # older than "late"
    ]).withColumn("file_rank", F.lit(1).cast("long"))  # fmt: skip
    first, second = transforms.partials(file0), transforms.partials(file1)
    failures = transforms.failures_from_partials(first.failures.unionByName(second.failures))
    expected = spark.createDataFrame([("q", D1, "g", 4, "c")], failures.schema)
    assertDataFrameEqual(failures, expected)
    assertDataFrameEqual(transforms.failures(file0.unionByName(file1)), expected)
    names = transforms.worker_names(first.worker_names.unionByName(second.worker_names))
    assertDataFrameEqual(names, spark.createDataFrame([(7, "w1"), (8, "late")], names.schema))


def test_throughput_hourly(spark: SparkSession) -> None:
    rows = [
        ev(T0 - 1, "put", 1),
        ev(T0, "reserve", 1),
        ev(T0 + 10, "complete", 1, bytes=2),
        ev(T0 + 3_600_000, "put", 2),
        ev(T0 + 3_600_001, "reserve", 2),
        ev(T0 + 3_600_002, "delete", 2, state="reserved"),
        ev(T0 + 3_600_003, "delete", 1, state="buried"),  # not done
    ]
    actual = transforms.throughput_hourly(enriched_df(spark, rows))
    hour = [datetime(2024, 12, 31, 23, tzinfo=UTC), datetime(2025, 1, 1, 0, tzinfo=UTC),
            datetime(2025, 1, 1, 1, tzinfo=UTC)]  # fmt: skip
    expected = spark.createDataFrame(
        [("q", hour[0], 1, 0, 0), ("q", hour[1], 0, 1, 1), ("q", hour[2], 1, 1, 1)],
        actual.schema,
    )
    assertDataFrameEqual(actual, expected)


def test_workers_busy_time_goes_to_the_reserver(spark: SparkSession) -> None:
    rows = [
        ev(T0, "reserve", 1, conn=5, worker="old-name"),
        ev(T0 + 1_000, "timeout", 1, conn=None),  # timer-driven: conn 5 was busy 1 s
        ev(T0 + 2_000, "reserve", 1, conn=5, worker=None),
        ev(T0 + DAY_MS, "delete", 1, conn=6, state="reserved"),  # another conn deletes it
        ev(T0 + DAY_MS, "reserve", 2, conn=5, worker="new-name"),
    ]
    names = transforms.worker_names(transforms.worker_name_partials(timed_df(spark, rows)))
    actual = transforms.workers(enriched_df(spark, rows), names)
    expected = spark.createDataFrame(
        [
            (5, "new-name", D1, 2, 0, 1_000),
            (5, "new-name", D2, 1, 0, DAY_MS - 2_000),
            (6, None, D2, 0, 1, 0),
        ],
        actual.schema,
    )
    assertDataFrameEqual(actual, expected)


def test_jobs(spark: SparkSession) -> None:
    rows = [
        ev(T0, "put", 1, queue="a", delay_ms=0),
        ev(T0 + 100, "reserve", 1, queue="a"),
        ev(T0 + 300, "release", 1, queue="a", delay_ms=0),
        ev(T0 + 400, "reserve", 1, queue="a"),
        ev(T0 + 1_000, "bury", 1, queue="a"),
        ev(T0 + 2_000, "kick", 1, queue="a", **{"from": "buried"}),
        ev(T0 + 5, "reserve", 2, queue="b"),  # put before the log started
        ev(T0 + 9, "put", 2, queue="b"),  # odd, but put_ts is its first put
    ]
    actual = transforms.jobs(enriched_df(spark, rows))
    ts = lambda ms: datetime.fromtimestamp(ms / 1000, tz=UTC)  # noqa: E731
    expected = spark.createDataFrame(
        [
            (1, "a", ts(T0), "kick", ts(T0 + 2_000), 2, 1, 0, 1, 1, 200, 800),
            (2, "b", ts(T0 + 9), "put", ts(T0 + 9), 1, 0, 0, 0, 0, 0, 0),
        ],
        actual.schema,
    )
    assertDataFrameEqual(actual, expected)


def test_utc_day_ignores_session_time_zone(spark: SparkSession) -> None:
    spark.conf.set("spark.sql.session.timeZone", "Pacific/Kiritimati")  # UTC+14
    try:
        actual = transforms.with_time_columns(events_df(spark, [ev(T0 - 1, "put", 1)]))
        assert actual.select("day").first() == (date(2024, 12, 31),)
        hour = actual.select((F.col("hour").cast("long")).alias("s")).first()
        assert hour == ((T0 - 3_600_000) // 1000,)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_filter_days(spark: SparkSession) -> None:
    rows = [ev(T0 + n * DAY_MS, "put", n) for n in range(4)]
    timed = transforms.with_time_columns(events_df(spark, rows))
    actual = transforms.filter_days(timed, date(2025, 1, 2), date(2025, 1, 3)).select("job")
    assertDataFrameEqual(actual, spark.createDataFrame([(1,), (2,)], actual.schema))
