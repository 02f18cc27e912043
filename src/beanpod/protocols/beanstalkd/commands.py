"""Sans-I/O parser for the beanstalkd protocol: bytes in, command tuples out.

`Parser.feed(data)` buffers bytes; `Parser.next_command()` returns the next complete
command or None when more bytes are needed. A command is a tuple whose first item is
the wire verb (e.g. `wire.PUT`) followed by the parsed arguments; malformed input yields
`(ERROR, reply)`. Parsing follows beanstalkd 1.12 exactly (prefix matching in its order,
its integer rules), except that an over-long line is answered once with BAD_FORMAT and
parsing resumes right after that line's CRLF (beanstalkd can swallow the next command).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from beanpod.protocols.beanstalkd import wire as w
from beanpod.protocols.beanstalkd.quick import NATIVE, one_command
from beanpod.protocols.receive import ReceiveBuffer

Command = tuple[Any, ...]

# Pseudo-verbs the parser emits besides the wire verbs.
ERROR: Final[bytes] = b"<error>"  # (ERROR, reply): rejected before the command is counted
PUT_TOO_BIG: Final[bytes] = b"<put-too-big>"  # the body was read and discarded: JOB_TOO_BIG
PUT_BAD_CRLF: Final[bytes] = b"<put-bad-crlf>"  # no CRLF after the body: EXPECTED_CRLF
PUT_TRAILING: Final[bytes] = b"<put-trailing>"  # put line with trailing bytes: BAD_FORMAT
QLESS_TOO_BIG: Final[bytes] = b"<qless-too-big>"  # a qless request over max-job-size, discarded

# Final: compiled, a module constant is a C static, not a lookup in the module's dict.
PUT: Final = w.PUT
DELETE: Final = w.DELETE
U32_MAX: Final = 0xFFFFFFFF
U64_MAX: Final = 0xFFFFFFFFFFFFFFFF
INT_MAX: Final = 0x7FFFFFFF

# beanstalkd's command table, in the order it tests prefixes.
PREFIX_ORDER: Final[tuple[bytes, ...]] = (
    w.PUT, w.PEEK, w.PEEK_READY, w.PEEK_DELAYED, w.PEEK_BURIED, w.RESERVE_WITH_TIMEOUT,
    w.RESERVE_JOB, w.RESERVE, w.DELETE, w.RELEASE, w.BURY, w.KICK, w.KICK_JOB, w.TOUCH,
    w.STATS_JOB, w.STATS_TUBE, w.STATS, w.USE, w.WATCH, w.IGNORE, w.LIST_TUBES_WATCHED,
    w.LIST_TUBE_USED, w.LIST_TUBES, w.QUIT, w.PAUSE_TUBE, w.QLESS,
)  # fmt: skip
EXACT: Final = frozenset(PREFIX_ORDER)

_NAME_CHARS = rb"A-Za-z0-9\-+/;.$_()"
NAME_RE: Final = re.compile(rb"[A-Za-z0-9+/;.$_()][" + _NAME_CHARS + rb"]{0,199}")
# Possessive digit runs: a number never splits in two, exactly like strtoumax.
ONE_NUMBER: Final = re.compile(rb" *(\d++)")
TWO_NUMBERS: Final = re.compile(rb" *(\d++) *(\d++)")
THREE_NUMBERS: Final = re.compile(rb" *(\d++) *(\d++) *(\d++)")
PUT_ARGS: Final = re.compile(rb" *(\d++) *(\d++) *(\d++) *(\d++)")
PAUSE_ARGS: Final = re.compile(rb" *([" + _NAME_CHARS + rb"]++) *(\d++)")
KICK_ARG: Final = re.compile(rb"[ \t\v\f]*([+-]?)(\d+)")  # strtoul: sign allowed, rest ignored

BAD: Final[Command] = (ERROR, w.BAD_FORMAT)
UNKNOWN: Final[Command] = (ERROR, w.UNKNOWN_COMMAND)

LINE: Final = 0
BODY: Final = 1
SKIP: Final = 2
DISCARD_LINE: Final = 3


def _verb(line: bytes) -> bytes | None:
    """The command `line` matches under beanstalkd's prefix rules, or None."""
    space = line.find(b" ")
    word = line[: space + 1] if space >= 0 else line
    if word in EXACT:
        return word
    for verb in PREFIX_ORDER:
        if line.startswith(verb):
            return verb
    return None


