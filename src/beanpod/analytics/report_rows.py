"""The rows the report draws, collected from the output tables (small: a few per queue
and day), and the page written next to them (any Hadoop-compatible URI)."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from beanpod.analytics.report_extras import ReportExtras, Row, collect_extras, rows_of
from beanpod.analytics.write import table_uri

MAX_WORKERS = 15
#: Threads collecting the report's rows (Spark jobs run side by side in one driver).
COLLECT_THREADS = 3
#: The output tables the report draws from (workers last: the report draws its top rows).
DRAWN_TABLES = ("queue_daily", "throughput_hourly", "histograms", "failures", "workers")


@dataclass
class ReportData:
    """The small slices of the output tables the report draws (plain Python rows)."""

    queue_daily: list[Row] = field(default_factory=list)
    throughput_hourly: list[Row] = field(default_factory=list)
    histograms: list[Row] = field(default_factory=list)
    failures: list[Row] = field(default_factory=list)
    workers: list[Row] = field(default_factory=list)
    extras: ReportExtras = field(default_factory=ReportExtras)


def collect(
    spark: SparkSession,
    out_uri: str,
    tables: Mapping[str, DataFrame] | None = None,
    enriched: DataFrame | None = None,
) -> ReportData:
    """Keep what the charts need from ``tables`` (else read the written tables back) and
    the extra series from ``enriched`` (the per-event frame; without it, the tables')."""

    def table(name: str) -> DataFrame:
        if tables is not None and name in tables:
            return tables[name]
        return spark.read.parquet(table_uri(out_uri, name))

    workers = (
        table("workers")
        .groupBy("conn", "worker")
        .agg(F.sum("busy_ms").alias("busy_ms"), F.sum("reserves").alias("reserves"))
        .orderBy(F.desc("busy_ms"), "conn")
        .limit(MAX_WORKERS)
    )
    # Each collect is a small Spark job whose cost is mostly the driver's planning and
    # scheduling: run side by side, they overlap (docs/analytics.md, "small logs").
    with ThreadPoolExecutor(COLLECT_THREADS, thread_name_prefix="beanpod-collect") as pool:
        lists = {name: pool.submit(rows_of, table(name)) for name in DRAWN_TABLES[:-1]}
        lists["workers"] = pool.submit(rows_of, workers)
        extras = collect_extras(enriched, pool) if enriched is not None else ReportExtras()
        return ReportData(
            queue_daily=lists["queue_daily"].result(),
            throughput_hourly=lists["throughput_hourly"].result(),
            histograms=lists["histograms"].result(),
            failures=lists["failures"].result(),
            workers=lists["workers"].result(),
            extras=extras,
        )


def write_text(spark: SparkSession, uri: str, text: str) -> None:
    """Write a small text file to any Hadoop-compatible URI."""
    jvm: Any = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    jsc: Any = spark.sparkContext._jsc
    hadoop_conf = jsc.hadoopConfiguration()
    stream = path.getFileSystem(hadoop_conf).create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def report_uri(out_uri: str) -> str:
    """``OUT/report.html``."""
    return f"{out_uri.rstrip('/')}/report.html"
