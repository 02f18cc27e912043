"""Every Workq command with a payload against every header error, over a real socket:
a header error is answered at once (nothing after the line is read for it) and the next
command on the same connection is answered correctly; a header well-formed up to its
payload size has its payload consumed when a later check refuses it.

The same checks run against the reference server when WORKQ_SERVER names its binary
(tests/support/workq_reference.py); without it those runs skip with the reason."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import pytest

from beanpod.protocols.workq import wire as w
from tests.support.workq_reference import ReferenceWorkq, reference_binary
from tests.support.workq_server import RawWorkq, WorkqServer

ARGS = w.client_error(w.INVALID_ARGS)
FLAGS = w.client_error(w.INVALID_FLAGS)
PAYLOAD = w.client_error(w.INVALID_PAYLOAD_SIZE)
RESULT = w.client_error(w.INVALID_RESULT_SIZE)
UNKNOWN = w.client_error(w.UNKNOWN_COMMAND)


def header(verb: str, size: bytes, extra: bytes = b"", flags: bytes = b"") -> bytes:
    """A header of `verb` whose fields before the size are valid; `extra` is one more
    positional field before the size, `flags` go last."""
    jid = str(uuid.uuid4()).encode()
    before = {
        "add": b"add %s q 1000 60000" % jid,
        "schedule": b"schedule %s q 1000 60000 2030-01-01T00:00:00Z" % jid,
        "run": b"run %s q 1000 10" % jid,
        "complete": b"complete %s" % jid,
        "fail": b"fail %s" % jid,
    }[verb]
    fields = [before, extra, size, flags]
    return b" ".join(f for f in fields if f) + b"\r\n"


VERBS = ["add", "schedule", "run", "complete", "fail"]
FLAG_ALLOWANCE = {"add": 3, "schedule": 3, "run": 1, "complete": 0, "fail": 0}


def size_error(verb: str) -> bytes:
    return RESULT if verb == "fail" else PAYLOAD


# name -> (header for verb, expected reply for verb): all answered before any payload.
AT_ONCE = {
    "missing size": (lambda v: header(v, b""), lambda v: ARGS),
    "extra field": (lambda v: header(v, b"3", extra=b"x"), lambda v: ARGS),
    "size non-numeric": (lambda v: header(v, b"four"), size_error),
    "size negative": (lambda v: header(v, b"-1"), size_error),
    "size over 1 MiB": (lambda v: header(v, b"%d" % (w.MAX_PAYLOAD + 1)), size_error),
    "size beyond int64": (lambda v: header(v, b"9" * 20), size_error),
    "empty flag value": (lambda v: header(v, b"3", flags=b"-priority="), lambda v: FLAGS),
    "empty flag key": (lambda v: header(v, b"3", flags=b"-=1"), lambda v: FLAGS),
    "repeated flag": (lambda v: header(v, b"3", flags=b"-a=1 -a=2"), lambda v: FLAGS),
    "leading space": (lambda v: b" " + header(v, b"3"), lambda v: UNKNOWN),
}


@pytest.fixture(scope="module", params=["beanpod", "reference"])
def port(request: pytest.FixtureRequest) -> Iterator[int]:
    if request.param == "reference":
        ref = ReferenceWorkq(reference_binary()).start()
        yield ref.port
        ref.stop()
        return
    srv = WorkqServer(workq_port=0)
    srv.start()
    yield srv.workq_port
    srv.stop()


@pytest.fixture
def raw(port: int) -> Iterator[RawWorkq]:
    conn = RawWorkq(socket.create_connection(("127.0.0.1", port), timeout=10))
    yield conn
    conn.close()


def next_command_answered(raw: RawWorkq) -> None:
    """A fresh delete is `-NOT-FOUND` on both servers: the connection is in step."""
    raw.expect(b"delete %s\r\n" % str(uuid.uuid4()).encode(), w.NOT_FOUND)


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("error", list(AT_ONCE))
def test_header_error_is_answered_at_once(raw: RawWorkq, verb: str, error: str) -> None:
    make, expected = AT_ONCE[error]
    raw.expect(make(verb), expected(verb))  # no payload sent: a wait here would hang
    next_command_answered(raw)


@pytest.mark.parametrize(
    "line",
    [
        b"schedule %s q 1000 60000 3\r\n",  # no time
        b"schedule %s q 1000 60000 2030-01-01 00:00:00Z 3\r\n",  # a time with a space
        b"add %s q 1000 60000\r\n",  # no payload size: the issue's own example
        b"run %s q 1000 5\r\n",
    ],
    ids=["schedule without time", "schedule time with a space", "add without size",
         "run without size"],
)  # fmt: skip
def test_reported_headers_are_answered_at_once(raw: RawWorkq, line: bytes) -> None:
    raw.expect(line % str(uuid.uuid4()).encode(), ARGS)
    next_command_answered(raw)


@pytest.mark.parametrize("verb", VERBS)
def test_payload_sent_after_a_header_error_is_read_as_the_next_line(
    raw: RawWorkq, verb: str
) -> None:
    raw.expect(header(verb, b"3", extra=b"x") + b"abc\r\n", ARGS + UNKNOWN)
    next_command_answered(raw)


@pytest.mark.parametrize("verb", VERBS)
def test_too_many_flags_consumes_the_payload(raw: RawWorkq, verb: str) -> None:
    flags = b" ".join(b"-f%d=1" % i for i in range(FLAG_ALLOWANCE[verb] + 1))
    raw.expect(header(verb, b"3", flags=flags) + b"abc\r\n", ARGS)
    next_command_answered(raw)


@pytest.mark.parametrize("verb", VERBS)
def test_payload_without_its_crlf_consumes_two_bytes(raw: RawWorkq, verb: str) -> None:
    raw.expect(header(verb, b"3") + b"abcXYnope\r\n", size_error(verb) + UNKNOWN)
    next_command_answered(raw)


@pytest.mark.parametrize(
    "line",
    [
        b"add %s b@d 1000 60000 3\r\nabc\r\n",
        b"schedule %s q 1000 60000 2030-13-01T00:00:00Z 3\r\nabc\r\n",
        b"run %s q 0 10 3\r\nabc\r\n",
        b"complete nope 3\r\nabc\r\n",
        b"fail nope 3\r\nabc\r\n",
    ],
    ids=VERBS,
)
def test_value_error_after_a_good_header_consumes_the_payload(raw: RawWorkq, line: bytes) -> None:
    data = line % str(uuid.uuid4()).encode() if b"%s" in line else line
    raw.send(data)
    reply = raw.read(len(b"-CLIENT-ERROR Invalid "))
    assert reply == b"-CLIENT-ERROR Invalid "  # Invalid Name / Time / TTR / ID
    while not reply.endswith(b"\r\n"):
        reply += raw.read(1)
    next_command_answered(raw)


def test_signed_payload_size_reads_the_payload(raw: RawWorkq) -> None:
    raw.expect(header("add", b"+3") + b"abc\r\n", w.OK)
    next_command_answered(raw)


@pytest.mark.parametrize("data", [b"delete x\n", b"\n"], ids=["bare LF", "LF only"])
def test_a_line_without_crlf_closes_without_a_reply(raw: RawWorkq, data: bytes) -> None:
    raw.send(data)
    assert raw.closed_by_server()
    assert raw.buf == b""


def test_a_payload_cut_short_by_a_half_close_is_refused(raw: RawWorkq) -> None:
    raw.send(header("add", b"5") + b"abc")
    raw.sock.shutdown(socket.SHUT_WR)
    assert raw.read(len(PAYLOAD)) == PAYLOAD
    assert raw.closed_by_server()
