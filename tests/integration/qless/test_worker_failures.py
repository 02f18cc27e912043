"""A job that raises: the Worker logs it, the failure says what went wrong first, and
the retry-on-exception example of docs/qless.md does what the page says (a server
process, a real Worker)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from beanpod.client.qless import Client, Job
from beanpod.client.qless_worker import Worker
from tests.support.servers import SubprocessServer

DOC = Path(__file__).parents[3] / "docs" / "qless.md"


class BadAddress(ValueError):
    """A permanent error raised by a job."""


@pytest.fixture
def served() -> Iterator[SubprocessServer]:
    srv = SubprocessServer().start()
    yield srv
    srv.stop()


def _worker(srv: SubprocessServer, handler: Any) -> Worker:
    return Worker(lambda: Client(port=srv.port, worker_name="w1"), ["emails"], handler,
                  interval=0.05)  # fmt: skip


def test_a_failure_is_logged_at_warning_and_stored_summary_first(
    served: SubprocessServer, caplog: pytest.LogCaptureFixture
) -> None:
    def handler(job: Job) -> None:
        raise BadAddress(f"no such mailbox:\n{job.data['to']}")

    caplog.set_level(logging.WARNING, logger="beanpod.client")
    with Client(port=served.port) as client:
        client.queues["emails"].put("app.SendEmail", {"to": "a@b"}, jid="j1", retries=5)
        worker = _worker(served, handler)
        assert worker.run(max_jobs=1) == 1
        worker.client.close()
        job = client.jobs["j1"]
    summary = f"{__name__}.BadAddress: no such mailbox: a@b"
    [record] = [r for r in caplog.records if r.name == "beanpod.client.qless_worker"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == f"job j1 (app.SendEmail) failed: {summary}"
    assert job is not None and job.state == "failed"
    assert job.retries_left == 5  # an exception uses up no retry
    assert job.failure["group"] == "app.SendEmail:BadAddress"
    first, blank, *trace = job.failure["message"].split("\n")
    assert (first, blank, trace[0]) == (summary, "", "Traceback (most recent call last):")
    assert trace[-3:] == [f"{__name__}.BadAddress: no such mailbox:", "a@b", ""]  # its own end


def _doc_example() -> dict[str, Any]:
    """The retry-on-exception block of docs/qless.md, run as written."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    [code] = [b for b in blocks if "job.retry(RETRY_DELAY)" in b]
    namespace: dict[str, Any] = {"__name__": "doc_example"}
    exec(compile(code, str(DOC), "exec"), namespace)
    return namespace


def test_the_documented_retry_on_exception(
    served: SubprocessServer, caplog: pytest.LogCaptureFixture
) -> None:
    example = _doc_example()
    example["RETRY_DELAY"] = 0.2
    sent: list[str] = []

    def send(to: str) -> None:  # down for the first two tries of `flaky`, always for `down`
        sent.append(to)
        if to == "down" or sent.count(to) < 3:
            raise example["TryLater"]("try again later")

    example["send"] = send
    with Client(port=served.port) as client:
        emails = client.queues["emails"]
        emails.put("app.SendEmail", {"to": "flaky"}, jid="flaky", retries=2)
        emails.put("app.SendEmail", {"to": "down"}, jid="down", retries=1)
        worker = _worker(served, example["perform"])
        assert worker.run(max_jobs=5) == 5  # flaky: 3 tries; down: 2
        worker.client.close()
        flaky, down = client.jobs["flaky"], client.jobs["down"]
    assert sorted(sent) == ["down", "down", "flaky", "flaky", "flaky"]
    assert flaky is not None and flaky.state == "complete"
    assert [h["what"] for h in flaky.history].count("popped") == 3
    assert down is not None and down.state == "failed"
    assert down.failure["group"] == "failed-retries-emails"
    assert not [r for r in caplog.records if r.name.startswith("beanpod.client")]