def _no_args(verb: bytes, rest: bytes) -> Command:
    return BAD if rest else (verb,)


def _u64(verb: bytes, rest: bytes) -> Command:
    m = ONE_NUMBER.fullmatch(rest)
    if m is None:
        return BAD
    value = int(m[1])
    return BAD if value > U64_MAX else (verb, value)


def _timeout(verb: bytes, rest: bytes) -> Command:
    """reserve-with-timeout's argument as beanstalkd 1.13 reads it: a u32 up to INT_MAX."""
    m = ONE_NUMBER.fullmatch(rest)
    if m is None:
        return BAD
    value = int(m[1])
    return BAD if value > INT_MAX else (verb, value)


def _tube_name(verb: bytes, rest: bytes) -> Command:
    return (verb, rest.decode("ascii")) if NAME_RE.fullmatch(rest) else BAD


def _release(verb: bytes, rest: bytes) -> Command:
    m = THREE_NUMBERS.fullmatch(rest)
    if m is None:
        return BAD
    job_id, pri, delay = int(m[1]), int(m[2]), int(m[3])
    if job_id > U64_MAX or pri > U32_MAX or delay > U32_MAX:
        return BAD
    return (verb, job_id, pri, delay)


def _bury(verb: bytes, rest: bytes) -> Command:
    m = TWO_NUMBERS.fullmatch(rest)
    if m is None:
        return BAD
    job_id, pri = int(m[1]), int(m[2])
    return BAD if job_id > U64_MAX or pri > U32_MAX else (verb, job_id, pri)


def _kick(verb: bytes, rest: bytes) -> Command:
    m = KICK_ARG.match(rest)
    if m is None:
        return BAD
    value = int(m[2])
    if value > U64_MAX:
        return BAD  # strtoul: ERANGE
    if m[1] == b"-":
        value = -value % (U64_MAX + 1)
    return (verb, value & U32_MAX)  # beanstalkd keeps the count in 32 bits


def _pause(verb: bytes, rest: bytes) -> Command:
    m = PAUSE_ARGS.fullmatch(rest)
    if m is None or not NAME_RE.fullmatch(m[1]):
        return BAD
    delay = int(m[2])
    return BAD if delay > U32_MAX else (verb, m[1].decode("ascii"), delay)


def _quit(verb: bytes, rest: bytes) -> Command:
    return (verb,)


ARG_PARSERS: Final[dict[bytes, Callable[[bytes, bytes], Command]]] = {
    w.PEEK: _u64, w.PEEK_READY: _no_args, w.PEEK_DELAYED: _no_args, w.PEEK_BURIED: _no_args,
    w.RESERVE_WITH_TIMEOUT: _timeout, w.RESERVE_JOB: _u64, w.RESERVE: _no_args, w.DELETE: _u64,
    w.RELEASE: _release, w.BURY: _bury, w.KICK: _kick, w.KICK_JOB: _u64, w.TOUCH: _u64,
    w.STATS_JOB: _u64, w.STATS_TUBE: _tube_name, w.STATS: _no_args, w.USE: _tube_name,
    w.WATCH: _tube_name, w.IGNORE: _tube_name, w.LIST_TUBES_WATCHED: _no_args,
    w.LIST_TUBE_USED: _no_args, w.LIST_TUBES: _no_args, w.QUIT: _quit, w.PAUSE_TUBE: _pause,
}  # fmt: skip


