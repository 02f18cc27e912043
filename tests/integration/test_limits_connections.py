"""Connection limits over real sockets: a flood past --max-connections, a client that
does not read its replies, a slowloris and an idle client are each closed while a
control connection stays served; nothing acknowledged is lost."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from beanpod.server.edge import watchdog
from beanpod.server.edge.settings import EdgeSettings
from tests.support.servers import InProcessServer
from tests.support.wire_client import RawClient
from tests.support.workq_server import WorkqServer, new_id


def start(**edge: object) -> InProcessServer:
    return InProcessServer(edge=EdgeSettings(**edge)).start()  # type: ignore[arg-type]


class Stack(list[InProcessServer]):
    """Servers and sockets a test opened, closed after it."""

    def __init__(self) -> None:
        super().__init__()
        self.sockets: list[socket.socket] = []

    def connect(self, srv: InProcessServer) -> socket.socket:
        sock = srv.connect()
        self.sockets.append(sock)
        return sock


@pytest.fixture
def stack() -> Iterator[Stack]:
    servers = Stack()
    yield servers
    for sock in servers.sockets:
        sock.close()
    for srv in servers:
        srv.stop()


def stats(client: RawClient) -> dict[str, str]:
    body = client.cmd(b"stats\r\n").split(b"\r\n", 1)[1].rsplit(b"\r\n", 1)[0].decode()
    return dict(line.split(": ", 1) for line in body.splitlines()[1:])


def p99_ms(client: RawClient, rounds: int = 200) -> float:
    """The control connection's 99th-percentile round trip, in milliseconds."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        assert client.cmd(b"list-tube-used\r\n") == b"USING default\r\n"
        times.append((time.perf_counter() - began) * 1000)
    return sorted(times)[int(rounds * 0.99) - 1]


def closed(sock: socket.socket, within: float = 10) -> bool:
    """True once the server closes `sock` (EOF or reset) within `within` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(1 << 16):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


def served(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        sock.sendall(b"list-tube-used\r\n")
        return sock.recv(64) == b"USING default\r\n"
    except OSError:
        return False


def test_flood_past_the_limit_is_closed_and_counted(stack: Stack) -> None:
    srv = start(max_connections=10)
    stack.append(srv)
    control = RawClient(stack.connect(srv))
    assert control.cmd(b"put 0 0 60 2\r\nok\r\n") == b"INSERTED 1\r\n"
    flood = [stack.connect(srv) for _ in range(40)]
    answered = [served(sock) for sock in flood]
    assert answered.count(True) == 9  # the control connection is the tenth
    assert stats(control)["connections-refused"] == "31"
    assert stats(control)["max-connections"] == "10"
    assert p99_ms(control) < 100
    for sock in flood:
        sock.close()
    for _ in range(100):  # the server sees the closes on its own schedule
        sock = stack.connect(srv)
        if served(sock):
            break
        sock.close()
    else:
        pytest.fail("no connection admitted after the flood left")
    sock.close()
    assert control.cmd(b"peek 1\r\n") == b"FOUND 1 2\r\nok\r\n"


def test_client_not_reading_is_closed_and_its_puts_stay(stack: Stack) -> None:
    srv = start(output_hard_limit=1 << 20)
    stack.append(srv)
    control = RawClient(stack.connect(srv))
    body = b"b" * 50_000
    hog = stack.connect(srv)
    puts = 50
    hog.sendall(b"put 0 0 60 %d\r\n%s\r\n" % (len(body), body) * puts)
    hog.sendall(b"peek 1\r\n" * 200)  # 10 MB of replies it never reads
    assert closed(hog)
    assert p99_ms(control) < 100
    s = stats(control)
    assert s["current-jobs-ready"] == str(puts)
    for job_id in range(1, puts + 1):
        assert control.cmd(b"peek %d\r\n" % job_id) == b"FOUND %d %d\r\n%s\r\n" % (
            job_id, len(body), body)  # fmt: skip


def test_slowloris_is_closed_and_its_half_job_not_stored(stack: Stack) -> None:
    srv = start(request_timeout_s=0.5)
    stack.append(srv)
    control = RawClient(stack.connect(srv))
    body_slow = stack.connect(srv)
    body_slow.sendall(b"put 0 0 60 10\r\nhello")  # five bytes of ten, then silence
    header_slow = stack.connect(srv)
    for byte in b"put 0 0 60 5\r":  # a header one byte at a time, never finished
        try:
            header_slow.sendall(bytes([byte]))
        except OSError:  # closed while still trickling: the deadline counts from byte one
            break
        time.sleep(0.05)
    assert p99_ms(control) < 100
    assert closed(body_slow) and closed(header_slow)
    s = stats(control)
    assert s["current-jobs-ready"] == "0" and s["total-jobs"] == "0"
    assert s["closed-request-timeout"] == "2"


def test_steady_pipeline_is_not_a_slowloris(stack: Stack) -> None:
    """Commands split across writes, for longer than the timeout, keep completing."""
    srv = start(request_timeout_s=0.3)
    stack.append(srv)
    client = RawClient(stack.connect(srv))
    stream = b"put 0 0 60 3\r\nabc\r\n" * 300
    began = time.monotonic()
    for at in range(0, len(stream), 7):
        client.send(stream[at : at + 7])
        time.sleep(0.001)
    assert time.monotonic() - began > 0.6  # twice the timeout, never idle for long
    replies = [client.reply() for _ in range(300)]
    assert replies[-1] == b"INSERTED 300\r\n"
    client.close()


def test_idle_closed_but_not_a_waiting_reserve(stack: Stack) -> None:
    srv = start(idle_timeout_s=0.3)
    stack.append(srv)
    idle = stack.connect(srv)
    waiting = RawClient(stack.connect(srv))
    waiting.send(b"reserve\r\n")
    assert closed(idle)
    assert waiting.nothing_within(1.0)  # still open, still waiting
    producer = RawClient(stack.connect(srv))
    assert producer.cmd(b"put 0 0 60 2\r\nhi\r\n") == b"INSERTED 1\r\n"
    assert waiting.reply() == b"RESERVED 1 2\r\nhi\r\n"


def test_workq_client_not_reading_inspect_replies_is_closed(stack: Stack) -> None:
    srv = WorkqServer(workq_port=0, edge=EdgeSettings(output_hard_limit=1 << 20)).start()
    stack.append(srv)
    job = new_id().encode()
    payload = b"p" * 100_000
    hog = socket.create_connection(("127.0.0.1", srv.workq_port), timeout=10)
    stack.sockets.append(hog)
    hog.sendall(b"add %s q 1000 60000 %d\r\n%s\r\n" % (job, len(payload), payload))
    hog.sendall(b"inspect job %s\r\n" % job * 200)  # 20 MB of replies from 10 kB sent
    assert closed(hog)
    control = srv.client()
    assert control.inspect_job(job)["payload"] == payload  # its job stays
    control.close()


def test_sweep_in_small_chunks_reaches_every_connection(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchdog, "CHUNK", 2)
    srv = start(request_timeout_s=0.3)
    stack.append(srv)
    slow = [stack.connect(srv) for _ in range(7)]
    for sock in slow:
        sock.sendall(b"put 0 0 60 10\r\nhal")
    assert all(closed(sock) for sock in slow)
    control = RawClient(stack.connect(srv))
    assert stats(control)["closed-request-timeout"] == "7"
