"""Read the event log (``date=*/*.jsonl`` under any Hadoop-compatible URI) as a DataFrame.

The output of :func:`read_events` has the event fields of ``schema.FIELD_ORDER`` (minus
``v``) plus ``file_rank`` (the file's position in name order) and ``line_id`` (increasing
with the line's position inside its file): ``(ts, file_rank, line_id)`` is log order.
Lines the contract says readers skip are filtered out here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from beanpod.analytics.schema import EVENT_NAMES, FIELD_ORDER, SCHEMA_VERSION, spark_schema

CORRUPT = "_corrupt"
FOLDER_RE = re.compile(r"^date=(\d{4}-\d{2}-\d{2})$")
JSON_OPTIONS = {
    "mode": "PERMISSIVE",
    "columnNameOfCorruptRecord": CORRUPT,
    "allowSingleQuotes": "false",
    "allowNonNumericNumbers": "false",
    "allowNumericLeadingZeros": "false",
    "allowUnquotedControlChars": "false",
}


@dataclass(frozen=True)
class EventFile:
    """One log file: its qualified path, its place in name order, folder, size and mtime.

    ``uri`` is the path as Spark's ``_metadata.file_path`` gives it (URI-escaped: a space
    is ``%20``); rows are matched to their file by it (``path`` when empty).
    """

    path: str
    rank: int
    folder: str = ""
    size: int = 0
    mtime_ms: int = 0
    uri: str = ""

    @property
    def metadata_path(self) -> str:
        """What ``_metadata.file_path`` says for this file's rows."""
        return self.uri or self.path


def _folder_in_range(folder: str, day_from: date | None, day_to: date | None) -> bool:
    match = FOLDER_RE.match(folder)
    if match is None:
        return True  # the day comes from ts; an odd folder name is read and filtered
    try:
        day = date.fromisoformat(match.group(1))
    except ValueError:
        return True
    return (day_from is None or day >= day_from) and (day_to is None or day <= day_to)


def list_event_files(
    spark: SparkSession,
    events_uri: str,
    day_from: date | None = None,
    day_to: date | None = None,
) -> list[EventFile]:
    """The ``date=*/*.jsonl`` files under ``events_uri`` in name order (Hadoop FileSystem)."""
    jvm: Any = spark.sparkContext._jvm
    jsc: Any = spark.sparkContext._jsc
    hadoop_conf = jsc.hadoopConfiguration()
    pattern = jvm.org.apache.hadoop.fs.Path(events_uri.rstrip("/") + "/date=*/*.jsonl")
    statuses = pattern.getFileSystem(hadoop_conf).globStatus(pattern) or []
    found: list[tuple[str, str, str, int, int, str]] = []
    for status in statuses:
        path = status.getPath()
        name, folder = path.getName(), path.getParent().getName()
        if name.startswith((".", "_")) or folder.startswith((".", "_")):
            continue
        if status.isFile() and _folder_in_range(folder, day_from, day_to):
            stamp = (int(status.getLen()), int(status.getModificationTime()))
            found.append((folder, name, path.toString(), *stamp, path.toUri().toString()))
    found.sort()
    return [
        EventFile(path=path, rank=rank, folder=folder, size=size, mtime_ms=mtime, uri=uri)
        for rank, (folder, _, path, size, mtime, uri) in enumerate(found)
    ]


def _parse_schema() -> StructType:
    fields = [f for f in spark_schema().fields]
    return StructType([*fields, StructField(CORRUPT, StringType(), True)])


def _queue_is_string(parsed_queue: Column, line: Column) -> Column:
    """Spark reads any JSON scalar into a string field; check the rare lookalikes."""
    looks_like_json = parsed_queue.rlike(r"^(-?[0-9]|true$|false$|\{|\[)")
    return ~looks_like_json | line.rlike(r'"queue"\s*:\s*"')


