"""Reconnecting clients against a scripted socket server: a call whose connection drops
is sent again on a new one; a refusal that only says the first send took effect is a
success; without a server the error comes once the backoff gives up."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from beanpod.client.qless_conn import Connection
from beanpod.client.reconnect import Backoff
from beanpod.client.workq import Client, ClientError, TimedOut
from beanpod.client.workq_aio import AsyncClient
from tests.support.workq_reference import free_port

QUICK = Backoff(first=0.001, maximum=0.01, give_up_after=5)
JID = "6ba7b810-9dad-41d1-80b4-00c04fd430c4"


class Scripted:
    """Accepts connections in turn; for each, reads one request and answers the next
    scripted reply (None: close without answering). Records what it received."""

    def __init__(self, replies: list[bytes | None]) -> None:
        self.replies = replies
        self.received: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        for reply in self.replies:
            conn, _ = self.listener.accept()
            with conn:
                self.received.append(conn.recv(65536))
                if reply is not None:
                    conn.sendall(reply)
                    conn.recv(65536)  # until the client closes

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def scripted(request: pytest.FixtureRequest) -> Iterator[Scripted]:
    server = Scripted(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("scripted", [[None, b"-CLIENT-ERROR Duplicate job\r\n"]], indirect=True)
def test_a_resent_add_refused_as_duplicate_took_effect(scripted: Scripted) -> None:
    with Client(("127.0.0.1", scripted.port), backoff=QUICK) as c:
        c.add(JID, "q", 1000, 1000, b"x")
    assert len(scripted.received) == 2 and scripted.received[0] == scripted.received[1]


@pytest.mark.parametrize("scripted", [[b"-CLIENT-ERROR Duplicate job\r\n"]], indirect=True)
def test_a_first_send_refused_as_duplicate_is_an_error(scripted: Scripted) -> None:
    c = Client(("127.0.0.1", scripted.port), backoff=QUICK)
    with c, pytest.raises(ClientError, match="Duplicate job"):
        c.add(JID, "q", 1000, 1000, b"x")


@pytest.mark.parametrize("scripted", [[None, b"-CLIENT-ERROR Duplicate result\r\n"]],
                         indirect=True)  # fmt: skip
def test_the_asyncio_client_resends_too(scripted: Scripted) -> None:
    async def go() -> None:
        c = await AsyncClient.connect(("127.0.0.1", scripted.port), QUICK)
        await c.complete(JID, b"done")
        await c.close()

    asyncio.run(go())
    assert len(scripted.received) == 2


@pytest.mark.parametrize("scripted", [[None, b'OK 4\r\n"ok"\r\n']], indirect=True)
def test_a_qless_call_is_sent_again_on_a_new_connection(scripted: Scripted) -> None:
    conn = Connection("127.0.0.1", scripted.port, backoff=QUICK)
    assert conn.call("heartbeat", "jid", "w1") == "ok"
    conn.close()
    assert scripted.received[0] == scripted.received[1]


@pytest.mark.parametrize("scripted", [[None]], indirect=True)
def test_without_backoff_a_lost_connection_is_an_error(scripted: Scripted) -> None:
    c = Client(("127.0.0.1", scripted.port), backoff=None)
    with c, pytest.raises(ConnectionError):
        c.add(JID, "q", 1000, 1000, b"x")


def test_no_server_raises_once_the_backoff_gives_up() -> None:
    port = free_port()
    with pytest.raises(ConnectionRefusedError):
        Client(("127.0.0.1", port), backoff=Backoff(first=0.001, maximum=0.01, give_up_after=0.1))
    with pytest.raises(ConnectionRefusedError):
        Connection("127.0.0.1", port, backoff=None)


def test_a_blocking_call_may_outwait_the_socket_timeout() -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def answer_late() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            time.sleep(0.5)  # past the client's 0.2 s timeout, well within the lease's wait
            conn.sendall(b"-TIMEOUT\r\n")
            conn.recv(65536)

    threading.Thread(target=answer_late, daemon=True).start()
    c = Client(("127.0.0.1", listener.getsockname()[1]), timeout=0.2, backoff=None)
    with pytest.raises(TimedOut):
        c.lease(["q"], 5000)
    assert c.sock is not None and c.sock.gettimeout() == 0.2  # back to the client's own
    c.close()
    listener.close()
