"""Random event logs: the Spark pipeline's tables equal the pure-Python reference's."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.testing import assertDataFrameEqual

from analytics_support import reference
from analytics_support.eventgen import event_logs, write_log
from beanpod.analytics.pipeline import build_tables, enriched_events


def _local(value: object) -> object:
    """PySpark collects timestamps as naive local datetimes; the reference's are UTC-aware."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return datetime.fromtimestamp(value.timestamp())
    return value


def _as_rows(df: DataFrame, rows: list[tuple[object, ...]]) -> list[Row]:
    """Reference tuples as Rows with the table's column names."""
    return [Row(**{c: _local(v) for c, v in zip(df.columns, row, strict=True)}) for row in rows]


def _check(spark: SparkSession, directory: Path, day_from: date | None = None,
           day_to: date | None = None) -> None:  # fmt: skip
    expected = reference.tables(reference.read_log(directory), day_from, day_to)
    enriched = enriched_events(spark, str(directory), day_from, day_to)
    enriched = enriched.persist(StorageLevel.MEMORY_ONLY)
    try:
        for name, table in build_tables(enriched).items():
            actual = table.collect()
            assertDataFrameEqual(actual, _as_rows(table, expected[name]), rtol=1e-9)
    finally:
        enriched.unpersist()


@pytest.mark.timeout(400)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(log=event_logs())
def test_spark_tables_equal_reference(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, log: dict[str, object]
) -> None:
    directory = tmp_path_factory.mktemp("events")
    write_log(directory, log)
    _check(spark, directory)


@pytest.mark.timeout(200)
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(log=event_logs())
def test_day_range_equals_reference(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, log: dict[str, object]
) -> None:  # fmt: skip
    directory = tmp_path_factory.mktemp("events")
    write_log(directory, log)
    _check(spark, directory, date(2025, 1, 2), date(2025, 1, 2))
