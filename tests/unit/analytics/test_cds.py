"""The CDS archive of Spark's classes (analytics/cds.py): a small log's first run writes
it, later runs map it, and no state of the cache directory makes a run fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bench.analytics.generate import generate
from pyspark.sql import SparkSession
from tests.support.analytics import cli

from beanpod.analytics import cds

# The first run of a CLI in an empty cache directory also writes the archive: 30-60 CPU
# seconds, minutes of wall on a loaded machine (as test_analytics_cluster's runs).
pytestmark = pytest.mark.timeout(400)

PROBE = """
import json, sys
from beanpod.analytics.pipeline import start_session
spark, archive = start_session("local[1]", True, 1_000_000)
runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(json.dumps({"jvm_args": list(runtime.getInputArguments()),
                  "pending": archive is not None and archive.pending is not None}))
spark.stop()
"""


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    events = tmp_path_factory.mktemp("cds") / "events"
    generate(events, 2_000, days=2, queues=3)
    return events


@pytest.fixture(scope="module")
def first_run(log: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The cache directory after one run of the CLI into an empty one, and that run."""
    cache = log.parent / "cache"
    return cache, cli.analyze(log, log.parent / "out-first", {cds.DIR_ENV: str(cache)})


def test_the_first_run_writes_the_archive_whole(
    spark: SparkSession, log: Path, first_run: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    cache, done = first_run
    assert done.returncode == 0, done.stderr
    assert cli.only_progress(done.stderr), done.stderr
    cli.assert_reference_tables(spark, log, log.parent / "out-first")
    [archive] = cache.iterdir()  # published under its final name; no pending file left
    assert archive.name.startswith("spark-") and archive.suffix == ".jsa"
    assert archive.stat().st_size > 1_000_000


def test_a_later_run_maps_the_archive(
    spark: SparkSession, log: Path, first_run: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    cache, _ = first_run
    [archive] = cache.iterdir()
    env = {cds.DIR_ENV: str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=300, check=True, env={**os.environ, **env})  # fmt: skip
    probed = json.loads(done.stdout.strip().splitlines()[-1])
    assert f"-XX:SharedArchiveFile={archive}" in probed["jvm_args"]
    assert not probed["pending"]
    done = cli.analyze(log, log.parent / "out-mapped", env)
    assert done.returncode == 0, done.stderr
    assert cli.only_progress(done.stderr), done.stderr
    cli.assert_reference_tables(spark, log, log.parent / "out-mapped")
    assert list(cache.iterdir()) == [archive]


def test_an_unwritable_cache_directory_means_a_run_without_the_archive(
    spark: SparkSession, log: Path, tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("not a directory")  # unwritable even for root
    done = cli.analyze(log, tmp_path / "out", {cds.DIR_ENV: str(tmp_path / "a-file" / "cache")})
    assert done.returncode == 0, done.stderr
    assert cli.only_progress(done.stderr), done.stderr
    cli.assert_reference_tables(spark, log, tmp_path / "out")


def test_a_truncated_archive_is_dropped_and_the_run_succeeds(
    spark: SparkSession, log: Path, tmp_path: Path,
    first_run: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:  # fmt: skip
    """A truncated archive crashes the JVM that maps it: the run starts one without it."""
    [archive] = first_run[0].iterdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / archive.name).write_bytes(archive.read_bytes()[: archive.stat().st_size // 3])
    done = cli.analyze(log, tmp_path / "out", {cds.DIR_ENV: str(cache)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cli.assert_reference_tables(spark, log, tmp_path / "out")
    assert not (cache / archive.name).exists()  # the next run writes a new one


def test_an_archive_no_jvm_can_map_is_never_published(tmp_path: Path) -> None:
    """Only an archive a JVM maps (-Xshare:on, the same class path) gets the final name."""
    pending = tmp_path / "spark-x.jsa.1.tmp"
    pending.write_bytes(b"\x00" * 4096)
    java = Path(shutil.which("java") or "java").resolve()
    archive = cds.Archive(tmp_path / "spark-x.jsa", java, "", pending)
    archive.publish(0, classpath=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_the_switch_turns_the_archive_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cds.DIR_ENV, str(tmp_path))
    assert cds.prepare(tmp_path) is not None
    monkeypatch.setenv(cds.SWITCH_ENV, "off")
    assert cds.prepare(tmp_path) is None
