"""qless pub/sub over a socket: the `events` long-poll and `client.events`."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from beanpod.client.qless import Client, Message
from beanpod.client.qless_conn import Connection
from tests.support.servers import InProcessServer


@pytest.fixture
def client(server: InProcessServer) -> Iterator[Client]:
    with Client(port=server.port, worker_name="w1") as c:
        yield c


def test_subscription_iterates_messages_as_they_are_published(client: Client) -> None:
    sub = client.events.subscribe("log", "w:w1", wait=2)
    got: list[Message] = []

    def read() -> None:
        for message in sub:
            got.append(message)
            if len(got) == 3:
                sub.close()

    reader = threading.Thread(target=read)
    reader.start()
    time.sleep(0.1)  # the reader is parked in its long-poll
    client.queues["q"].put("K", {}, jid="a")
    client.queues["q"].pop()
    client.call("timeout", "a")
    reader.join(5)
    assert not reader.is_alive()
    assert [(m.channel, m.json()["event"]) for m in got] == [
        ("log", "put"), ("w:w1", "lock_lost"), ("log", "lock_lost"),
    ]  # fmt: skip
    assert sub.missed == 0


def test_long_poll_wakes_at_once_and_times_out_empty(server: InProcessServer) -> None:
    waiting = Connection(port=server.port)
    poster = Client(port=server.port, worker_name="w")
    head = waiting.call("events", ["track"])["cursor"]
    poster.queues["q"].put("K", {}, jid="a")
    result: list[object] = []
    reader = threading.Thread(
        target=lambda: result.append(waiting.call("events", ["track"], head, 10))
    )
    started = time.monotonic()
    reader.start()
    time.sleep(0.2)
    assert result == []  # parked: `put` went to `log` only
    poster.track("a")
    reader.join(5)
    assert time.monotonic() - started < 5
    assert result[0] == {
        "cursor": head + 2, "missed": 0,
        "messages": [{"seq": head + 2, "channel": "track", "data": "a"}],
    }  # fmt: skip
    started = time.monotonic()
    assert waiting.call("events", ["track"], head + 2, 0.3)["messages"] == []
    assert 0.25 < time.monotonic() - started < 3
    # the connection is an ordinary one again
    assert waiting.call("get", "a")["tracked"] is True
    waiting.close()
    poster.close()


def test_callbacks_in_a_thread(client: Client) -> None:
    heard: list[str] = []
    done = threading.Event()

    def canceled(message: Message) -> None:
        heard.append(message.data)
        done.set()

    client.events.on("ql:canceled", canceled)
    thread = client.events.thread(wait=0.5)
    jid = client.queues["q"].put("K", {})
    client.track(jid)
    client.call("cancel", jid)
    assert done.wait(5)
    client.events.stop()
    thread.join(5)
    assert heard == [jid] and not thread.is_alive()


def test_a_closed_poller_leaves_the_server_well(server: InProcessServer) -> None:
    sock = socket.create_connection(("127.0.0.1", server.port))
    body = b'{"fn":"events","args":[["log"],null,30]}'
    sock.sendall(b"qless %d\r\n%s\r\n" % (len(body), body))
    time.sleep(0.1)
    sock.shutdown(socket.SHUT_WR)  # half-closed: answered like a parked reserve
    assert sock.recv(100) == b"TIMED_OUT\r\n"
    sock.close()
    with Client(port=server.port) as c:
        c.call("config.set", "x", 1)  # publishes to a reader that is gone
        assert c.call("config.get", "x") == 1
