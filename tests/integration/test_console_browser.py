"""The console's operator views in a real browser (chromium + Selenium, as
test_dashboard_browser): the Busy view names each holder, a failed qless job found by
its jid shows its error line first and the traceback behind a toggle, listed once on
Failures; the ready tab opens in reserve order; the Analytics page names the real
command. Screenshots go to tests/artifacts/ (not committed)."""

from __future__ import annotations

from typing import Any

from beanpod.client.qless import Client as Qless
from tests.integration.test_dashboard_browser import (  # the same browser and server
    By,
    browser,
    client,
    http,
    severe,
    shot,
    wait_for,
)
from tests.support.http import HttpServer

__all__ = ["browser", "http"]  # fixtures
TRACEBACK = """Traceback (most recent call last):
  File "app/send.py", line 12, in process
    smtp.send(message)
  File "app/smtp.py", line 40, in send
    raise TimeoutError("smtp timed out after 30 s")
TimeoutError: smtp timed out after 30 s"""


def test_busy_view_names_who_holds_each_job(http: HttpServer, browser: Any) -> None:
    with client(http, "emails") as c, Qless(port=http.server.port, worker_name="box-7-4242") as q:
        c.put("send it", ttr=120)
        job = c.reserve(timeout=5)
        peer = "{}:{}".format(*c._sock.getsockname()[:2])
        jid = q.queues["reports"].put("app.Report", {})
        q.queues["reports"].pop(1)
        browser.get(f"http://127.0.0.1:{http.port}/#/busy")
        row = wait_for(browser, f"tr[data-job='{job.id}']", peer)
        assert "emails" in row.text and "beanstalkd" in row.text
        qless_row = browser.find_element(By.XPATH, f"//tr[.//a[@href='#/find/{jid}']]")
        assert "box-7-4242" in qless_row.text and "qless" in qless_row.text
        shot(browser, "busy")
        browser.get(f"http://127.0.0.1:{http.port}/#/job/{job.id}")
        wait_for(browser, "dl.kv", peer)
        assert severe(browser) == []


def test_a_failed_qless_job_found_by_jid(http: HttpServer, browser: Any) -> None:
    with Qless(port=http.server.port, worker_name="w1") as q:
        queue = q.queues["emails"]
        jid = queue.put("app.Send", {"to": "a@example.com"}, priority=5, retries=3)
        queue.pop(1)[0].fail("app.Send:TimeoutError", TRACEBACK)
        base = f"http://127.0.0.1:{http.port}/"
        browser.get(base + "#/failures")
        wait_for(browser, "main table", "app.Send:TimeoutError")
        assert "No buried jobs in any tube." in browser.find_element(By.TAG_NAME, "main").text
        search = wait_for(browser, "#find-q")
        search.send_keys(jid + "\n")
        line = wait_for(browser, ".failure-line", "TimeoutError")
        assert line.text == "TimeoutError: smtp timed out after 30 s"
        facts = browser.find_element(By.CSS_SELECTOR, "dl.kv").text
        assert "priority\n5" in facts and "2,147,483" not in facts and "buries" not in facts
        assert "retries left\n3 of 3" in facts
        trace = browser.find_element(By.CSS_SELECTOR, "pre.traceback")
        assert not trace.is_displayed()
        shot(browser, "qless-failed-job")
        browser.find_element(By.CSS_SELECTOR, ".failure summary").click()
        assert trace.is_displayed() and 'File "app/smtp.py"' in trace.text
        shot(browser, "qless-failed-job-traceback")
        assert severe(browser) == []


def test_ready_tab_opens_in_reserve_order(http: HttpServer, browser: Any) -> None:
    with client(http, "work") as c:
        for n in range(60):
            c.put(f"bulk {n}", priority=5000)
        urgent = c.put("urgent", priority=10)
        browser.get(f"http://127.0.0.1:{http.port}/#/tube/work/ready")
        first = wait_for(browser, "tbody tr")
        assert first.get_attribute("data-job") == str(urgent)
        assert wait_for(browser, "#order").get_attribute("value") == "reserve"
        assert severe(browser) == []


def test_analytics_page_names_the_real_command(browser: Any) -> None:
    http = HttpServer().start()
    try:
        browser.get(f"http://127.0.0.1:{http.port}/#/analytics")
        text = wait_for(browser, "#analytics-off", "beanpod analyze --events DIR --out OUT").text
        assert "--analytics OUT" in text and "EVENTS_DIR" not in text
    finally:
        http.stop()
