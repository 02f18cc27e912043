"""Requests off the wire: RESP arrays of bulk strings, parsed by hiredis's `Reader`.

hiredis parses replies, and a request is written as one (an array of bulk strings), so
its reader does the framing; this module checks what it hands over is a request. hiredis
allocates an array's list when it reads the header and buffers a bulk string until it
is whole, so headers past MAX_ELEMENTS / MAX_BULK are refused before hiredis sees them
(a `*4000000000` would ask for 32 GB). Inline commands (a bare `PING\\r\\n`) are not
served: every Redis client library sends arrays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import hiredis

MAX_ELEMENTS = 1 << 20  # arguments of one request
MAX_BULK = 64 << 20  # bytes of one argument (Redis allows 512 MiB: a queue needs less)
# A RESP header at the start of a line: type byte, then its count or length.
_HEADER = re.compile(rb"\n([*$%~>|])(-?\d+)")
_TAIL = 24  # bytes of the previous read kept to see a header cut in two


@dataclass(frozen=True, slots=True)
class Rejected:
    """A malformed request: answered with `message`, then the connection closes."""

    message: str


Request = list[bytes]


class RequestReader:
    def __init__(self, max_bulk: int = MAX_BULK, max_elements: int = MAX_ELEMENTS) -> None:
        self._reader = hiredis.Reader()
        self._max_bulk = max_bulk
        self._max_elements = max_elements
        self._tail = b"\n"  # a request starts at the start of a line
        self._broken: Rejected | None = None

    @property
    def buffered(self) -> bool:
        return self._broken is not None or bool(self._reader.has_data())

    def feed(self, data: bytes) -> None:
        if self._broken is not None:
            return
        seen = self._tail + data
        self._broken = self._check_headers(seen)
        self._tail = seen[-_TAIL:]
        if self._broken is None:
            self._reader.feed(data)

    def _check_headers(self, data: bytes) -> Rejected | None:
        for kind, count in _HEADER.findall(data):
            if kind == b"$" and int(count) > self._max_bulk:
                return Rejected("ERR Protocol error: invalid bulk length")
            if kind != b"$" and int(count) > self._max_elements:
                return Rejected("ERR Protocol error: invalid multibulk length")
        return None

    def next_command(self) -> Request | Rejected | None:
        """The next whole request, a rejection (the connection must close), or None."""
        while self._broken is None:
            try:
                value = self._reader.gets()
            except hiredis.ProtocolError:
                self._broken = Rejected("ERR Protocol error: invalid multibulk length")
                break
            except MemoryError:  # pragma: no cover - the header check comes first
                self._broken = Rejected("ERR Protocol error: invalid multibulk length")
                break
            if value is False:
                return None
            if isinstance(value, list) and not value:
                continue  # `*0`: Redis ignores it
            if value is None:
                continue  # `*-1`: likewise
            return self._request(value)
        return self._broken

    def _request(self, value: object) -> Request | Rejected:
        if not isinstance(value, list):
            self._broken = Rejected(f"ERR Protocol error: expected '*', got '{_kind(value)}'")
            return self._broken
        for item in value:
            if not isinstance(item, bytes):
                self._broken = Rejected(f"ERR Protocol error: expected '$', got '{_kind(item)}'")
                return self._broken
        return value


def _kind(value: object) -> str:
    """The RESP type byte hiredis read `value` from (the wire's first byte)."""
    if isinstance(value, list):
        return "*"
    if isinstance(value, dict):
        return "%"
    if isinstance(value, bool | int):
        return ":"
    if isinstance(value, float):
        return ","
    if isinstance(value, bytes | str):
        return "+"
    if value is None:
        return "_"
    return "-"