def parse_lines(lines: DataFrame) -> DataFrame:
    """``value`` (a log line), ``path`` -> validated event rows with ``path`` and ``line_id``.

    ``line_id`` (increasing with the line's position in its file) is computed in the same
    projection as ``from_json``: being non-deterministic, it keeps the optimizer from
    pushing the validity filter below the projection, which would parse every line twice.
    """
    parsed = lines.select(
        F.from_json("value", _parse_schema(), JSON_OPTIONS).alias("e"),
        "value",
        "path",
        F.monotonically_increasing_id().alias("line_id"),
    )
    e = parsed["e"]
    valid = (
        e[CORRUPT].isNull()
        & e["ts"].isNotNull()
        & e["event"].isin(*EVENT_NAMES)
        & e["queue"].isNotNull()
        & (e["v"].isNull() | (e["v"] >= SCHEMA_VERSION))
        & _queue_is_string(e["queue"], parsed["value"])
    )
    columns = [e[name].alias(name) for name in FIELD_ORDER if name != "v"]
    return parsed.where(valid).select(*columns, "path", "line_id")


def read_lines(spark: SparkSession, files: list[EventFile]) -> DataFrame:
    """Raw lines (``value``) with their file's ``path``."""
    raw = spark.read.option("recursiveFileLookup", "true").text([f.path for f in files])
    return raw.select("value", F.col("_metadata.file_path").alias("path"))


def file_key(f: EventFile) -> str:
    """A file's name relative to the log's root: ``date=YYYY-MM-DD/events-....jsonl``."""
    return f"{f.folder}/{f.path.rsplit('/', 1)[-1]}"


_SQL_TYPES = {str: "string", int: "bigint", bool: "boolean", float: "double"}


def literal_frame(
    spark: SparkSession, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> DataFrame:
    """A small frame of ``rows`` (str, int, bool or float values, typed by the first row)
    parsed in the JVM from one JSON literal: a handful of py4j calls whatever the number of
    rows (a struct of literals per row cost ~50 calls a row: 3,500 of a 10k-event run's
    13,400). ``createDataFrame`` of a list (without pyarrow) is a Python RDD, which starts
    Python workers in every query that joins it."""
    first = rows[0] if rows else ("",) * len(columns)
    fields = ", ".join(f"`{c}`: {_SQL_TYPES[type(v)]}" for c, v in zip(columns, first, strict=True))
    text = json.dumps([dict(zip(columns, row, strict=True)) for row in rows])
    parsed = F.from_json(F.lit(text), f"array<struct<{fields}>>")
    return spark.range(1).select(F.inline(parsed))


def file_ranks(spark: SparkSession, files: list[EventFile]) -> DataFrame:
    """``path`` (as ``_metadata.file_path`` gives it), ``key`` (:func:`file_key`) and
    ``file_rank`` of every file."""
    ranks = literal_frame(
        spark,
        ("path", "key", "file_rank"),
        [(f.metadata_path, file_key(f), f.rank) for f in files],
    )
    return ranks.withColumn("file_rank", F.col("file_rank").cast("long"))


def with_file_rank(
    spark: SparkSession, events: DataFrame, files: list[EventFile], on: str = "path"
) -> DataFrame:
    """Replace ``on`` ("path" or "key") by ``file_rank``, the file's place in name order."""
    columns = [c for c in events.columns if c not in ("path", "key", "line_id")]
    joined = events.join(F.broadcast(file_ranks(spark, files).drop(*{"path", "key"} - {on})), on)
    return joined.select(*columns, "file_rank", "line_id")


def empty_events(spark: SparkSession) -> DataFrame:
    """A frame with the event columns and no rows (a log with no files)."""
    fields = [f for f in spark_schema().fields if f.name != "v"]
    schema = StructType(
        [*fields, StructField("file_rank", LongType()), StructField("line_id", LongType())]
    )
    return spark.createDataFrame([], schema)


def read_events(
    spark: SparkSession,
    events_uri: str,
    day_from: date | None = None,
    day_to: date | None = None,
) -> DataFrame:
    """Every valid event under ``events_uri`` whose folder is within the day range."""
    return events_of(spark, list_event_files(spark, events_uri, day_from, day_to))


def events_of(
    spark: SparkSession, files: list[EventFile], ranked_among: list[EventFile] | None = None
) -> DataFrame:
    """The valid events of ``files`` (parsed), ranked among ``ranked_among`` (``files``)."""
    if not files:
        return empty_events(spark)
    return with_file_rank(spark, parse_lines(read_lines(spark, files)), ranked_among or files)
