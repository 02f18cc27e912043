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
import contextlib
from datetime import datetime
from types import TracebackType
from typing import Any

from beanpod.client import workq_proto as p
from beanpod.client.reconnect import DEFAULT, Backoff
from beanpod.client.socket_conn import Addresses, AddressSpec
from beanpod.client.workq_proto import Bytesish, Job, Record, Result, Settled, WorkqError
from beanpod.protocols.workq import wire as w


class AsyncClient:
    """One connection to a Workq server. Made by `connect`, it re-opens a lost
    connection with `backoff` and sends the call in progress again, as the sync client
    does (beanpod.client.reconnect)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
        addresses: Addresses | None = None, backoff: Backoff | None = None,
    ) -> None:  # fmt: skip
        self._reader: asyncio.StreamReader | None = reader
        self._writer: asyncio.StreamWriter | None = writer
        self.addresses = addresses
        self.backoff = backoff if addresses is not None else None
        self._buf = bytearray()
        self._sends = 0

    @classmethod
    async def connect(
        cls,
        address: AddressSpec = ("127.0.0.1", w.DEFAULT_PORT),
        backoff: Backoff | None = DEFAULT,
    ) -> AsyncClient:
        """Open the connection (called by `async with`); `address` may name several
        servers, tried in turn (beanpod.client.socket_conn)."""
        addresses = Addresses(address, w.DEFAULT_PORT)
        if backoff is None:
            return cls(*await _open(addresses))
        async for attempt in backoff.async_retrying():
            with attempt:
                return cls(*await _open(addresses), addresses, backoff)
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection."""
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _call(self, data: bytes, kind: int, settled: Settled | None = None) -> Any:
        if self.backoff is None:
            return await self._exchange(data, kind)
        sends = self._sends
        async for attempt in self.backoff.async_retrying():
            with attempt:
                try:
                    return await self._exchange(data, kind)
                except WorkqError as exc:
                    if self._sends - sends < 2 or settled is None or not settled(exc):
                        raise
                    return None  # an earlier send took effect; its reply was lost
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def _exchange(self, data: bytes, kind: int) -> Any:
        """Send one command, read its reply; a broken connection is dropped."""
        try:
            if self._writer is None or self._reader is None:
                if self.addresses is None:
                    raise ConnectionError("the client is closed")
                self._reader, self._writer = await _open(self.addresses)
                self._buf.clear()
            reader, writer = self._reader, self._writer
            self._sends += 1
            writer.write(data)
            while (value := p.take_reply(kind, self._buf)) is p.INCOMPLETE:
                chunk = await reader.read(1 << 16)
                if not chunk:
                    raise ConnectionError("the server closed the connection")
                self._buf += chunk
        except OSError as exc:  # NotLeader too: the next address is tried
            await self.close()
            if self.addresses is not None and not isinstance(exc, TimeoutError):
                self.addresses.move_on()
            raise
        return value

    async def add(
        self, id: Bytesish, name: Bytesish, ttr: int, ttl: int, payload: Bytesish,
        priority: int | None = None, max_attempts: int | None = None,
        max_fails: int | None = None,
    ) -> None:  # fmt: skip
        """Enqueue a ready job. `ttr`/`ttl` in milliseconds."""
        data = p.add(id, name, ttr, ttl, payload, priority, max_attempts, max_fails)
        await self._call(data, p.OK, p.ADDED)

    async def schedule(
        self, id: Bytesish, name: Bytesish, ttr: int, ttl: int, time: datetime | str,
        payload: Bytesish, priority: int | None = None, max_attempts: int | None = None,
        max_fails: int | None = None,
    ) -> None:  # fmt: skip
        """Enqueue a job that becomes ready at `time` (UTC); its TTL counts from then."""
        data = p.add(id, name, ttr, ttl, payload, priority, max_attempts, max_fails, time)
        await self._call(data, p.OK, p.ADDED)

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
        await self._call(p.finish(w.COMPLETE, id, result), p.OK, p.FINISHED)

    async def fail(self, id: Bytesish, result: Bytesish = b"") -> None:
        """Report an explicit failure with `result`."""
        await self._call(p.finish(w.FAIL, id, result), p.OK, p.FINISHED)

    async def delete(self, id: Bytesish) -> None:
        """Remove a job whatever its state."""
        await self._call(p.delete(id), p.OK, p.DELETED)

    async def inspect_job(self, id: Bytesish) -> Record:
        """A job's keys as raw bytes values."""
        records: list[tuple[bytes, Record]] = await self._call(p.inspect(w.JOB, id), p.INSPECT)
        return records[0][1]

    async def inspect_server(self) -> dict[str, str]:
        """`active-clients`, `evicted-jobs`, `started`."""
        records: list[tuple[bytes, Record]] = await self._call(p.inspect(w.SERVER), p.INSPECT)
        return {k: v.decode() for k, v in records[0][1].items()}


async def _open(addresses: Addresses) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the first address that accepts, from the one in use."""
    error: OSError | None = None
    for index, address in addresses.in_turn():
        try:
            opened = await asyncio.open_connection(*address)
        except OSError as exc:
            error = exc
            continue
        addresses.at = index
        return opened
    assert error is not None
    raise error
