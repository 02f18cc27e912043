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
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from beanpod.analytics.read import (
    FOLDER_RE,
    EventFile,
    empty_events,
    file_key,
    literal_frame,
    parse_lines,
    read_lines,
    with_file_rank,
)
from beanpod.analytics.schema import spark_schema

CACHE_DIR = "_events_parquet"
MANIFEST = "_beanpod_manifest.json"
#: Layout version in each manifest: a day stored by another version is parsed again
#: (1, unversioned: one plain Parquet partition per file; 2: bucketed by job).
CACHE_VERSION = 2
#: Files per partition, by hash of ``job``; the window runs in this many tasks.
BUCKETS = 8
PARTITIONS = ("date", "file")
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
        spark, ("path", "key", "date", "file"),
        [(f.path, file_key(f), f.folder.split("=", 1)[1], _name(f)) for f in stale],
    )  # fmt: skip
    events = parse_lines(read_lines(spark, stale)).join(F.broadcast(keys), "path")
    events = events.select(*table_schema().names)  # insertInto matches by position
    events.write.insertInto(table, overwrite=True)


def read_events_cached(spark: SparkSession, files: list[EventFile], cache: str) -> DataFrame:
    """The events of ``files`` (as ``read_events`` gives them), parsing only changed files."""
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
    parts = []
    if cached:  # a file without events has no partition: it matches nothing
        key = F.concat(F.lit("date="), F.col("date"), F.lit("/"), F.col("file"))
        kept = spark.table(table).where(key.isin([file_key(f) for f in cached]))
        parts.append(with_file_rank(spark, kept.drop(*PARTITIONS), files, on="key"))
    cached_paths = {f.path for f in cached}
    fresh = [f for f in files if f.path not in cached_paths]
    if fresh:
        parts.append(with_file_rank(spark, parse_lines(read_lines(spark, fresh)), files))
    if not parts:
        return empty_events(spark)
    return parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
