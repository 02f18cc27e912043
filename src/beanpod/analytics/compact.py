"""Keep the parsed JSON-lines log as Parquet, one partition per log file, and read through it.

The server appends JSON lines (cheap, crash-tolerant); parsing them is the pipeline's most
expensive read. Each log file's parsed, validated events are stored once as Parquet under
the cache folder (``OUT/_events_parquet`` by default), in ``date=D/file=NAME/``, and each
``date=`` folder gets a manifest of the files stored (name -> size, modification time).
A run parses only the files that are new or changed since (log files are append-only, so
a file's size and modification time say whether it changed: the file being written is
re-parsed while it grows) and reads every other file from Parquet, so the events are
exactly what :func:`beanpod.analytics.read.read_events` gives.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from beanpod.analytics.read import (
    FOLDER_RE,
    EventFile,
    empty_events,
    file_ranks,
    parse_lines,
    read_lines,
    with_file_rank,
)

CACHE_DIR = "_events_parquet"
MANIFEST = "_beanpod_manifest.json"
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
    text = read_small_text(spark, f"{cache}/{folder}/{MANIFEST}")
    try:
        stored = json.loads(text) if text else {}
    except ValueError:
        return {}
    return stored if isinstance(stored, dict) else {}


def cacheable_folders(files: list[EventFile]) -> dict[str, list[EventFile]]:
    """Files in ``date=YYYY-MM-DD`` folders with plain names, by folder (others: parsed)."""
    by_folder: dict[str, list[EventFile]] = defaultdict(list)
    for f in files:
        if FOLDER_RE.match(f.folder) and SAFE_NAME_RE.match(_name(f)):
            by_folder[f.folder].append(f)
    return by_folder


def _partition(cache: str, f: EventFile) -> str:
    return f"{cache}/{f.folder}/file={_name(f)}"


def _stored_partitions(spark: SparkSession, cache: str, folder: str) -> set[str]:
    """``file=NAME`` folders stored for ``folder`` (a file with no event has none)."""
    fs, path = _filesystem(spark, f"{cache}/{folder}")
    if not fs.exists(path):
        return set()
    return {s.getPath().getName() for s in fs.listStatus(path) if s.isDirectory()}


def _compact(spark: SparkSession, stale: list[EventFile], cache: str) -> None:
    """Parse ``stale`` files and store each as its own ``date=D/file=NAME`` partition."""
    for f in stale:  # a file now without events must not keep an old partition
        fs, path = _filesystem(spark, _partition(cache, f))
        fs.delete(path, True)
    rows = [  # JVM literals, not createDataFrame: no Python workers (read.file_ranks)
        F.struct(F.lit(f.path).alias("path"), F.lit(f.folder.split("=", 1)[1]).alias("date"),
                 F.lit(_name(f)).alias("file"))
        for f in stale
    ]  # fmt: skip
    names = spark.range(1).select(F.inline(F.array(*rows)))
    keys = file_ranks(spark, stale).select("path", "key").join(names, "path")
    events = parse_lines(read_lines(spark, stale)).join(F.broadcast(keys), "path").drop("path")
    (
        events.write.mode("overwrite")
        .option("partitionOverwriteMode", "dynamic")
        .partitionBy(*PARTITIONS)
        .parquet(cache)
    )


def read_events_cached(spark: SparkSession, files: list[EventFile], cache: str) -> DataFrame:
    """The events of ``files`` (as ``read_events`` gives them), parsing only changed files."""
    by_folder = cacheable_folders(files)
    stale: list[EventFile] = []
    for folder, group in by_folder.items():
        stored = _stored(spark, cache, folder)
        stale += [f for f in group if stored.get(_name(f)) != _stamp(f)]
    if stale:
        _compact(spark, stale, cache)
        for folder in sorted({f.folder for f in stale}):
            manifest = {_name(f): _stamp(f) for f in by_folder[folder]}
            write_small_text(spark, f"{cache}/{folder}/{MANIFEST}", json.dumps(manifest))
    parts = []
    cached = [f for group in by_folder.values() for f in group]
    kept = {folder: _stored_partitions(spark, cache, folder) for folder in by_folder}
    paths = [_partition(cache, f) for f in cached if f"file={_name(f)}" in kept[f.folder]]
    if paths:
        parquet = spark.read.option("basePath", cache).parquet(*paths).drop(*PARTITIONS)
        parts.append(with_file_rank(spark, parquet, files, on="key"))
    cached_paths = {f.path for f in cached}
    fresh = [f for f in files if f.path not in cached_paths]
    if fresh:
        parts.append(with_file_rank(spark, parse_lines(read_lines(spark, fresh)), files))
    if not parts:  # only files without events
        return empty_events(spark)
    return parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
