"""``beanpod analyze`` as a user runs it (its own process), and its tables checked against
the contract's pure-Python implementation."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from pyspark.sql import Row, SparkSession
from pyspark.testing import assertDataFrameEqual

from beanpod.analytics import write
from tests.support.analytics import reference

PROGRESS = re.compile(r"\d\d:\d\d:\d\d \[\d+/\d+\] ")


def analyze(
    events: Path, out: Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI on ``events`` into ``out`` with ``env`` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "beanpod", "analyze", "--events", str(events), "--out", str(out)],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}, cwd=cwd,
    )  # fmt: skip


def only_progress(stderr: str) -> bool:
    """True when stderr holds nothing but progress lines (no JVM or Spark output)."""
    return all(PROGRESS.match(line) for line in stderr.splitlines())


def assert_reference_tables(spark: SparkSession, events: Path, out: Path) -> None:
    """Every table under ``out`` equals the reference's for the log at ``events``."""
    expected = reference.tables(reference.read_log(events))
    assert all(expected[name] for name in write.TABLES)
    for name in write.TABLES:
        table = spark.read.parquet(write.table_uri(str(out), name))
        rows = [
            Row(**{c: _naive(v) for c, v in zip(table.columns, row, strict=True)})
            for row in expected[name]
        ]
        assertDataFrameEqual(table.collect(), rows, rtol=1e-9)


def _naive(value: object) -> object:
    """PySpark collects timestamps as naive local datetimes; the reference's are UTC-aware."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return datetime.fromtimestamp(value.timestamp())
    return value