# Whole lines -> their command, for lines that need no parsing (no-argument verbs) and
# for lines a workload repeats whose command depends on the line alone (e.g.
# `reserve-with-timeout 5`, `use jobs`): parsed once by the exact path, then one dict hit.
KNOWN_LINES: Final[dict[bytes, Command]] = {
    verb: (verb,)
    for verb in (w.RESERVE, w.PEEK_READY, w.PEEK_DELAYED, w.PEEK_BURIED, w.STATS,
                 w.LIST_TUBES, w.LIST_TUBE_USED, w.LIST_TUBES_WATCHED, w.QUIT)
}  # fmt: skip
REMEMBERED_VERBS: Final = frozenset(
    {w.RESERVE_WITH_TIMEOUT, w.USE, w.WATCH, w.IGNORE, w.STATS_TUBE}
)
MAX_KNOWN_LINES: Final = 4096
# Verbs whose one argument is a job id.
ONE_ID_VERBS: Final[dict[bytes, bytes]] = {
    verb.rstrip(): verb
    for verb in (w.DELETE, w.TOUCH, w.PEEK, w.RESERVE_JOB, w.KICK_JOB, w.STATS_JOB)
}


CR: Final = 13  # single bytes as ints: `in`/find then use memchr
NUL: Final = 0


# Well-formed put lines a workload repeats -> (pri, delay, ttr, size): validated once, then
# one dict hit per put (bounded: a workload with ever-new sizes just stops adding).
PUT_LINES: Final[dict[bytes, tuple[int, int, int, int]]] = {}
MAX_PUT_LINES: Final = 4096
MAX_BATCH_LINE: Final = w.MAX_LINE - 2  # longer lines take the exact path (beanstalkd's rules)


def _put_head(line: bytes, parts: list[bytes]) -> tuple[int, int, int, int] | None:
    """`put <pri> <delay> <ttr> <bytes>` with plain digits and 32-bit values, or None for
    the exact path to judge."""
    _, p, d, t, n = parts
    if not (p.isdigit() and d.isdigit() and t.isdigit() and n.isdigit()):
        return None
    head = (int(p), int(d), int(t), int(n))
    if head[0] > U32_MAX or head[1] > U32_MAX or head[2] > U32_MAX:
        return None
    if len(PUT_LINES) < MAX_PUT_LINES:
        PUT_LINES[line] = head
    return head


# Verbs followed by a body: the batch parser leaves them to the incremental path unless
# they are a well-formed put whose body is already here.
BODY_VERBS: Final = frozenset({b"put", b"qless"})


