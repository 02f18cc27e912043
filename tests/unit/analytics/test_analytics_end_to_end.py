"""End to end: a real server logs a scripted workload, the pipeline counts it right."""

from __future__ import annotations

import time
from pathlib import Path

import greenstalk
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from tests.support.servers import SubprocessServer

from beanpod.analytics import pipeline


def run_workload(port: int) -> dict[str, int]:
    """emails: 3 puts, 3 done (one after release, bury, kick); reports: 1 put, 1 timeout."""
    with greenstalk.Client(("127.0.0.1", port), use="emails", watch="emails") as c:
        for body in ("a", "b", "c"):
            c.put(body)
        c.delete(c.reserve())
        job = c.reserve()
        c.release(job, priority=5, delay=0)
        job = c.reserve()
        c.bury(job)
        c.kick(1)
        c.delete(c.reserve())
        c.delete(c.reserve())
        c.use("reports")
        c.watch("reports")
        c.ignore("emails")
        c.put("r", ttr=1)
        c.reserve()
        time.sleep(1.3)  # the reservation times out on the server's own timer
        c.delete(c.reserve())
    return {"jobs": 4}


def test_pipeline_counts_what_the_workload_did(spark: SparkSession, tmp_path: Path) -> None:
    events, out = tmp_path / "events", tmp_path / "out"
    server = SubprocessServer(["--events", str(events)]).start()
    try:
        expected = run_workload(server.port)
    finally:
        server.stop()
    pipeline.run(str(events), str(out), spark=spark)
    daily = spark.read.parquet(str(out / "queue_daily"))
    totals = {
        row["queue"]: row.asDict()
        for row in daily.groupBy("queue").agg(
            *(F.sum(c).alias(c) for c in ("put", "reserves", "deletes", "releases", "buries",
                                          "kicks", "timeouts", "wait_count", "run_count"))
        ).collect()
    }  # fmt: skip
    emails, reports = totals["emails"], totals["reports"]
    assert (emails["put"], emails["reserves"], emails["deletes"]) == (3, 5, 3)
    assert (emails["releases"], emails["buries"], emails["kicks"]) == (1, 1, 1)
    assert (emails["wait_count"], emails["run_count"]) == (5, 5)
    assert (reports["put"], reports["reserves"], reports["timeouts"], reports["deletes"]) == (
        1, 2, 1, 1,
    )  # fmt: skip
    assert reports["run_count"] == 2
    runs = daily.where("queue = 'reports'").agg(F.max("run_mean_ms")).first()
    assert runs is not None and runs[0] >= 500  # the timed-out run lasted its TTR
    assert spark.read.parquet(str(out / "jobs")).count() == expected["jobs"]
    done = spark.read.parquet(str(out / "throughput_hourly")).agg(F.sum("done")).first()
    assert done is not None and done[0] == 4
    assert (out / "report.html").stat().st_size > 10_000
