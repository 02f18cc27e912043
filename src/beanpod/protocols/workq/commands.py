"""Sans-I/O parser for the Workq protocol: bytes in, `Command` or `Rejected` out.

`Parser.feed(data)` buffers bytes; `Parser.next_command()` returns the next complete
command, a `Rejected` (an error reply; `close` says the connection must end), or None when
more bytes are needed. The parser checks framing: verb, field count, flag syntax and
allowance, payload size; handlers check values (ids, names, times...).

Unlike the reference server, a rejected command whose line names a payload size still has
its payload consumed: for every payload verb the size is the last positional field, so
when that field is a number its block is read (or skipped, if over 1 MiB) before the
error is answered, and the connection stays in step. A line not ending in CRLF, or longer
than 10,000 bytes, cannot be framed: it is answered and the connection is closed.
"""

from __future__ import annotations

from beanpod.protocols.workq import wire as w


class Command:
    """A well-framed command: positional `args` (verb excluded), `flags`, `payload`."""

    __slots__ = ("args", "flags", "payload", "verb")

    def __init__(
        self, verb: bytes, args: list[bytes], flags: dict[bytes, bytes], payload: bytes | None
    ) -> None:
        self.verb = verb
        self.args = args
        self.flags = flags
        self.payload = payload

    def __repr__(self) -> str:
        return f"Command({self.verb!r}, {self.args!r}, {self.flags!r}, {self.payload!r})"


class Rejected:
    """A command refused while framing it: the error text, and whether to close."""

    __slots__ = ("close", "text")

    def __init__(self, text: str, close: bool = False) -> None:
        self.text = text
        self.close = close

    @property
    def reply(self) -> bytes:
        return w.client_error(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rejected) and (self.text, self.close) == (other.text, other.close)

    def __hash__(self) -> int:
        return hash((self.text, self.close))

    def __repr__(self) -> str:
        return f"Rejected({self.text!r}, close={self.close})"


Parsed = Command | Rejected

# verb -> (minimum field count, exact?, flags allowed, carries a payload); counts include
# the verb, as in the reference server.
SHAPES: dict[bytes, tuple[int, bool, int, bool]] = {
    w.ADD: (6, True, 3, True),
    w.SCHEDULE: (7, True, 3, True),
    w.RUN: (6, True, 1, True),
    w.COMPLETE: (3, True, 0, True),
    w.FAIL: (3, True, 0, True),
    w.RESULT: (3, True, 0, False),
    w.DELETE: (2, True, 0, False),
    w.LEASE: (3, False, 0, False),
    w.INSPECT: (2, False, 0, False),
}

LINE, BODY, SKIP, CLOSED = range(4)


class Parser:
    """Incremental parser for one connection."""

    __slots__ = ("_buf", "_consumed", "_error", "_mode", "_need", "_pending", "_pos")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._consumed = 0  # bytes dropped from the front of _buf so far (stream offset)
        self._mode = LINE
        self._need = 0  # payload bytes (+ CRLF) still expected in BODY/SKIP mode
        self._pending: Command | None = None  # the command whose payload is being read
        self._error: str | None = None  # what to answer once the payload is consumed

    def feed(self, data: bytes) -> None:
        if self._mode == CLOSED:
            return
        buf = self._buf
        if self._pos:
            self._consumed += self._pos
            del buf[: self._pos]
            self._pos = 0
        buf += data

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def started(self) -> int | None:
        """Where the command being received began: a stream offset that stays the same
        until it is complete (for --request-timeout); None between commands."""
        mode, pos = self._mode, self._pos
        if mode == LINE:
            return None if pos == len(self._buf) else self._consumed + pos
        if mode == SKIP:
            return self._consumed + pos + self._need
        return None if mode == CLOSED else self._consumed + pos

    def next_command(self) -> Parsed | None:
        """The next complete command or rejection, or None if more bytes are needed."""
        mode = self._mode
        if mode == LINE:
            return self._next_line()
        if mode == BODY:
            return self._next_body()
        if mode == SKIP:
            return self._skip()
        return None

    def _next_line(self) -> Parsed | None:
        buf, pos = self._buf, self._pos
        end = buf.find(b"\n", pos, pos + w.MAX_LINE)
        if end < 0:
            if len(buf) - pos < w.MAX_LINE:
                return None
            return self._close(w.LINE_TOO_LONG)
        if end == pos or buf[end - 1] != 13:  # 13 is "\r"
            return self._close(w.BAD_LINE_END)
        self._pos = end + 1
        line = bytes(buf[pos : end - 1])
        fields = line.split(b" ")  # spaces only, as the reference
        if b"" in fields:
            fields = [f for f in fields if f]  # doubled spaces are harmless
        if not fields or (shape := SHAPES.get(fields[0])) is None:
            return Rejected(w.UNKNOWN_COMMAND)
        verb = fields[0]
        flags: dict[bytes, bytes] = {}
        error: str | None = None
        if b"=" not in line:
            args = fields[1:]  # no flags: the common case
        else:
            args = []
            for field in fields[1:]:
                if field[:1] == b"-" and b"=" in field:
                    key, _, value = field[1:].partition(b"=")
                    if not key or not value or key in flags:
                        error = error or w.INVALID_FLAGS
                    flags[key] = value
                else:
                    args.append(field)
        count, exact, max_flags, has_payload = shape
        fields_ok = len(args) + 1 == count or (not exact and len(args) + 1 > count)
        if not fields_ok or (error is None and len(flags) > max_flags):
            error = w.INVALID_ARGS
        if not has_payload:
            return Rejected(error) if error else Command(verb, args, flags, None)
        return self._payload_line(Command(verb, args, flags, None), error)

    def _payload_line(self, cmd: Command, error: str | None) -> Parsed | None:
        size_error = w.INVALID_RESULT_SIZE if cmd.verb == w.FAIL else w.INVALID_PAYLOAD_SIZE
        raw = cmd.args[-1] if cmd.args else b""
        if not raw.isdigit():
            return Rejected(error or size_error)  # no size: there is no block to read
        size = int(raw)
        self._need = size + 2
        if size > w.MAX_PAYLOAD:
            self._mode = SKIP
            self._error = error or size_error
            return self._skip()
        self._mode = BODY
        self._pending = cmd
        self._error = error
        return self._next_body()

    def _next_body(self) -> Parsed | None:
        buf, pos, need = self._buf, self._pos, self._need
        if len(buf) - pos < need:
            return None
        end = pos + need - 2
        self._pos = end + 2
        self._mode = LINE
        cmd, error = self._pending, self._error
        self._pending = self._error = None
        assert cmd is not None
        if buf[end : end + 2] != b"\r\n":
            return Rejected(error or w.PAYLOAD_NOT_TERMINATED)
        if error is not None:
            return Rejected(error)
        cmd.payload = bytes(buf[pos:end])
        return cmd

    def _skip(self) -> Parsed | None:
        take = min(self._need, len(self._buf) - self._pos)
        self._pos += take
        self._need -= take
        if self._need:
            return None
        self._mode = LINE
        error, self._error = self._error, None
        assert error is not None
        return Rejected(error)

    def _close(self, text: str) -> Rejected:
        self._mode = CLOSED
        self._buf.clear()
        self._pos = 0
        return Rejected(text, close=True)
