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
    __slots__ = ("_buf", "_consumed", "_fresh", "_pos")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._consumed = 0  # bytes dropped from the front of _buf so far (stream offset)
        # The last read, when it is all `_buf` holds (everything before it was parsed), as
        # at depth 1: a parser may take it instead of copying `_buf` (see `whole_read`).
        self._fresh: bytes | None = None

    def feed(self, data: bytes) -> None:
        buf = self._buf
        pos = self._pos
        self._fresh = data if pos == len(buf) and type(data) is bytes else None
        if pos:
            self._consumed += pos
            del buf[:pos]
            self._pos = 0
        buf += data

    def whole_read(self) -> bytes | None:
        """The bytes of `_buf` as one bytes object without a copy, when nothing has been
        parsed since the read that filled it alone; else None. (`_buf` only grows by
        `feed`, and only `feed` moves `_pos` back to 0.)"""
        fresh = self._fresh
        if fresh is not None and self._pos == 0 and len(fresh) == len(self._buf):
            return fresh
        return None

    def _line_started(self) -> int | None:
        """Where the line being received began (a stream offset); None when every byte
        received was parsed."""
        pos = self._pos
        return None if pos == len(self._buf) else self._consumed + pos
