"""spark-submit against a real standalone cluster (master + worker from the pyspark package)."""

from __future__ import annotations

import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession
from pyspark.testing import assertDataFrameEqual
from tests.support.analytics.eventgen import OUTCOMES, JobScript, Step, write_log

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


def _launch(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """Start a daemon class, its output going to ``log``."""
    out = open(log, "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [str(SPARK_HOME / "bin" / "spark-class"), *args],
        env=_env(),
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_ready(proc: subprocess.Popen[bytes], ready: str, log: Path) -> str:
    """Wait for the regex ``ready`` in the daemon's log; return its first group."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        match = re.search(ready, log.read_text(errors="replace"))
        if match:
            return match.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    pytest.fail(f"{proc.args!r} did not start:\n{log.read_text(errors='replace')[-2000:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Callable[[], str]]:
    """Launch a master and a worker; the fixture's value waits until both are up.

    The daemons boot while the test does its local run (their JVMs start in parallel).
    """
    url = f"spark://127.0.0.1:{_free_port()}"
    logs = tmp_path / "master.log", tmp_path / "worker.log"
    master = _launch(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                      "--port", url.rsplit(":", 1)[1], "--webui-port", "0"], logs[0])  # fmt: skip
    worker = _launch(
        ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--port", "0",
         "--webui-port", "0", "--cores", "2", "--memory", "1g",
         "--work-dir", str(tmp_path / "work")], logs[1],
    )  # fmt: skip

    def ready() -> str:
        _wait_ready(master, r"Starting Spark master at (spark://[\d.]+:\d+)", logs[0])
        _wait_ready(worker, r"(Successfully registered with master)", logs[1])
        return url

    try:
        yield ready
    finally:
        _stop(worker)
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
    spark: SparkSession, cluster: Callable[[], str], tmp_path: Path
) -> None:
    events, local_out, cluster_out = tmp_path / "events", tmp_path / "local", tmp_path / "cl"
    _small_log(events)
    run(str(events), str(local_out), spark=spark, compact_days=False)  # the cluster compacts
    bundle = build_zip(tmp_path / "beanpod-analytics.zip")
    url = cluster()
    submit = subprocess.run(
        [str(SPARK_HOME / "bin" / "spark-submit"), "--master", url, "--py-files", str(bundle),
         "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.shuffle.partitions=2",
         "--conf", f"spark.driver.extraJavaOptions={JAVA_OPTS}",
         "--conf", f"spark.executor.extraJavaOptions={JAVA_OPTS}",
         "--conf", "spark.executor.memory=512m",
         "--conf", f"spark.sql.warehouse.dir={tmp_path / 'warehouse'}",
         job_module.__file__, "--events", str(events), "--out", str(cluster_out)],
        env={**_env(), "PYTHONPATH": ""}, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert submit.returncode == 0, submit.stderr[-3000:]
    assert "[11/11] report done" in submit.stdout
    for table in TABLES:
        local = spark.read.parquet(str(local_out / table))
        remote = spark.read.parquet(str(cluster_out / table))
        assertDataFrameEqual(remote, local)
    assert (cluster_out / "report.html").read_text().count("data:image/png;base64,") >= 4
