"""The console's operator views in a real browser (chromium + Selenium, as
test_dashboard_browser): the Busy view names each holder, a failed qless job found by
its jid shows its error line first and the traceback behind a toggle, listed once on
Failures and retried from its page; a recurring template shows its schedule; the ready
tab opens in reserve order and the others in the server's default order; durations in
one style; the Analytics page names the real command, also for an empty directory.
Screenshots go to tests/artifacts/ (not committed)."""

from __future__ import annotations

import re
from pathlib import Path
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
        assert "emails" in row.text
        who = row.find_element(By.CSS_SELECTOR, "td.holder-name").text
        assert re.fullmatch(re.escape(peer) + r" \(beanstalkd connection #\d+\)", who), who
        qless_row = browser.find_element(By.XPATH, f"//tr[.//a[@href='#/find/{jid}']]")
        assert "box-7-4242 (qless worker)" in qless_row.text
        ttr = row.find_elements(By.CSS_SELECTOR, "td.num")[1].text
        assert ttr.endswith(" of 2m 0s") and " s of" not in ttr, ttr  # one duration style
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
        assert "retries\n3 (none used)" in facts
        first, second = browser.find_elements(By.CSS_SELECTOR, "main h1 .state")
        assert second.rect["x"] - (first.rect["x"] + first.rect["width"]) >= 4  # badges apart
        trace = browser.find_element(By.CSS_SELECTOR, "pre.traceback")
        assert not trace.is_displayed()
        shot(browser, "qless-failed-job")
        browser.find_element(By.CSS_SELECTOR, ".failure summary").click()
        assert trace.is_displayed() and 'File "app/smtp.py"' in trace.text
        shot(browser, "qless-failed-job-traceback")
        assert not browser.find_elements(By.CSS_SELECTOR, "button[data-kick]")  # Retry instead
        browser.find_element(By.CSS_SELECTOR, f"button[data-retry-job='{jid}']").click()
        wait_for(browser, "#flash", f"Job {jid} back to waiting in emails")
        assert q.jobs[jid].state == "waiting"
        wait_for(browser, "main h1", "qless waiting")
        shot(browser, "qless-retried-job")
        assert severe(browser) == []


def test_a_recurring_template_shows_its_schedule(http: HttpServer, browser: Any) -> None:
    with Qless(port=http.server.port) as q:
        jid = q.queues["ticks"].recur("app.Tick", {"n": 1}, interval=90, offset=3600, retries=2)
        browser.get(f"http://127.0.0.1:{http.port}/#/find/{jid}")
        facts = wait_for(browser, "dl.kv", "recurring template").text
        assert "every\n1m 30s" in facts and "retries\n2 for each job it spawns" in facts
        assert "spawned\n0 jobs so far" in facts and "queue\nticks" in facts
        badges = browser.find_elements(By.CSS_SELECTOR, "main h1 .state")
        assert [b.text for b in badges] == ["qless recurring template"]
        assert "undefined" not in browser.find_element(By.TAG_NAME, "main").text
        shot(browser, "qless-recurring")
        assert severe(browser) == []


def test_durations_round_before_choosing_the_unit(http: HttpServer, browser: Any) -> None:
    browser.get(f"http://127.0.0.1:{http.port}/#/busy")
    wait_for(browser, "#updated", "updated")
    shown = browser.execute_script("return [500, 9960, 59600, 60000, 3599700].map(ms)")
    assert shown == ["500 ms", "10 s", "1m 0s", "1m 0s", "1h 0m"]


def test_other_tabs_open_in_the_servers_default_order(http: HttpServer, browser: Any) -> None:
    with client(http, "work") as c:
        ids = [c.put(f"job {n}") for n in range(3)]
        for _ in ids:
            c.bury(c.reserve(timeout=5))
        browser.get(f"http://127.0.0.1:{http.port}/#/tube/work/buried")
        first = wait_for(browser, "tbody tr")
        assert first.get_attribute("data-job") == str(ids[0])  # oldest first, as the API
        assert wait_for(browser, "#order").get_attribute("value") == "oldest"
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


def test_an_empty_analytics_directory_says_how_to_fill_it(tmp_path: Path, browser: Any) -> None:
    out = tmp_path / "out"
    out.mkdir()
    http = HttpServer(["--analytics", str(out)]).start()
    try:
        browser.get(f"http://127.0.0.1:{http.port}/#/analytics")
        command = f"beanpod analyze --events DIR --out {out}"
        text = wait_for(browser, "#analytics-empty", command).text
        assert "no tables and no report.html" in text and "docs/analytics.md" in text
        shot(browser, "analytics-empty")
        assert severe(browser) == []
    finally:
        http.stop()
