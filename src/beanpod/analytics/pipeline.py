"""The whole analysis: session, read, enrich, tables, report, with progress per stage."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pyspark
from pyspark import SparkConf, StorageLevel
from pyspark.errors import PySparkRuntimeError
from pyspark.sql import DataFrame, SparkSession

from beanpod.analytics import cds, compact, drawing, launch, read, report_rows, transforms, write

APP_NAME = "beanpod-analyze"
#: Settings applied only when beanpod starts Spark itself (not under spark-submit).
LOCAL_CONF = {
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "8",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.extraJavaOptions": "-XX:+UseParallelGC",
    # One machine: shuffle files stay in the page cache and the cached enriched frame fits
    # in memory, so compressing either only costs CPU (the window stage: 96 s -> 62 s at
    # 10 M events, docs/performance.md).
    "spark.shuffle.compress": "false",
    "spark.shuffle.spill.compress": "false",
    "spark.sql.inMemoryColumnarStorage.compressed": "false",
}


#: Below this much log the Parquet cache of parsed files costs more than it saves (writing
#: one small Parquet partition per hourly file dominated a first run of 10k events).
SMALL_LOG_BYTES = 32 * 1024 * 1024
#: Below this much log (known before Spark starts: ``beanpod analyze`` sums the files) the
#: run is mostly the JVM's start, class loading and query planning, not data: SMALL_CONF.
SMALL_SESSION_BYTES = 16 * 1024 * 1024
#: Overrides of LOCAL_CONF for a small log (10k events: 33-39 -> 14 CPU seconds, python +
#: JVM; docs/analytics.md). The JIT's optimising tier compiles more than such a run executes
#: (C1 only); one shuffle partition and no adaptive re-planning halve the Spark jobs; the
#: listing of more than 32 paths runs in the driver instead of as a Spark job; and
#: evaluating expressions interpreted costs less than compiling them (Janino) for so few rows.
SMALL_CONF = {
    "spark.driver.memory": "1g",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def is_small(log_bytes: int | None) -> bool:
    """A log known to be small enough for the short-run settings (and the CDS archive)."""
    return log_bytes is not None and log_bytes < SMALL_SESSION_BYTES


def session_conf(log_bytes: int | None = None) -> dict[str, str]:
    """The settings beanpod gives a Spark it starts, by the log's size (None: unknown)."""
    return {**LOCAL_CONF, **SMALL_CONF} if is_small(log_bytes) else dict(LOCAL_CONF)


@dataclass(frozen=True)
class Progress:
    """One progress report: a stage started (``seconds`` None) or finished."""

    stage: str
    index: int
    total: int
    seconds: float | None = None


ProgressCallback = Callable[[Progress], None]
STAGES = (
    "start Spark",
    "read events",
    "reservations",
    "plan, report data",
    *write.TABLES,
    "report",
)


