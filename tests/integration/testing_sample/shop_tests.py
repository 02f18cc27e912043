"""The sample application's tests, as a user would write them with beanpod.testing."""

from __future__ import annotations

import greenstalk
import pystalk
import pytest
import shop


@pytest.fixture
def client(beanpod_server):
    with greenstalk.Client(beanpod_server.address) as c:
        yield c


def fail(address: str) -> None:
    raise ConnectionError("smtp down")


def test_an_order_queues_one_email(beanpod_server, client):
    with beanpod_server.assert_jobs_put(1, tube="emails"):
        shop.order_placed(client, "ada@example.com")


def test_the_worker_sends_and_deletes(beanpod_server, client):
    sent = []
    shop.order_placed(client, "ada@example.com")
    assert shop.work_one(client, sent.append) == "sent"
    assert sent == ["ada@example.com"]
    beanpod_server.assert_tube_empty("emails")


def test_a_failed_send_is_buried(client):
    job_id = shop.order_placed(client, "ada@example.com")
    assert shop.work_one(client, fail) == "buried"
    assert client.peek_buried().id == job_id  # over the protocol: runs on beanstalkd too


def test_buried_jobs_are_visible_to_inspection(beanpod_server, client):
    shop.order_placed(client, "ada@example.com")
    shop.work_one(client, fail)
    [job] = beanpod_server.jobs(tube="emails", state="buried")
    assert b"ada@example.com" in job.body
    with pytest.raises(AssertionError, match="1 buried job"):
        beanpod_server.assert_no_buried()


def test_a_delayed_email_waits_for_the_clock(beanpod_server, client):
    shop.order_placed(client, "ada@example.com", delay=3600)
    with pytest.raises(greenstalk.TimedOutError):
        shop.work_one(client, print)
    beanpod_server.clock.advance(3600)  # an hour, at once
    assert shop.work_one(client, lambda to: None) == "sent"


def test_a_stuck_worker_loses_its_job_when_the_ttr_ends(beanpod_server, client):
    shop.order_placed(client, "ada@example.com")
    client.watch("emails")
    stuck = client.reserve(timeout=0)
    beanpod_server.clock.advance(30)  # the job's TTR
    with greenstalk.Client(beanpod_server.socket()) as other:
        other.watch("emails")
        assert other.reserve(timeout=0).id == stuck.id
    assert beanpod_server.job(stuck.id).timeouts == 1


def test_deadline_soon_with_the_virtual_clock(beanpod_server, client):
    shop.order_placed(client, "ada@example.com")
    client.watch("emails")
    client.reserve(timeout=0)
    beanpod_server.clock.advance(29.5)  # inside the last second of the TTR
    with pytest.raises(greenstalk.DeadlineSoonError):
        client.reserve(timeout=0)


def test_deadline_soon_in_real_time(client):
    client.put("x", ttr=1)  # a one-second TTR is inside its safety margin at once
    client.reserve(timeout=0)
    with pytest.raises(greenstalk.DeadlineSoonError):
        client.reserve(timeout=0)


def test_pystalk_producer_and_worker(beanpod_server):
    client = pystalk.BeanstalkClient(beanpod_server.host, beanpod_server.port)
    shop.order_placed_pystalk(client, "bob@example.com")
    assert shop.work_one_pystalk(client, fail) == "buried"
    assert client.stats_tube("emails")["current-jobs-buried"] == 1
    client.close()


def test_a_full_server_is_handled(beanpod_server, client):
    beanpod_server.fail_next("put", "OUT_OF_MEMORY")
    with pytest.raises(greenstalk.OutOfMemoryError):
        shop.order_placed(client, "ada@example.com")
    assert shop.order_placed(client, "ada@example.com") == 1  # the next one goes in
