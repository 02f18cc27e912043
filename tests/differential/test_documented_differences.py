"""Behaviours where beanpod deliberately differs from beanstalkd 1.12.

These sessions are not compared with beanstalkd.  Each one lists the replies
beanpod must give, step by step; the real beanstalkd 1.12 replies are recorded
in a comment (and, where 1.12 is deterministic, checked by
``test_beanstalkd_1_12_really_differs`` so the record cannot go stale).

Difference (d), the server-specific ``stats`` values (pid, version, id,
hostname, os, platform, rusage-*, uptime), is handled by the normaliser in
``harness.py`` and needs no session here.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.differential.harness import run_session
from tests.differential.model import NoReply, S, Session, Sleep, on, put
from tests.differential.model import send as raw
from tests.differential.servers import BEANSTALKD, CANDIDATE, ServerPool

pytestmark = [
    pytest.mark.differential,
    pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd is not on PATH"),
    pytest.mark.timeout(30),
]

Replies = list[list[bytes]]
USING = b"USING default\r\n"
BAD = b"BAD_FORMAT\r\n"


def job_stats(state: bytes, age: int, ttr: int, reserves: int, timeouts: int) -> bytes:
    body = (
        b"---\nid: 1\ntube: default\nstate: %s\npri: 0\nage: %d\ndelay: 0\nttr: %d\n"
        b"time-left: 0\nfile: 0\nreserves: %d\ntimeouts: %d\nreleases: 0\nburies: 0\n"
        b"kicks: 0\n" % (state, age, ttr, reserves, timeouts)
    )
    return b"OK %d\r\n%s\r\n" % (len(body), body)


@dataclass(frozen=True)
class Difference:
    session: Session  # always fresh: job ids are literal
    beanpod: Replies  # replies per step, as beanpod must give them
    beanstalkd: Replies | None  # 1.12's replies, None where 1.12 is not deterministic


TIMEOUT = b"<timeout>"  # what the harness records when no reply arrives in time
TIMED_OUT = b"TIMED_OUT\r\n"


def rwt(arg: str, beanstalkd: Replies, doc: str) -> Difference:
    """(a) ``reserve-with-timeout`` with an argument that 1.13 rejects."""
    return Difference(
        S(
            f"reserve-with-timeout-{arg.strip() or 'empty'}",
            raw(f"reserve-with-timeout {arg}\r\n", 1, timeout=0.3),
            raw("list-tube-used\r\n", 1, timeout=0.3),
            fresh=True,
            doc=doc,
        ),
        [[BAD], [USING]],
        beanstalkd,
    )


DIFFERENCES: list[Difference] = [
    # (a) reserve-with-timeout: beanpod follows 1.13 (PR #607) and answers BAD_FORMAT.
    # 1.12 reads the argument with strtol(): garbage and an empty argument mean 0
    # (TIMED_OUT at once), trailing bytes are ignored, values above INT_MAX wrap.
    # 1.12 replies b'TIMED_OUT\r\n' then b'USING default\r\n' for these:
    rwt("x", [[TIMED_OUT], [USING]], "1.12: garbage reads as 0 -> TIMED_OUT"),
    rwt("", [[TIMED_OUT], [USING]], "1.12: empty argument reads as 0 -> TIMED_OUT"),
    rwt("0 x", [[TIMED_OUT], [USING]], "1.12: trailing bytes ignored -> TIMED_OUT"),
    rwt("0x", [[TIMED_OUT], [USING]], "1.12: strtol stops at 'x' -> TIMED_OUT"),
    rwt("+0", [[TIMED_OUT], [USING]], "1.12: strtol accepts a sign -> TIMED_OUT"),
    rwt("4294967296", [[TIMED_OUT], [USING]], "1.12: 2**32 wraps to 0 -> TIMED_OUT"),
    # 1.12 never replies to these (a negative timeout, or INT_MAX + 1 wrapping to a
    # negative int, waits forever) and so never gets to list-tube-used either:
    rwt("-1", [[TIMEOUT], [TIMEOUT]], "1.12: negative -> waits forever, no reply"),
    rwt("2147483648", [[TIMEOUT], [TIMEOUT]], "1.12: > INT_MAX -> waits forever, no reply"),
    # (b) Over-long line whose CR is the 224th byte (a 225-byte line) or, as the
    # buffer is discarded in 224-byte chunks, the 448th (a 449-byte line).
    # 1.12 answers BAD_FORMAT but misses the CRLF and swallows the next command:
    # replies b'BAD_FORMAT\r\n', b'USING default\r\n' and then nothing.
    # beanpod answers BAD_FORMAT and handles both following commands.
    *[
        Difference(
            S(
                f"over-long-line-{n}-bytes-does-not-swallow-next",
                raw("x" * (n - 2) + "\r\nlist-tube-used\r\nlist-tube-used\r\n", 3, timeout=0.3),
                fresh=True,
                doc=f"{n}-byte line: 1.12 swallows the next command, beanpod does not",
            ),
            [[BAD, USING, USING]],
            [[BAD, USING, TIMEOUT]],
        )
        for n in (225, 449)
    ],
    Difference(
        S(
            "over-long-use-225-bytes-does-not-swallow-next",
            raw("use " + "a" * 219 + "\r\nlist-tube-used\r\n", 2, timeout=0.3),
            "list-tube-used",
            fresh=True,
            doc="225-byte use line: 1.12 swallows the first list-tube-used",
        ),
        [[BAD, USING], [USING]],
        [[BAD, TIMEOUT], [USING]],
    ),
    # (c) TTR expiry while the reserving connection is silent.  1.12 misses about
    # half of these (issues #262/#380): connection b then sees
    #   b'OK 146\r\n---\nid: 1\ntube: default\nstate: reserved\n...timeouts: 0...'
    # and b'TIMED_OUT\r\n' for its reserve-with-timeout 0.  beanpod releases on time.
    Difference(
        S(
            "ttr-expiry-on-silent-connection",
            put("a", ttr=1),
            "reserve",
            Sleep(1.5),
            on("b", "stats-job 1"),
            on("b", "reserve-with-timeout 0"),
            NoReply(100, "a"),
            fresh=True,
            doc="1.12 often leaves the job reserved until a speaks again",
        ),
        [
            [b"INSERTED 1\r\n"],
            [b"RESERVED 1 1\r\na\r\n"],
            [],
            [job_stats(b"ready", 1, 1, 1, 1)],
            [b"RESERVED 1 1\r\na\r\n"],
            [],
        ],
        None,
    ),
    Difference(
        S(
            "ttr-expiry-on-silent-connection-counts-in-stats-tube",
            put("a", ttr=1),
            "reserve",
            Sleep(1.5),
            on("b", "peek-ready"),
            fresh=True,
            doc="1.12 often answers NOT_FOUND here",
        ),
        [[b"INSERTED 1\r\n"], [b"RESERVED 1 1\r\na\r\n"], [], [b"FOUND 1 1\r\na\r\n"]],
        None,
    ),
]


def replies_of(session: Session, pool: ServerPool, kind: str) -> Replies:
    transcript = run_session(session, pool, kind)
    return [[TIMEOUT if r.startswith(TIMEOUT) else r for r in e.replies] for e in transcript]


def matches(expected: Replies, actual: Replies) -> bool:
    if len(expected) != len(actual):
        return False
    return all(
        len(e) == len(a) and all(x == y for x, y in zip(e, a, strict=True))
        for e, a in zip(expected, actual, strict=True)
    )


IDS = [d.session.id for d in DIFFERENCES]


@pytest.mark.skipif(CANDIDATE != "beanpod", reason="beanpod-only expectations")
@pytest.mark.parametrize("diff", DIFFERENCES, ids=IDS)
def test_beanpod_documented_behaviour(diff: Difference, server_pool: ServerPool) -> None:
    actual = replies_of(diff.session, server_pool, "beanpod")
    assert matches(diff.beanpod, actual), (
        f"{diff.session.id}: {diff.session.doc}\nexpected {diff.beanpod!r}\nbeanpod  {actual!r}"
    )


KNOWN = [d for d in DIFFERENCES if d.beanstalkd is not None]


@pytest.mark.parametrize("diff", KNOWN, ids=[d.session.id for d in KNOWN])
def test_beanstalkd_1_12_really_differs(diff: Difference, server_pool: ServerPool) -> None:
    """The recorded 1.12 replies are what the installed beanstalkd does."""
    assert diff.beanstalkd is not None
    actual = replies_of(diff.session, server_pool, "beanstalkd")
    assert matches(diff.beanstalkd, actual), (
        f"{diff.session.id}: expected {diff.beanstalkd!r}\nbeanstalkd {actual!r}"
    )
    assert not matches(diff.beanpod, actual)
