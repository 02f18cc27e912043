"""The Workq parser: framing, rejections, and hypothesis runs fed whole, byte by byte, in
random chunks, and with trailing bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from beanpod.protocols.workq import wire as w
from beanpod.protocols.workq.commands import Command, Parsed, Parser, Rejected

U = b"6ba7b810-9dad-41d1-80b4-00c04fd430c4"


def parse_all(data: bytes, chunks: list[int] | None = None) -> list[Parsed]:
    parser = Parser()
    out: list[Parsed] = []
    pieces = [data] if chunks is None else _split(data, chunks)
    for piece in pieces:
        parser.feed(piece)
        while (cmd := parser.next_command()) is not None:
            out.append(cmd)
    return out


def _split(data: bytes, sizes: list[int]) -> list[bytes]:
    pieces, pos = [], 0
    for size in sizes:
        pieces.append(data[pos : pos + size])
        pos += size
    pieces.append(data[pos:])
    return pieces


def as_tuple(p: Parsed) -> tuple[object, ...]:
    if isinstance(p, Rejected):
        return ("rejected", p.text, p.close)
    return (p.verb, p.args, p.flags, p.payload)


def test_add_with_flags_and_binary_payload() -> None:
    data = b"add %s ping 1000 60000 6 -priority=10 -max-attempts=3\r\nab\r\ncd\r\n" % U
    [cmd] = parse_all(data)
    assert isinstance(cmd, Command)
    assert cmd.args == [U, b"ping", b"1000", b"60000", b"6"]
    assert cmd.flags == {b"priority": b"10", b"max-attempts": b"3"}
    assert cmd.payload == b"ab\r\ncd"


def test_doubled_spaces_are_harmless_and_negative_numbers_are_positional() -> None:
    [cmd] = parse_all(b"lease  a   b  -5\r\n")
    assert isinstance(cmd, Command) and cmd.args == [b"a", b"b", b"-5"]


def test_unknown_and_case_sensitive_verbs() -> None:
    assert parse_all(b"ADD x\r\n\r\nfoo\r\n") == [Rejected(w.UNKNOWN_COMMAND)] * 3


def test_wrong_field_count_is_answered_at_once_without_reading_the_payload() -> None:
    data = b"add %s ping 1000 5\r\nhello\r\ndelete %s\r\n" % (U, U)
    out = parse_all(data)
    assert out[0] == Rejected(w.INVALID_ARGS)
    assert out[1] == Rejected(w.UNKNOWN_COMMAND)  # "hello" is read as the next line
    assert isinstance(out[2], Command) and out[2].verb == w.DELETE


def test_a_leading_space_is_no_verb_and_flags_are_checked_first() -> None:
    assert parse_all(b" delete %s\r\n" % U) == [Rejected(w.UNKNOWN_COMMAND)]
    assert parse_all(b"nope -a=\r\n") == [Rejected(w.INVALID_FLAGS)]
    assert parse_all(b"-a=1 delete %s\r\n" % U) == [Rejected(w.UNKNOWN_COMMAND)]


def test_bad_flags_and_too_many_flags() -> None:
    assert parse_all(b"delete %s -x=\r\n" % U) == [Rejected(w.INVALID_FLAGS)]
    assert parse_all(b"delete %s -=x\r\n" % U) == [Rejected(w.INVALID_FLAGS)]
    assert parse_all(b"delete %s -a=1 -a=2\r\n" % U) == [Rejected(w.INVALID_FLAGS)]
    assert parse_all(b"delete %s -a=1\r\n" % U) == [Rejected(w.INVALID_ARGS)]
    [ok] = parse_all(b"run %s q 10 10 0 -priority=1\r\n\r\n" % U)
    assert isinstance(ok, Command)


def test_a_flag_value_stops_at_its_second_equals_sign() -> None:
    [cmd] = parse_all(b"add %s q 1 1 0 -priority=1=2\r\n\r\n" % U)
    assert isinstance(cmd, Command) and cmd.flags == {b"priority": b"1"}


def test_too_many_flags_still_consumes_the_payload() -> None:
    data = b"add %s q 1 1 3 -a=1 -b=2 -c=3 -d=4\r\nabc\r\ndelete %s\r\n" % (U, U)
    out = parse_all(data)
    assert out[0] == Rejected(w.INVALID_ARGS)
    assert isinstance(out[1], Command) and out[1].verb == w.DELETE


def test_payload_size_errors() -> None:
    assert parse_all(b"complete %s abc\r\n" % U) == [Rejected(w.INVALID_PAYLOAD_SIZE)]
    assert parse_all(b"complete %s 1_0\r\n" % U) == [Rejected(w.INVALID_PAYLOAD_SIZE)]
    assert parse_all(b"complete %s %d\r\n" % (U, 2**63)) == [Rejected(w.INVALID_PAYLOAD_SIZE)]
    assert parse_all(b"fail %s -1\r\n" % U) == [Rejected(w.INVALID_RESULT_SIZE)]
    out = parse_all(b"complete %s 3\r\nabcXYdelete %s\r\n" % (U, U))
    assert out[0] == Rejected(w.INVALID_PAYLOAD_SIZE)
    assert isinstance(out[1], Command) and out[1].verb == w.DELETE
    assert parse_all(b"fail %s 3\r\nabcXY" % U) == [Rejected(w.INVALID_RESULT_SIZE)]


def test_signed_sizes_are_go_ints() -> None:
    for size in (b"+3", b"003"):
        [cmd] = parse_all(b"complete %s %s\r\nabc\r\n" % (U, size))
        assert isinstance(cmd, Command) and cmd.payload == b"abc"
    [cmd] = parse_all(b"complete %s -0\r\n\r\n" % U)
    assert isinstance(cmd, Command) and cmd.payload == b""


def test_oversized_payload_is_refused_without_reading_it() -> None:
    size = w.MAX_PAYLOAD + 1
    data = b"complete %s %d\r\n" % (U, size) + b"x" * 10 + b"\r\ndelete %s\r\n" % U
    out = parse_all(data, [100, 7])
    assert out[:2] == [Rejected(w.INVALID_PAYLOAD_SIZE), Rejected(w.UNKNOWN_COMMAND)]
    assert isinstance(out[2], Command) and out[2].verb == w.DELETE


def test_bare_lf_and_overlong_commands_close_without_a_reply() -> None:
    closed = Rejected("", close=True)
    assert closed.reply == b""
    assert parse_all(b"delete x\ndelete y\r\n") == [closed]
    assert parse_all(b"\n") == [closed]
    assert parse_all(b"a" * w.MAX_LINE) == [closed]
    assert parse_all(b"a" * (w.MAX_LINE - 1)) == []
    assert parse_all(b"a" * 20_000 + b"\r\n") == [Rejected(w.UNKNOWN_COMMAND)]


# ---- hypothesis ------------------------------------------------------------------------

payloads = st.binary(max_size=40)
words = st.sampled_from([b"q", b"ping", b"a.b-c_d", b"x" * 30])
ints = st.integers(min_value=-5, max_value=10**9).map(lambda n: b"%d" % n)
flag = st.tuples(st.sampled_from([b"priority", b"max-attempts", b"max-fails", b"x"]), ints)


@st.composite
def command(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["add", "run", "complete", "fail", "line", "junk", "short"]))
    distinct = st.lists(flag, max_size=3, unique_by=lambda f: f[0])  # a repeat is refused
    flags = b"".join(b" -%s=%s" % f for f in draw(distinct))
    body = draw(payloads)
    if kind == "add":
        return b"add %s %s 1000 60000 %d%s\r\n%s\r\n" % (U, draw(words), len(body), flags, body)
    if kind == "run":
        return b"run %s %s 10 10 %d\r\n%s\r\n" % (U, draw(words), len(body), body)
    if kind in ("complete", "fail"):
        return b"%s %s %d\r\n%s\r\n" % (kind.encode(), U, len(body), body)
    if kind == "short":  # wrong field count: answered at once, no payload follows
        return b"add %s %d%s\r\n" % (draw(words), len(body), flags)
    if kind == "junk":
        return draw(st.sampled_from([b"nope\r\n", b"\r\n", b"ADD 1\r\n", b"inspect\r\n"]))
    line = draw(st.sampled_from([b"lease a b 100", b"result %s 0" % U, b"inspect server"]))
    return line + flags + b"\r\n"


commands = st.lists(command(), min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(commands)
def test_byte_by_byte_equals_whole(cmds: list[bytes]) -> None:
    data = b"".join(cmds)
    whole = [as_tuple(p) for p in parse_all(data)]
    assert len(whole) == len(cmds)  # every command is framed, rejected or not
    assert [as_tuple(p) for p in parse_all(data, [1] * len(data))] == whole


@settings(max_examples=80, deadline=None)
@given(commands, st.lists(st.integers(min_value=0, max_value=50), max_size=10))
def test_random_chunks_equal_whole(cmds: list[bytes], sizes: list[int]) -> None:
    data = b"".join(cmds)
    assert [as_tuple(p) for p in parse_all(data, sizes)] == [as_tuple(p) for p in parse_all(data)]


@settings(max_examples=80, deadline=None)
@given(commands, command(), st.data())
def test_trailing_partial_command_is_held_back(
    cmds: list[bytes], extra: bytes, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(min_value=0, max_value=len(extra) - 1))
    whole = [as_tuple(p) for p in parse_all(b"".join(cmds))]
    with_tail = [as_tuple(p) for p in parse_all(b"".join(cmds) + extra[:cut])]
    assert with_tail == whole


@settings(max_examples=60, deadline=None)
@given(payloads)
def test_payload_bytes_survive_framing(body: bytes) -> None:
    [cmd] = parse_all(b"complete %s %d\r\n%s\r\n" % (U, len(body), body))
    assert isinstance(cmd, Command) and cmd.payload == body


def test_a_payload_cut_short_by_eof_is_refused_and_a_partial_line_dropped() -> None:
    for data, error in [(b"complete %s 3\r\nab" % U, w.INVALID_PAYLOAD_SIZE),
                        (b"fail %s 3\r\nabc\r" % U, w.INVALID_RESULT_SIZE)]:  # fmt: skip
        parser = Parser()
        parser.feed(data)
        assert parser.next_command() is None
        assert parser.at_eof() == Rejected(error)
    parser = Parser()
    parser.feed(b"delete %s" % U)
    assert parser.next_command() is None and parser.at_eof() is None