def launched_by_spark_submit() -> bool:
    """True when a JVM gateway is already given to us (spark-submit, pyspark shell)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")


def build_session(
    master: str | None = None,
    quiet: bool = True,
    log_bytes: int | None = None,
    java_options: str = "",
) -> SparkSession:
    """The session: ``master`` if given, else spark-submit's, else ``local[*]``. ``quiet``
    keeps the JVM's start-up WARN lines off stderr (a local JVM logs only errors);
    ``log_bytes`` (the log's size, when known) chooses the settings (:func:`session_conf`);
    ``java_options`` are added to the driver JVM's.
    """
    if master is None and launched_by_spark_submit():
        builder = SparkSession.builder.appName(APP_NAME)
        spark = builder.config("spark.sql.session.timeZone", "UTC").getOrCreate()
    else:
        conf = own_conf(master, quiet, log_bytes, java_options)
        if quiet:  # the JVM's start-up warnings off stderr too
            launch.quiet_context(conf)
        spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def own_conf(
    master: str | None, quiet: bool, log_bytes: int | None, java_options: str = ""
) -> SparkConf:
    """The settings of a Spark beanpod starts itself (:func:`session_conf`, a temporary
    warehouse, UTC; with ``quiet``, a JVM logging only errors)."""
    settings = session_conf(log_bytes)
    if java_options:
        settings["spark.driver.extraJavaOptions"] += f" {java_options}"
    if quiet:
        settings["spark.driver.extraJavaOptions"] += (
            f" -Dlog4j2.configurationFile={QUIET_LOG4J.as_uri()}"
        )
    # The cache's catalog table (compact.py) makes Spark create its warehouse
    # directory; keep it out of the user's working directory.
    warehouse = tempfile.mkdtemp(prefix="beanpod-spark-warehouse-")
    atexit.register(shutil.rmtree, warehouse, True)
    settings["spark.sql.warehouse.dir"] = warehouse
    settings["spark.sql.session.timeZone"] = "UTC"
    conf = SparkConf().setMaster(master or "local[*]").setAppName(APP_NAME)
    return conf.setAll(list(settings.items()))


def start_session(
    master: str | None, quiet: bool, log_bytes: int | None
) -> tuple[SparkSession, cds.Archive | None]:
    """:func:`build_session`, with the CDS archive of Spark's classes for a small log (a
    start that fails with an existing archive is tried once more without it)."""
    archive = cds.prepare(spark_jars()) if is_small(log_bytes) else None
    if archive is None:
        return build_session(master, quiet, log_bytes), None
    try:
        return build_session(master, quiet, log_bytes, archive.java_options), archive
    except PySparkRuntimeError as exc:
        if "JAVA_GATEWAY_EXITED" not in str(exc) or not archive.failed_start():
            raise
    return build_session(master, quiet, log_bytes), None


def spark_jars() -> Path:
    """The jars Spark's JVM loads ($SPARK_HOME's, else the pyspark package's)."""
    return Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent, "jars")


def publish_archive(spark: SparkSession, archive: cds.Archive) -> None:
    """Stop the JVM of a run that writes the CDS archive, wait while it writes it at exit,
    and publish it (a later run's JVM maps it)."""
    proc = getattr(spark.sparkContext._gateway, "proc", None)
    jvm: Any = spark.sparkContext._jvm
    classpath = str(jvm.java.lang.System.getProperty("java.class.path"))
    spark.stop()
    if proc is None or proc.stdin is None:
        return
    proc.stdin.close()  # the JVM exits when its stdin ends
    try:
        archive.publish(proc.wait(cds.DUMP_TIMEOUT_S), classpath)
    except subprocess.TimeoutExpired:
        archive.publish(None, classpath)


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


def read_log(
    spark: SparkSession,
    events_uri: str,
    day_from: date | None,
    day_to: date | None,
    cache_uri: str | None = None,
    cache_min_bytes: int = 1,
) -> tuple[DataFrame, transforms.Partials]:
    """Valid events of the folders in the day range (unchanged files from ``cache_uri``,
    used when the files hold at least ``cache_min_bytes``) and their per-file partials
    (from the cache where it keeps them; not yet day-filtered).
    """
    files = read.list_event_files(spark, events_uri, day_from, day_to)
    if cache_uri is not None and sum(f.size for f in files) >= cache_min_bytes:
        return compact.read_events_cached(spark, files, cache_uri)
    events = read.events_of(spark, files)
    return events, transforms.partials_of_log(events)


def read_frame(
    spark: SparkSession,
    events_uri: str,
    day_from: date | None,
    day_to: date | None,
    cache_uri: str | None = None,
) -> DataFrame:
    """Valid events of the folders in the day range (unchanged files from ``cache_uri``)."""
    return read_log(spark, events_uri, day_from, day_to, cache_uri)[0]


def in_range(events: DataFrame, day_from: date | None, day_to: date | None) -> DataFrame:
    """Events in the day range with time columns (what the window reads)."""
    return transforms.filter_days(transforms.with_time_columns(events), day_from, day_to)


