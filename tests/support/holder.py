"""A stand-in for a session whose replies the log holds (durability/log.py, Holder):
what server/batch_session.py does when group commit releases a held reply."""

from __future__ import annotations

from typing import Any


class FakeHolder:
    """Subclasses set `transport` (anything with write and, for a close, close)."""

    transport: Any

    def __init__(self) -> None:
        self.held = 0
        self.closed = False

    def released(self, data: bytes, close: bool) -> None:
        self.held -= 1
        if self.transport is None or self.closed:
            return
        self.transport.write(data)
        if close:
            self.transport.close()
