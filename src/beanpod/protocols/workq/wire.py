"""Workq wire words, limits and reply encoders, shared by the parser, handlers, client
and tests (docs/workq-wire.md states the grammar)."""

from __future__ import annotations

from collections.abc import Iterable

CRLF = b"\r\n"
DEFAULT_PORT = 9922
# The reference reads at most this much per command (10,000 for the line + 1 MiB payload);
# a line that does not end within it is a read error: the connection closes, no reply.
MAX_LINE = 1_058_576
MAX_PAYLOAD = 1_048_576  # payloads and results: 1 MiB

# Verbs (case-sensitive).
ADD = b"add"
SCHEDULE = b"schedule"
RUN = b"run"
RESULT = b"result"
LEASE = b"lease"
COMPLETE = b"complete"
FAIL = b"fail"
DELETE = b"delete"
INSPECT = b"inspect"

# Inspect objects.
JOB = b"job"
JOBS = b"jobs"
SCHEDULED_JOBS = b"scheduled-jobs"
QUEUE = b"queue"
QUEUES = b"queues"
SERVER = b"server"

# Flags (written -key=value).
PRIORITY = b"priority"
MAX_ATTEMPTS = b"max-attempts"
MAX_FAILS = b"max-fails"

# Limits (milliseconds unless noted).
MAX_TTR = 86_400_000
MAX_TTL = 2_592_000_000  # 30 days: what the reference server enforces (its doc says 2^64-1)
MAX_WAIT = 86_400_000
MAX_ATTEMPTS_LIMIT = 255
MAX_FAILS_LIMIT = 255
MAX_NAME = 255
MAX_CURSOR = 2**32 - 1
MAX_LIMIT = 100
PRIORITY_MIN = -(2**31)
PRIORITY_MAX = 2**31 - 1

# Replies.
OK = b"+OK\r\n"
TIMEOUT = b"-TIMEOUT\r\n"
NOT_FOUND = b"-NOT-FOUND\r\n"
NOT_LEADER = "Not the leader"  # a cluster's follower: -SERVER-ERROR Not the leader (...)


def client_error(text: str) -> bytes:
    return b"-CLIENT-ERROR " + text.encode("ascii") + CRLF


def server_error(text: str) -> bytes:
    return b"-SERVER-ERROR " + text.encode("ascii") + CRLF


# Error texts (after "-CLIENT-ERROR ").
UNKNOWN_COMMAND = "Unknown command"
INVALID_ARGS = "Invalid command args"
INVALID_FLAGS = "Invalid command flags"
INVALID_PAYLOAD_SIZE = "Invalid payload size"
INVALID_RESULT_SIZE = "Invalid result size"
INVALID_ID = "Invalid ID"
INVALID_NAME = "Invalid Name"
INVALID_TTR = "Invalid TTR"
INVALID_TTL = "Invalid TTL"
INVALID_TIME = "Invalid Time"
INVALID_PRIORITY = "Invalid Priority"
INVALID_MAX_ATTEMPTS = "Invalid Max Attempts"
INVALID_MAX_FAILS = "Invalid Max Fails"
INVALID_WAIT = "Invalid wait timeout"
INVALID_CURSOR = "Invalid cursor offset"
INVALID_LIMIT = "Invalid limit"
DUPLICATE_JOB = "Duplicate job"
DUPLICATE_RESULT = "Duplicate result"


def result_reply(uuid: bytes, success: int, result: bytes) -> bytes:
    """The reply to run and result: `+OK 1` then `<id> <success> <size>` and the bytes."""
    return b"+OK 1\r\n%s %d %d\r\n%s\r\n" % (uuid, success, len(result), result)


def lease_reply(uuid: bytes, name: bytes, ttr: int, payload: bytes) -> bytes:
    return b"+OK 1\r\n%s %s %d %d\r\n%s\r\n" % (uuid, name, ttr, len(payload), payload)


Record = tuple[bytes, list[tuple[bytes, bytes]]]


def inspect_reply(records: Iterable[Record]) -> bytes:
    """`+OK <n>` then per record `<label> <key-count>` and its `<key> <value>` lines."""
    out = []
    n = 0
    for label, pairs in records:
        n += 1
        out.append(b"%s %d\r\n" % (label, len(pairs)))
        out.extend(b"%s %s\r\n" % pair for pair in pairs)
    return b"+OK %d\r\n" % n + b"".join(out)
