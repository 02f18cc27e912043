"""beanstalkd wire words and reply encoders, shared by the parser, handlers and tests."""

from __future__ import annotations

CRLF = b"\r\n"
MAX_LINE = 224  # beanstalkd's LINE_BUF_SIZE: a command line including its CRLF
MAX_JOB_SIZE_CAP = 1 << 30  # -z is capped at 1 GiB, as in beanstalkd
DEFAULT_MAX_JOB_SIZE = 65535

# Command names, with the trailing space of those that take arguments. Matching is by
# prefix, in beanstalkd's order (see commands.PREFIX_ORDER).
PUT = b"put "
PEEK = b"peek "
PEEK_READY = b"peek-ready"
PEEK_DELAYED = b"peek-delayed"
PEEK_BURIED = b"peek-buried"
RESERVE_WITH_TIMEOUT = b"reserve-with-timeout "
RESERVE_JOB = b"reserve-job "
RESERVE = b"reserve"
DELETE = b"delete "
RELEASE = b"release "
BURY = b"bury "
KICK = b"kick "
KICK_JOB = b"kick-job "
TOUCH = b"touch "
STATS_JOB = b"stats-job "
STATS_TUBE = b"stats-tube "
STATS = b"stats"
USE = b"use "
WATCH = b"watch "
IGNORE = b"ignore "
LIST_TUBES_WATCHED = b"list-tubes-watched"
LIST_TUBE_USED = b"list-tube-used"
LIST_TUBES = b"list-tubes"
QUIT = b"quit"
PAUSE_TUBE = b"pause-tube"  # no space: 1.12 matches "pause-tubex" too
QLESS = b"qless "  # beanpod extension: qless <bytes>\r\n<json>\r\n (docs/qless.md)

# Replies.
CLOSE = b""  # not sent: the handler asks to close the connection (quit, abuse)
OUT_OF_MEMORY = b"OUT_OF_MEMORY\r\n"
INTERNAL_ERROR = b"INTERNAL_ERROR\r\n"
BAD_FORMAT = b"BAD_FORMAT\r\n"
UNKNOWN_COMMAND = b"UNKNOWN_COMMAND\r\n"
EXPECTED_CRLF = b"EXPECTED_CRLF\r\n"
JOB_TOO_BIG = b"JOB_TOO_BIG\r\n"
DRAINING = b"DRAINING\r\n"
DEADLINE_SOON = b"DEADLINE_SOON\r\n"
TIMED_OUT = b"TIMED_OUT\r\n"
DELETED = b"DELETED\r\n"
RELEASED = b"RELEASED\r\n"
BURIED = b"BURIED\r\n"
TOUCHED = b"TOUCHED\r\n"
NOT_IGNORED = b"NOT_IGNORED\r\n"
NOT_FOUND = b"NOT_FOUND\r\n"
KICKED = b"KICKED\r\n"
PAUSED = b"PAUSED\r\n"


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
