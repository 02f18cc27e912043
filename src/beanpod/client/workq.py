"""A synchronous Workq client: one small typed method per protocol verb.

    with Client(("127.0.0.1", 9922)) as c:
        c.add(job_id, "ping", ttr=1000, ttl=60000, payload=b"hi")
        job = c.lease(["ping"], wait_timeout=1000)
        c.complete(job.id, b"pong")

Errors arrive as exceptions: `ClientError` (-CLIENT-ERROR), `ServerError`
(-SERVER-ERROR), `TimedOut` (-TIMEOUT), `NotFound` (-NOT-FOUND). The asyncio twin is
`beanpod.client.workq_aio.AsyncClient`; both share `workq_proto` (encoders, replies).
"""

from __future__ import annotations

import socket
from datetime import datetime
from types import TracebackType
from typing import Any

from beanpod.client import workq_proto as p
from beanpod.client.reconnect import DEFAULT, Backoff
from beanpod.client.socket_conn import AddressSpec, SocketConn
from beanpod.client.workq_proto import (
    Bytesish,
    ClientError,
    Job,
    NotFound,
    NotLeader,
    Record,
    Result,
    ServerError,
    Settled,
    TimedOut,
    WorkqError,
    format_time,
)
from beanpod.protocols.workq import wire as w

__all__ = [
    "Backoff",
    "Client",
    "ClientError",
    "Job",
    "NotFound",
    "NotLeader",
    "Record",
    "Result",
    "ServerError",
    "TimedOut",
    "WorkqError",
    "format_time",
]


