"""Sans-I/O parser for the Workq protocol: bytes in, `Command` or `Rejected` out.

`Parser.feed(data)` buffers bytes; `Parser.next_command()` returns the next complete
command, a `Rejected` (an error reply; `close` says the connection must end), or None when
more bytes are needed. The parser checks framing: verb, field count, flag syntax and
allowance, payload size; handlers check values (ids, names, times...).

Framing follows the reference server's `prot.ParseCmd` exactly. A header error (bad flag
syntax, wrong field count, a payload size that is not an int, negative or over 1 MiB) is
answered as soon as the line is read, and nothing after the line is read for it: bytes
the client already sent as a payload are parsed as the next command. A header well-formed
up to its payload size has its payload (and the two bytes after it) consumed, whatever is
refused later. A line ending in a bare LF, a line shorter than CRLF, or a command longer
than the reference's per-command read limit closes the connection without a reply.
"""

from __future__ import annotations

from beanpod.protocols.receive import ReceiveBuffer
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
        return w.client_error(self.text) if self.text else b""

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

LINE, BODY, CLOSED = range(3)
_INT64 = 2**63


def atoi(raw: bytes) -> int | None:
    """Go's `strconv.Atoi`: an optional sign and decimal digits within int64, else None."""
    digits = raw[1:] if raw[:1] in (b"+", b"-") else raw
    if not digits.isdigit():  # bytes: ASCII digits only
        return None
    value = int(raw)
    return value if -_INT64 <= value < _INT64 else None


def _size_error(verb: bytes) -> str:
    return w.INVALID_RESULT_SIZE if verb == w.FAIL else w.INVALID_PAYLOAD_SIZE


def split_flags(fields: list[bytes]) -> tuple[list[bytes], dict[bytes, bytes]] | None:
    """Positional fields and `-key=value` flags, or None for a bad or repeated flag.
    As the reference, the value is what lies between the first and second `=`."""
    args: list[bytes] = []
    flags: dict[bytes, bytes] = {}
    for field in fields:
        if field[:1] != b"-" or b"=" not in field:
            args.append(field)
            continue
        key, value = field.split(b"=", 2)[:2]
        if len(key) <= 1 or not value or key[1:] in flags:
            return None
        flags[key[1:]] = value
    return args, flags


class Parser(ReceiveBuffer):
    """Incremental parser for one connection."""

    __slots__ = ("_error", "_mode", "_need", "_pending")

    def __init__(self) -> None:
        super().__init__()
        self._mode = LINE
        self._need = 0  # payload bytes (+ CRLF) still expected in BODY mode
        self._pending: Command | None = None  # the command whose payload is being read
        self._error: str | None = None  # what to answer once the payload is consumed

    def feed(self, data: bytes) -> None:
        if self._mode != CLOSED:  # a closed connection's bytes are dropped
            super().feed(data)

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos

    def started(self) -> int | None:
        """Where the command being received began: a stream offset that stays the same
        until it is complete (for --request-timeout); None between commands."""
        mode = self._mode
        if mode == LINE:
            return self._line_started()
        return None if mode == CLOSED else self._consumed + self._pos

    def next_command(self) -> Parsed | None:
        """The next complete command or rejection, or None if more bytes are needed."""
        mode = self._mode
        if mode == LINE:
            return self._next_line()
        if mode == BODY:
            return self._next_body()
        return None

    def _next_line(self) -> Parsed | None:
        buf, pos = self._buf, self._pos
        end = buf.find(b"\n", pos, pos + w.MAX_LINE)
        if end < 0:
            return None if len(buf) - pos < w.MAX_LINE else self._close()
        if end == pos or buf[end - 1] != 13:  # 13 is "\r"
            return self._close()
        self._pos = end + 1
        line = bytes(buf[pos : end - 1])
        fields = line.split(b" ")  # spaces only, as the reference
        flags: dict[bytes, bytes] = {}
        if b"=" not in line:
            args = [f for f in fields if f] if b"" in fields else fields
        elif (split := split_flags([f for f in fields if f])) is None:
            return Rejected(w.INVALID_FLAGS)  # checked before the verb, as the reference
        else:
            args, flags = split
        shape = SHAPES.get(fields[0])  # the first raw field: a leading space is no verb
        if shape is None:
            return Rejected(w.UNKNOWN_COMMAND)
        count, exact, max_flags, has_payload = shape
        if len(args) != count and (exact or len(args) < count):
            return Rejected(w.INVALID_ARGS)
        error = w.INVALID_ARGS if len(flags) > max_flags else None  # a handler check
        cmd = Command(fields[0], args[1:], flags, None)
        return self._payload_line(cmd, error) if has_payload else Rejected(error) if error else cmd

    def at_eof(self) -> Rejected | None:
        """The client half-closed. Like the reference, a payload (or its CRLF) cut short
        is answered with the size error; a partial line is dropped without a reply."""
        cmd = self._pending
        if self._mode != BODY or cmd is None:
            return None
        self._close()
        return Rejected(_size_error(cmd.verb))

    def _payload_line(self, cmd: Command, error: str | None) -> Parsed | None:
        size = atoi(cmd.args[-1])
        if size is None or not 0 <= size <= w.MAX_PAYLOAD:
            return Rejected(_size_error(cmd.verb))  # answered at once: nothing is read
        self._need = size + 2
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
        if buf[end : end + 2] != b"\r\n":  # the reference reads the 2 bytes, then refuses
            return Rejected(_size_error(cmd.verb))
        if error is not None:
            return Rejected(error)
        cmd.payload = bytes(buf[pos:end])
        return cmd

    def _close(self) -> Rejected:
        """A read error in the reference: the connection closes without a reply."""
        self._mode = CLOSED
        self._buf.clear()
        self._pos = 0
        self._pending = self._error = None
        return Rejected("", close=True)
