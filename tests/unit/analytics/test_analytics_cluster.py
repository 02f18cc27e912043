"""spark-submit against a real standalone cluster (master + worker from the pyspark package)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual

from analytics_support.eventgen import OUTCOMES, JobScript, Step, write_log
from beanpod.analytics import job as job_module
from beanpod.analytics.bundle import build_zip
from beanpod.analytics.pipeline import run
from beanpod.analytics.write import TABLES

SPARK_HOME = Path(pyspark.__file__).parent
JAVA_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _env() -> dict[str, str]:
    return {**os.environ, "SPARK_HOME": str(SPARK_HOME), "PYSPARK_PYTHON": sys.executable,
            "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_DAEMON_JAVA_OPTS": JAVA_OPTS,
            "PYTHONPATH": os.pathsep.join(sys.path)}  # fmt: skip


def _start(args: list[str], ready: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start a daemon class; wait for the regex ``ready`` in its log; return its match."""
    out = open(log, "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), *args],
        env=_env(),
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = re.search(ready, log.read_text(errors="replace"))
        if match:
            return proc, match.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    _stop(proc)
    pytest.fail(f"{args[0]} did not start:\n{log.read_text(errors='replace')[-2000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    master, url = _start(
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
         "--webui-port", "0"],
        r"Starting Spark master at (spark://[\d.]+:\d+)", tmp_path / "master.log",
    )  # fmt: skip
    try:
        worker, _ = _start(
            ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--port", "0",
             "--webui-port", "0", "--cores", "2", "--memory", "1g",
             "--work-dir", str(tmp_path / "work")],
            r"(Successfully registered with master)", tmp_path / "worker.log",
        )  # fmt: skip
        try:
            yield url
        finally:
            _stop(worker)
    finally:
        _stop(master)


def _small_log(directory: Path) -> None:
    rng = random.Random(3)
    jobs = [
        JobScript(queue=rng.choice(["a", "b"]), start=rng.randrange(4 * 3_600_000),
                  delay=rng.choice([0, 2_000]), put_conn=1, ending="none",
                  steps=[Step(gap=rng.randrange(5_000), run=rng.randrange(90_000),
                              outcome=rng.choice(OUTCOMES), conn=rng.randrange(2, 5),
                              worker=rng.choice([None, "w1"]), group=rng.choice([None, "g"]),
                              message="m") for _ in range(rng.randrange(1, 4))])
        for _ in range(60)
    ]  # fmt: skip
    log = {"jobs": jobs, "pauses": [("a", 5)], "max_file_bytes": 4_000,
           "max_file_age_ms": 3_600_000, "flush_every": 5, "torn": True}  # fmt: skip
    write_log(directory, log)


@pytest.mark.timeout(240)
def test_spark_submit_on_standalone_cluster_equals_local(
    spark: SparkSession, cluster: str, tmp_path: Path
) -> None:
    events, local_out, cluster_out = tmp_path / "events", tmp_path / "local", tmp_path / "cl"
    _small_log(events)
    run(str(events), str(local_out), spark=spark)
    bundle = build_zip(tmp_path / "beanpod-analytics.zip")
    submit = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", cluster, "--py-files", str(bundle),
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", f"spark.driver.extraJavaOptions={JAVA_OPTS}",
         "--conf", "spark.executor.memory=512m",
         job_module.__file__, "--events", str(events), "--out", str(cluster_out)],
        env={**_env(), "PYTHONPATH": ""}, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert submit.returncode == 0, submit.stderr[-3000:]
    assert "[9/9] report done" in submit.stdout
    for table in TABLES:
        local = spark.read.parquet(str(local_out / table))
        remote = spark.read.parquet(str(cluster_out / table))
        assertDataFrameEqual(remote, local)
    assert (cluster_out / "report.html").read_text().count("data:image/png;base64,") >= 4
