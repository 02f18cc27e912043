"""Sans-I/O half of the Workq clients: command encoders, reply types, and `parse_reply`,
which reads one reply of a known kind from the front of a buffer. The sync client
(`client.workq`) and the asyncio client (`client.workq_aio`) only move bytes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from beanpod.protocols.workq import wire as w

Bytesish = bytes | str
Record = dict[str, bytes]

# Reply kinds.
OK, RESULT, LEASE, INSPECT = range(4)


class WorkqError(Exception):
    """Any error reply."""


class ClientError(WorkqError):
    """-CLIENT-ERROR <text>: the command was malformed or refused."""


class ServerError(WorkqError):
    """-SERVER-ERROR <text>."""


class NotLeader(ServerError, ConnectionError):
    """-SERVER-ERROR Not the leader (...): a cluster's follower did nothing; a client
    given several addresses moves on to the next (a ConnectionError, so it retries)."""


class TimedOut(WorkqError):
    """-TIMEOUT: nothing happened within the wait-timeout (or the TTR, for run)."""


class NotFound(WorkqError):
    """-NOT-FOUND: no such job (or its TTL ran out)."""


Settled = Callable[[WorkqError], bool]


def settled_by(kind: type[WorkqError], text: str | None = None) -> Settled:
    """For a call sent again after a lost connection: does this refusal only say that
    the first send took effect (e.g. `Duplicate job` after a resent add)?"""
    return lambda exc: isinstance(exc, kind) and (text is None or str(exc) == text)


ADDED = settled_by(ClientError, "Duplicate job")  # add/schedule sent again
FINISHED = settled_by(ClientError, "Duplicate result")  # complete/fail sent again
DELETED = settled_by(NotFound)  # delete sent again


@dataclass(frozen=True)
class Job:
    """A leased job."""

    id: str
    name: str
    ttr: int
    payload: bytes


@dataclass(frozen=True)
class Result:
    """A finished job's result (`run`, `result`)."""

    id: str
    success: bool
    result: bytes


def b(value: Bytesish) -> bytes:
    return value.encode() if isinstance(value, str) else value


def format_time(when: datetime | str) -> str:
    """A schedule time as the protocol wants it: `YYYY-MM-DDTHH:MM:SSZ` (UTC)."""
    if isinstance(when, str):
        return when
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _flags(**flags: int | None) -> bytes:
    return b"".join(
        b" -%s=%d" % (key.replace("_", "-").encode(), value)
        for key, value in flags.items()
        if value is not None
    )


def _with_block(line: bytes, block: bytes) -> bytes:
    return line + w.CRLF + block + w.CRLF


# ---- command encoders (one per verb) -------------------------------------------------


def add(
    id: Bytesish, name: Bytesish, ttr: int, ttl: int, payload: Bytesish,
    priority: int | None, max_attempts: int | None, max_fails: int | None,
    time: datetime | str | None = None,
) -> bytes:  # fmt: skip
    body = b(payload)
    flags = _flags(priority=priority, max_attempts=max_attempts, max_fails=max_fails)
    if time is None:
        line = b"add %s %s %d %d %d%s" % (b(id), b(name), ttr, ttl, len(body), flags)
    else:
        when = format_time(time).encode()
        line = b"schedule %s %s %d %d %s %d%s" % (
            b(id), b(name), ttr, ttl, when, len(body), flags,
        )  # fmt: skip
    return _with_block(line, body)


def run(
    id: Bytesish, name: Bytesish, ttr: int, wait: int, payload: Bytesish, priority: int | None
) -> bytes:
    body = b(payload)
    line = b"run %s %s %d %d %d%s" % (
        b(id), b(name), ttr, wait, len(body), _flags(priority=priority),
    )  # fmt: skip
    return _with_block(line, body)


def result(id: Bytesish, wait: int) -> bytes:
    return b"result %s %d\r\n" % (b(id), wait)


def lease(names: list[str] | str, wait: int) -> bytes:
    names = [names] if isinstance(names, str) else names
    return b"lease %s %d\r\n" % (" ".join(names).encode(), wait)


