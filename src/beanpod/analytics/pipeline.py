"""The whole analysis: session, read, enrich, tables, report, with progress per stage."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from beanpod.analytics import read, report, transforms, write

APP_NAME = "beanpod-analyze"
#: Settings applied only when beanpod starts Spark itself (not under spark-submit).
LOCAL_CONF = {
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
}


@dataclass(frozen=True)
class Progress:
    """One progress report: a stage started (``seconds`` None) or finished."""

    stage: str
    index: int
    total: int
    seconds: float | None = None


ProgressCallback = Callable[[Progress], None]
STAGES = ("read events", "reservations", *write.TABLES, "report")


def launched_by_spark_submit() -> bool:
    """True when a JVM gateway is already given to us (spark-submit, pyspark shell)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def build_session(master: str | None = None) -> SparkSession:
    """The session: ``master`` if given, else spark-submit's, else ``local[*]``."""
    builder = SparkSession.builder.appName(APP_NAME)
    if master is not None or not launched_by_spark_submit():
        builder = builder.master(master or "local[*]")
        for key, value in LOCAL_CONF.items():
            builder = builder.config(key, value)
    builder = builder.config("spark.sql.session.timeZone", "UTC")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class _Stages:
    """Times named stages and reports them to a callback."""

    def __init__(self, callback: ProgressCallback | None) -> None:
        self.callback = callback
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        index = STAGES.index(name) + 1
        if self.callback is not None:
            self.callback(Progress(name, index, len(STAGES)))
        started = time.perf_counter()
        yield
        self.seconds[name] = time.perf_counter() - started
        if self.callback is not None:
            self.callback(Progress(name, index, len(STAGES), self.seconds[name]))


def enriched_events(
    spark: SparkSession, events_uri: str, day_from: date | None, day_to: date | None
) -> DataFrame:
    """Valid events in the day range with time columns and reservation wait/run."""
    events = read.read_events(spark, events_uri, day_from, day_to)
    in_range = transforms.filter_days(transforms.with_time_columns(events), day_from, day_to)
    return transforms.with_reservation_times(in_range)


def build_tables(enriched: DataFrame) -> dict[str, DataFrame]:
    """Every output table from the enriched events (lazy)."""
    durations = transforms.durations(enriched)
    stats = transforms.duration_stats(durations)
    return {
        "queue_daily": transforms.queue_daily(enriched, stats),
        "histograms": transforms.histograms(durations),
        "failures": transforms.failures(enriched),
        "throughput_hourly": transforms.throughput_hourly(enriched),
        "workers": transforms.workers(enriched),
        "jobs": transforms.jobs(enriched),
    }


def run(
    events_uri: str,
    out_uri: str,
    master: str | None = None,
    day_from: date | None = None,
    day_to: date | None = None,
    progress: ProgressCallback | None = None,
    spark: SparkSession | None = None,
) -> dict[str, float]:
    """Analyse the log at ``events_uri`` into ``out_uri``; return seconds per stage."""
    spark = spark or build_session(master)
    stages = _Stages(progress)
    with stages.stage("read events"):
        enriched = enriched_events(spark, events_uri, day_from, day_to)
        enriched = enriched.persist(StorageLevel.MEMORY_AND_DISK)
    with stages.stage("reservations"):
        enriched.count()
    try:
        for name, table in build_tables(enriched).items():
            with stages.stage(name):
                write.write_table(table, out_uri, name, partitions=1 if name != "jobs" else None)
        with stages.stage("report"):
            report.write_report(spark, out_uri)
    finally:
        enriched.unpersist()
    return stages.seconds
