"""Sessions as data: a session is a list of steps run against one server.

Placeholders in sent bytes are replaced per server before sending:

* ``{t}`` is a tube name unique to the session; ``{t2}``, ``{t3}``... are more.
* ``{j1}``, ``{j2}``... are the ids of the 1st, 2nd... job this session put on that
  server (taken from ``INSERTED <id>`` replies, in reply order).

Sessions that are not ``fresh`` run on a server shared with other sessions.  The
harness then prefixes every connection with ``use {t}``, ``watch {t}`` and
``ignore default`` (a *prelude*, compared like any other step) and replaces job
ids in replies by ``#<ordinal>``.  ``fresh`` sessions get their own pair of
servers, no prelude, and job ids are compared as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias


def _b(data: str | bytes) -> bytes:
    return data.encode("latin-1") if isinstance(data, str) else data


@dataclass(frozen=True)
class Send:
    """Send ``data`` on ``conn`` and read ``replies`` complete replies."""

    data: bytes
    replies: int = 1
    conn: str = "a"
    chunk: int | None = None  # split the bytes into writes of this size
    pause: float = 0.002  # pause between chunked writes
    timeout: float = 5.0  # per reply


@dataclass(frozen=True)
class Read:
    """Read ``replies`` more replies without sending anything (blocked reserve wakes)."""

    replies: int = 1
    conn: str = "a"
    timeout: float = 5.0


@dataclass(frozen=True)
class NoReply:
    """Expect that nothing arrives on ``conn`` for ``ms`` milliseconds."""

    ms: int = 200
    conn: str = "a"


@dataclass(frozen=True)
class Close:
    """Close ``conn`` from the client side, then let the server notice (``settle`` s)."""

    conn: str = "a"
    settle: float = 0.05


@dataclass(frozen=True)
class HalfClose:
    """Shut down the sending side of ``conn`` (the server sees EOF, replies still arrive)."""

    conn: str = "a"
    settle: float = 0.05


@dataclass(frozen=True)
class Closed:
    """Expect the server to close ``conn`` (after ``quit``)."""

    conn: str = "a"
    timeout: float = 3.0


@dataclass(frozen=True)
class Sleep:
    seconds: float


Step: TypeAlias = Send | Read | NoReply | Close | HalfClose | Closed | Sleep
StepSpec: TypeAlias = Step | str | bytes | tuple[str | bytes, int]


@dataclass(frozen=True)
class Session:
    id: str
    steps: tuple[Step, ...]
    fresh: bool = False
    max_job_size: int | None = None
    doc: str = ""
    timed: bool = field(default=False)

    def __post_init__(self) -> None:
        slow = any(
            isinstance(s, Sleep)
            or (isinstance(s, NoReply) and s.ms >= 500)
            or (isinstance(s, Send | Read) and s.timeout > 5.0)
            for s in self.steps
        )
        if slow and not self.timed:
            object.__setattr__(self, "timed", True)


def send(
    data: str | bytes,
    n: int = 1,
    conn: str = "a",
    chunk: int | None = None,
    pause: float = 0.002,
    timeout: float = 5.0,
) -> Send:
    return Send(_b(data), n, conn, chunk, pause, timeout)


def on(conn: str, data: str | bytes, n: int = 1) -> Send:
    """Command line(s) ``data`` (CRLF appended when missing) sent on connection ``conn``."""
    return Send(_line(data), n, conn)


def _line(data: str | bytes) -> bytes:
    raw = _b(data)
    return raw if raw.endswith(b"\r\n") else raw + b"\r\n"


def _step(spec: StepSpec) -> Step:
    if isinstance(spec, str | bytes):
        return Send(_line(spec), 1)
    if isinstance(spec, tuple):
        data, n = spec
        return Send(_line(data), n)
    return spec


def S(
    sid: str,
    *steps: StepSpec,
    fresh: bool = False,
    z: int | None = None,
    timed: bool = False,
    doc: str = "",
) -> Session:
    """Build a session.

    A bare string is one command line expecting one reply (CRLF is appended when
    missing); ``(data, n)`` sends ``data`` (CRLF appended when missing) and reads
    ``n`` replies.  Use :func:`send` for exact bytes.
    """
    return Session(sid, tuple(_step(s) for s in steps), fresh, z, doc, timed)


def put(body: str | bytes, pri: int = 0, delay: int = 0, ttr: int = 60) -> bytes:
    body_b = _b(body)
    return b"put %d %d %d %d\r\n%s\r\n" % (pri, delay, ttr, len(body_b), body_b)


def check_unique(sessions: list[Session]) -> list[Session]:
    seen: set[str] = set()
    for s in sessions:
        if s.id in seen:
            raise ValueError(f"duplicate session id {s.id!r}")
        seen.add(s.id)
    return sessions