class Client(SocketConn):
    """One connection to a Workq server. Not thread-safe; use one per thread.

    The connection is re-opened when lost (`backoff`, beanpod.client.reconnect), and the
    call in progress is sent again; a reply that only says the first send took effect
    (`Duplicate job` to add/schedule, `Duplicate result` to complete/fail, `-NOT-FOUND`
    to delete) is then a success. `address` may name several servers (a cluster's
    nodes: "h1:9922,h2:9922" or a list, beanpod.client.socket_conn): a connection lost
    or a follower's `NotLeader` moves the client on to the next."""

    def __init__(
        self,
        address: AddressSpec = ("127.0.0.1", w.DEFAULT_PORT),
        timeout: float | None = 30,
        backoff: Backoff | None = DEFAULT,
    ) -> None:
        super().__init__(address, timeout, w.DEFAULT_PORT)
        self.backoff = backoff
        self._sends = 0
        if backoff is None:
            self._connect()
        else:
            backoff.retrying()(self._connect)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _call(
        self, data: bytes, kind: int, settled: Settled | None = None, wait_ms: int = 0
    ) -> Any:
        """One command; `wait_ms` is how long the server may rightly take to answer (a
        blocking lease, run or result), added to the socket's timeout."""
        if self.backoff is None:
            return self._exchange(data, kind, wait_ms)
        sends = self._sends
        for attempt in self.backoff.retrying():
            with attempt:
                try:
                    return self._exchange(data, kind, wait_ms)
                except WorkqError as exc:
                    if self._sends - sends < 2 or settled is None or not settled(exc):
                        raise
                    return None  # an earlier send took effect; its reply was lost
        raise AssertionError("unreachable: tenacity re-raises the last error")

    def _exchange(self, data: bytes, kind: int, wait_ms: int = 0) -> Any:
        """Send one command, read its reply; a broken connection is dropped."""
        try:
            sock = self.sock or self._connect()
            self._sends += 1
            if not wait_ms or self.timeout is None:
                return self._send_and_read(sock, data, kind)
            sock.settimeout(self.timeout + wait_ms / 1000)
            try:
                return self._send_and_read(sock, data, kind)
            finally:
                sock.settimeout(self.timeout)
        except OSError as exc:  # NotLeader too: the next address is tried
            self._lost(exc)
            raise

    def _send_and_read(self, sock: socket.socket, data: bytes, kind: int) -> Any:
        sock.sendall(data)
        while (value := p.take_reply(kind, self._buf)) is p.INCOMPLETE:
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buf += chunk
        return value

    # ---- commands ----------------------------------------------------------------------

    def add(
        self, id: Bytesish, name: Bytesish, ttr: int, ttl: int, payload: Bytesish,
        priority: int | None = None, max_attempts: int | None = None,
        max_fails: int | None = None,
    ) -> None:  # fmt: skip
        """Enqueue a ready job. `ttr`/`ttl` in milliseconds."""
        data = p.add(id, name, ttr, ttl, payload, priority, max_attempts, max_fails)
        self._call(data, p.OK, p.ADDED)

    def schedule(
        self, id: Bytesish, name: Bytesish, ttr: int, ttl: int, time: datetime | str,
        payload: Bytesish, priority: int | None = None, max_attempts: int | None = None,
        max_fails: int | None = None,
    ) -> None:  # fmt: skip
        """Enqueue a job that becomes ready at `time` (whole seconds, UTC); its TTL counts
        from then."""
        data = p.add(id, name, ttr, ttl, payload, priority, max_attempts, max_fails, time)
        self._call(data, p.OK, p.ADDED)

    def run(
        self, id: Bytesish, name: Bytesish, ttr: int, wait_timeout: int, payload: Bytesish,
        priority: int | None = None,
    ) -> Result:  # fmt: skip
        """Enqueue a job and block until a worker completes or fails it."""
        data = p.run(id, name, ttr, wait_timeout, payload, priority)
        result: Result = self._call(data, p.RESULT, wait_ms=wait_timeout + ttr)  # TTR: leased
        return result

    def result(self, id: Bytesish, wait_timeout: int) -> Result:
        """A finished job's result, waiting up to `wait_timeout` ms for it."""
        result: Result = self._call(p.result(id, wait_timeout), p.RESULT, wait_ms=wait_timeout)
        return result

    def lease(self, names: list[str] | str, wait_timeout: int) -> Job:
        """Lease the next job of any of `names`, waiting up to `wait_timeout` ms."""
        job: Job = self._call(p.lease(names, wait_timeout), p.LEASE, wait_ms=wait_timeout)
        return job

    def complete(self, id: Bytesish, result: Bytesish = b"") -> None:
        """Mark a job completed with `result`."""
        self._call(p.finish(w.COMPLETE, id, result), p.OK, p.FINISHED)

    def fail(self, id: Bytesish, result: Bytesish = b"") -> None:
        """Report an explicit failure with `result` (retried while fails < max-fails)."""
        self._call(p.finish(w.FAIL, id, result), p.OK, p.FINISHED)

    def delete(self, id: Bytesish) -> None:
        """Remove a job whatever its state."""
        self._call(p.delete(id), p.OK, p.DELETED)

    def inspect_job(self, id: Bytesish) -> Record:
        """A job's keys (`name`, `ttr`, `payload`, `state`...) as raw bytes values."""
        records: list[tuple[bytes, Record]] = self._call(p.inspect(w.JOB, id), p.INSPECT)
        return records[0][1]

    def inspect_jobs(self, name: str, offset: int = 0, limit: int = 100) -> list[Record]:
        """Ready jobs of `name` in lease order (each record also has its `id`)."""
        return p.job_records(self._call(p.inspect(w.JOBS, name, offset, limit), p.INSPECT))

    def inspect_scheduled_jobs(self, name: str, offset: int = 0, limit: int = 100) -> list[Record]:
        """Scheduled (not yet due) jobs of `name`."""
        data = p.inspect(w.SCHEDULED_JOBS, name, offset, limit)
        return p.job_records(self._call(data, p.INSPECT))

    def inspect_queue(self, name: str) -> dict[str, int]:
        """`ready-len` and `scheduled-len` of one queue."""
        return p.queue_records(self._call(p.inspect(w.QUEUE, name), p.INSPECT))[name]

    def inspect_queues(self, offset: int = 0, limit: int = 100) -> dict[str, dict[str, int]]:
        """Queues in alphabetical order, with their lengths."""
        return p.queue_records(self._call(p.inspect(w.QUEUES, offset, limit), p.INSPECT))

    def inspect_server(self) -> dict[str, str]:
        """`active-clients`, `evicted-jobs`, `started`."""
        records: list[tuple[bytes, Record]] = self._call(p.inspect(w.SERVER), p.INSPECT)
        return {k: v.decode() for k, v in records[0][1].items()}
