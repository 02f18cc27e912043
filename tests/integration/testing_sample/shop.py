"""A sample application: a shop that sends e-mails through a beanstalkd queue.
Producer and worker with greenstalk; a second producer and worker with pystalk."""

from __future__ import annotations

import json
from collections.abc import Callable

import greenstalk
import pystalk

TUBE = "emails"


def order_placed(client: greenstalk.Client[str], address: str, delay: int = 0) -> int:
    """Queue the confirmation e-mail of an order."""
    client.use(TUBE)
    return client.put(json.dumps({"to": address}), delay=delay, ttr=30)


def work_one(client: greenstalk.Client[str], send: Callable[[str], None]) -> str:
    """Send one queued e-mail: delete it when sent, bury it when sending fails."""
    client.watch(TUBE)
    job = client.reserve(timeout=0)
    try:
        send(json.loads(job.body)["to"])
    except Exception:
        client.bury(job)
        return "buried"
    client.delete(job)
    return "sent"


def order_placed_pystalk(client: pystalk.BeanstalkClient, address: str) -> int:
    _, job_id = client.put_job_into(TUBE, json.dumps({"to": address}), ttr=30)
    return int(job_id)


def work_one_pystalk(client: pystalk.BeanstalkClient, send: Callable[[str], None]) -> str:
    client.watch(TUBE)
    job = client.reserve_job(timeout=0)
    try:
        send(json.loads(job.job_data)["to"])
    except Exception:
        client.bury_job(job.job_id)
        return "buried"
    client.delete_job(job.job_id)
    return "sent"
