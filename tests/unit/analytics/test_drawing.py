"""The report's drawing process: a page for the data it is given, one line when it fails."""

from __future__ import annotations

from datetime import date

import pytest

from beanpod.analytics.drawing import Drawer, DrawingFailed
from beanpod.analytics.report_rows import ReportData


def test_the_child_draws_the_page_of_the_data_given() -> None:
    counts = ("put", "reserves", "deletes", "releases", "buries", "kicks", "timeouts")
    day: dict[str, object] = {"queue": "mail", "day": date(2026, 11, 27)}
    day |= {name: 2 for name in (*counts, "completes", "fails", "evictions")}
    for kind in ("wait", "run"):
        day |= {f"{kind}_{stat}": 1.5 for stat in ("mean_ms", "std_ms", "p50_ms", "p95_ms")}
        day |= {f"{kind}_count": 2, f"{kind}_p99_ms": 3.0}
    drawer = Drawer()
    try:
        page = drawer.draw(ReportData(queue_daily=[day])).result(timeout=60)
    finally:
        drawer.close()
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert "<td>mail</td>" in page or ">mail<" in page


def test_a_failing_child_is_one_line_with_its_error() -> None:
    drawer = Drawer()
    try:
        failed = r"^drawing the report failed: AttributeError: 'str' object has no attribute"
        with pytest.raises(DrawingFailed, match=failed):
            drawer.draw("not report data").result(timeout=60)  # type: ignore[arg-type]
    finally:
        drawer.close()


def test_close_ends_a_child_never_given_data() -> None:
    drawer = Drawer()
    drawer.close()
    assert drawer._proc.returncode is not None
