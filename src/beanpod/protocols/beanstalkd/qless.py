"""The `qless` extension command of the beanstalkd dialect (docs/qless.md).

    qless <bytes>\\r\\n<json>\\r\\n      request: {"fn": "<function>", "args": [...]}
    OK <bytes>\\r\\n<json>\\r\\n         the function's result, as JSON
    QLESS_ERROR <message>\\r\\n         a refusal, with qless's wording on one line

A request may carry `"now": <seconds>`, the time qless-core's clients pass with every
call. With `--clock manual` it moves the server's clock there (never backwards; due
timers fire first); with the real clock it is checked and ignored: the server's clock
stays authoritative.

A plain beanstalkd client never sends it, so nothing it sees changes.

`events` with a timeout is a long-poll: with no message to return yet, the connection
parks (as a blocking reserve does; later pipelined commands wait behind it) and the
`OK` reply comes with the first matching publish or at the timeout. A half-closed
client is answered TIMED_OUT, as a parked reserve is.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from beanpod.core.qless import Qless, QlessError
from beanpod.core.qless.api import call, events_args
from beanpod.core.qless.args import Args
from beanpod.core.qless.channels import poll
from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.context import Context

if TYPE_CHECKING:
    from beanpod.core.engine import Engine

ERROR_WORD = b"QLESS_ERROR "
CREATING = frozenset({"put", "requeue", "recur"})  # refused while draining
# Redis's own maxmemory refusal, what a qless client sees from qless-core on a full Redis.
OOM = "OOM command not allowed when used memory > 'maxmemory'."
EVENTS = "events"  # the long-poll read of pub/sub channels
MAX_NOW = 1e11  # seconds: past year 5000, and far below float precision trouble


def error(message: str) -> bytes:
    """A one-line refusal (line breaks in the message become spaces)."""
    line = " ".join(message.split("\r\n")).replace("\n", " ").replace("\r", " ")
    return ERROR_WORD + line.encode("utf-8", "replace") + w.CRLF


def ok(result: Any) -> bytes:
    body = json.dumps(result, separators=(",", ":")).encode()
    return b"OK %d\r\n%s\r\n" % (len(body), body)


def _request(body: bytes) -> tuple[str, list[Any], int | None]:
    """(fn, args, the client's `now` in ms or None). A body nested too deep to parse
    is malformed like any other (RecursionError is not a ValueError)."""
    try:
        request = json.loads(body, parse_constant=str, parse_float=_float_or_text)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if not isinstance(request, dict) or not isinstance(request.get("fn"), str):
        raise ValueError('expected {"fn": <name>, "args": [...]}')
    args = request.get("args", [])
    if not isinstance(args, list):
        raise ValueError('"args" must be a list')
    return request["fn"], args, _client_now(request.get("now"))


def _float_or_text(text: str) -> float | str:
    """A JSON number too large for a float (1e400), like `Infinity` and `NaN`, stays
    text, as every argument is text to qless-core: where a number belongs it is refused
    with qless's bad-argument error, and a stored value (config, data) keeps it as text,
    so no reply ever carries a non-JSON `Infinity`."""
    value = float(text)
    return value if math.isfinite(value) else text


def _client_now(now: Any) -> int | None:
    """`now`: the client's time in seconds since the epoch (qless-core's leading
    argument), as engine ms."""
    if now is None:
        return None
    seconds = now
    if isinstance(now, str):  # as qless-core's clients send it (Redis arguments are text)
        try:
            seconds = float(now)
        except ValueError:
            seconds = None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) \
            or not 0 <= seconds < MAX_NOW:  # fmt: skip
        raise ValueError(f'"now" must be seconds since the epoch, not {now!r}')
    return round(seconds * 1000)


def qless(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """qless <bytes>\\r\\n<json>\\r\\n"""
    _, body, crlf = cmd
    if not crlf:
        return w.EXPECTED_CRLF
    try:
        fn, args, now = _request(body)
    except ValueError as exc:
        return error(f"malformed request: {exc}")
    if now is not None:
        s.client_time(now)
    d = s.dialect
    refusal = _admission(d.engine, fn, len(body))
    if refusal is not None:
        return refusal
    q = d.qless
    if fn == EVENTS:
        return _events(s, q, args)
    if fn == "cancel" and d.audit is not None:
        _audit_cancel(s, q, args)
    try:
        return ok(call(q, fn, args, s.now, len(body), s.conn))
    except QlessError as exc:
        return error(exc.message)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        return error(f"{fn}(): bad arguments: {exc}")
    except RecursionError:  # a value nested too deeply to re-encode
        return error(f"{fn}(): bad arguments: nested too deeply")


def _admission(engine: Engine, fn: str, nbytes: int) -> bytes | None:
    """A job-creating call's refusal while draining or past --max-memory, else None."""
    if fn not in CREATING:
        return None
    if engine.draining:
        return w.DRAINING
    meter = engine.meter
    if meter is not None and meter.refuses(nbytes):
        return error(OOM)
    return None


def _audit_cancel(s: Context, q: Qless, jids: list[Any]) -> None:
    """--audit-log: cancelling a job another worker holds is an admin act."""
    audit = s.dialect.audit
    for jid in jids:
        job = q.jobs.get(jid) if isinstance(jid, str) else None
        if audit is not None and job is not None and job.reserver not in (None, s.conn):
            assert job.reserver is not None
            audit("delete-reserved", conn=s.conn.id, jid=jid, holder=job.reserver.id)


def _events(s: Context, q: Qless, args: list[Any]) -> bytes | None:
    """events(channels, [cursor], [timeout], [count]): answer now, or park (None)."""
    try:
        wanted, cursor, timeout_ms, count = events_args(Args("Events", args))
    except QlessError as exc:
        return error(exc.message)
    except (TypeError, ValueError) as exc:
        return error(f"events(): bad arguments: {exc}")
    found = poll(q, s.now, s.conn, wanted, cursor, timeout_ms, count, lambda r: s.answer(ok(r)))
    return None if found is None else ok(found)
