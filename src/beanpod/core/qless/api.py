"""qless's function-plus-arguments API: `call(q, fn, args, now)` -> a JSON-able result.

Names and argument orders follow qless-core (without its leading `now`: the server's
clock supplies it). Refusals raise QlessError with qless's wording. docs/qless.md lists
every function.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from beanpod.core.qless import (
    cancel,
    channels,
    complete,
    deps,
    fail,
    history,
    locks,
    moves,
    pop,
    put,
    queues,
    recurring,
    tags,
    throttles,
    track,
    workers,
)
from beanpod.core.qless.args import Args
from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.view import job_view

if TYPE_CHECKING:
    from beanpod.core.conn import Conn
    from beanpod.core.qless.store import Qless

Fn = Callable[["Qless", int, Args], Any]


# Functions that never write to the write-ahead log (no disk-space check before them).
READ_ONLY = frozenset({
    "get", "multiget", "recur.get", "workers", "failed", "jobs", "queues", "length",
    "config.get", "stats", "throttle.get", "throttle.locks", "throttle.pending",
    "throttle.ttl", "queue.throttle.get", "events",
})  # fmt: skip
# Room asked of the log before a mutation, beyond the request's own size: the job's
# extras (history, tags, failure) are rewritten whole in an update record.
RECORD_ALLOWANCE = 16384


def call(
    q: Qless, fn: str, args: list[Any], now: int, nbytes: int = 0, caller: Conn | None = None
) -> Any:
    """Run qless function `fn` with positional `args` at `now` (engine ms) for `caller`
    (the connection its events name; None: none). `nbytes`: the request's size, for the
    disk-space check made before any mutation."""
    handler = FUNCTIONS.get(fn)
    if handler is None:
        raise QlessError(f"Unknown command {fn}")
    name = fn.split(".")[0].capitalize()
    mutates = fn not in READ_ONLY and not _read_only(fn, args)
    if mutates and q.engine.refuses(nbytes + RECORD_ALLOWANCE):
        raise QlessError(
            f"{name}(): out of disk space for the write-ahead log; nothing was changed"
        )
    try:
        return handler(q, now, Args(name, list(args), caller))
    finally:
        q.flush_stats()


def _read_only(fn: str, args: list[Any]) -> bool:
    """tag get/top and track() only read."""
    if fn == "tag":
        return bool(args) and args[0] in ("get", "top")
    return fn == "track" and not args


def _put_args(a: Args) -> tuple[str, str, str, str, str, int, put.PutArgs]:
    worker, queue, jid, klass = a.next("worker"), a.text("queue"), a.text("jid"), a.text("klass")
    data, delay = a.json_text("data"), a.ms("delay")
    opts = a.pairs()
    extra = put.PutArgs(
        None if "priority" not in opts else int(a.to_number("priority", opts["priority"])),
        None if "tags" not in opts else a.to_list("tags", opts["tags"]),
        None if "retries" not in opts else int(a.to_number("retries", opts["retries"])),
        None if "depends" not in opts else a.to_list("depends", opts["depends"]),
        None if "throttles" not in opts else a.to_list("throttles", opts["throttles"]),
    )
    return str(worker), queue, jid, klass, data, delay, extra


def _put(q: Qless, now: int, a: Args) -> Any:
    return put.put(q, now, *_put_args(a), caller=a.caller)


def _requeue(q: Qless, now: int, a: Args) -> Any:
    return put.requeue(q, now, *_put_args(a), caller=a.caller)


def _pop(q: Qless, now: int, a: Args) -> Any:
    target = a.next("queue")
    worker, count = a.text("worker"), a.integer("count")
    if isinstance(target, list):
        order = a.opt_text("order") or "ordered"
        return pop.pop_many(
            q, now, a.to_list("queue", target), worker, count, order, caller=a.caller
        )
    return pop.pop(q, now, str(target), worker, count, caller=a.caller)


def _peek(q: Qless, now: int, a: Args) -> Any:
    return pop.peek(q, now, a.text("queue"), a.integer("count"), caller=a.caller)


def _complete(q: Qless, now: int, a: Args) -> Any:
    jid, worker, queue = a.text("jid"), a.text("worker"), a.text("queue")
    data = a.json_text("data") if a.more() else None
    opts = a.pairs()
    unknown = set(opts) - {"next", "delay", "depends"}
    if unknown:
        raise QlessError(f"Complete(): Unknown option {sorted(unknown)[0]!r}")
    delay = opts.get("delay")
    return complete.complete(
        q, now, jid, worker, queue, data, opts.get("next"),
        None if delay is None else round(a.to_number("delay", delay) * 1000),
        None if "depends" not in opts else a.to_list("depends", opts["depends"]),
        caller=a.caller,
    )  # fmt: skip


def _fail(q: Qless, now: int, a: Args) -> Any:
    jid, worker, group = a.text("jid"), a.text("worker"), a.text("group")
    message = a.next("message")
    data = a.json_text("data") if a.more() else None
    return fail.fail(q, now, jid, worker, group, str(message), data, caller=a.caller)


def _retry(q: Qless, now: int, a: Args) -> Any:
    jid, queue, worker, delay = a.text("jid"), a.text("queue"), a.text("worker"), a.ms("delay", 0)
    group = a.opt_text("group")
    message = str(a.next("message")) if a.more() else None
    return fail.retry(q, now, jid, queue, worker, delay, group, message, caller=a.caller)


def _heartbeat(q: Qless, now: int, a: Args) -> Any:
    jid, worker = a.text("jid"), a.text("worker")
    return locks.heartbeat(q, now, jid, worker, a.json_text("data") if a.more() else None)


def _get(q: Qless, now: int, a: Args) -> Any:
    q.at(now)
    job = q.find(a.text("jid"))
    if job is None or job.state.name == "RECUR":
        return None
    return job_view(q, job, now)


def _multiget(q: Qless, now: int, a: Args) -> Any:
    return [_get(q, now, Args("Multiget", [jid])) for jid in a.strings()]


def _depends(q: Qless, now: int, a: Args) -> Any:
    jid, command = a.text("jid"), a.text("command")
    return deps.depends(q, now, jid, command, a.strings(), caller=a.caller)


def _tag(q: Qless, now: int, a: Args) -> Any:
    command = a.text("command")
    if command in ("add", "remove"):
        jid = a.text("jid")
        change = tags.add if command == "add" else tags.remove
        return change(q, now, jid, a.strings())
    if command == "get":
        return tags.get(q, a.text("tag"), a.integer("offset", 0), a.integer("count", 25))
    if command == "top":
        return tags.top(q, a.integer("offset", 0), a.integer("count", 25))
    raise QlessError(f"Tag(): Unknown command {command!r}")


def _priority(q: Qless, now: int, a: Args) -> Any:
    return put.set_priority(q, now, a.text("jid"), int(a.number("priority")))


def _track(q: Qless, now: int, a: Args) -> Any:
    if not a.more():
        return track.tracked(q, now)
    command = a.text("command")
    return track.track(q, now, command, a.text("jid"))


def _recur(q: Qless, now: int, a: Args) -> Any:
    queue, jid, klass, data = a.text("queue"), a.text("jid"), a.text("klass"), a.json_text("data")
    if a.text("spec") != "interval":
        raise QlessError("Recur(): schedule type must be 'interval'")
    interval, offset = a.ms("interval"), a.ms("offset")
    opts = a.pairs()
    unknown = set(opts) - {"priority", "tags", "retries", "backlog", "throttles"}
    if unknown:
        raise QlessError(f"Recur(): Unknown option {sorted(unknown)[0]!r}")

    def num(key: str) -> int:
        return int(a.to_number(key, opts.get(key, 0)))

    tag_list = a.to_list("tags", opts["tags"]) if "tags" in opts else []
    tids = a.to_list("throttles", opts["throttles"]) if "throttles" in opts else []
    return recurring.recur(q, now, queue, jid, klass, data, interval, offset, num("priority"),
                           tag_list, num("retries"), num("backlog"), tids,
                           caller=a.caller)  # fmt: skip


def _recur_get(q: Qless, now: int, a: Args) -> Any:
    q.at(now)
    return recurring.get(q, a.text("jid"))


def _recur_update(q: Qless, now: int, a: Args) -> Any:
    jid = a.text("jid")
    changes = []
    for key, value in a.pairs().items():
        if key in ("priority", "retries", "backlog"):
            value = int(a.to_number(key, value))
        elif key == "interval":
            value = round(a.to_number(key, value) * 1000)
        elif key == "data":
            value = a.to_json_text(key, value)
        elif key == "throttles":
            value = list(dict.fromkeys(a.to_list(key, value)))
        changes.append((key, value))
    return recurring.update(q, now, jid, changes)


def _recur_tag(q: Qless, now: int, a: Args) -> Any:
    return recurring.retag(q, now, a.text("jid"), a.strings(), [])


def _recur_untag(q: Qless, now: int, a: Args) -> Any:
    return recurring.retag(q, now, a.text("jid"), [], a.strings())


def _unrecur(q: Qless, now: int, a: Args) -> Any:
    return recurring.unrecur(q, now, a.text("jid"))


def _workers(q: Qless, now: int, a: Args) -> Any:
    return workers.workers(q, now, a.opt_text("worker"))


def _deregister(q: Qless, now: int, a: Args) -> Any:
    workers.deregister(q, a.strings())
    return True


def _failed(q: Qless, now: int, a: Args) -> Any:
    q.at(now)
    group = a.opt_text("group")
    return fail.failed(q, group, a.integer("start", 0), a.integer("limit", 25))


def _unfail(q: Qless, now: int, a: Args) -> Any:
    queue, group = a.text("queue"), a.text("group")
    return fail.unfail(q, now, queue, group, a.integer("count", 25), caller=a.caller)


def _jobs(q: Qless, now: int, a: Args) -> Any:
    state = a.text("state")
    if state == "complete":
        return queues.jobs(q, now, state, "", a.integer("offset", 0), a.integer("count", 25))
    queue = a.text("queue")
    return queues.jobs(q, now, state, queue, a.integer("offset", 0), a.integer("count", 25))


def _queues(q: Qless, now: int, a: Args) -> Any:
    return queues.queues(q, now, a.opt_text("queue"))


def _pause(q: Qless, now: int, a: Args) -> Any:
    queues.pause(q, now, a.strings(), True, caller=a.caller)
    return True


def _unpause(q: Qless, now: int, a: Args) -> Any:
    queues.pause(q, now, a.strings(), False, caller=a.caller)
    return True


def _forget(q: Qless, now: int, a: Args) -> Any:
    queues.forget(q, a.strings())
    return True


def _length(q: Qless, now: int, a: Args) -> Any:
    return queues.length(q, now, a.text("queue"))


def _log(q: Qless, now: int, a: Args) -> Any:
    jid, message = a.text("jid"), a.text("message")
    data = a.next("data") if a.more() else None
    if isinstance(data, str):  # JSON text, as qless-core takes it
        try:
            data = json.loads(data)
        except (ValueError, RecursionError):
            raise QlessError("Log(): Arg 'data' is not a JSON object") from None
    history.log(q, now, jid, message, data)
    return True


def _config_get(q: Qless, now: int, a: Args) -> Any:
    key = a.opt_text("key")
    return q.config.all() if key is None else q.config.get(key)


def _config_set(q: Qless, now: int, a: Args) -> Any:
    key, value = a.text("key"), a.next("value")
    if value is None:
        raise QlessError("Config(): Arg 'value' must not be null (use config.unset)")
    q.set_config(key, value)
    return True


def _config_unset(q: Qless, now: int, a: Args) -> Any:
    q.set_config(a.text("key"), None)
    return True


def _stats(q: Qless, now: int, a: Args) -> Any:
    q.at(now)
    return q.stats.get(a.text("queue"), a.ms("date"))


def _cancel(q: Qless, now: int, a: Args) -> Any:
    return cancel.cancel(q, now, a.strings(), caller=a.caller)


def _timeout(q: Qless, now: int, a: Args) -> Any:
    locks.timeout(q, now, a.strings(), caller=a.caller)
    return True


def events_args(a: Args) -> tuple[frozenset[str], int | None, int, int]:
    """events(channels, [cursor], [timeout s], [count]) -> (channels, cursor, ms, count)."""
    wanted = a.next("channels")
    listed = [wanted] if isinstance(wanted, str) else a.to_list("channels", wanted)
    cursor = a.next("cursor") if a.more() else None
    if cursor is not None:
        cursor = int(a.to_number("cursor", cursor))
    timeout = a.ms("timeout", 0)
    count = a.integer("count", 100)
    if count <= 0 or count > channels.MAX_COUNT:
        raise QlessError(f'Events(): Arg "count" must be 1..{channels.MAX_COUNT}: {count}')
    return channels.names(listed), cursor, timeout, count


def _events(q: Qless, now: int, a: Args) -> Any:
    """Without a connection to park (engine callers) the answer is immediate."""
    wanted, cursor, _, count = events_args(a)
    return channels.poll(q, now, None, wanted, cursor, 0, count, None)


def _throttle_set(q: Qless, now: int, a: Args) -> Any:
    tid, maximum = a.text("tid"), int(a.number("maximum"))
    throttles.set_throttle(q, now, tid, maximum, a.ms("expiration", 0))
    return True


def _throttle_get(q: Qless, now: int, a: Args) -> Any:
    return throttles.get(q, now, a.text("tid"))


def _throttle_delete(q: Qless, now: int, a: Args) -> Any:
    throttles.delete(q, now, a.text("tid"))
    return True


def _throttle_locks(q: Qless, now: int, a: Args) -> Any:
    return throttles.members(q, now, a.text("tid"), "locks")


def _throttle_pending(q: Qless, now: int, a: Args) -> Any:
    return throttles.members(q, now, a.text("tid"), "pending")


def _throttle_ttl(q: Qless, now: int, a: Args) -> Any:
    return throttles.ttl(q, now, a.text("tid"))


def _throttle_release(q: Qless, now: int, a: Args) -> Any:
    moves.throttle_release(q, now, a.text("tid"), a.strings())
    return True


def _queue_throttle_get(q: Qless, now: int, a: Args) -> Any:
    return throttles.get(q, now, throttles.queue_throttle(a.text("queue")))


def _queue_throttle_set(q: Qless, now: int, a: Args) -> Any:
    queue, maximum = a.text("queue"), int(a.number("maximum"))
    throttles.set_throttle(q, now, throttles.queue_throttle(queue), maximum)
    return True


FUNCTIONS: dict[str, Fn] = {
    "put": _put, "requeue": _requeue, "pop": _pop, "peek": _peek, "complete": _complete,
    "fail": _fail, "retry": _retry, "heartbeat": _heartbeat, "cancel": _cancel,
    "get": _get, "multiget": _multiget, "depends": _depends, "tag": _tag,
    "priority": _priority, "track": _track, "recur": _recur, "recur.get": _recur_get,
    "recur.update": _recur_update, "recur.tag": _recur_tag, "recur.untag": _recur_untag,
    "unrecur": _unrecur, "workers": _workers, "worker.deregister": _deregister,
    "failed": _failed, "unfail": _unfail, "jobs": _jobs, "queues": _queues,
    "pause": _pause, "unpause": _unpause, "queue.forget": _forget, "length": _length,
    "log": _log, "config.get": _config_get, "config.set": _config_set,
    "config.unset": _config_unset, "stats": _stats, "timeout": _timeout,
    "throttle.set": _throttle_set, "throttle.get": _throttle_get,
    "throttle.delete": _throttle_delete, "throttle.locks": _throttle_locks,
    "throttle.pending": _throttle_pending, "throttle.ttl": _throttle_ttl,
    "throttle.release": _throttle_release,
    "queue.throttle.get": _queue_throttle_get, "queue.throttle.set": _queue_throttle_set,
    "events": _events,
}  # fmt: skip
