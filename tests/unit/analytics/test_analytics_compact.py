"""The Parquet cache of parsed log files gives exactly the events of a direct read."""

from __future__ import annotations

import shutil
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.testing import assertDataFrameEqual
from tests.support.analytics.eventgen import JobScript, Step, write_log

from beanpod.analytics.compact import MANIFEST
from beanpod.analytics.pipeline import read_frame, read_log
from beanpod.analytics.transforms import failures_from_partials, worker_names

HOUR = 3_600_000
EXTRA_LINE = '{"v":1,"ts":1735776000500,"event":"touch","job":1,"queue":"emails","conn":2}\n'
FAIL_LINE = (
    '{"v":1,"ts":1735776000600,"event":"fail","job":1,"queue":"emails","conn":2,'
    '"group":"oom","message":"killed"}\n'
)


def _log() -> dict[str, object]:
    """Two jobs around 2025-01-02T00:00Z, small files: several files in two folders."""
    steps = [Step(gap=600_000, run=1_200_000, outcome="release", conn=2, worker="w",
                  group=None, message=None),
             Step(gap=10, run=3_000_000, outcome="delete", conn=3, worker=None, group=None,
                  message=None)]  # fmt: skip
    jobs = [JobScript(queue="emails", start=0, delay=0, put_conn=1, steps=steps, ending="none"),
            JobScript(queue="video", start=HOUR // 2, delay=1_500, put_conn=None,
                      steps=steps[1:], ending="none")]  # fmt: skip
    return {"jobs": jobs, "pauses": [("video", HOUR)], "max_file_bytes": 400,
            "max_file_age_ms": HOUR, "flush_every": 2, "torn": True}  # fmt: skip


def _in_log_order(events: DataFrame) -> DataFrame:
    """Events with ``line_id`` replaced by the line's place in its file (ids may differ)."""
    place = F.row_number().over(Window.partitionBy("file_rank").orderBy("line_id"))
    return events.withColumn("line_id", place)


def _parts(cache: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in cache.rglob("*.parquet")}


def test_cache_is_reused_and_refreshed_when_a_file_changes(
    spark: SparkSession, tmp_path: Path
) -> None:
    events, cache = tmp_path / "events", tmp_path / "cache"
    write_log(events, _log())
    torn_only = events / "date=2025-01-02" / "events-1735776000000-999998.jsonl"
    torn_only.write_text('{"v":1,"ts":1735776000000,"event":"pu')  # a file without events
    (events / "date=2025-01-02" / "events-1735776000000-999999.jsonl").write_text("")
    folders = sorted(p.name for p in events.iterdir())
    assert folders == ["date=2025-01-01", "date=2025-01-02"]

    def check() -> None:
        direct, direct_partials = read_log(spark, str(events), None, None)
        cached, cached_partials = read_log(spark, str(events), None, None, str(cache))
        assertDataFrameEqual(_in_log_order(cached), _in_log_order(direct))
        for name in ("failures", "worker_names"):  # kept per file; line ids may differ
            columns = [c for c in getattr(direct_partials, name).columns if c != "last_line_id"]
            assertDataFrameEqual(
                getattr(cached_partials, name).select(columns),
                getattr(direct_partials, name).select(columns),
            )

    check()
    assert all((cache / folder / MANIFEST).exists() for folder in folders)
    stored = _parts(cache)
    check()
    assert _parts(cache) == stored  # nothing re-parsed
    oldest = min(events.glob("date=2025-01-01/*.jsonl"))
    with open(oldest, "a") as f:
        f.write(EXTRA_LINE + FAIL_LINE)
    check()
    changed = {p for p, mtime in _parts(cache).items() if stored.get(p) != mtime}
    assert changed and all(f"file={oldest.name}" in str(p) for p in changed)
    rows = read_frame(spark, str(events), None, None, str(cache)).where("event = 'touch'")
    assert rows.count() == 1
    fails = read_log(spark, str(events), None, None, str(cache))[1].failures.collect()
    assert [(r["group"], r["count"], r["last_message"]) for r in fails] == [("oom", 1, "killed")]
    shutil.rmtree(cache / "_partials")  # removed by hand: computed from the cached events
    check()


def test_files_the_cache_cannot_keep_are_parsed_with_their_partials(
    spark: SparkSession, tmp_path: Path
) -> None:
    events, cache = tmp_path / "events", tmp_path / "cache"
    write_log(events, _log())
    reserve = (
        '{"v":1,"ts":1735776000700,"event":"reserve","job":1,"queue":"emails","conn":9,'
        '"worker":"odd-worker"}\n'
    )
    (events / "date=2025-01-02" / "events odd name.jsonl").write_text(FAIL_LINE + reserve)
    direct, direct_partials = read_log(spark, str(events), None, None)
    cached, cached_partials = read_log(spark, str(events), None, None, str(cache))
    assertDataFrameEqual(_in_log_order(cached), _in_log_order(direct))
    for merge, name in ((failures_from_partials, "failures"), (worker_names, "worker_names")):
        assertDataFrameEqual(
            merge(getattr(cached_partials, name)), merge(getattr(direct_partials, name))
        )
    assert [r["worker"] for r in worker_names(cached_partials.worker_names).collect()
            if r["conn"] == 9] == ["odd-worker"]  # fmt: skip
    assert not [p for p in cache.rglob("*") if "odd" in p.name]  # parsed, never stored
