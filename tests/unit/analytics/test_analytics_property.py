"""Random event logs: the Spark pipeline's tables equal the pure-Python reference's.

Each Spark run checks a batch of random logs at once: the logs are written with disjoint
job ids, queues and conns (``write_log(..., namespace=k)``), so the tables of their union
are the union of their tables. Each log is written to its own folder (what the reference
reads) and its files are then linked into one shared log, renamed ``<name>-log<k>.jsonl``
(name order within a log is kept); that one log goes through the pipeline's own reader with
the Parquet cache of parsed files (``compact``): one read and one plan per batch instead of
one per log, which made this test several times slower.
"""

from __future__ import annotations

import os
from datetime import date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.testing import assertDataFrameEqual
from tests.support.analytics import reference
from tests.support.analytics.eventgen import event_logs, write_log

from beanpod.analytics.pipeline import build_tables, in_range, read_log
from beanpod.analytics.transforms import with_reservation_times

#: Hypothesis's first example is always the minimal one (every log trivial): with two runs of
#: 12 logs, 12 random logs are checked, as many as the 12 one-log runs this replaced.
LOGS_PER_RUN = 12


def _local(value: object) -> object:
    """PySpark collects timestamps as naive local datetimes; the reference's are UTC-aware."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return datetime.fromtimestamp(value.timestamp())
    return value


def _as_rows(df: DataFrame, rows: list[tuple[object, ...]]) -> list[Row]:
    """Reference tuples as Rows with the table's column names."""
    return [Row(**{c: _local(v) for c, v in zip(df.columns, row, strict=True)}) for row in rows]


def _link_into(directory: Path, shared: Path, suffix: str) -> None:
    """Hard-link the log's files into ``shared``, same folders, ``suffix`` before ``.jsonl``."""
    for path in directory.glob("*/*.jsonl"):
        target = shared / path.parent.name / f"{path.stem}{suffix}{path.suffix}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)


def _check(spark: SparkSession, root: Path, logs: list[dict[str, object]],
           day_from: date | None = None, day_to: date | None = None) -> None:  # fmt: skip
    expected: dict[str, list[tuple[object, ...]]] = {}
    shared = root / "shared"
    for k, log in enumerate(logs):
        directory = root / f"log{k}"
        write_log(directory, log, namespace=k)
        for name, rows in reference.tables(reference.read_log(directory), day_from, day_to).items():
            expected.setdefault(name, []).extend(rows)
        _link_into(directory, shared, f"-log{k}")
    # As `beanpod analyze` does it: failures and worker names from the cache's partials.
    events, partials = read_log(spark, str(shared), day_from, day_to, str(root / "cache"))
    events = in_range(events, day_from, day_to)
    partials = partials.in_days(day_from, day_to)
    enriched = with_reservation_times(events).persist(StorageLevel.MEMORY_ONLY)
    try:
        for name, table in build_tables(events, enriched, partials).items():
            actual = table.collect()
            assertDataFrameEqual(actual, _as_rows(table, expected[name]), rtol=1e-9)
    finally:
        enriched.unpersist()


@pytest.mark.timeout(400)
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(logs=st.lists(event_logs(), min_size=LOGS_PER_RUN, max_size=LOGS_PER_RUN))
def test_spark_tables_equal_reference(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, logs: list[dict[str, object]]
) -> None:  # 2 runs: the minimal batch, then 12 random logs
    _check(spark, tmp_path_factory.mktemp("events"), logs)


@pytest.mark.timeout(200)
@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(logs=st.lists(event_logs(), min_size=2, max_size=2))
def test_day_range_equals_reference(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory, logs: list[dict[str, object]]
) -> None:  # 2 runs: the minimal batch, then 2 random logs
    _check(spark, tmp_path_factory.mktemp("events"), logs, date(2025, 1, 2), date(2025, 1, 2))
