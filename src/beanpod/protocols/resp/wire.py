"""RESP2 and RESP3 reply encoders (https://redis.io/docs/latest/develop/reference/protocol-spec/).

A reply is built as bytes by the handler that knows its shape; `encode` turns a plain
Python value (None, bool, int, float, str, bytes, list, dict) into either protocol.
"""

from __future__ import annotations

from typing import Any

CRLF = b"\r\n"
OK = b"+OK\r\n"
PONG = b"+PONG\r\n"
QUEUED = b"+QUEUED\r\n"
NULL2 = b"$-1\r\n"  # RESP2's null bulk string
NULL_ARRAY2 = b"*-1\r\n"  # RESP2's null array (BRPOP's timeout)
NULL3 = b"_\r\n"


def simple(text: str) -> bytes:
    return b"+" + _line(text) + CRLF


def error(text: str) -> bytes:
    """An error reply: `text` starts with its code (ERR, NOSCRIPT, ...); one line."""
    return b"-" + _line(text) + CRLF


def _line(text: str) -> bytes:
    """Line breaks become spaces, as Redis does in its error replies."""
    return text.replace("\r", " ").replace("\n", " ").encode("utf-8", "replace")


def integer(n: int) -> bytes:
    return b":%d\r\n" % n


def bulk(data: bytes | str) -> bytes:
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    return b"$%d\r\n%s\r\n" % (len(raw), raw)


def null(proto: int) -> bytes:
    return NULL3 if proto == 3 else NULL2


def null_array(proto: int) -> bytes:
    return NULL3 if proto == 3 else NULL_ARRAY2


def array(items: list[bytes]) -> bytes:
    """An array of already-encoded replies."""
    return b"*%d\r\n%s" % (len(items), b"".join(items))


def push(items: list[bytes], proto: int) -> bytes:
    """An out-of-band message (pub/sub): RESP3 push type, a plain array in RESP2."""
    if proto == 3:
        return b">%d\r\n%s" % (len(items), b"".join(items))
    return array(items)


def mapping(pairs: list[tuple[bytes, bytes]], proto: int) -> bytes:
    """A map of encoded keys and values: RESP3 map, a flat array in RESP2."""
    body = b"".join(k + v for k, v in pairs)
    return b"%c%d\r\n%s" % (ord("%") if proto == 3 else ord("*"),
                            len(pairs) * (1 if proto == 3 else 2), body)  # fmt: skip


def encode(value: Any, proto: int) -> bytes:
    """A plain value: None null, bool/int integer, float truncated (as Lua numbers are
    converted), str/bytes bulk, list array, dict map."""
    if value is None:
        return null(proto)
    if isinstance(value, bool | int):
        return integer(int(value))
    if isinstance(value, float):
        return integer(int(value))
    if isinstance(value, str | bytes):
        return bulk(value)
    if isinstance(value, list | tuple):
        return array([encode(v, proto) for v in value])
    if isinstance(value, dict):
        return mapping([(encode(k, proto), encode(v, proto)) for k, v in value.items()], proto)
    raise TypeError(f"cannot encode {type(value).__name__}")
