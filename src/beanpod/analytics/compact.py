"""Keep the parsed JSON-lines log as Parquet, one partition per log file, and read through it.

The server appends JSON lines (cheap, crash-tolerant); parsing them is the pipeline's most
expensive read. Each log file's parsed, validated events are stored once as Parquet under
the cache folder (``OUT/_events_parquet`` by default), in ``date=D/file=NAME/``, and each
``date=`` folder gets a manifest of the files stored (name -> size, modification time).
A run parses only the files that are new or changed since (log files are append-only, so
a file's size and modification time say whether it changed: the file being written is
re-parsed while it grows) and reads every other file from Parquet, so the events are
exactly what :func:`beanpod.analytics.read.read_events` gives.

Every partition is stored in :data:`BUCKETS` files by hash of ``job`` (Spark's bucketing,
through a catalog table over the cache folder that each run declares afresh): the per-job
window then finds the events already clustered by job and needs no shuffle.

Beside the events, each file's partial aggregates (:class:`beanpod.analytics.transforms.
Partials`: its fails and its connections' latest worker names) are kept under
``_partials/NAME/date=D/file=NAME/``: the tables built from them then read a few rows per
file instead of scanning every event for the few that matter.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from beanpod.analytics import transforms
from beanpod.analytics.read import (
    FOLDER_RE,
    EventFile,
    empty_events,
    events_of,
    file_key,
    file_ranks,
    literal_frame,
    parse_lines,
    read_lines,
    with_file_rank,
)
from beanpod.analytics.schema import spark_schema

CACHE_DIR = "_events_parquet"
MANIFEST = "_beanpod_manifest.json"
#: Layout version in each manifest: a day stored by another version is parsed again
#: (1, unversioned: one plain Parquet partition per file; 2: bucketed by job; 3: with
#: each file's partial aggregates; 4: with the reserve events' ``peer``).
CACHE_VERSION = 4
#: Files per partition, by hash of ``job``; the window runs in this many tasks.
BUCKETS = 8
PARTITIONS = ("date", "file")
PARTIALS_DIR = "_partials"  # "_": not a partition folder of the events table
#: Partial aggregates kept per file: name -> builder (events with ``day``, grouping columns).
PARTIAL_BUILDERS: dict[str, Callable[[DataFrame, tuple[str, ...]], DataFrame]] = {
    "failures": transforms.failure_partials,
    "worker_names": transforms.worker_name_partials,
}
#: File names usable verbatim as partition values (Spark escapes others in paths).
SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def cache_uri(out_uri: str) -> str:
    """The default cache folder: ``OUT/_events_parquet``."""
    return f"{out_uri.rstrip('/')}/{CACHE_DIR}"


def _name(f: EventFile) -> str:
    return f.path.rsplit("/", 1)[-1]


def _stamp(f: EventFile) -> list[int]:
    return [f.size, f.mtime_ms]


def _filesystem(spark: SparkSession, uri: str) -> tuple[Any, Any]:
    jvm: Any = spark.sparkContext._jvm
    jsc: Any = spark.sparkContext._jsc
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(jsc.hadoopConfiguration()), path


def read_small_text(spark: SparkSession, uri: str) -> str | None:
    """A small text file's content through the Hadoop FileSystem (None if absent)."""
    fs, path = _filesystem(spark, uri)
    if not fs.exists(path):
        return None
    jvm: Any = spark.sparkContext._jvm
    stream = fs.open(path)
    try:
        return str(jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
    finally:
        stream.close()


def write_small_text(spark: SparkSession, uri: str, text: str) -> None:
    """Write a small text file through the Hadoop FileSystem (overwriting)."""
    fs, path = _filesystem(spark, uri)
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def _stored(spark: SparkSession, cache: str, folder: str) -> dict[str, list[int]]:
    """The files a day's manifest lists (none when absent, unreadable or another layout)."""
    text = read_small_text(spark, f"{cache}/{folder}/{MANIFEST}")
    try:
        stored = json.loads(text) if text else {}
    except ValueError:
        return {}
    if not isinstance(stored, dict) or stored.get("version") != CACHE_VERSION:
        return {}
    files = stored.get("files")
    return files if isinstance(files, dict) else {}


def _manifest(group: list[EventFile]) -> str:
    files = {_name(f): _stamp(f) for f in group}
    return json.dumps({"version": CACHE_VERSION, "files": files})


def cacheable_folders(files: list[EventFile]) -> dict[str, list[EventFile]]:
    """Files in ``date=YYYY-MM-DD`` folders with plain names, by folder (others: parsed)."""
    by_folder: dict[str, list[EventFile]] = defaultdict(list)
    for f in files:
        if FOLDER_RE.match(f.folder) and SAFE_NAME_RE.match(_name(f)):
            by_folder[f.folder].append(f)
    return by_folder


def _partition(cache: str, f: EventFile) -> str:
    return f"{cache}/{f.folder}/file={_name(f)}"


def _partials_uri(cache: str, name: str) -> str:
    return f"{cache}/{PARTIALS_DIR}/{name}"


def _file_key_column() -> Column:
    """The table's ``date`` and ``file`` partition values as a :func:`file_key`."""
    return F.concat(F.lit("date="), F.col("date"), F.lit("/"), F.col("file"))


def table_schema() -> StructType:
    """The cache's columns: the event fields, ``line_id``, ``key`` and the partitions."""
    fields = [f for f in spark_schema().fields if f.name != "v"]
    extra = [StructField("line_id", LongType()), StructField("key", StringType())]
    return StructType(fields + extra + [StructField(p, StringType()) for p in PARTITIONS])


def _declare_table(spark: SparkSession, cache: str) -> str:
    """(Re)declare the catalog table over ``cache``: partitioned by file, bucketed by job.

    External (dropping it keeps the files); its partitions are found on disk, and an
    overwriting insert replaces only the partitions it writes.
    """
    name = "beanpod_events_" + hashlib.sha1(cache.encode()).hexdigest()[:16]
    columns = ", ".join(f"`{f.name}` {f.dataType.simpleString()}" for f in table_schema())
    location = cache.replace("\\", "\\\\").replace("'", "\\'")
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(
        f"CREATE TABLE {name} ({columns}) USING parquet PARTITIONED BY ({', '.join(PARTITIONS)})"
        f" CLUSTERED BY (job) INTO {BUCKETS} BUCKETS LOCATION '{location}'"
        " OPTIONS (partitionOverwriteMode 'dynamic')"  # an insert replaces only its files
    )
    fs, path = _filesystem(spark, cache)
    if fs.exists(path):
        spark.sql(f"ALTER TABLE {name} RECOVER PARTITIONS")
    return name


def _compact(spark: SparkSession, stale: list[EventFile], table: str, cache: str) -> None:
    """Parse ``stale`` files and store each as its own ``date=D/file=NAME`` partition."""
    for f in stale:  # a file now without events must not keep an old partition
        fs, path = _filesystem(spark, _partition(cache, f))
        fs.delete(path, True)
    keys = literal_frame(
        spark,
        ("path", "key", "date", "file"),
        [(f.metadata_path, file_key(f), f.folder.split("=", 1)[1], _name(f)) for f in stale],
    )
    events = parse_lines(read_lines(spark, stale)).join(F.broadcast(keys), "path")
    events = events.select(*table_schema().names)  # insertInto matches by position
    events.write.insertInto(table, overwrite=True)
    # The partials from the Parquet just written (cheaper than parsing the lines again).
    stored = spark.table(table).where(_file_key_column().isin([file_key(f) for f in stale]))
    timed = transforms.with_time_columns(stored)
    for name, build in PARTIAL_BUILDERS.items():
        uri = _partials_uri(cache, name)
        for f in stale:  # a file now without such rows must not keep an old partition
            fs, path = _filesystem(spark, _partition(uri, f))
            fs.delete(path, True)
        partial = build(timed, ("key", *PARTITIONS)).write.mode("overwrite")
        partial = partial.option("partitionOverwriteMode", "dynamic").partitionBy(*PARTITIONS)
        partial.parquet(uri)


def _stored_partials(
    spark: SparkSession, cache: str, files: list[EventFile], keys: list[str], events: DataFrame
) -> transforms.Partials:
    """The partials the cache keeps for the files ``keys`` (whose rows are ``events``), with
    each file's ``file_rank``; computed from ``events`` if their folder is gone."""
    ranks = F.broadcast(file_ranks(spark, files).drop("path"))
    nothing = F.lit(None).cast("string")
    empty = transforms.with_time_columns(empty_events(spark))
    empty = empty.withColumns({name: nothing for name in ("key", *PARTITIONS)})

    def load(name: str) -> DataFrame:
        build = PARTIAL_BUILDERS[name]
        uri = _partials_uri(cache, name)
        fs, path = _filesystem(spark, uri)
        if not fs.exists(path):  # removed by hand: correct, only slower
            return build(transforms.with_time_columns(events), ("file_rank",))
        # An explicit schema: a write of no rows leaves a folder Spark cannot infer one from.
        stored = spark.read.schema(build(empty, ("key", *PARTITIONS)).schema).parquet(uri)
        kept = stored.where(_file_key_column().isin(keys)).drop(*PARTITIONS)
        return kept.join(ranks, "key").drop("key")

    return transforms.Partials(**{name: load(name) for name in PARTIAL_BUILDERS})


def read_events_cached(
    spark: SparkSession, files: list[EventFile], cache: str
) -> tuple[DataFrame, transforms.Partials]:
    """The events of ``files`` (as ``read_events`` gives them) and their partials (rows
    with ``day``; not filtered by day), parsing only changed files."""
    by_folder = cacheable_folders(files)
    table = _declare_table(spark, cache)
    stale: list[EventFile] = []
    for folder, group in by_folder.items():
        stored = _stored(spark, cache, folder)
        stale += [f for f in group if stored.get(_name(f)) != _stamp(f)]
    if stale:
        _compact(spark, stale, table, cache)
        for folder in sorted({f.folder for f in stale}):
            write_small_text(spark, f"{cache}/{folder}/{MANIFEST}", _manifest(by_folder[folder]))
        table = _declare_table(spark, cache)  # forget partitions deleted for empty files
    cached = [f for group in by_folder.values() for f in group]
    parts: list[tuple[DataFrame, transforms.Partials]] = []
    if cached:  # a file without events has no partition: it matches nothing
        keys = [file_key(f) for f in cached]
        kept = spark.table(table).where(_file_key_column().isin(keys))
        events = with_file_rank(spark, kept.drop(*PARTITIONS), files, on="key")
        parts.append((events, _stored_partials(spark, cache, files, keys, events)))
    cached_paths = {f.path for f in cached}
    fresh = [f for f in files if f.path not in cached_paths]
    if fresh or not parts:
        events = events_of(spark, fresh, files)
        parts.append((events, transforms.partials_of_log(events)))
    events, partials = parts[0]
    for more_events, more_partials in parts[1:]:
        events, partials = events.unionByName(more_events), partials.union(more_partials)
    return events, partials
