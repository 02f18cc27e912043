"""The receive buffer both dialects' parsers read from: bytes received and not yet parsed.

A parser reads `_buf` from `_pos` on; `feed` drops what was parsed before appending (one
move of the unread tail per read, not per command) and keeps the stream offset of the
buffer's start in `_consumed`, so a command's start stays the same offset while its
bytes arrive (for --request-timeout).
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by interpreted code
class ReceiveBuffer:
    __slots__ = ("_buf", "_consumed", "_pos")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._consumed = 0  # bytes dropped from the front of _buf so far (stream offset)

    def feed(self, data: bytes) -> None:
        buf = self._buf
        if self._pos:
            self._consumed += self._pos
            del buf[: self._pos]
            self._pos = 0
        buf += data

    def _line_started(self) -> int | None:
        """Where the line being received began (a stream offset); None when every byte
        received was parsed."""
        pos = self._pos
        return None if pos == len(self._buf) else self._consumed + pos
