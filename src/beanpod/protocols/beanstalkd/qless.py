"""The `qless` extension command of the beanstalkd dialect (docs/qless.md).

    qless <bytes>\\r\\n<json>\\r\\n      request: {"fn": "<function>", "args": [...]}
    OK <bytes>\\r\\n<json>\\r\\n         the function's result, as JSON
    QLESS_ERROR <message>\\r\\n         a refusal, with qless's wording on one line

A plain beanstalkd client never sends it, so nothing it sees changes.

`events` with a timeout is a long-poll: with no message to return yet, the connection
parks (as a blocking reserve does; later pipelined commands wait behind it) and the
`OK` reply comes with the first matching publish or at the timeout. A half-closed
client is answered TIMED_OUT, as a parked reserve is.
"""

from __future__ import annotations

import json
from typing import Any

from beanpod.core.qless import Qless, QlessError
from beanpod.core.qless.api import call, events_args
from beanpod.core.qless.args import Args
from beanpod.core.qless.channels import poll
from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.context import Context

ERROR_WORD = b"QLESS_ERROR "
CREATING = frozenset({"put", "requeue", "recur"})  # refused while draining
# Redis's own maxmemory refusal, what a qless client sees from qless-core on a full Redis.
OOM = "OOM command not allowed when used memory > 'maxmemory'."
EVENTS = "events"  # the long-poll read of pub/sub channels


def error(message: str) -> bytes:
    """A one-line refusal (line breaks in the message become spaces)."""
    line = " ".join(message.split("\r\n")).replace("\n", " ").replace("\r", " ")
    return ERROR_WORD + line.encode("utf-8", "replace") + w.CRLF


def ok(result: Any) -> bytes:
    body = json.dumps(result, separators=(",", ":")).encode()
    return b"OK %d\r\n%s\r\n" % (len(body), body)


def _request(body: bytes) -> tuple[str, list[Any]]:
    request = json.loads(body)
    if not isinstance(request, dict) or not isinstance(request.get("fn"), str):
        raise ValueError('expected {"fn": <name>, "args": [...]}')
    args = request.get("args", [])
    if not isinstance(args, list):
        raise ValueError('"args" must be a list')
    return request["fn"], args


def qless(s: Context, cmd: tuple[Any, ...]) -> bytes | None:
    """qless <bytes>\\r\\n<json>\\r\\n"""
    _, body, crlf = cmd
    if not crlf:
        return w.EXPECTED_CRLF
    try:
        fn, args = _request(body)
    except ValueError as exc:
        return error(f"malformed request: {exc}")
    d = s.dialect
    if fn in CREATING and d.engine.draining:
        return w.DRAINING
    meter = d.engine.meter
    if fn in CREATING and meter is not None and meter.refuses(len(body)):
        return error(OOM)
    q = d.qless
    if fn == EVENTS:
        return _events(s, q, args)
    if fn == "cancel" and d.audit is not None:
        _audit_cancel(s, q, args)
    q.caller = s.conn
    try:
        return ok(call(q, fn, args, s.now, len(body)))
    except QlessError as exc:
        return error(exc.message)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        return error(f"{fn}(): bad arguments: {exc}")
    finally:
        q.caller = None


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


def too_big(s: Context, cmd: tuple[Any, ...]) -> bytes:
    """qless <bytes> over max-job-size: the body was read and discarded."""
    return w.JOB_TOO_BIG
