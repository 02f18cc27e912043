"""The depth-1 fast path of the beanstalkd parser: a read that is exactly one common
command (a put with its body, delete, reserve-with-timeout, reserve), as a client that
waits for every reply sends it. Compiled, walking its bytes once is a native loop: no
split of the read, no dict lookup of the line, no `int()` of a slice. Anything else, or
any doubt (a number of too many digits, a body over the limit), answers None and the
batch parser judges the read by beanstalkd's rules; what this accepts, that parses to
the same command.

Interpreted, the byte loop costs more than the batch parser's split and dict hits, so
the parser asks here only when this module is compiled (`NATIVE`).
"""

from __future__ import annotations

import types
from typing import Any, Final

from mypy_extensions import i64

from beanpod.protocols.beanstalkd import wire as w

PUT: Final = w.PUT
DELETE: Final = w.DELETE
RESERVE_WITH_TIMEOUT: Final = w.RESERVE_WITH_TIMEOUT
RESERVE_LINE: Final = w.RESERVE + w.CRLF
RESERVE: Final[tuple[Any, ...]] = (w.RESERVE,)
CR: Final[i64] = 13
LF: Final[i64] = 10
SPACE: Final[i64] = 32
# Digits a number may have here: 9 keep put's and the timeout's numbers below their
# limits (u32, INT_MAX), 18 keep a job id a native int below u64's.
SHORT: Final[i64] = 9
ID: Final[i64] = 18


def one_command(data: bytes, max_job_size: int) -> tuple[Any, ...] | None:
    """The command `data` is, when it is exactly one put, delete, reserve-with-timeout
    or reserve with plain arguments (single spaces, digits only); else None."""
    if data.startswith(PUT):
        return _put(data, max_job_size)
    if data.startswith(DELETE):
        job_id = _last_number(data, len(DELETE), ID)
        return None if job_id < 0 else (DELETE, job_id)
    if data.startswith(RESERVE_WITH_TIMEOUT):
        seconds = _last_number(data, len(RESERVE_WITH_TIMEOUT), SHORT)
        return None if seconds < 0 else (RESERVE_WITH_TIMEOUT, seconds)
    return RESERVE if data == RESERVE_LINE else None


def _put(data: bytes, max_job_size: int) -> tuple[Any, ...] | None:
    """`put <pri> <delay> <ttr> <bytes>\\r\\n<body>\\r\\n`, all of `data`."""
    pri, i = _number(data, len(PUT), SPACE)
    delay, i = _number(data, i, SPACE)
    ttr, i = _number(data, i, SPACE)
    size, lf = _number(data, i, CR)
    n: i64 = len(data)
    if pri < 0 or delay < 0 or ttr < 0 or size < 0 or size > max_job_size:
        return None
    if lf + size + 3 != n or data[lf] != LF or data[n - 2] != CR or data[n - 1] != LF:
        return None
    return (PUT, pri, delay, ttr, data[lf + 1 : lf + 1 + size])


def _number(data: bytes, start: i64, stop: i64) -> tuple[i64, i64]:
    """The number of 1 to 9 digits at `start` that byte `stop` ends, and the index past
    `stop`; (-1, len(data)) when there is none (so every later call fails at once)."""
    n: i64 = len(data)
    value: i64 = 0
    i = start
    while i < n and i - start <= SHORT:
        byte: i64 = data[i]
        if byte == stop and i > start:
            return value, i + 1
        if byte < 48 or byte > 57:
            break
        value = value * 10 + byte - 48
        i += 1
    return -1, n


def _last_number(data: bytes, start: i64, most: i64) -> i64:
    """The number of 1 to `most` digits from `start` to the read's closing CRLF, or -1."""
    n: i64 = len(data)
    end = n - 2
    if end <= start or end - start > most or data[end] != CR or data[n - 1] != LF:
        return -1
    value: i64 = 0
    for i in range(start, end):
        byte: i64 = data[i]
        if byte < 48 or byte > 57:
            return -1
        value = value * 10 + byte - 48
    return value


def _compiled() -> bool:
    """mypyc makes this module's functions built-in functions."""
    return not isinstance(_compiled, types.FunctionType)


NATIVE: Final = _compiled()
