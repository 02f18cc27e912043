"""The connection's handshake and housekeeping: HELLO, AUTH, CLIENT, PING, SELECT, QUIT,
INFO, as redis-py and redis-rb send them."""

from __future__ import annotations

import hmac

from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.context import VERSION, Session

NOPROTO = w.error("NOPROTO unsupported protocol version")
NOAUTH = w.error(
    "NOAUTH HELLO must be called with the client already authenticated, "
    "otherwise the HELLO <proto> AUTH <user> <pass> option can be used to "
    "authenticate the client and select the RESP protocol version at the same "
    "time"
)
WRONGPASS = w.error("WRONGPASS invalid username-password pair or user is disabled.")
NO_PASSWORD = w.error(
    "ERR AUTH <password> called without any password configured for the "
    "default user. Are you sure your configuration is correct?"
)


def hello(s: Session, req: list[bytes]) -> bytes:
    """HELLO [protover [AUTH user pass] [SETNAME name]]"""
    proto = s.proto
    if len(req) > 1:
        try:
            proto = int(req[1])
        except ValueError:
            return w.error("ERR Protocol version is not an integer or out of range")
        if proto not in (2, 3):
            return NOPROTO
    rest = [r.lower() for r in req[2:]]
    if b"auth" in rest:
        at = rest.index(b"auth") + 2  # HELLO 3 AUTH <user> <pass>: req[at] is AUTH
        if at + 2 >= len(req):
            option = req[at].decode("utf-8", "replace")
            return w.error(f"ERR Syntax error in HELLO option '{option}'")
        refused = _check(s, req[at + 2])
        if refused is not None:
            return refused
    elif s.door.password is not None and not s.authed:
        return NOAUTH
    s.proto = proto
    return w.mapping([
        (w.bulk("server"), w.bulk("redis")), (w.bulk("version"), w.bulk(VERSION)),
        (w.bulk("proto"), w.integer(proto)), (w.bulk("id"), w.integer(s.client_id)),
        (w.bulk("mode"), w.bulk("standalone")), (w.bulk("role"), w.bulk("master")),
        (w.bulk("modules"), w.array([])),
    ], proto)  # fmt: skip


def auth(s: Session, req: list[bytes]) -> bytes:
    """AUTH [user] password"""
    if len(req) > 3:
        return w.error("ERR syntax error")
    if s.door.password is None:
        return NO_PASSWORD
    refused = _check(s, req[-1])
    return w.OK if refused is None else refused


def _check(s: Session, given: bytes) -> bytes | None:
    expected = (s.door.password or "").encode()
    if s.door.password is None or hmac.compare_digest(given, expected):
        s.authed = True
        return None
    return WRONGPASS


def client(s: Session, req: list[bytes]) -> bytes:
    """CLIENT SETINFO / SETNAME / ID; others as unknown (redis-py ignores those errors)."""
    sub = req[1].lower()
    if sub in (b"setinfo", b"setname"):
        return w.OK
    if sub == b"id":
        return w.integer(s.client_id)
    name = req[1].decode("utf-8", "replace").upper()
    return w.error(f"ERR unknown subcommand '{name}'. Try CLIENT HELP.")


def ping(s: Session, req: list[bytes]) -> bytes:
    if len(req) > 2:
        return w.error("ERR wrong number of arguments for 'ping' command")
    if s.channels and s.proto == 2:  # in subscribed mode, as Redis answers
        return w.array([w.bulk(b"pong"), w.bulk(req[1] if len(req) > 1 else b"")])
    return w.PONG if len(req) == 1 else w.bulk(req[1])


def echo(s: Session, req: list[bytes]) -> bytes:
    return w.bulk(req[1])


def select(s: Session, req: list[bytes]) -> bytes:
    """One database: 0."""
    if req[1] == b"0":
        return w.OK
    try:
        int(req[1])
    except ValueError:
        return w.error("ERR value is not an integer or out of range")
    return w.error("ERR DB index is out of range")


def quit_(s: Session, req: list[bytes]) -> bytes:
    """The session closes after this reply."""
    return w.OK


def info(s: Session, req: list[bytes]) -> bytes:
    text = (
        f"# Server\r\nredis_version:{VERSION}\r\nredis_mode:standalone\r\nserver_name:beanpod\r\n"
    )
    return w.bulk(text) if s.proto == 2 else b"=%d\r\ntxt:%s\r\n" % (len(text) + 4, text.encode())
