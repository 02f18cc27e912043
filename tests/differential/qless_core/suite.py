"""Where qless-core's suite is, and which of its tests beanpod deliberately fails.

The lists live in one place, docs/qless.md: the tables under "Deliberate differences
from qless-core's suite" and "Tests of qless-core's suite that do not apply", rows
`| `test_file.py::TestClass::test_name` | reason |`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs" / "qless.md"
LISTED = "### Deliberate differences from qless-core's suite"  # xfail (strict) on beanpod
NOT_APPLICABLE = "### Tests of qless-core's suite that do not apply"  # skipped on both
ROW = re.compile(r"^\|\s*`(test_\w+\.py::\w+::\w+)`\s*\|\s*(.+?)\s*\|\s*$")


def suite_dir() -> Path | None:
    """QLESS_CORE_DIR: the converted test/ directory (with common.py), or None."""
    value = os.environ.get("QLESS_CORE_DIR")
    if not value:
        return None
    directory = Path(value)
    return directory if (directory / "common.py").is_file() else None


def table(section: str, docs: Path = DOCS) -> dict[str, str]:
    """{"test_job.py::TestJob::test_x": reason} from the table under `section`."""
    rows: dict[str, str] = {}
    inside = False
    for line in docs.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            inside = line.strip() == section
        elif inside and (row := ROW.match(line)):
            rows[row.group(1)] = row.group(2)
    return rows
