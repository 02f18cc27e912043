"""The report reads well whatever the log's span: one minute, one hour, three days.

Each report is rendered from a generated log and, when Debian's chromium is installed,
screenshotted whole into tests/artifacts/ (look at them: would an operator understand the
page at a glance?)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bench.analytics.generate import DAY_MS, generate
from pyspark.sql import SparkSession

from beanpod.analytics.pipeline import run

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
SPANS = {  # name: (span of arrivals, throughput bucket the report should pick)
    "1-minute": (60_000, "second"),
    "1-hour": (3_600_000, "minute"),
    "3-day": (3 * DAY_MS, "hour"),
}


@pytest.fixture(scope="module", params=list(SPANS))
def report(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    name = request.param
    base = tmp_path_factory.mktemp(f"report-{name}")
    generate(base / "events", 4_000, span_ms=SPANS[name][0], queues=3)
    run(str(base / "events"), str(base / "out"), spark=spark)
    return name, base / "out" / "report.html"


def test_summary_leads_with_wait_and_run_percentiles(report: tuple[str, Path]) -> None:
    page = report[1].read_text()
    header = page[page.index("<table>") : page.index("</tr>", page.index("</tr>") + 1)]
    assert re.findall(r"<th[^>]*>([^<]+)</th>", header)[:3] == ["queue", "wait", "run"]
    assert header.count("<th>p50</th>") == 2 and header.count("<th>p99</th>") == 2
    first_row = page[page.index("<tr><td>") :].split("</tr>")[0]
    cells = re.findall(r"<td>([^<]*)</td>", first_row)
    assert all(re.fullmatch(r"[\d.]+ (ms|s|min|h|d)", c) for c in cells[1:7]), cells


def test_time_axis_fits_the_span_and_workers_have_names(report: tuple[str, Path]) -> None:
    name, path = report
    page = path.read_text()
    assert f'alt="throughput of q0 per {SPANS[name][1]}"' in page
    assert re.search(r"Events from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d to .* UTC", page)
    workers = re.search(r'alt="busiest workers: ([^"]+)"', page)
    assert workers is not None
    labels = workers.group(1).split(", ")
    assert any(label.startswith("worker-") for label in labels)  # the names clients gave
    assert any(re.fullmatch(r"10\.0\.0\.\d+:\d+", label) for label in labels)  # else peers


def test_screenshot(report: tuple[str, Path]) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    name, path = report
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"report-{name}.png"
    shot.unlink(missing_ok=True)
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={shot}", "--window-size=1100,5200", path.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert shot.stat().st_size > 20_000  # a page of charts, not a blank one
