"""The command table, in Redis's style: name -> handler, arity, flags; and dispatch with
Redis's own refusals (unknown command, wrong arity, NOAUTH, subscribed mode, MULTI).

Arity as Redis counts it: the command name included; negative means "at least".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from beanpod.protocols.resp import handshake, keys, pubsub, scripts
from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.context import Session

Handler = Callable[[Session, list[bytes]], bytes | None]  # None: parked (BRPOP)
NOAUTH = w.error("NOAUTH Authentication required.")
NOAUTH_OK = "noauth"  # runs before AUTH
PUBSUB_OK = "pubsub"  # runs in RESP2's subscribed mode
NO_MULTI = "nomulti"  # not queued by MULTI
ABORTED: list[bytes] = []  # queued in place of a refused command: EXEC will refuse


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    handler: Handler
    arity: int
    flags: frozenset[str] = frozenset()


def _multi(s: Session, req: list[bytes]) -> bytes:
    if s.multi is not None:
        return w.error("ERR MULTI calls can not be nested")
    s.multi = []
    return w.OK


def _exec(s: Session, req: list[bytes]) -> bytes:
    if s.multi is None:
        return w.error("ERR EXEC without MULTI")
    queued = s.multi
    if ABORTED in queued:
        s.multi = None
        return w.error("EXECABORT Transaction discarded because of previous errors.")
    try:  # still in the transaction while it runs: a queued BRPOP answers, never waits
        return w.array([_run_queued(s, r) for r in queued])
    finally:
        s.multi = None


def _run_queued(s: Session, req: list[bytes]) -> bytes:
    reply = TABLE[req[0].lower().decode()].handler(s, req)
    assert reply is not None  # nothing inside EXEC parks (keys.brpop)
    return reply


def _discard(s: Session, req: list[bytes]) -> bytes:
    if s.multi is None:
        return w.error("ERR DISCARD without MULTI")
    s.multi = None
    return w.OK


def _table(*commands: Command) -> dict[str, Command]:
    return {c.name: c for c in commands}


_HANDSHAKE = frozenset({NOAUTH_OK, PUBSUB_OK, NO_MULTI})
TABLE = _table(
    Command("hello", handshake.hello, -1, _HANDSHAKE),
    Command("auth", handshake.auth, -2, _HANDSHAKE),
    Command("quit", handshake.quit_, -1, _HANDSHAKE),
    Command("ping", handshake.ping, -1, frozenset({PUBSUB_OK})),
    Command("echo", handshake.echo, 2),
    Command("client", handshake.client, -2, frozenset({NO_MULTI})),
    Command("select", handshake.select, 2),
    Command("info", handshake.info, -1),
    Command("evalsha", scripts.evalsha, -3),
    Command("eval", scripts.eval_, -3),
    Command("script", scripts.script, -2, frozenset({NO_MULTI})),
    Command("zscore", keys.zscore, 3),
    Command("zcard", keys.zcard, 2),
    Command("keys", keys.keys, 2),
    Command("flushdb", keys.flushdb, -1),
    Command("flushall", keys.flushdb, -1),
    Command("rpush", keys.rpush, -3),
    Command("lpush", keys.lpush, -3),
    Command("llen", keys.llen, 2),
    Command("brpop", keys.brpop, -3),
    Command("del", keys.delete, -2),
    Command("subscribe", pubsub.subscribe, -2, frozenset({PUBSUB_OK, NO_MULTI})),
    Command("unsubscribe", pubsub.unsubscribe, -1, frozenset({PUBSUB_OK, NO_MULTI})),
    Command("publish", pubsub.publish, 3),
    Command("multi", _multi, 1, frozenset({NO_MULTI})),
    Command("exec", _exec, 1, frozenset({NO_MULTI})),
    Command("discard", _discard, 1, frozenset({NO_MULTI})),
)


def dispatch(s: Session, req: list[bytes]) -> bytes | None:
    """Run one request; None when it parks (BRPOP)."""
    refusal = _refusal(s, req)
    if refusal is not None:
        if s.multi is not None:
            s.multi.append(ABORTED)
        return refusal
    if s.multi is not None and NO_MULTI not in TABLE[req[0].lower().decode()].flags:
        s.multi.append(req)
        return w.QUEUED
    return TABLE[req[0].lower().decode()].handler(s, req)


def _refusal(s: Session, req: list[bytes]) -> bytes | None:
    name = req[0].lower().decode("utf-8", "replace")
    cmd = TABLE.get(name)
    if cmd is None:
        return unknown(req)
    if (cmd.arity > 0 and len(req) != cmd.arity) or len(req) < -cmd.arity:
        return w.error(f"ERR wrong number of arguments for '{name}' command")
    if s.door.password is not None and not s.authed and NOAUTH_OK not in cmd.flags:
        return NOAUTH
    if s.channels and s.proto == 2 and PUBSUB_OK not in cmd.flags:
        return w.error(
            f"ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE "
            "/ PING / QUIT / RESET are allowed in this context"
        )
    return None


def unknown(req: list[bytes]) -> bytes:
    """Redis 7's text: each argument quoted, followed by a space, up to 128 bytes."""
    shown = ""
    for arg in req[1:]:
        if len(shown) >= 128:
            break
        shown += "'" + arg.decode("utf-8", "replace")[: 128 - len(shown)] + "' "
    name = req[0].decode("utf-8", "replace")[:128]
    return w.error(f"ERR unknown command '{name}', with args beginning with: {shown}")