class Parser(ReceiveBuffer):
    """Incremental parser for one connection."""

    __slots__ = ("_job", "_max_job_size", "_mode", "_need", "_queue", "drained")

    def __init__(self, max_job_size: int = w.DEFAULT_MAX_JOB_SIZE) -> None:
        super().__init__()
        self._mode = LINE
        self._need = 0  # bytes still expected in BODY or SKIP mode
        # pri, delay, ttr of the put being read; None while reading a qless request body
        self._job: tuple[int, int, int] | None = (0, 0, 0)
        self._max_job_size = max_job_size
        self._queue: deque[Command] = deque()  # parsed, not yet run (next_command, give_back)
        # Set by `take` when no command can follow its batch until more bytes arrive: the
        # caller need not ask again (one call saved per read, as at depth 1).
        self.drained = False

    @property
    def buffered(self) -> int:
        """Unparsed bytes plus commands parsed ahead (non-zero: there may be more to do)."""
        whole = self._whole
        held = 0 if whole is None else len(whole)
        return len(self._buf) - self._pos + len(self._queue) + held

    def started(self) -> int | None:
        """Where the command being received began: a stream offset that stays the same
        until it is complete (for --request-timeout); None between commands."""
        self.settle()
        mode, pos = self._mode, self._pos
        if mode == LINE:
            return self._line_started()
        if mode == SKIP:
            return self._consumed + pos + self._need
        return self._consumed + pos if mode == BODY else -1  # -1: discarding a long line

    def next_command(self) -> Command | None:
        """The next complete command, or None if more bytes are needed."""
        queue = self._queue
        if not queue:
            cmd = self.whole_command()
            if cmd is not None:
                return cmd
            queue.extend(self.take())
        return queue.popleft() if queue else None

    def whole_command(self) -> Command | None:
        """Depth 1, compiled: the command a held read is, all of it (quick.one_command),
        taken; else None, and `take` parses the read."""
        held = self._whole
        if held is None or not NATIVE or self._queue or self._mode != LINE:
            return None
        cmd = one_command(held, self._max_job_size)  # one native walk of the read
        if cmd is not None:
            self._whole = None
            self.parsed_whole(held, 0)
            self.drained = True
        return cmd

    def take(self) -> list[Command]:
        """Every complete command that can run now, in order: a batch parsed in one pass
        (or one command from the exact path); empty when more bytes are needed. Commands
        a caller could not run yet go back through `give_back`."""
        self.drained = False
        queue = self._queue
        if queue:
            batch = list(queue)
            queue.clear()
            return batch
        if self._mode == LINE:
            if self._whole is None and self._pos == len(self._buf):
                return []  # everything read so far is parsed
            batch = self._parse_batch()
            if batch:
                return batch
        # An empty batch that ran to its end saw no CRLF, and the exact path finds no
        # command there either: `drained` is right as `_parse_batch` left it.
        cmd = self._next_command()
        return [] if cmd is None else [cmd]

    def give_back(self, commands: list[Command]) -> None:
        """Keep commands taken but not run (behind a parked reserve) for the next take."""
        self._queue.extendleft(reversed(commands))

    def _parse_batch(self) -> list[Command]:
        """Parse every well-formed common command of the buffer in one pass (split on
        CRLF once); stop at the first line the exact, incremental path must see."""
        buf, pos = self._buf, self._pos
        # One copy, one split (`feed` moved the unread bytes to the front). The last piece
        # has no CRLF yet. Walked by index (compiled, a list index is native; iter/next
        # are calls).
        held = data = self.take_whole()  # depth 1: the read itself, never copied
        if data is None:
            data = bytes(memoryview(buf)[pos:]) if pos else bytes(buf)
        pieces = data.split(b"\r\n")
        whole = len(pieces) - 1
        batch: list[Command] = []
        max_size = self._max_job_size
        i = 0
        while i < whole:
            line = pieces[i]
            head = PUT_LINES.get(line)
            if head is None:
                if line[:7] == DELETE and (arg := line[7:]).isdigit() and len(arg) < 20:
                    batch.append((DELETE, int(arg)))  # the other hot line: no split, no lookups
                    i += 1
                    continue
                cmd = KNOWN_LINES.get(line)
                if cmd is None:
                    if len(line) > MAX_BATCH_LINE or CR in line:
                        break  # over-long, or a stray CR: beanstalkd's rules apply
                    parts = line.split(b" ")
                    if len(parts) == 5 and parts[0] == b"put":
                        head = _put_head(line, parts)
                        if head is None:
                            break
                    elif (
                        len(parts) == 2
                        and (verb := ONE_ID_VERBS.get(parts[0]))
                        and parts[1].isdigit()
                    ):
                        if len(parts[1]) > 19:
                            break
                        cmd = (verb, int(parts[1]))
                    elif parts[0] in BODY_VERBS or NUL in line:
                        break
                    else:
                        cmd = self._slow_line(line)
                        if cmd is None or self._mode != LINE:  # pragma: no cover - guarded
                            break
                        if cmd[0] in REMEMBERED_VERBS and len(KNOWN_LINES) < MAX_KNOWN_LINES:
                            KNOWN_LINES[line] = cmd
            if head is not None:
                size = head[3]
                if i + 1 >= whole or len(pieces[i + 1]) != size or size > max_size:
                    break  # body not here yet, contains CRLF, or too big
                cmd = (PUT, head[0], head[1], head[2], pieces[i + 1])
                i += 1
            batch.append(cmd)  # type: ignore[arg-type]  # set on every path that gets here
            i += 1
        # Stopped at pieces[i] (or took every complete line): leave it, and every line
        # after it, for the exact path.
        unread = len(pieces[whole])
        for j in range(i, whole):
            unread += len(pieces[j]) + 2
        if held is None:
            self._pos = len(buf) - unread
        else:
            self.parsed_whole(held, unread)
        self.drained = i == whole  # what is left has no CRLF: no command until more bytes
        return batch

    def _next_command(self) -> Command | None:
        self.settle()
        while True:
            mode = self._mode
            if mode == LINE:
                return self._next_line()
            if mode == BODY:
                return self._next_body()
            if mode == SKIP:
                buf, pos = self._buf, self._pos
                take = min(self._need, len(buf) - pos)
                self._pos = pos + take
                self._need -= take
                if self._need:
                    return None
                self._mode = LINE
                return (PUT_TOO_BIG,) if self._job is not None else (QLESS_TOO_BIG,)
            # DISCARD_LINE: drop an over-long line up to and including its CRLF.
            buf, pos = self._buf, self._pos
            end = buf.find(b"\r\n", pos)
            if end < 0:
                keep = 1 if buf.endswith(b"\r") else 0
                self._pos = len(buf) - keep
                return None
            self._pos = end + 2
            self._mode = LINE
            return BAD

    def _next_line(self) -> Command | None:
        buf, pos = self._buf, self._pos
        # Like beanstalkd, a line ends only at its *first* CR, and only if LF follows:
        # a stray CR keeps the line open until it overflows the 224-byte buffer.
        end = buf.find(CR, pos, pos + w.MAX_LINE - 1)
        if end < 0 or end + 1 >= len(buf) or buf[end + 1] != 10:
            if len(buf) - pos < w.MAX_LINE:
                return None
            # Over-long: drop the full buffer's worth, then up to the next CRLF. Unlike
            # beanstalkd we keep its 224th byte, so a CR there still ends the line.
            self._pos = pos + w.MAX_LINE - 1
            self._mode = DISCARD_LINE
            return self.next_command()
        line = bytes(buf[pos:end])
        self._pos = end + 2
        # Well-formed common lines were taken by _parse_batch; this is the exact route.
        return self._slow_line(line)

    def _slow_line(self, line: bytes) -> Command | None:
        if NUL in line:
            return BAD
        verb = _verb(line)
        if verb is None:
            return UNKNOWN
        if verb == w.PUT:
            return self._put_line(line[4:])
        if verb == w.QLESS:
            return self._qless_line(line[len(verb) :])
        return ARG_PARSERS[verb](verb, line[len(verb) :])

    def _put_line(self, rest: bytes) -> Command | None:
        m = PUT_ARGS.match(rest)
        if m is None:
            return BAD
        return self._put_args(int(m[1]), int(m[2]), int(m[3]), int(m[4]), m.end() == len(rest))

    def _put_args(self, pri: int, delay: int, ttr: int, size: int, clean: bool) -> Command | None:
        """Check put's numbers in beanstalkd's order: range, size limit, trailing bytes."""
        if pri > U32_MAX or delay > U32_MAX or ttr > U32_MAX or size > U32_MAX:
            return BAD
        self._job = (pri, delay, ttr)
        if size > self._max_job_size:
            self._mode = SKIP
            self._need = size + 2
            return self.next_command()
        if not clean:
            return (PUT_TRAILING,)
        self._mode = BODY
        self._need = size
        return self._next_body()

    def _qless_line(self, rest: bytes) -> Command | None:
        """qless <bytes>: a JSON request body follows (beanpod extension, docs/qless.md)."""
        m = ONE_NUMBER.fullmatch(rest)
        if m is None or int(m[1]) > U32_MAX:
            return BAD
        size = self._need = int(m[1])
        self._job = None
        if size > self._max_job_size:
            self._mode = SKIP
            self._need = size + 2
            return self.next_command()
        self._mode = BODY
        return self._next_body()

    def _next_body(self) -> Command | None:
        buf, pos, size = self._buf, self._pos, self._need
        if len(buf) - pos < size + 2:
            return None
        end = pos + size
        self._pos = end + 2
        self._mode = LINE
        if self._job is None:  # a qless request; the flag says whether CRLF followed
            return (w.QLESS, bytes(buf[pos:end]), buf[end : end + 2] == b"\r\n")
        if buf[end : end + 2] != b"\r\n":
            return (PUT_BAD_CRLF,)
        pri, delay, ttr = self._job
        return (w.PUT, pri, delay, ttr, bytes(buf[pos:end]))
