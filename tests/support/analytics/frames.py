"""Build small event DataFrames by hand for transform tests."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from beanpod.analytics import transforms
from beanpod.analytics.read import empty_events

DAY_MS = 86_400_000
T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z


def events_df(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    """Rows (dicts with some event fields) in log order -> a frame like read_events gives."""
    schema = empty_events(spark).schema
    data = [
        (*(row.get(f.name) for f in schema.fields[:-2]), 0, line_id)
        for line_id, row in enumerate(rows)
    ]
    return spark.createDataFrame(data, schema)


def timed_df(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    """Hand-built events with time columns (what ``failures`` and worker names read)."""
    return transforms.with_time_columns(events_df(spark, rows))


def enriched_df(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    """Hand-built events with time columns and reservation wait/run."""
    return transforms.with_reservation_times(timed_df(spark, rows))


def ev(
    ts: int, event: str, job: int | None, queue: str = "q", conn: int | None = 1, **extra: Any
) -> dict[str, Any]:
    """One event row."""
    return {"ts": ts, "event": event, "job": job, "queue": queue, "conn": conn, **extra}
