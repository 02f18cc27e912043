"""An asyncio Workq client, the twin of `beanpod.client.workq.Client`.

    async with await AsyncClient.connect(("127.0.0.1", 9922)) as c:
        await c.add(job_id, "ping", 1000, 60000, b"hi")
        job = await c.lease(["ping"], 1000)
        await c.complete(job.id, b"pong")

Calls on one client must not overlap (one connection answers in order); use one client
per task, or a lock.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from types import TracebackType
from typing import Any

from beanpod.client import workq_proto as p
from beanpod.client.workq_proto import Bytesish, Job, Record, Result
from beanpod.protocols.workq import wire as w


class AsyncClient:
    """One connection to a Workq server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._buf = bytearray()

    @classmethod
    async def connect(cls, address: tuple[str, int] = ("127.0.0.1", w.DEFAULT_PORT)) -> AsyncClient:
        return cls(*await asyncio.open_connection(*address))

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        self._writer.close()
        await self._writer.wait_closed()

    async def _call(self, data: bytes, kind: int) -> Any:
        self._writer.write(data)
        while (value := p.take_reply(kind, self._buf)) is p.INCOMPLETE:
            chunk = await self._reader.read(1 << 16)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buf += chunk
        return value

    async def add(
        self, id: Bytesish, name: Bytesish, ttr: int, ttl: int, payload: Bytesish,
        priority: int | None = None, max_attempts: int | None = None,
        max_fails: int | None = None,
    ) -> None:  # fmt: skip
        """Enqueue a ready job. `ttr`/`ttl` in milliseconds."""
        data = p.add(id, name, ttr, ttl, payload, priority, max_attempts, max_fails)
        await self._call(data, p.OK)

    async def schedule(
        self, id: Bytesish, name: Bytesish, ttr: int, ttl: int, time: datetime | str,
        payload: Bytesish, priority: int | None = None, max_attempts: int | None = None,
        max_fails: int | None = None,
    ) -> None:  # fmt: skip
        """Enqueue a job that becomes ready at `time` (UTC); its TTL counts from then."""
        data = p.add(id, name, ttr, ttl, payload, priority, max_attempts, max_fails, time)
        await self._call(data, p.OK)

    async def run(
        self, id: Bytesish, name: Bytesish, ttr: int, wait_timeout: int, payload: Bytesish,
        priority: int | None = None,
    ) -> Result:  # fmt: skip
        """Enqueue a job and wait until a worker completes or fails it."""
        data = p.run(id, name, ttr, wait_timeout, payload, priority)
        result: Result = await self._call(data, p.RESULT)
        return result

    async def result(self, id: Bytesish, wait_timeout: int) -> Result:
        """A finished job's result, waiting up to `wait_timeout` ms for it."""
        result: Result = await self._call(p.result(id, wait_timeout), p.RESULT)
        return result

    async def lease(self, names: list[str] | str, wait_timeout: int) -> Job:
        """Lease the next job of any of `names`, waiting up to `wait_timeout` ms."""
        job: Job = await self._call(p.lease(names, wait_timeout), p.LEASE)
        return job

    async def complete(self, id: Bytesish, result: Bytesish = b"") -> None:
        """Mark a job completed with `result`."""
        await self._call(p.finish(w.COMPLETE, id, result), p.OK)

    async def fail(self, id: Bytesish, result: Bytesish = b"") -> None:
        """Report an explicit failure with `result`."""
        await self._call(p.finish(w.FAIL, id, result), p.OK)

    async def delete(self, id: Bytesish) -> None:
        """Remove a job whatever its state."""
        await self._call(p.delete(id), p.OK)

    async def inspect_job(self, id: Bytesish) -> Record:
        """A job's keys as raw bytes values."""
        records: list[tuple[bytes, Record]] = await self._call(p.inspect(w.JOB, id), p.INSPECT)
        return records[0][1]

    async def inspect_server(self) -> dict[str, str]:
        """`active-clients`, `evicted-jobs`, `started`."""
        records: list[tuple[bytes, Record]] = await self._call(p.inspect(w.SERVER), p.INSPECT)
        return {k: v.decode() for k, v in records[0][1].items()}
