"""The Workq clients' sans-I/O reply parser: whole, byte by byte, with trailing bytes."""

from __future__ import annotations

from typing import Any

import pytest

from beanpod.client import workq_proto as p
from beanpod.protocols.workq import wire as w

U = b"6ba7b810-9dad-41d1-80b4-00c04fd430c4"
CASES: list[tuple[int, bytes, Any]] = [
    (p.OK, w.OK, None),
    (p.RESULT, w.result_reply(U, 1, b"a\r\nb"), p.Result(U.decode(), True, b"a\r\nb")),
    (p.LEASE, w.lease_reply(U, b"q", 1000, b""), p.Job(U.decode(), "q", 1000, b"")),
    (
        p.INSPECT,
        b"+OK 1\r\n%s 3\r\npayload-size 4\r\npayload a\r\nb\r\nstate 0\r\n" % U,
        [(U, {"payload-size": b"4", "payload": b"a\r\nb", "state": b"0"})],
    ),
    (p.INSPECT, b"+OK 0\r\n", []),
]


@pytest.mark.parametrize(("kind", "data", "value"), CASES)
def test_whole_byte_by_byte_and_trailing(kind: int, data: bytes, value: Any) -> None:
    for cut in range(len(data)):
        assert p.parse_reply(kind, data[:cut]) is None
    assert p.parse_reply(kind, data) == (value, len(data))
    assert p.parse_reply(kind, data + b"+OK\r\n") == (value, len(data))


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (w.TIMEOUT, p.TimedOut),
        (w.NOT_FOUND, p.NotFound),
        (w.client_error("Invalid ID"), p.ClientError),
        (w.server_error("Server is draining"), p.ServerError),
        (b"+OK 1\r\n", p.WorkqError),  # an OK with a count where a bare OK was expected
    ],
)
def test_errors(line: bytes, error: type[Exception]) -> None:
    parsed = p.parse_reply(p.OK, line)
    assert parsed is not None and type(parsed[0]) is error


def test_encoders() -> None:
    assert (
        p.add("i", "q", 1, 2, b"xy", 5, None, 1)
        == b"add i q 1 2 2 -priority=5 -max-fails=1\r\nxy\r\n"
    )
    assert p.add("i", "q", 1, 2, b"", None, None, None, "2020-02-02T00:00:00Z") == (
        b"schedule i q 1 2 2020-02-02T00:00:00Z 0\r\n\r\n"
    )
    assert p.lease(["a", "b"], 10) == b"lease a b 10\r\n"
    assert p.inspect(w.JOBS, "q", 0, 10) == b"inspect jobs q 0 10\r\n"
