"""Spark's reader applies the contract's line rule exactly as the Python reference does."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession
from tests.support.analytics.reference import read_log

from beanpod.analytics.read import list_event_files, read_events
from beanpod.events.schema import FIELD_ORDER

LINES = [
    '{"v":1,"ts":10,"event":"put","job":1,"queue":"q","conn":3,"pri":5,"delay_ms":0}',
    '{"v":1,"ts":"10","event":"put","job":2,"queue":"q","conn":3}',
    '{"v":1,"ts":10.0,"event":"put","job":3,"queue":"q","conn":3}',
    '{"v":1,"ts":10,"event":"put","job":"4","queue":"q","conn":3}',
    '{"v":1,"ts":10,"event":"put","job":5,"queue":5,"conn":3}',
    '{"v":1,"ts":10,"event":"put","job":6,"queue":"5","conn":3}',
    '{"v":1,"ts":10,"event":"put","job":7,"queue":"q","conn":true}',
    "{'v':1,'ts':10,'event':'put','job':8,'queue':'q','conn':3}",
    "[1,2]",
    "",
    '{"v":1,"ts":10,"event":"put","job":9,"queue":"q","conn":3,"pri":NaN}',
    '{"v":1,"ts":10,"event":"put","job":10,"queue":"q","conn":3,"pri":"x"}',
    '{"v":1,"ts":10,"event":"put","job":11,"queue":{"a":1},"conn":3}',
    '{"v":0,"ts":10,"event":"put","job":12,"queue":"q","conn":3}',
    '{"ts":11,"event":"touch","queue":"q","worker":7}',
    '{"v":3,"ts":12,"event":"nope","job":13,"queue":"q","conn":3}',
    '{"v":3,"ts":12,"event":"reserve","job":14,"queue":"q","conn":3,"extra":1}',
    '{"v":1,"ts":13,"event":"delete","job":15,"queue":"q","conn":3,"state":"reserved"}',
]


def test_spark_reader_matches_the_reference_rule(spark: SparkSession, tmp_path: Path) -> None:
    folder = tmp_path / "date=1970-01-01"
    folder.mkdir()
    (folder / "events-0000000000010-000000.jsonl").write_text("\n".join(LINES[:9]) + "\n")
    (folder / "events-0000000000010-000001.jsonl").write_text("\n".join(LINES[9:]))  # torn
    (folder / "_ignored.jsonl").write_text(LINES[0] + "\n")
    (folder / ".hidden.jsonl").write_text(LINES[0] + "\n")
    columns = [c for c in FIELD_ORDER if c != "v"]
    actual = [tuple(r) for r in read_events(spark, str(tmp_path)).select(*columns).collect()]
    expected = [tuple(e[c] for c in columns) for e in read_log(tmp_path)]
    assert sorted(actual, key=repr) == sorted(expected, key=repr)
    assert {e[2] for e in expected} == {1, 6, None, 14, 15}


def test_list_event_files_in_name_order(spark: SparkSession, tmp_path: Path) -> None:
    for day, name in [
        ("2025-01-02", "events-2-000002"),
        ("2025-01-01", "events-1-000001"),
        ("2025-01-01", "events-1-000000"),
        ("2025-01-03", "events-3-000003"),
    ]:
        (tmp_path / f"date={day}").mkdir(exist_ok=True)
        (tmp_path / f"date={day}" / f"{name}.jsonl").write_text("")
    from datetime import date

    names = [
        f.path.rsplit("/", 1)[1]
        for f in list_event_files(spark, str(tmp_path), date(2025, 1, 1), date(2025, 1, 2))
    ]
    assert names == ["events-1-000000.jsonl", "events-1-000001.jsonl", "events-2-000002.jsonl"]
