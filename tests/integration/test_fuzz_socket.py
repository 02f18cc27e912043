"""Whatever a client sends, the server answers other clients and keeps its jobs."""

from __future__ import annotations

import contextlib
import socket

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.servers import InProcessServer
from tests.support.wire_client import RawClient

WORDS = [b"put ", b"reserve", b"delete ", b"release ", b"bury ", b"kick ", b"use ",
         b"watch ", b"ignore ", b"peek ", b"stats", b"pause-tube ", b"touch ", b"\r\n",
         b"1", b"0", b" ", b"-", b"4294967296", b"\x00", b"\r", b"x" * 250]  # fmt: skip
GARBAGE = st.lists(st.one_of(st.sampled_from(WORDS), st.binary(max_size=40)), max_size=30)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(GARBAGE)
def test_garbage_never_hurts_other_clients(server: InProcessServer, pieces: list[bytes]) -> None:
    keeper = RawClient(server.connect())
    assert keeper.cmd(b"use keep\r\n") == b"USING keep\r\n"
    job = keeper.cmd(b"put 0 0 100 4\r\nsafe\r\n")
    assert job.startswith(b"INSERTED ")
    job_id = int(job.split()[1])
    noisy = server.connect()
    # Anything goes except naming the keeper's tube or deleting (the one way a job may go).
    noise = b"".join(pieces).replace(b"keep", b"kept").replace(b"delete", b"delet")
    with contextlib.suppress(OSError):  # the server may have closed it (quit)
        noisy.sendall(noise)
    noisy.shutdown(socket.SHUT_WR)
    noisy.close()
    assert keeper.cmd(b"peek %d\r\n" % job_id) == b"FOUND %d 4\r\nsafe\r\n" % job_id
    assert keeper.cmd(b"delete %d\r\n" % job_id) == b"DELETED\r\n"
    keeper.close()
