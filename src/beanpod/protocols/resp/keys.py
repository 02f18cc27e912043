"""The few plain Redis commands qless's clients send beside the script.

- ZSCORE / ZCARD on qless's own key names (`ql:q:<queue>-recur|-scheduled|-locks|
  -work|-depends`), answered from the engine: the keys are not stored, they are read.
- FLUSHDB / FLUSHALL: every qless job, queue, worker, setting and statistic forgotten
  (core/qless/flush.py) and the scratch lists emptied, only on a server started for
  tests (`--clock manual` or `--redis-allow-flush`).
- KEYS, RPUSH, LPUSH, LLEN, BRPOP, DEL on a small scratch keyspace of lists, held in
  memory only (qless-py's suite signals between threads through one). It is not the
  queue: KEYS lists only these lists, never qless's state.
"""

from __future__ import annotations

import fnmatch
from collections import deque

from beanpod.core.job import JobState
from beanpod.core.qless.ext import qext, rext
from beanpod.core.qless.flush import flush
from beanpod.core.qless.queues import queues
from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.context import Session

QUEUE_KEY = "ql:q:"
NO_FLUSH = w.error(
    "ERR FLUSHDB is refused: it forgets every job, and this server was not "
    "started for tests (--clock manual or --redis-allow-flush)"
)
NOT_INTEGER = w.error("ERR value is not an integer or out of range")
BAD_TIMEOUT = w.error("ERR timeout is not a float or out of range")
# ZCARD suffix -> the queue count(s) it is (a running job holds a lock until it
# completes, also once stalled).
CARDS = {"locks": ("running", "stalled"), "work": ("waiting",), "scheduled": ("scheduled",),
         "depends": ("depends",), "recur": ("recurring",)}  # fmt: skip


def _queue_key(key: bytes) -> tuple[str, str] | None:
    """`ql:q:<queue>-<kind>` -> (queue, kind)."""
    text = key.decode("utf-8", "replace")
    if not text.startswith(QUEUE_KEY) or "-" not in text:
        return None
    queue, _, kind = text[len(QUEUE_KEY) :].rpartition("-")
    return queue, kind


def _score(ms: int, proto: int) -> bytes:
    seconds = ms / 1000
    return b",%s\r\n" % f"{seconds:.17g}".encode() if proto == 3 else w.bulk(f"{seconds:.17g}")


def zscore(s: Session, req: list[bytes]) -> bytes:
    """ZSCORE ql:q:<queue>-recur <jid> (next run) | -scheduled <jid> (when it is due)."""
    where = _queue_key(req[1])
    q = s.door.qless
    job = q.jobs.get(req[2].decode("utf-8", "replace"))
    if where is None or job is None:
        return w.null(s.proto)
    queue, kind = where
    q.at(s.now)
    if kind == "recur" and (r := rext(job)) is not None and r.queue == queue:
        return _score(r.next_at, s.proto)
    ext = qext(job)
    if kind == "scheduled" and ext is not None and ext.queue == queue \
            and job.state is JobState.DELAYED:  # fmt: skip
        return _score(job.deadline, s.proto)
    return w.null(s.proto)


def zcard(s: Session, req: list[bytes]) -> bytes:
    """ZCARD ql:q:<queue>-locks|-work|-scheduled|-depends|-recur"""
    where = _queue_key(req[1])
    fields = None if where is None else CARDS.get(where[1])
    if where is None or fields is None:
        return w.integer(0)
    counts = queues(s.door.qless, s.now, where[0])
    return w.integer(sum(int(counts[f]) for f in fields))


def flushdb(s: Session, req: list[bytes]) -> bytes:
    """FLUSHDB [ASYNC|SYNC]"""
    if len(req) > 2 or (len(req) == 2 and req[1].lower() not in (b"async", b"sync")):
        return w.error("ERR syntax error")
    if not s.door.testing:
        return NO_FLUSH
    flush(s.door.qless, s.now, s.conn)
    s.door.lists.clear()
    return w.OK


def keys(s: Session, req: list[bytes]) -> bytes:
    pattern = req[1]
    found = [k for k in s.door.lists if fnmatch.fnmatchcase(k, pattern)]
    return w.array([w.bulk(k) for k in found])


def _push(s: Session, req: list[bytes], left: bool) -> bytes:
    key = req[1]
    items = s.door.lists.setdefault(key, deque())
    for value in req[2:]:
        items.appendleft(value) if left else items.append(value)
    length = len(items)
    _serve_waiters(s, key)
    return w.integer(length)


def rpush(s: Session, req: list[bytes]) -> bytes:
    return _push(s, req, left=False)


def lpush(s: Session, req: list[bytes]) -> bytes:
    return _push(s, req, left=True)


def llen(s: Session, req: list[bytes]) -> bytes:
    return w.integer(len(s.door.lists.get(req[1], ())))


def delete(s: Session, req: list[bytes]) -> bytes:
    return w.integer(sum(s.door.lists.pop(k, None) is not None for k in req[1:]))


def _pop(s: Session, key: bytes) -> bytes | None:
    items = s.door.lists.get(key)
    if not items:
        return None
    value = items.pop()
    if not items:
        del s.door.lists[key]
    return value


def brpop(s: Session, req: list[bytes]) -> bytes | None:
    """BRPOP key [key ...] timeout: a value now, or park until a push or the timeout."""
    try:
        timeout = float(req[-1])
    except ValueError:
        return BAD_TIMEOUT
    if timeout < 0:
        return w.error("ERR timeout is negative")
    for key in req[1:-1]:
        value = _pop(s, key)
        if value is not None:
            return w.array([w.bulk(key), w.bulk(value)])
    if s.multi is not None:  # inside EXEC a BRPOP does not wait
        return w.null_array(s.proto)
    at = None if timeout == 0 else s.now + max(1, round(timeout * 1000))
    _park(s, req[1:-1], at)
    return None


def _park(s: Session, wanted: list[bytes], at: int | None) -> None:
    engine = s.door.engine
    waiters = s.door.list_waiters

    def timed_out(outcome: object) -> None:
        _withdraw(s)
        s.answer(w.null_array(s.proto))

    engine.park(s.conn, at, timed_out, named=[])
    s.waiting_on = wanted
    for key in wanted:
        waiters.setdefault(key, {})[s.client_id] = s


def _withdraw(s: Session) -> None:
    """Forget a parked BRPOP (answered, timed out, or its connection closed)."""
    for key in s.waiting_on or ():
        waiting = s.door.list_waiters.get(key)
        if waiting is not None:
            waiting.pop(s.client_id, None)
            if not waiting:
                del s.door.list_waiters[key]
    s.waiting_on = None


def _serve_waiters(s: Session, key: bytes) -> None:
    """Hand pushed values to the BRPOPs parked on `key`, oldest first."""
    waiting = s.door.list_waiters.get(key)
    while waiting and s.door.lists.get(key):
        other = next(iter(waiting.values()))
        _withdraw(other)
        value = _pop(s, key)
        assert value is not None
        if other.conn.waiter is not None:
            s.door.engine.unpark(other.conn.waiter)
        other.answer(w.array([w.bulk(key), w.bulk(value)]))
        waiting = s.door.list_waiters.get(key)


def withdraw(s: Session) -> None:
    """The connection closed: drop its parked BRPOP (the engine drops its timer)."""
    if s.waiting_on is not None:
        _withdraw(s)
