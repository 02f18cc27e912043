"""``beanpod analyze``: run the PySpark pipeline over an event log (needs beanpod[analytics])."""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from datetime import date, datetime
from pathlib import Path
from urllib.parse import urlparse

import click

from beanpod.events.writer import log_files

#: A Java was found but Spark's JVM exited at start; its own lines are above this one.
JVM_FAILED = (
    "Spark's JVM did not start (its error is above): Spark needs Java 17; check "
    "`java -version` and JAVA_HOME ({})"
)
INSTALL_HINT = "pyspark is not installed: pip install 'beanpod[analytics]'"
JAVA_HINT = (
    "Spark needs Java 17 and none was found (no `java` on PATH, no JAVA_HOME): "
    "apt-get install openjdk-17-jre-headless (Debian/Ubuntu), or set JAVA_HOME"
)
EXIT_NO_LOG = 2  # the event-log directory does not exist (a typo in a cron line)
EXIT_EMPTY_LOG = 3  # the log holds no events (unless --allow-empty)
EXIT_ENVIRONMENT = 4  # pyspark or Java is missing


class AnalyzeError(click.ClickException):
    """pyspark or Java is missing; the subclasses name the other causes by their status
    (click reads `exit_code` from the class)."""

    exit_code = EXIT_ENVIRONMENT


class NoEventLogError(AnalyzeError):
    exit_code = EXIT_NO_LOG


class EmptyEventLogError(AnalyzeError):
    exit_code = EXIT_EMPTY_LOG


def _day(
    ctx: click.Context | None, param: click.Parameter | None, value: str | None
) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a day like 2024-05-31") from None


@click.command("analyze")
@click.option("--events", "events_uri", required=True, help="Event log directory or URI.")
@click.option("--out", "out_uri", required=True, help="Output directory or URI.")
@click.option("--master", default=None, help="Spark master URL (default local[*]).")
@click.option("--from", "day_from", default=None, callback=_day, help="First UTC day.")
@click.option("--to", "day_to", default=None, callback=_day, help="Last UTC day.")
@click.option("--allow-empty", is_flag=True, help="An empty event log is not an error.")
@click.option("-V", "--verbose", count=True, help="Show Spark's own log lines (WARN and up).")
def analyze(
    events_uri: str, out_uri: str, master: str | None, day_from: date | None,
    day_to: date | None, allow_empty: bool, verbose: int,
) -> None:  # fmt: skip
    """Turn the event log into queue statistics (Parquet) and OUT/report.html."""
    started = time.monotonic()  # the total includes the JVM's start
    if day_from and day_to and day_from > day_to:
        raise click.BadParameter("--from is after --to")
    log_bytes = _check_log(events_uri, allow_empty)
    _check_environment(master)
    from beanpod.analytics.pipeline import Progress, run
    from beanpod.analytics.write import TABLES

    def show(p: Progress) -> None:
        now = datetime.now().strftime("%H:%M:%S")
        if p.seconds is None:
            click.echo(f"{now} [{p.index}/{p.total}] {p.stage} ...", err=True)
        else:
            click.echo(f"{now} [{p.index}/{p.total}] {p.stage} done ({p.seconds:.1f}s)", err=True)

    from pyspark.errors import PySparkRuntimeError

    try:
        run(events_uri, out_uri, master, day_from, day_to, progress=show,
                      quiet=verbose == 0, log_bytes=log_bytes)  # fmt: skip
    except PySparkRuntimeError as exc:
        if "JAVA_GATEWAY_EXITED" not in str(exc):
            raise
        raise AnalyzeError(JVM_FAILED.format(os.environ.get("JAVA_HOME") or "unset")) from None
    click.echo(
        f"wrote {out_uri.rstrip('/')}/report.html and {len(TABLES)} tables "
        f"in {time.monotonic() - started:.1f}s"
    )


def _local_path(uri: str) -> Path | None:
    """The local directory `uri` names, or None for a remote one (hdfs://, s3a://...)."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return Path(parsed.path if parsed.scheme else uri)
    return None


def _check_log(events_uri: str, allow_empty: bool) -> int | None:
    """The log's size in bytes (None for a remote URI, read as it is). A missing directory
    is an error; one with no event files is one too, unless --allow-empty."""
    path = _local_path(events_uri)
    if path is None:
        return None
    if not path.is_dir():
        raise NoEventLogError(f"no event-log directory at {path}")
    files = log_files(path)
    if allow_empty or files:
        return sum(_size(p) for p in files)
    raise EmptyEventLogError(
        f"{path} holds no event files (events-*.jsonl under date=YYYY-MM-DD/): is it the "
        "directory `beanpod serve --events` writes? (--allow-empty to write an empty report)"
    )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # rotated away meanwhile
        return 0


def _check_environment(master: str | None) -> None:
    if importlib.util.find_spec("pyspark") is None:
        raise AnalyzeError(INSTALL_HINT)
    if master is not None and not master.startswith("local"):
        return  # a cluster brings its own Java
    java_home = os.environ.get("JAVA_HOME")
    if java_home:  # Spark's scripts then run $JAVA_HOME/bin/java, never `java` on PATH
        if not os.access(Path(java_home, "bin", "java"), os.X_OK):
            raise AnalyzeError(_bad_java_home(java_home))
    elif shutil.which("java") is None:
        raise AnalyzeError(JAVA_HINT)


def _bad_java_home(java_home: str) -> str:
    """One line naming JAVA_HOME's value and the fix (the Java on PATH, if there is one)."""
    java = shutil.which("java")
    if java is None:
        fix = "point it at a Java 17 (apt-get install openjdk-17-jre-headless)"
    else:
        fix = f"set JAVA_HOME={Path(java).resolve().parent.parent} or unset it to use {java}"
    return f"JAVA_HOME={java_home} has no bin/java, which Spark runs: {fix}"
