"""Sessions for ``put``: bodies, limits, number parsing, framing errors."""

from __future__ import annotations

from tests.differential.model import NoReply, S, Session, check_unique, put, send

MAX = 65535
ALL_BYTES = bytes(range(256))
BIG = b"x" * MAX

SESSIONS: list[Session] = check_unique(
    [
        S("put-basic", put("hello"), "peek {j1}", "reserve", "delete {j1}"),
        S("put-zero-length-body", "put 0 0 10 0\r\n\r\n", "peek {j1}", "reserve"),
        S("put-body-with-crlf", put("a\r\nb\r\n\r\n"), "reserve", "peek {j1}"),
        S("put-body-with-nul", put(b"\x00ab\x00\x00"), "reserve"),
        S("put-body-all-byte-values", put(ALL_BYTES), "peek-ready", "reserve"),
        S("put-body-looks-like-commands", put("delete 1\r\nquit\r\n"), "peek-ready", "reserve"),
        S("put-ttr-zero-becomes-one", put("a", ttr=0), "stats-job {j1}"),
        S(
            "put-delay-is-delayed",
            put("a", delay=20),
            "stats-job {j1}",
            "peek-ready",
            "peek-delayed",
            "reserve-with-timeout 0",
        ),
        S("put-exactly-max-size", put(BIG), "peek {j1}", "reserve"),
        S(
            "put-max-plus-one-too-big",
            send(b"put 0 0 10 65536\r\n" + b"y" * 65536 + b"\r\nlist-tube-used\r\n", 2),
            "peek-ready",
        ),
        S(
            "put-too-big-then-put",
            send(b"put 0 0 10 70000\r\n" + b"y" * 70000 + b"\r\n"),
            put("ok"),
            "peek-ready",
        ),
        S(
            "put-too-big-body-arrives-late",
            send("put 0 0 10 65536\r\n", 0),
            NoReply(150),
            send(b"z" * 65536 + b"\r\nlist-tube-used\r\n", 2),
        ),
        S(
            "put-too-big-checked-before-trailing-garbage",
            send(b"put 0 0 10 65536 x\r\n" + b"q" * 65536 + b"\r\nlist-tube-used\r\n", 2),
        ),
        S(
            "put-too-big-bytes-u32-max-waits-for-body",
            send("put 0 0 10 4294967295\r\n", 0),
            NoReply(200),
        ),
        S("put-small-max-exact", put("0123456789"), "reserve", z=10),
        S(
            "put-small-max-plus-one",
            send("put 0 0 10 11\r\n01234567890\r\nlist-tube-used\r\n", 2),
            put("x"),
            z=10,
        ),
        S("put-small-max-zero-body", put(""), "reserve", z=10),
        S("put-expected-crlf", send("put 0 0 10 3\r\nabcde\r\nlist-tube-used\r\n", 3)),
        S("put-expected-crlf-lf-only", send("put 0 0 10 3\r\nabc\nx\r\nlist-tube-used\r\n", 3)),
        S("put-expected-crlf-body-too-long", send("put 0 0 10 1\r\nabc\r\n", 2), "peek-ready"),
        S(
            "put-expected-crlf-uses-an-id",
            put("a"),
            send("put 0 0 10 1\r\nabc\r\n", 2),
            put("b"),
            "stats-job 2",
            fresh=True,
        ),
        S(
            "put-too-big-does-not-use-an-id",
            put("a"),
            send(b"put 0 0 10 65536\r\n" + b"y" * 65536 + b"\r\n"),
            put("b"),
            fresh=True,
        ),
        S("put-trailing-garbage", send("put 0 0 10 1 x\r\na\r\nlist-tube-used\r\n", 3)),
        S("put-trailing-space", send("put 0 0 10 1 \r\na\r\n", 2)),
        S("put-trailing-tab", send("put 0 0 10 1\t\r\na\r\n", 2)),
        S("put-double-spaces-accepted", send("put  0  0  10  1\r\na\r\n"), "stats-job {j1}"),
        S(
            "put-leading-zeros",
            send("put 007 0000 0010 0005\r\nhello\r\n"),
            "stats-job {j1}",
            "reserve",
        ),
        S("put-pri-u32-max", put("a", pri=4294967295), "stats-job {j1}"),
        S("put-pri-overflow", send("put 4294967296 0 10 1\r\na\r\n", 2)),
        S("put-pri-huge-overflow", send("put 99999999999999999999999 0 10 1\r\na\r\n", 2)),
        S("put-delay-u32-max", put("a", delay=4294967295), "stats-job {j1}"),
        S("put-delay-overflow", send("put 0 4294967296 10 1\r\na\r\n", 2)),
        S("put-ttr-u32-max", put("a", ttr=4294967295), "stats-job {j1}"),
        S("put-ttr-overflow", send("put 0 0 4294967296 1\r\na\r\n", 2)),
        S("put-bytes-overflow", send("put 0 0 10 4294967296\r\na\r\n", 2)),
        S("put-plus-sign", send("put +1 0 10 1\r\na\r\n", 2), send("put 0 0 10 +1\r\na\r\n", 2)),
        S("put-minus-sign", send("put -1 0 10 1\r\na\r\n", 2), send("put 0 -1 10 1\r\na\r\n", 2)),
        S("put-hex-rejected", send("put 0x10 0 10 1\r\na\r\n", 2)),
        S("put-missing-args", send("put 0 0 10\r\n"), send("put 0\r\n"), send("put 1 2 3 4 5\r\n")),
        S("put-no-args-unknown", "put", "put "),
        S("put-letters", send("put a b c d\r\n"), send("put 1 1 1 1a\r\nx\r\n", 2)),
        S("put-line-bare-lf", send("put 0 0 10 1\nx\r\nlist-tube-used\r\n", 2)),
        S("put-tab-separator", send("put\t0 0 10 1\r\na\r\n", 2)),
        S("put-split-byte-by-byte", send(put("hello\r\nworld"), chunk=1), "reserve"),
        S(
            "put-split-line-and-body",
            send("put 0 0 10 5\r", 0),
            NoReply(100),
            send("\nhel", 0),
            NoReply(100),
            send("lo\r", 0),
            NoReply(100),
            send("\n"),
            "reserve",
        ),
        S("put-split-chunks-of-7", send(put(b"0123456789" * 10), chunk=7), "peek-ready"),
        S(
            "put-pipelined-ten",
            send(b"".join(put(str(i), pri=10 - i) for i in range(10)), 10),
            ("reserve\r\nreserve\r\nreserve\r\n", 3),
        ),
        S(
            "put-pipelined-with-too-big",
            send(put("a") + b"put 0 0 10 65536\r\n" + b"b" * 65536 + b"\r\n" + put("c"), 3),
            "peek-ready",
        ),
        S(
            "put-uses-used-tube",
            "use {t2}",
            put("a"),
            "stats-job {j1}",
            "peek-ready",
            "use {t}",
            "peek-ready",
        ),
        S(
            "put-urgent-counts",
            put("a", pri=1023),
            put("b", pri=1024),
            put("c", pri=0),
            "stats-tube {t}",
        ),
    ]
)
