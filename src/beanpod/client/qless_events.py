"""qless pub/sub over beanpod's `events` long-poll (docs/qless.md, "Events").

    for message in client.events.subscribe("log", "w:worker-1"):    # blocks, own socket
        print(message.channel, message.json())

    client.events.on("canceled", lambda m: print(m.data))            # callbacks
    thread = client.events.thread()                                  # listen in background
    ...; client.events.stop(); thread.join()

A subscription keeps a cursor, so no message published while it runs is skipped
between polls; `missed` counts messages the server dropped before they were read (a
reader more than the server's buffer behind).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from beanpod.client.qless_conn import Connection

if TYPE_CHECKING:
    from beanpod.client.qless import Client

POLL_SECONDS = 5.0  # how long one long-poll waits on the server


@dataclass(frozen=True)
class Message:
    seq: int
    channel: str  # without the `ql:` prefix: log, w:<worker>, put, popped, ...
    data: str  # a jid, or JSON text on `log` and `w:<worker>`

    def json(self) -> Any:
        """The message's data decoded from JSON."""
        return json.loads(self.data)


class Subscription:
    """An iterator of messages on some channels, read on a connection of its own.
    `close()` (from any thread) ends it after the poll in progress (at most `wait` s)."""

    def __init__(self, client: Client, channels: tuple[str, ...], cursor: int | None = None,
                 wait: float = POLL_SECONDS) -> None:  # fmt: skip
        self.channels = list(channels)
        self.cursor = cursor
        self.wait = wait
        self.missed = 0
        self._closed = threading.Event()
        self._conn = Connection(client.host, client.port, wait + 30, client.backoff)
        self.cursor = self.poll(0)[1] if cursor is None else cursor  # from now on

    def poll(self, wait: float | None = None, count: int = 100) -> tuple[list[Message], int]:
        """One `events` call: (messages, new cursor); waits up to `wait` seconds."""
        found = self._conn.call(
            "events", self.channels, self.cursor, self.wait if wait is None else wait, count
        )
        self.missed += int(found["missed"])
        self.cursor = int(found["cursor"])
        messages = [Message(m["seq"], m["channel"], m["data"]) for m in found["messages"]]
        return messages, self.cursor

    def __iter__(self) -> Iterator[Message]:
        try:
            while not self._closed.is_set():
                messages, _ = self.poll()
                yield from messages
        finally:
            self._conn.close()

    def close(self) -> None:
        """Stop listening; the server forgets the subscription."""
        self._closed.set()


class Events:
    """`client.events`: subscriptions, and callbacks per channel (qless-py's shape)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.callbacks: dict[str, Callable[[Message], Any]] = {}
        self._listening: Subscription | None = None

    def subscribe(
        self, *channels: str, cursor: int | None = None, wait: float = POLL_SECONDS
    ) -> Subscription:
        """Messages on `channels` published from now on (or after `cursor`)."""
        return Subscription(self.client, channels, cursor, wait)

    def on(self, channel: str, callback: Callable[[Message], Any]) -> None:
        """Call `callback(message)` for each message on `channel` while listening."""
        self.callbacks[channel.removeprefix("ql:")] = callback

    def listen(self, wait: float = POLL_SECONDS) -> None:
        """Dispatch messages to the callbacks until `stop()`."""
        sub = self._listening = self.subscribe(*self.callbacks, wait=wait)
        for message in sub:
            self.callbacks[message.channel](message)

    def thread(self, wait: float = POLL_SECONDS) -> threading.Thread:
        """`listen()` in a daemon thread, started; it is subscribed when this returns."""
        ready = threading.Event()
        sub = self._listening = self.subscribe(*self.callbacks, wait=wait)

        def run() -> None:
            ready.set()
            for message in sub:
                self.callbacks[message.channel](message)

        worker = threading.Thread(target=run, daemon=True, name="qless-events")
        worker.start()
        ready.wait()
        return worker

    def stop(self) -> None:
        """Stop the listening thread and close its connection."""
        if self._listening is not None:
            self._listening.close()
