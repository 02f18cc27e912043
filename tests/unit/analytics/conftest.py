"""One SparkSession for every analytics test (skipped cleanly without pyspark)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark not installed (beanpod[analytics])")

from pyspark.sql import SparkSession  # noqa: E402

SPARK_TEST_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}


# PySpark's py4j gateway leaves pipe file objects for the garbage collector.
SPARK_WARNING_FILTERS = (
    "ignore::ResourceWarning",
    "ignore::pytest.PytestUnraisableExceptionWarning",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            for spec in SPARK_WARNING_FILTERS:
                item.add_marker(pytest.mark.filterwarnings(spec))


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    builder = SparkSession.builder.master("local[2]").appName("beanpod-tests")
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    # The cache's catalog table makes Spark create a warehouse directory: not in the repo.
    builder = builder.config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    # Something in the Spark stack raises the recursion limit to 3000 during the first
    # tests; hypothesis would report that as a change during a test, so do it up front.
    session.createDataFrame([(1, "a")], "n long, s string").collect()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    yield session
    session.stop()
