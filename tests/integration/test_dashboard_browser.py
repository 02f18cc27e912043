"""The dashboard in a real browser (Debian's chromium, headless, driven by Selenium):
every page loads without console errors; a job buried over the beanstalkd protocol is
kicked from the UI and seen ready over the protocol; a bulk kick asks for confirmation.
Screenshots are saved under tests/artifacts/ (not committed) for a human to look at."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import greenstalk
import pytest

from tests.support.http import HttpServer

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
PAGES = ["", "#/tube/emails", "#/job/1", "#/failures", "#/workers", "#/analytics"]

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
    pytest.skip(f"needs {CHROMIUM} and {CHROMEDRIVER} (apt: chromium chromium-driver)",
                allow_module_level=True)  # fmt: skip

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def http(tmp_path: Path) -> Iterator[HttpServer]:
    report = tmp_path / "analytics"
    (report / "queue_daily").mkdir(parents=True)
    (report / "report.html").write_text("<!doctype html><title>r</title><h1>beanpod report</h1>")
    server = HttpServer(["--analytics", str(report)]).start()
    yield server
    server.stop()


@pytest.fixture
def browser() -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):  # fmt: skip
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(service=service, options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def client(http: HttpServer, tube: str) -> greenstalk.Client:
    return greenstalk.Client(("127.0.0.1", http.server.port), use=tube, watch=tube)


def wait_for(driver: Any, css: str, text: str | None = None) -> Any:
    wait = WebDriverWait(driver, 10)
    if text is not None:
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
    return wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))


def shot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"dashboard-{name}.png"))


def severe(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def seed(http: HttpServer) -> None:
    with client(http, "emails") as c:
        for i in range(12):
            c.put(f"hello {i}")
        for _ in range(4):
            c.bury(c.reserve(timeout=5))
        c.put("later", delay=600)


def test_every_page_loads_without_console_errors(http: HttpServer, browser: Any) -> None:
    seed(http)
    base = f"http://127.0.0.1:{http.port}/"
    for page in PAGES:
        browser.get(base + page)
        wait_for(browser, "#updated", "updated")
        heading = wait_for(browser, "main h1").text
        assert heading and "Cannot show" not in heading, (page, heading)
        shot(browser, page.strip("#/").replace("/", "-") or "overview")
        assert severe(browser) == [], page


def test_kick_a_buried_job_from_the_tube_page(http: HttpServer, browser: Any) -> None:
    with client(http, "emails") as c:
        c.put("needs a kick")
        job = c.reserve(timeout=5)
        c.bury(job)
        assert c.stats_job(job.id)["state"] == "buried"
        browser.get(f"http://127.0.0.1:{http.port}/#/tube/emails")
        wait_for(browser, f"button[data-kick='{job.id}']").click()
        wait_for(browser, "#flash", f"Job {job.id} kicked")
        assert c.stats_job(job.id)["state"] == "ready"
        shot(browser, "after-kick")
        assert severe(browser) == []


def test_bulk_kick_asks_for_confirmation(http: HttpServer, browser: Any) -> None:
    seed(http)
    with client(http, "emails") as c:
        browser.get(f"http://127.0.0.1:{http.port}/#/failures")
        wait_for(browser, "button[data-kick-tube='emails']").click()
        wait_for(browser, "#modal-text", "Kick 4 jobs of tube emails?")
        shot(browser, "confirm-kick")
        assert c.stats_tube("emails")["current-jobs-buried"] == 4  # nothing before confirming
        browser.find_element(By.ID, "modal-ok").click()
        wait_for(browser, "#flash", "Kick: 4 jobs")
        assert c.stats_tube("emails")["current-jobs-buried"] == 0
        assert severe(browser) == []
