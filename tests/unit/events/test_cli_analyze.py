"""``beanpod analyze``: arguments, and the errors a cron line's typo or a missing Java gives
(one line each, documented exit statuses), checked before Spark starts."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("pyspark", reason="pyspark not installed (beanpod[analytics])")

from beanpod.analytics import pipeline
from beanpod.cli import analyze as cli_analyze


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli_analyze.analyze, list(args))


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    day = tmp_path / "events" / "date=2026-11-24"
    day.mkdir(parents=True)
    (day / "events-1764000000000-000000.jsonl").write_text("")
    return tmp_path / "events"


def test_missing_directory_is_exit_2(tmp_path: Path) -> None:
    result = invoke("--events", str(tmp_path / "typo"), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert f"no event-log directory at {tmp_path / 'typo'}" in result.output


def test_empty_log_is_an_error_unless_allowed(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "events").mkdir()
    result = invoke("--events", str(tmp_path / "events"), "--out", str(tmp_path / "o"))
    assert result.exit_code == 3 and "holds no event files" in result.output
    ran: list[str] = []
    monkeypatch.setattr(pipeline, "run", lambda uri, *a, **k: ran.append(uri) or {"a": 1.0})
    result = invoke("--events", str(tmp_path / "events"), "--out", "o", "--allow-empty")
    assert result.exit_code == 0 and ran == [str(tmp_path / "events")]


def test_missing_pyspark_exits_with_install_hint(log_dir: Path, monkeypatch: Any) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name)
    )
    result = invoke("--events", str(log_dir), "--out", "o")
    assert result.exit_code == 4
    assert "pip install 'beanpod[analytics]'" in result.output


def test_missing_java_is_one_line_with_the_fix(log_dir: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    result = invoke("--events", str(log_dir), "--out", "o")
    assert result.exit_code == 4
    assert result.output.count("\n") == 1
    assert "Spark needs Java 17" in result.output and "openjdk-17-jre-headless" in result.output


def test_verbose_lets_spark_log_and_quiet_is_the_default(log_dir: Path, monkeypatch: Any) -> None:
    seen: list[bool] = []
    monkeypatch.setattr(pipeline, "run", lambda *a, **k: seen.append(k["quiet"]) or {"a": 1.0})
    assert invoke("--events", str(log_dir), "--out", "o").exit_code == 0
    assert invoke("--events", str(log_dir), "--out", "o", "-V").exit_code == 0
    assert seen == [True, False]


def test_bad_day_is_a_usage_error() -> None:
    result = invoke("--events", "e", "--out", "o", "--to", "2025-02-30")
    assert result.exit_code == 2 and "not a day" in result.output


def test_the_log_size_reaches_the_pipeline_before_spark_starts(
    log_dir: Path, monkeypatch: Any
) -> None:
    (log_dir / "date=2026-11-24" / "events-1764000000000-000001.jsonl").write_text("x" * 700)
    (log_dir / "date=2026-11-25").mkdir()
    (log_dir / "date=2026-11-25" / "events-1764100000000-000002.jsonl").write_text("y" * 300)
    (log_dir / "date=2026-11-25" / "notes.txt").write_text("z" * 5000)
    seen: list[int | None] = []
    monkeypatch.setattr(pipeline, "run", lambda *a, **k: seen.append(k["log_bytes"]) or {"a": 1})
    assert invoke("--events", str(log_dir), "--out", "o").exit_code == 0
    assert invoke("--events", "hdfs://namenode/events", "--out", "o").exit_code == 0
    assert seen == [1000, None]


def run_cli(log_dir: Path, out: Path, env: dict[str, str]) -> Any:
    """``beanpod analyze`` in its own process (Spark's scripts and the JVM are real)."""
    command = [sys.executable, "-m", "beanpod", "analyze", "--events", str(log_dir)]
    return subprocess.run(
        [*command, "--out", str(out)], capture_output=True, text=True, timeout=120, env=env
    )


@pytest.mark.parametrize("java_on_path", [True, False])
def test_a_wrong_java_home_is_one_line_naming_it(
    log_dir: Path, tmp_path: Path, java_on_path: bool
) -> None:
    """The real CLI in its own process: Spark's scripts would run $JAVA_HOME/bin/java and
    print their own shell errors; the check names the value and the fix first."""
    java_home = tmp_path / "no such java"
    env = {**os.environ, "JAVA_HOME": str(java_home)}
    if not java_on_path:  # only the venv's scripts and the shell's tools
        env["PATH"] = f"{Path(sys.executable).parent}:{tmp_path / 'empty'}"
    done = run_cli(log_dir, tmp_path / "out", env)
    assert done.returncode == 4
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"JAVA_HOME={java_home} has no bin/java" in done.stderr
    assert "spark-class" not in done.stderr and done.stdout == ""
    if java_on_path:
        assert "or unset it to use" in done.stderr
    else:
        assert "openjdk-17-jre-headless" in done.stderr


def test_a_jvm_that_fails_to_start_shows_its_own_error(log_dir: Path, tmp_path: Path) -> None:
    """The JVM's stderr goes through beanpod's pipe (the incubator warning filtered out),
    which is read before the JVM starts: a JVM that cannot start still says why."""
    env = {**os.environ, "JAVA_TOOL_OPTIONS": "-XX:+NoSuchBeanpodFlag"}
    env.pop("JAVA_HOME", None)
    done = run_cli(log_dir, tmp_path / "out", env)
    assert done.returncode == 4
    assert "Unrecognized VM option 'NoSuchBeanpodFlag'" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("Error: Spark's JVM did not start (its error")
