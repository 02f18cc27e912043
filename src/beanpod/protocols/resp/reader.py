"""Requests off the wire: RESP arrays of bulk strings, parsed by hiredis's `Reader`.

hiredis parses replies, and a request is written as one (an array of bulk strings), so
its reader does the framing; this module checks what it hands over is a request. hiredis
allocates an array's list when it reads the header, buffers a bulk string until it is
whole and nests arrays without a bound, so before it sees them the headers of each read
are checked: a count past MAX_ELEMENTS (a `*4000000000` would ask for 32 GB), a length
past MAX_BULK, or an array inside the request (only one array header per request) is
refused, and so is a request past MAX_REQUEST bytes. A header is a line that starts with
a type byte and a number, so a bulk payload holding such a line could be mistaken for
one; only one that breaks these limits is refused. Inline commands (a bare
`PING\\r\\n`) are not served: every Redis client library sends arrays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import hiredis

MAX_ELEMENTS = 1 << 20  # arguments of one request
MAX_BULK = 64 << 20  # bytes of one argument (Redis allows 512 MiB: a queue needs less)
MAX_REQUEST = 2 * MAX_BULK  # bytes of one request
# A RESP header at the start of a line: type byte, then its count or length.
_HEADER = re.compile(rb"\n([*$%~>|])(-?\d+)\r")
NESTED = "ERR Protocol error: expected '$', got '*'"
TOO_MANY = "ERR Protocol error: invalid multibulk length"
TOO_LONG = "ERR Protocol error: invalid bulk length"
_TAIL = 24  # bytes of the previous read kept to see a header cut in two


@dataclass(frozen=True, slots=True)
class Rejected:
    """A malformed request: answered with `message`, then the connection closes."""

    message: str


Request = list[bytes]


class RequestReader:
    def __init__(self, max_bulk: int = MAX_BULK, max_elements: int = MAX_ELEMENTS,
                 max_request: int = MAX_REQUEST) -> None:  # fmt: skip
        self._reader = hiredis.Reader()
        self._max_bulk = max_bulk
        self._max_elements = max_elements
        self._max_request = max_request
        self._tail = b"\n"  # a request starts at the start of a line
        self._arrays = 0  # array headers fed and not yet returned as a request
        self._pending = 0  # bytes fed since the last whole request (about)
        self._done = 0  # requests read so far: names the one being received
        self._broken: Rejected | None = None

    @property
    def buffered(self) -> bool:
        return self._broken is not None or bool(self._reader.has_data())

    def started(self) -> int | None:
        """A token for the request being received that stays the same until it is
        complete (for --request-timeout: its number); None between requests."""
        if self._broken is None and not self._reader.has_data():
            return None
        return self._done

    def feed(self, data: bytes) -> None:
        if self._broken is not None:
            return
        seen = self._tail + data
        self._broken = self._check_headers(seen, len(self._tail))
        self._tail = seen[-_TAIL:]
        self._pending += len(data)
        if self._broken is None:
            self._reader.feed(data)

    def _check_headers(self, data: bytes, old: int) -> Rejected | None:
        """The headers ending past the first `old` bytes (seen with the last read)."""
        for found in _HEADER.finditer(data):
            if found.end() <= old:
                continue
            kind, count = found.group(1), int(found.group(2))
            if kind == b"$" and count > self._max_bulk:
                return Rejected(TOO_LONG)
            if kind != b"$" and count > self._max_elements:
                return Rejected(TOO_MANY)
            self._arrays += kind != b"$"
        return None

    def next_command(self) -> Request | Rejected | None:
        """The next whole request, a rejection (the connection must close), or None."""
        while self._broken is None:
            try:
                value = self._reader.gets()
            except hiredis.ProtocolError as exc:
                self._broken = Rejected(TOO_LONG if "Bulk string" in str(exc) else TOO_MANY)
                break
            except MemoryError:  # pragma: no cover - the header check comes first
                self._broken = Rejected(TOO_MANY)
                break
            if value is False:
                return self._incomplete()
            self._arrays -= 1
            self._pending = self._reader.len()
            self._done += 1
            if value == [] or value is None:
                continue  # `*0` and `*-1`: Redis ignores them
            return self._request(value)
        return self._broken

    def _incomplete(self) -> Rejected | None:
        """Part of one request is buffered: refuse it now if it already breaks a limit."""
        if self._arrays > 1:
            self._broken = Rejected(NESTED)
        elif self._pending > self._max_request:
            self._broken = Rejected(TOO_LONG)
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