def build_tables(
    events: DataFrame,
    enriched: DataFrame,
    partials: transforms.Partials | None = None,
    hourly: DataFrame | None = None,
) -> dict[str, DataFrame]:
    """Every output table (lazy) from the in-range events, the enriched frame, the
    in-range partials and the hourly counters (each computed when not given)."""
    partials = partials if partials is not None else transforms.partials(events)
    hourly = hourly if hourly is not None else transforms.hourly_counters(enriched)
    return {
        "queue_daily": transforms.queue_daily(enriched, hourly),
        "histograms": transforms.histograms(transforms.durations(enriched)),
        "failures": transforms.failures_from_partials(partials.failures),
        "throughput_hourly": transforms.throughput_hourly(enriched, hourly),
        "workers": transforms.workers(enriched, transforms.worker_names(partials.worker_names)),
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
    compact_days: bool = True,
    quiet: bool = True,
    log_bytes: int | None = None,
) -> dict[str, float]:
    """Analyse the log at ``events_uri`` into ``out_uri``; return seconds per stage.

    With ``compact_days`` parsed log files are kept as Parquet under ``OUT/_events_parquet``.
    ``log_bytes`` (the log's size, if known before Spark starts) chooses the session's
    settings when ``spark`` is not given.
    """
    stages = _Stages(progress)
    archive = None
    drawer = drawing.Drawer()  # imports matplotlib while the JVM starts
    try:
        if spark is None:
            with stages.stage("start Spark"):  # the JVM's start and the SparkContext's
                spark, archive = start_session(master, quiet, log_bytes)
        _analyse(spark, stages, drawer, events_uri, out_uri, day_from, day_to, compact_days)
    finally:
        drawer.close()
    if archive is not None and archive.pending is not None:
        publish_archive(spark, archive)
    return stages.seconds


def _analyse(
    spark: SparkSession,
    stages: _Stages,
    drawer: drawing.Drawer,
    events_uri: str,
    out_uri: str,
    day_from: date | None,
    day_to: date | None,
    compact_days: bool,
) -> None:
    cache_uri = compact.cache_uri(out_uri) if compact_days else None
    kept: list[DataFrame] = []
    with stages.stage("read events"):
        read_events, read_partials = read_log(
            spark, events_uri, day_from, day_to, cache_uri, SMALL_LOG_BYTES
        )
        events = in_range(read_events, day_from, day_to)
        partials = read_partials.in_days(day_from, day_to)
        enriched = transforms.with_reservation_times(events)
        kept.append(enriched.persist(StorageLevel.MEMORY_AND_DISK))
    try:
        with stages.stage("reservations"):
            enriched.count()  # materialises the cache every table reads
        # queue_daily and throughput_hourly both roll up these (a few rows per queue-hour).
        hourly = transforms.hourly_counters(enriched).persist(StorageLevel.MEMORY_AND_DISK)
        kept.append(hourly)
        with stages.stage("plan, report data"):
            tables = build_tables(events, enriched, partials, hourly)
            for name in report_rows.DRAWN_TABLES:  # kept: the report reads them, writes too
                tables[name] = tables[name].persist(StorageLevel.MEMORY_AND_DISK)
                kept.append(tables[name])
            data = report_rows.collect(spark, out_uri, tables, enriched)
        page = drawer.draw(data)  # matplotlib draws while the JVM writes the tables
        _write_tables(stages, tables, out_uri)
        with stages.stage("report"):
            report_rows.write_text(spark, report_rows.report_uri(out_uri), page.result())
    finally:
        for frame in kept:
            frame.unpersist()


def _write_tables(stages: _Stages, tables: dict[str, DataFrame], out_uri: str) -> None:
    for name, table in tables.items():
        with stages.stage(name):
            write.write_table(table, out_uri, name, partitions=1 if name != "jobs" else None)
