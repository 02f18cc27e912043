"""The harness's beanstalkd connection: the production session plus a transcript, the
per-command counters, injected failures and added latency (all in this subclass, so the
server's own sessions are untouched)."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Any, cast

from beanpod.server.beanstalkd_session import BeanstalkdSession
from beanpod.testing.transcript import RECEIVED, SENT

if TYPE_CHECKING:
    from beanpod.server.app import App
    from beanpod.testing.observed import Observed


class RecordingTransport:
    """A transport whose writes are also written to the transcript."""

    def __init__(self, transport: asyncio.Transport, record: Any) -> None:
        self._transport = transport
        self._record = record

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._record(RECEIVED, bytes(data))
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class HarnessSession(BeanstalkdSession):
    def __init__(self, app: App, observed: Observed) -> None:
        super().__init__(app)
        self.handlers = observed.handlers
        self.observed = observed
        self._late: deque[bytes] = deque()  # requests held back by the added latency
        self._late_eof = False  # the client half-closed while requests were held back

    def opened(self, transport: asyncio.BaseTransport) -> None:
        self.transcript = self.observed.transcript(self.conn.id)
        recording = RecordingTransport(cast(asyncio.Transport, transport), self.transcript.record)
        super().opened(cast(asyncio.Transport, recording))

    def data_received(self, data: bytes) -> None:
        self.transcript.record(SENT, data)
        latency = self.observed.faults.latency_s
        if latency <= 0 and not self._late:
            super().data_received(data)
            return
        self._late.append(data)
        asyncio.get_running_loop().call_later(latency, self._release_one)

    def eof_received(self) -> bool:
        if self._late:  # answer the held requests first, then close
            self._late_eof = True
            return True
        return super().eof_received()

    def _release_one(self) -> None:
        """Requests go on in arrival order, whatever order their timers fire in."""
        if not self._late or self.closed:
            return
        super().data_received(self._late.popleft())
        if self._late_eof and not self._late and not super().eof_received() and self.transport:
            self.transport.close()
