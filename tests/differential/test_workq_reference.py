"""Workq framing, differentially: hypothesis writes streams of well- and ill-formed
commands (every payload verb, wrong field counts, bad sizes and flags, payloads of the
wrong length or without their CRLF, leading spaces, unknown verbs); each stream goes to
beanpod and to the reference server over a socket, the client half-closes, and the two
replies must be byte-identical. Skipped unless WORKQ_SERVER names the reference binary
(tests/support/workq_reference.py)."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.workq_reference import ReferenceWorkq, reference_binary
from tests.support.workq_server import WorkqServer


@pytest.fixture(scope="module")
def ports() -> Iterator[tuple[int, int]]:
    ref = ReferenceWorkq(reference_binary()).start()
    ours = WorkqServer(workq_port=0)
    ours.start()
    yield ours.workq_port, ref.port
    ours.stop()
    ref.stop()


def exchange(port: int, data: bytes) -> bytes:
    """Send `data`, half-close, and read every reply until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
        return out


IDS = [str(uuid.uuid4()).encode() for _ in range(3)] + [b"not-a-uuid"]
SIZES = ["exact", "short", "long", "four", "-1", "+", "1048577", "missing", "extra"]
FLAGS = [b"", b"-priority=5", b"-priority=", b"-a=1 -a=2", b"-=x", b"-a=1 -b=2 -c=3 -d=4"]
PREFIX = {
    b"add": b"add %s fz 1000 60000",
    b"schedule": b"schedule %s fz 1000 60000 2030-01-01T00:00:00Z",
    b"run": b"run %s fz 0 0",  # TTR 0: refused after its payload, so it never blocks
    b"complete": b"complete %s",
    b"fail": b"fail %s",
}


@st.composite
def payload_command(draw: st.DrawFn) -> bytes:
    verb = draw(st.sampled_from(sorted(PREFIX)))
    head = PREFIX[verb] % draw(st.sampled_from(IDS))
    body = draw(st.binary(max_size=12))
    size = draw(st.sampled_from(SIZES))
    sizes = {"exact": len(body), "short": max(0, len(body) - 1), "long": len(body) + 1}
    token = {"four": b"four", "-1": b"-1", "+": b"+%d" % len(body), "1048577": b"1048577",
             "missing": b"", "extra": b"x %d" % len(body)}.get(size)  # fmt: skip
    if token is None:
        token = b"%d" % sizes[size]
    flags = draw(st.sampled_from(FLAGS))
    line = b" ".join(part for part in (head, token, flags) if part)
    lead = draw(st.sampled_from([b"", b"", b"", b" "]))
    end = draw(st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"XY"]))
    return lead + line + b"\r\n" + body + end


simple_command = st.sampled_from([
    b"delete %s\r\n" % IDS[0], b"delete %s -a=1\r\n" % IDS[1], b"inspect queue fz\r\n",
    b"inspect job %s\r\n" % IDS[2], b"inspect jobs fz 0 10\r\n", b"nope\r\n", b"ADD\r\n",
    b"\r\n", b"lease fz\r\n", b"result %s\r\n" % IDS[0], b"inspect\r\n", b"delete\r\n",
    b"lease fz -a=1 10\r\n", b"lease fz# 10\r\n", b"lease fz 86400001\r\n",
    b"lease fz x\r\n", b"result %s 0\r\n" % str(uuid.uuid4()).encode(),
    b"result %s x\r\n" % IDS[1], b"result %s 0 -a=1\r\n" % IDS[1], b"result x 0\r\n",
    b"inspect queue\r\n", b"inspect queue fz x\r\n", b"inspect queue fz -a=1\r\n",
    b"inspect jobs fz 0\r\n", b"inspect jobs fz x 1\r\n", b"inspect jobs fz 0 101\r\n",
    b"inspect scheduled-jobs fz 0 10\r\n", b"inspect scheduled-jobs nope 0 10\r\n",
    b"inspect server x\r\n", b"inspect foo\r\n", b"inspect job x\r\n",
    b"inspect queue nope\r\n", b"inspect jobs f#z 0 1\r\n", b"delete %s x\r\n" % IDS[0],
    b"inspect queues 0\r\n", b"inspect queues x 1\r\n", b"inspect queues 0 0\r\n",
    b"-x=1\r\n", b"add -priority=1\r\n", b"complete -a=1 -a=2\r\n",
])  # fmt: skip

streams = st.lists(st.one_of(payload_command(), simple_command), min_size=1, max_size=8)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(commands=streams)
def test_replies_match_the_reference(ports: tuple[int, int], commands: list[bytes]) -> None:
    data = b"".join(commands)
    ours, theirs = exchange(ports[0], data), exchange(ports[1], data)
    assert ours == theirs, f"stream {data!r}"
