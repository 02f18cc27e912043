"""The latest `beanpod analyze` run (with `--analytics DIR`): which tables it wrote and
when, and its report (charts and tables, self-contained HTML) for the dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

TABLES = ("queue_daily", "histograms", "failures", "throughput_hourly", "workers", "jobs")
REPORT = "report.html"


def latest_run(directory: str | None) -> dict[str, Any]:
    """{"enabled", "dir", "report", "generated", "tables": [{name, files, bytes}]}."""
    if directory is None:
        return {"enabled": False}
    root = Path(directory)
    report = root / REPORT
    doc: dict[str, Any] = {"enabled": True, "dir": str(root), "report": report.is_file()}
    doc["generated"] = report.stat().st_mtime if report.is_file() else None
    doc["tables"] = [_table(root / name) for name in TABLES if (root / name).is_dir()]
    return doc


def _table(path: Path) -> dict[str, Any]:
    files = [f for f in path.rglob("*.parquet") if f.is_file()]
    return {"name": path.name, "files": len(files), "bytes": sum(f.stat().st_size for f in files)}


def report_path(directory: str | None) -> Path | None:
    if directory is None:
        return None
    path = Path(directory) / REPORT
    return path if path.is_file() else None
