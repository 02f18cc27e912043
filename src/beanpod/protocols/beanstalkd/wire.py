"""beanstalkd wire words and reply encoders, shared by the parser, handlers and tests."""

from __future__ import annotations

from typing import Final

CRLF: Final[bytes] = b"\r\n"
MAX_LINE: Final[int] = 224  # beanstalkd's LINE_BUF_SIZE: a command line including its CRLF
MAX_JOB_SIZE_CAP: Final[int] = 1 << 30  # -z is capped at 1 GiB, as in beanstalkd
DEFAULT_MAX_JOB_SIZE: Final[int] = 65535

# Command names, with the trailing space of those that take arguments. Matching is by
# prefix, in beanstalkd's order (see commands.PREFIX_ORDER).
PUT: Final[bytes] = b"put "
PEEK: Final[bytes] = b"peek "
PEEK_READY: Final[bytes] = b"peek-ready"
PEEK_DELAYED: Final[bytes] = b"peek-delayed"
PEEK_BURIED: Final[bytes] = b"peek-buried"
RESERVE_WITH_TIMEOUT: Final[bytes] = b"reserve-with-timeout "
RESERVE_JOB: Final[bytes] = b"reserve-job "
RESERVE: Final[bytes] = b"reserve"
DELETE: Final[bytes] = b"delete "
RELEASE: Final[bytes] = b"release "
BURY: Final[bytes] = b"bury "
KICK: Final[bytes] = b"kick "
KICK_JOB: Final[bytes] = b"kick-job "
TOUCH: Final[bytes] = b"touch "
STATS_JOB: Final[bytes] = b"stats-job "
STATS_TUBE: Final[bytes] = b"stats-tube "
STATS: Final[bytes] = b"stats"
USE: Final[bytes] = b"use "
WATCH: Final[bytes] = b"watch "
IGNORE: Final[bytes] = b"ignore "
LIST_TUBES_WATCHED: Final[bytes] = b"list-tubes-watched"
LIST_TUBE_USED: Final[bytes] = b"list-tube-used"
LIST_TUBES: Final[bytes] = b"list-tubes"
QUIT: Final[bytes] = b"quit"
PAUSE_TUBE: Final[bytes] = b"pause-tube"  # no space: 1.12 matches "pause-tubex" too
QLESS: Final[bytes] = b"qless "  # beanpod extension: qless <bytes>\r\n<json>\r\n (docs/qless.md)

# Replies.
CLOSE: Final[bytes] = b""  # not sent: the handler asks to close the connection (quit, abuse)
OUT_OF_MEMORY: Final[bytes] = b"OUT_OF_MEMORY\r\n"
INTERNAL_ERROR: Final[bytes] = b"INTERNAL_ERROR\r\n"
BAD_FORMAT: Final[bytes] = b"BAD_FORMAT\r\n"
UNKNOWN_COMMAND: Final[bytes] = b"UNKNOWN_COMMAND\r\n"
EXPECTED_CRLF: Final[bytes] = b"EXPECTED_CRLF\r\n"
JOB_TOO_BIG: Final[bytes] = b"JOB_TOO_BIG\r\n"
DRAINING: Final[bytes] = b"DRAINING\r\n"
DEADLINE_SOON: Final[bytes] = b"DEADLINE_SOON\r\n"
TIMED_OUT: Final[bytes] = b"TIMED_OUT\r\n"
DELETED: Final[bytes] = b"DELETED\r\n"
RELEASED: Final[bytes] = b"RELEASED\r\n"
BURIED: Final[bytes] = b"BURIED\r\n"
TOUCHED: Final[bytes] = b"TOUCHED\r\n"
NOT_IGNORED: Final[bytes] = b"NOT_IGNORED\r\n"
NOT_FOUND: Final[bytes] = b"NOT_FOUND\r\n"
KICKED: Final[bytes] = b"KICKED\r\n"
PAUSED: Final[bytes] = b"PAUSED\r\n"


def inserted(job_id: int) -> bytes:
    return b"INSERTED %d\r\n" % job_id


def using(tube_name: bytes) -> bytes:
    return b"USING " + tube_name + CRLF


def watching(count: int) -> bytes:
    return b"WATCHING %d\r\n" % count


def kicked(count: int) -> bytes:
    return b"KICKED %d\r\n" % count


def reserved(job_id: int, body: bytes) -> bytes:
    return b"RESERVED %d %d\r\n%s\r\n" % (job_id, len(body), body)


def found(job_id: int, body: bytes) -> bytes:
    return b"FOUND %d %d\r\n%s\r\n" % (job_id, len(body), body)


def ok(yaml: bytes) -> bytes:
    """An `OK <bytes>` reply carrying a YAML document."""
    return b"OK %d\r\n%s\r\n" % (len(yaml), yaml)
