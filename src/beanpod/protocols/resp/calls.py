"""`EVALSHA <sha> 0 <function> <now> <args...>`: run the qless function on the engine and
answer as Redis converts the script's Lua result (docs/qless.md has the table):

- cjson text where qless.lua returns `cjson.encode(...)` (cjson prints an empty table,
  hence an empty list, as `{}`),
- nothing (a null) where the script returns nothing,
- otherwise Lua's conversion: a string is a bulk string, a number an integer (truncated),
  `true` the integer 1, `false` a null, a list an array.

A refusal is the error Redis makes of a script's `error()`, with qless's message.
"""

from __future__ import annotations

import json
import math
from typing import Any

from beanpod.core.qless import QlessError
from beanpod.core.qless.api import call
from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.context import Session

CJSON = frozenset({
    "get", "multiget", "queues", "failed", "workers", "track", "tag", "stats", "peek",
    "pop", "recur.get", "recur.tag", "recur.untag", "throttle.get", "queue.throttle.get",
    "events",
})  # fmt: skip
NOTHING = frozenset({
    "config.set", "config.unset", "pause", "unpause", "timeout", "log", "worker.deregister",
    "queue.forget", "queue.throttle.set", "throttle.set", "throttle.delete",
    "throttle.release",
})  # fmt: skip
CREATING = frozenset({"put", "requeue", "recur"})  # refused while draining
OOM = w.error("OOM command not allowed when used memory > 'maxmemory'.")
MAX_NOW = 1e11  # seconds: past year 5000


def script_error(sha: str, message: str) -> bytes:
    """What Redis answers for a script's `error(message)` (line 1: there is one line)."""
    return w.error(f"ERR user_script:1: {message} script: {sha}, on @user_script:1.")


def run(s: Session, sha: str, old_put: bool, argv: list[bytes]) -> bytes:
    args = [a.decode("utf-8", "replace") for a in argv]
    if not args:
        return script_error(sha, "Must provide a command")
    fn = args[0]
    now = _now(args[1] if len(args) > 1 else None)
    if now is None:
        given = args[1] if len(args) > 1 else "nil"
        return script_error(sha, f'Arg "now" missing or not a number: {given}')
    rest = args[2:]
    if old_put and fn == "put":  # qless-core of 2013: put takes no worker
        rest.insert(0, "")
    s.client_time(now)
    refusal = _admission(s, sha, fn, sum(len(a) for a in argv))
    if refusal is not None:
        return refusal
    return _call(s, sha, fn, rest, sum(len(a) for a in argv), old_put)


def _now(text: str | None) -> int | None:
    """The client's `now` (seconds, as text) in engine ms, or None if not a time."""
    try:
        seconds = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return round(seconds * 1000) if 0 <= seconds < MAX_NOW else None


def _admission(s: Session, sha: str, fn: str, nbytes: int) -> bytes | None:
    if fn not in CREATING:
        return None
    engine = s.door.engine
    if engine.draining:
        name = fn.capitalize()
        return script_error(sha, f"{name}(): the server is draining: no new jobs")
    meter = engine.meter
    return OOM if meter is not None and meter.refuses(nbytes) else None


def _call(s: Session, sha: str, fn: str, args: list[Any], nbytes: int, core2013: bool) -> bytes:
    try:
        result = call(s.door.qless, fn, args, s.now, nbytes, s.conn)
        return shape(fn, args, _as_2013(fn, result) if core2013 else result, s.proto)
    except QlessError as exc:
        return script_error(sha, exc.message)
    except (TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        return script_error(sha, f"{fn.capitalize()}(): bad arguments: {exc}")


# Fields qless-core of 2013 does not have (throttles came later): its clients compare
# queue counts whole.
NEWER_FIELDS = {"queues": "throttled", "get": "throttles", "multiget": "throttles",
                "peek": "throttles", "pop": "throttles"}  # fmt: skip


def _as_2013(fn: str, result: Any) -> Any:
    """`result` without the fields qless-core of 2013 does not answer."""
    field = NEWER_FIELDS.get(fn)
    if field is None:
        return result
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if k != field}
    if isinstance(result, list):
        return [_as_2013(fn, item) for item in result]
    return result


def shape(fn: str, args: list[Any], result: Any, proto: int = 2) -> bytes:
    """The reply Redis would give for qless.lua's result of `fn`: RESP2 types (the
    script never switches to RESP3), but a null as the connection's protocol writes it."""
    if fn in NOTHING or result is None:
        return w.null(proto)
    if fn in CJSON or (fn == "config.get" and not args):
        return w.bulk(cjson(result))
    return lua(result, proto)


def lua(value: Any, proto: int = 2) -> bytes:
    """Redis's conversion of a Lua value."""
    if value is True:
        return w.integer(1)
    if value is False or value is None:
        return w.null(proto)
    if isinstance(value, int | float):
        return w.integer(int(value))
    if isinstance(value, str):
        return w.bulk(value)
    if isinstance(value, list):
        return w.array([lua(v, proto) for v in value])
    return w.bulk(cjson(value))  # a table with keys: qless.lua encodes those itself


def cjson(value: Any) -> str:
    """JSON text as Lua's cjson prints it: an empty list is `{}`, whole floats are
    integers."""
    return json.dumps(_as_cjson(value), separators=(",", ":"))


def _as_cjson(value: Any) -> Any:
    if isinstance(value, list):
        return [_as_cjson(v) for v in value] if value else {}
    if isinstance(value, dict):
        return {k: _as_cjson(v) for k, v in value.items()}
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value
