"""Write the output tables as Parquet under ``OUT/<table>`` (any Hadoop-compatible URI)."""

from __future__ import annotations

from pyspark.sql import DataFrame

#: Output tables in the order the pipeline writes them, with their partition column.
TABLES: dict[str, str | None] = {
    "queue_daily": None,
    "histograms": None,
    "failures": None,
    "throughput_hourly": None,
    "workers": None,
    "jobs": None,
}
#: Columns with about one value per row, by table: Parquet's writer would build a
#: dictionary for each page of them and throw it away (``jobs``: 3.1 M rows at 10 M events;
#: its write took 13.0/14.4 -> 11.9/11.0 s of JVM CPU with these off, files 9 % larger;
#: docs/performance.md, sixth pass).
NO_DICTIONARY: dict[str, tuple[str, ...]] = {
    "jobs": ("job", "put_ts", "last_ts", "total_wait_ms", "total_run_ms"),
}


def table_uri(out_uri: str, table: str) -> str:
    """``OUT/<table>``."""
    return f"{out_uri.rstrip('/')}/{table}"


def write_table(df: DataFrame, out_uri: str, table: str, partitions: int | None = None) -> None:
    """Overwrite ``OUT/<table>`` with ``df`` as Parquet (``partitions``: files to write)."""
    if partitions is not None:  # repartition, not coalesce: that would run the last
        df = df.repartition(partitions)  # aggregation stage in ``partitions`` tasks
    writer = df.write.mode("overwrite")
    for column in NO_DICTIONARY.get(table, ()):
        writer = writer.option(f"parquet.enable.dictionary#{column}", "false")
    partition_by = TABLES.get(table)
    if partition_by is not None:
        writer = writer.partitionBy(partition_by)
    writer.parquet(table_uri(out_uri, table))
