"""SUBSCRIBE / UNSUBSCRIBE / PUBLISH. qless's messages (core/qless/channels.py) reach
the subscribers of `ql:<channel>` (`ql:completed`, `ql:log`, `ql:w:<worker>`, ...) as
Redis delivers a script's `publish`; PUBLISH from a client reaches this door's
subscribers of that channel (the Ruby gem's worker stops its own listener that way)."""

from __future__ import annotations

from beanpod.protocols.resp import wire as w
from beanpod.protocols.resp.context import Door, Session

PREFIX = "ql:"


def message(channel: bytes, data: bytes, proto: int) -> bytes:
    return w.push([w.bulk(b"message"), w.bulk(channel), w.bulk(data)], proto)


def deliver(door: Door, channel: bytes, data: bytes) -> int:
    """Send a message to the subscribers of `channel`; how many got it."""
    listening = door.subscribers.get(channel)
    if not listening:
        return 0
    for session in list(listening.values()):
        session.push(message(channel, data, session.proto))
    return len(listening)


def _bridge(door: Door) -> None:
    """Once: every qless message goes to `ql:<channel>`'s subscribers."""
    if door.bridged:
        return
    door.bridged = True

    def relay(channel: str, data: str) -> None:
        if door.subscribers:
            deliver(door, (PREFIX + channel).encode(), data.encode("utf-8", "replace"))

    door.qless.channels.listeners.append(relay)


def subscribe(s: Session, req: list[bytes]) -> bytes:
    _bridge(s.door)
    out = []
    for channel in req[1:]:
        s.channels.add(channel)
        s.door.subscribers.setdefault(channel, {})[s.client_id] = s
        out.append(_ack(b"subscribe", channel, len(s.channels), s.proto))
    s.listening = True
    return b"".join(out)


def _ack(kind: bytes, channel: bytes | None, count: int, proto: int) -> bytes:
    name = w.null(proto) if channel is None else w.bulk(channel)
    return w.push([w.bulk(kind), name, w.integer(count)], proto)


def unsubscribe(s: Session, req: list[bytes]) -> bytes:
    channels = req[1:] or sorted(s.channels)
    if not channels:
        return _ack(b"unsubscribe", None, 0, s.proto)
    out = []
    for channel in channels:
        forget(s, channel)
        out.append(_ack(b"unsubscribe", channel, len(s.channels), s.proto))
    return b"".join(out)


def forget(s: Session, channel: bytes) -> None:
    s.channels.discard(channel)
    s.listening = bool(s.channels)
    listening = s.door.subscribers.get(channel)
    if listening is not None:
        listening.pop(s.client_id, None)
        if not listening:
            del s.door.subscribers[channel]


def publish(s: Session, req: list[bytes]) -> bytes:
    return w.integer(deliver(s.door, req[1], req[2]))
