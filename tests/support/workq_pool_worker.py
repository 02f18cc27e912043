"""One process of the restart tests' Workq worker pool: `python -m
tests.support.workq_pool_worker PORT NAME LOG sync|aio` leases from queue `work` with
beanpod.client.workq (sync) or workq_aio (asyncio), appends each id it performs to LOG,
completes it with its own name as result, and runs until killed. It never gives up
reconnecting."""

from __future__ import annotations

import asyncio
import logging
import sys

from beanpod.client.reconnect import Backoff
from beanpod.client.workq import Client, ClientError, Job, TimedOut
from beanpod.client.workq_aio import AsyncClient

PATIENT = Backoff(maximum=0.5, give_up_after=None)
log = logging.getLogger("workq-pool")


def record(path: str, job: Job) -> None:
    with open(path, "a") as out:
        out.write(job.id + "\n")


def finished_elsewhere(exc: ClientError) -> bool:
    """After a restart a lease comes back PENDING and another worker may finish it."""
    return str(exc) == "Duplicate result"


def run_sync(port: int, name: str, path: str) -> None:
    client = Client(("127.0.0.1", port), timeout=60, backoff=PATIENT)
    while True:
        try:
            job = client.lease(["work"], 500)
        except TimedOut:
            continue
        record(path, job)
        try:
            client.complete(job.id, name)
        except ClientError as exc:
            if not finished_elsewhere(exc):
                raise
            log.warning("%s was finished by another worker", job.id)


async def run_aio(port: int, name: str, path: str) -> None:
    client = await AsyncClient.connect(("127.0.0.1", port), PATIENT)
    while True:
        try:
            job = await client.lease(["work"], 500)
        except TimedOut:
            continue
        record(path, job)
        try:
            await client.complete(job.id, name)
        except ClientError as exc:
            if not finished_elsewhere(exc):
                raise
            log.warning("%s was finished by another worker", job.id)


def main() -> None:
    port, name, path, kind = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    logging.basicConfig(level=logging.WARNING, format=f"{name} %(levelname)s %(message)s")
    if kind == "aio":
        asyncio.run(run_aio(port, name, path))
    else:
        run_sync(port, name, path)


if __name__ == "__main__":
    main()
