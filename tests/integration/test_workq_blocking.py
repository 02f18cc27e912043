"""Blocking lease, run and result with real concurrent workers over sockets."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from beanpod.client.workq import Client, NotFound, TimedOut
from beanpod.client.workq_aio import AsyncClient
from beanpod.protocols.workq import wire as w
from tests.support.workq_server import WorkqServer, new_id, wq, wq_server

__all__ = ["wq", "wq_server"]
Make = Callable[[], Client]


def worker_loop(make: Make, name: str, count: int, fail_every: int = 0) -> list[str]:
    """Lease `count` jobs of `name`, answering each with its payload reversed."""
    done = []
    with make() as c:
        for n in range(count):
            job = c.lease([name], 5000)
            if fail_every and n % fail_every == 0:
                c.fail(job.id, b"no")
            else:
                c.complete(job.id, job.payload[::-1])
            done.append(job.id)
    return done


def test_many_runs_served_by_concurrent_workers(wq: Make) -> None:
    runs = 24
    with ThreadPoolExecutor(max_workers=runs + 3) as pool:
        workers = [pool.submit(worker_loop, wq, "rev", runs // 3) for _ in range(3)]
        payloads = [b"job-%d" % n for n in range(runs)]

        def run(payload: bytes) -> tuple[bool, bytes]:
            with wq() as c:
                r = c.run(new_id(), "rev", 2000, 5000, payload)
                return r.success, r.result

        results = list(pool.map(run, payloads))
        assert results == [(True, p[::-1]) for p in payloads]
        assert sum(len(f.result()) for f in workers) == runs


def test_run_reports_failure(wq: Make) -> None:
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(worker_loop, wq, "f", 1, fail_every=1)
        r = wq().run(new_id(), "f", 2000, 5000, b"x")
        assert (r.success, r.result) == (False, b"no")


def test_run_times_out_after_wait_timeout_when_nobody_leases(wq: Make) -> None:
    c = wq()
    jid = new_id()
    started = time.monotonic()
    with pytest.raises(TimedOut):
        c.run(jid, "nobody", 1000, 150, b"")
    assert 0.1 < time.monotonic() - started < 2
    with pytest.raises(NotFound):
        c.inspect_job(jid)  # a run's job goes when the run returns


def test_run_leased_but_unfinished_times_out_at_the_ttr(wq: Make) -> None:
    c, worker = wq(), wq()
    jid = new_id()
    result: list[BaseException] = []

    def call() -> None:
        try:
            c.run(jid, "slow", 400, 100, b"")
        except TimedOut as exc:
            result.append(exc)

    thread = threading.Thread(target=call)
    started = time.monotonic()
    thread.start()
    assert worker.lease("slow", 2000).id == jid  # leased before the wait-timeout
    thread.join(5)
    elapsed = time.monotonic() - started
    assert result and 0.35 < elapsed < 3  # waited for the 400 ms TTR, not the 100 ms wait


def test_result_blocks_until_complete_from_another_connection(wq: Make) -> None:
    producer, worker, waiter = wq(), wq(), wq()
    jid = new_id()
    producer.add(jid, "r", 2000, 60_000, b"")
    job = worker.lease("r", 1000)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(waiter.result, jid, 5000)
        time.sleep(0.05)
        assert not pending.done()
        wq().complete(job.id, b"elsewhere")  # lease finished on yet another connection
        r = pending.result(5)
    assert (r.success, r.result) == (True, b"elsewhere")


def test_parked_lease_holds_later_pipelined_commands(wq_server: WorkqServer) -> None:
    raw = wq_server.raw()
    raw.send(b"lease pipe 5000\r\ninspect queue pipe\r\n")
    raw.sock.settimeout(0.1)
    with pytest.raises(TimeoutError):
        raw.sock.recv(1)  # nothing yet: the inspect waits behind the parked lease
    raw.sock.settimeout(10)
    jid = new_id().encode()
    with wq_server.client() as c:
        c.add(jid.decode(), "pipe", 1000, 60_000, b"go")
    lease = w.lease_reply(jid, b"pipe", 1000, b"go")
    assert raw.read(len(lease)) == lease
    queue = b"+OK 1\r\npipe 2\r\nready-len 0\r\nscheduled-len 0\r\n"
    assert raw.read(len(queue)) == queue
    raw.close()


def test_lease_survives_its_connection_and_ttr_requeues(wq: Make) -> None:
    c = wq()
    jid = new_id()
    c.add(jid, "t", 150, 60_000, b"", max_attempts=2)
    lessee = wq()
    lessee.lease("t", 1000)
    lessee.close()  # closing does not release the lease (only TTR does)
    assert c.inspect_job(jid)["state"] == b"4"
    again = c.lease("t", 2000)  # TTR requeues it
    assert again.id == jid and c.inspect_job(jid)["attempts"] == b"2"
    time.sleep(0.3)  # second TTR expiry uses the last attempt
    r = c.result(jid, 1000)
    assert (r.success, r.result) == (False, b"")


def test_ttl_eviction_is_counted(wq: Make) -> None:
    c = wq()
    jid = new_id()
    c.add(jid, "ttl", 1000, 100, b"")
    time.sleep(0.25)
    with pytest.raises(NotFound):
        c.inspect_job(jid)
    assert c.inspect_server()["evicted-jobs"] == "1"


def test_asyncio_client_workers_and_run(wq_server: WorkqServer) -> None:
    address = ("127.0.0.1", wq_server.workq_port)

    async def worker() -> None:
        async with await AsyncClient.connect(address) as c:
            for _ in range(5):
                job = await c.lease(["aio"], 5000)
                await c.complete(job.id, job.payload.upper())

    async def main() -> list[bytes]:
        task = asyncio.create_task(worker())
        out = []
        async with await AsyncClient.connect(address) as c:
            for n in range(5):
                out.append((await c.run(new_id(), "aio", 1000, 5000, b"job%d" % n)).result)
            with pytest.raises(TimedOut):
                await c.lease("aio", 0)
            assert (await c.inspect_server())["evicted-jobs"] == "0"
        await task
        return out

    assert asyncio.run(main()) == [b"JOB%d" % n for n in range(5)]
