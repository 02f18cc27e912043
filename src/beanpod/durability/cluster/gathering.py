"""Group commit's wait for the clients a batch just answered.

At depth 1 a client sends its next command one round trip after its reply. A leader that
sends the next batch at once catches only the clients already waiting, so several
connections settle into groups that take turns, each group paying a whole etcd
transaction; and a transaction's cost (CPU on every member, the proposal's round) does not
grow with its size. Waiting up to `LINGER` for the clients just answered puts them all in
the next batch. A client that does not come back in time costs the others at most
`LINGER`; a lone client is sent as soon as its own command arrives.
"""

from __future__ import annotations

import asyncio

LINGER = 0.002  # s: a few client round trips through a proxy on a busy loopback


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Gathering:
    """`wait` until `target` replies are held (`held` reports the count) or LINGER passes."""

    def __init__(self) -> None:
        self.target = 0
        self.arrived: asyncio.Future[None] | None = None

    def held(self, count: int) -> None:
        if self.arrived is not None and count >= self.target:
            _settle(self.arrived)

    async def wait(self, target: int, count: int) -> None:
        if count >= target:
            return
        loop = asyncio.get_running_loop()
        self.target, self.arrived = target, loop.create_future()
        timer = loop.call_later(LINGER, _settle, self.arrived)
        try:
            await self.arrived
        finally:
            timer.cancel()
            self.arrived = None