def finish(verb: bytes, id: Bytesish, result: Bytesish) -> bytes:
    """complete / fail."""
    body = b(result)
    return _with_block(b"%s %s %d" % (verb, b(id), len(body)), body)


def delete(id: Bytesish) -> bytes:
    return b"delete %s\r\n" % b(id)


def inspect(*words: Bytesish | int) -> bytes:
    parts = [b"%d" % x if isinstance(x, int) else b(x) for x in words]
    return b"inspect " + b" ".join(parts) + w.CRLF


# ---- replies -------------------------------------------------------------------------


class _Incomplete(Exception):
    pass


class _Cursor:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes | bytearray) -> None:
        self.buf = buf
        self.pos = 0

    def line(self) -> bytes:
        """The next CRLF-terminated line, without its CRLF."""
        end = self.buf.find(b"\r\n", self.pos)
        if end < 0:
            raise _Incomplete
        line = bytes(self.buf[self.pos : end])
        self.pos = end + 2
        return line

    def take(self, n: int) -> bytes:
        """The next `n` bytes."""
        if len(self.buf) - self.pos < n:
            raise _Incomplete
        data = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
        return data

    def block(self, size: int) -> bytes:
        """A block of `n` bytes followed by CRLF."""
        return self.take(size + 2)[:-2]


def error_for(line: bytes) -> WorkqError:
    text = line.decode("utf-8", "replace")
    if line == b"-TIMEOUT":
        return TimedOut(text)
    if line == b"-NOT-FOUND":
        return NotFound(text)
    if line.startswith(b"-CLIENT-ERROR "):
        return ClientError(text[14:])
    if line.startswith(b"-SERVER-ERROR "):
        kind = NotLeader if text[14:].startswith(w.NOT_LEADER) else ServerError
        return kind(text[14:])
    return WorkqError(f"unexpected reply {text!r}")


def parse_reply(kind: int, buf: bytes | bytearray) -> tuple[Any, int] | None:
    """One reply of `kind` from the front of `buf`: (value or WorkqError, bytes used), or
    None if it is not complete yet. Values: None (OK), Result, Job, or for INSPECT a
    list of (label, record)."""
    cursor = _Cursor(buf)
    try:
        value = _parse(kind, cursor)
    except _Incomplete:
        return None
    return value, cursor.pos


INCOMPLETE: Any = object()  # take_reply: the reply has not fully arrived


def take_reply(kind: int, buf: bytearray) -> Any:
    """Remove one complete reply of `kind` from the front of `buf` and return its value
    (raising it if it is a WorkqError), or INCOMPLETE: the loop both clients share."""
    parsed = parse_reply(kind, buf)
    if parsed is None:
        return INCOMPLETE
    value, used = parsed
    del buf[:used]
    if isinstance(value, WorkqError):
        raise value
    return value


def _parse(kind: int, c: _Cursor) -> Any:
    first = c.line()
    if first[:1] == b"-" or (kind == OK) != (first == b"+OK") or not first.startswith(b"+OK"):
        return error_for(first)
    if kind == OK:
        return None
    count = int(first[4:])
    if kind == RESULT:
        uuid, success, size = c.line().split(b" ")
        return Result(uuid.decode(), success == b"1", c.block(int(size)))
    if kind == LEASE:
        uuid, name, ttr, size = c.line().split(b" ")
        return Job(uuid.decode(), name.decode(), int(ttr), c.block(int(size)))
    return [_record(c) for _ in range(count)]


def _record(c: _Cursor) -> tuple[bytes, Record]:
    label, count = c.line().rsplit(b" ", 1)
    keys: Record = {}
    for _ in range(int(count)):
        if "payload-size" in keys and "payload" not in keys:
            c.take(len(b"payload "))  # the payload is raw and may hold CRLF: use its size
            keys["payload"] = c.block(int(keys["payload-size"]))
            continue
        key, _, value = c.line().partition(b" ")
        keys[key.decode()] = value
    return label, keys


def job_records(records: list[tuple[bytes, Record]]) -> list[Record]:
    return [{"id": label, **keys} for label, keys in records]


def queue_records(records: list[tuple[bytes, Record]]) -> dict[str, dict[str, int]]:
    return {label.decode(): {k: int(v) for k, v in keys.items()} for label, keys in records}
