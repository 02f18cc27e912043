"""A RESP session without a socket, on a real engine and qless, for handler tests."""

from __future__ import annotations

import hiredis

from beanpod.core.engine import Engine
from beanpod.core.qless import Qless
from beanpod.protocols.resp.commands import dispatch
from beanpod.protocols.resp.context import Door

NOW = 1_700_000_000_000  # engine ms


class FakeSession:
    def __init__(self, door: Door | None = None) -> None:
        if door is None:
            engine = Engine()
            qless = Qless(engine)
            door = Door(engine, lambda: qless)
        self.door = door
        self.conn = door.engine.connect("test", NOW)
        self.now = NOW
        self.proto = 2
        self.authed = False
        self.client_id = door.client_id()
        self.channels: set[bytes] = set()
        self.listening = False
        self.multi: list[list[bytes]] | None = None
        self.waiting_on: list[bytes] | None = None
        self.pushed: list[bytes] = []
        self.answered: list[bytes] = []

    def push(self, reply: bytes) -> None:
        self.pushed.append(reply)

    def answer(self, reply: bytes) -> None:
        self.answered.append(reply)

    def client_time(self, now: int) -> None:
        """The real clock ignores it; tests keep NOW."""

    def raw(self, *args: bytes | str) -> bytes | None:
        return dispatch(self, [a.encode() if isinstance(a, str) else a for a in args])

    def __call__(self, *args: bytes | str) -> object:
        """The reply decoded as a client reads it (errors as hiredis.ReplyError)."""
        reply = self.raw(*args)
        assert reply is not None
        reader = hiredis.Reader()
        reader.feed(reply)
        return reader.gets()
