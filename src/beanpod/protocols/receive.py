"""The receive buffer both dialects' parsers read from: bytes received and not yet parsed.

A parser reads `_buf` from `_pos` on; `feed` drops what was parsed before appending (one
move of the unread tail per read, not per command) and keeps the stream offset of the
buffer's start in `_consumed`, so a command's start stays the same offset while its
bytes arrive (for --request-timeout).

`hold` is `feed` for a parser that can take a whole read at once (the beanstalkd batch
parser, at depth 1): when every byte received before was parsed, the read is kept as it
is (`_whole`) instead of being copied into `_buf`, and a parser that parses all of it
never copies it; `settle` moves it into `_buf` for code that reads `_buf`.
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)  # subclassed by interpreted code
class ReceiveBuffer:
    __slots__ = ("_buf", "_consumed", "_pos", "_whole")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._consumed = 0  # bytes dropped from the front of _buf so far (stream offset)
        # A read held by `hold`, not yet in `_buf` (which then holds no unread byte).
        self._whole: bytes | None = None

    def feed(self, data: bytes) -> None:
        self.settle()
        buf = self._buf
        pos = self._pos
        if pos:
            self._consumed += pos
            del buf[:pos]
            self._pos = 0
        buf += data

    def hold(self, data: bytes) -> None:
        """`feed`, keeping `data` uncopied when nothing received before is unparsed."""
        pos = self._pos
        if self._whole is not None or pos != len(self._buf) or type(data) is not bytes:
            self.feed(data)
            return
        if pos:
            self._consumed += pos
            del self._buf[:pos]
            self._pos = 0
        self._whole = data

    def settle(self) -> None:
        """Move a held read into `_buf` (before code that reads `_buf` runs)."""
        whole = self._whole
        if whole is not None:
            self._whole = None
            self._buf += whole

    def take_whole(self) -> bytes | None:
        """The held read, for a parser to parse in place; it answers with `parsed_whole`."""
        whole = self._whole
        self._whole = None
        return whole

    def parsed_whole(self, data: bytes, unread: int) -> None:
        """The read `take_whole` gave was parsed but for its last `unread` bytes, which
        go to `_buf` for the next read to complete."""
        if unread:
            self._buf += data
            self._pos = len(data) - unread
        else:
            self._consumed += len(data)

    def _line_started(self) -> int | None:
        """Where the line being received began (a stream offset); None when every byte
        received was parsed."""
        self.settle()
        pos = self._pos
        return None if pos == len(self._buf) else self._consumed + pos
