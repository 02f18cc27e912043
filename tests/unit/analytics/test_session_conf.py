"""A small log gets a Spark session set up for a short run (the JVM's start and planning
dominate it), chosen by the log's size before Spark starts; a large or unknown one keeps
the settings the 10M-event figures were measured with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.analytics.generate import generate
from pyspark.sql import SparkSession
from tests.support.analytics import cli

from beanpod.analytics import cds
from beanpod.analytics.pipeline import LOCAL_CONF, SMALL_SESSION_BYTES, session_conf

PROBE = """
import json, sys
from beanpod.analytics.pipeline import build_session
spark = build_session("local[1]", log_bytes=int(sys.argv[1]))
runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(json.dumps({
    "jvm_args": list(runtime.getInputArguments()),
    "partitions": spark.conf.get("spark.sql.shuffle.partitions"),
    "adaptive": spark.conf.get("spark.sql.adaptive.enabled"),
    "codegen": spark.conf.get("spark.sql.codegen.wholeStage"),
}))
spark.stop()
"""


def test_small_logs_get_the_short_run_settings_and_others_the_default() -> None:
    assert session_conf(None) == LOCAL_CONF
    assert session_conf(SMALL_SESSION_BYTES) == LOCAL_CONF
    small = session_conf(SMALL_SESSION_BYTES - 1)
    assert small["spark.sql.shuffle.partitions"] == "1"
    assert "-XX:TieredStopAtLevel=1" in small["spark.driver.extraJavaOptions"]
    assert "TieredStopAtLevel" not in LOCAL_CONF["spark.driver.extraJavaOptions"]


def probe(log_bytes: int) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(log_bytes)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_jvm_really_runs_with_the_settings_the_size_chose() -> None:
    small = probe(1_000_000)
    assert "-XX:TieredStopAtLevel=1" in small["jvm_args"]  # type: ignore[operator]
    assert "-XX:+UseSerialGC" in small["jvm_args"]  # type: ignore[operator]
    assert (small["partitions"], small["adaptive"], small["codegen"]) == ("1", "false", "false")
    large = probe(SMALL_SESSION_BYTES)
    assert "-XX:+UseParallelGC" in large["jvm_args"]  # type: ignore[operator]
    assert "-XX:TieredStopAtLevel=1" not in large["jvm_args"]  # type: ignore[operator]
    assert large["partitions"] == "8"


def test_beanpod_analyze_with_the_small_log_settings_equals_the_reference(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The short-run settings (interpreted expressions, one partition) change no table:
    the CLI in its own process against the contract's pure-Python implementation (without
    the CDS archive: test_cds.py runs it with one)."""
    generate(tmp_path / "events", 3_000, days=2, queues=3)
    done = cli.analyze(tmp_path / "events", tmp_path / "out", {cds.SWITCH_ENV: "off"})
    assert done.returncode == 0, done.stderr
    # Progress lines only: no JVM start-up warning (the incubator module), no Spark log.
    assert "incubator" not in done.stderr
    assert cli.only_progress(done.stderr), done.stderr
    cli.assert_reference_tables(spark, tmp_path / "events", tmp_path / "out")
