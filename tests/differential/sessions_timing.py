"""Time-dependent sessions: delays, TTR, DEADLINE_SOON, pause, timeouts.

These are run in parallel threads (see ``test_timing.py``).  Sleeps are chosen so
that whole-second values (``age``, ``time-left``, ``pause-time-left``) are read at
least 0.2 s away from a boundary.

1.12 misses about half of all TTR expiries while the reserving connection is
silent (a documented difference, see ``test_documented_differences.py``).  The
sessions here therefore make the reserving connection send a command after the
TTR ran out before anybody looks at the job: both servers have then released it.
"""

from __future__ import annotations

from tests.differential.model import (
    Close,
    HalfClose,
    NoReply,
    Read,
    S,
    Session,
    Sleep,
    check_unique,
    on,
    put,
)
from tests.differential.model import send as raw

DELAY: list[Session] = [
    S(
        "delay-becomes-ready",
        put("a", delay=1),
        "peek-ready",
        Sleep(1.3),
        "peek-ready",
        "stats-job {j1}",
    ),
    S(
        "delay-wakes-blocked-reserve",
        put("a", delay=1),
        raw("reserve-with-timeout 3\r\n", timeout=6.0),
    ),
    S(
        "delay-order-by-deadline",
        put("late", delay=2),
        put("early", delay=1),
        put("now", pri=99),
        "reserve",
        Sleep(2.3),
        "reserve",
        "reserve",
    ),
    S(
        "release-with-delay-becomes-ready",
        put("a"),
        "reserve",
        "release {j1} 0 1",
        "peek-ready",
        Sleep(1.3),
        "peek-ready",
        "stats-job {j1}",
    ),
    S("kick-after-delay-expired", put("a", delay=1), Sleep(1.3), "kick 1", "peek-ready"),
    S("age-counts-seconds", put("a"), Sleep(1.3), "stats-job {j1}"),
    S(
        "delayed-time-left-counts-down",
        put("a", delay=3),
        "stats-job {j1}",
        Sleep(1.3),
        "stats-job {j1}",
    ),
]

RESERVE_TIMEOUT: list[Session] = [
    S(
        "reserve-with-timeout-1-times-out",
        raw("reserve-with-timeout 1\r\n", timeout=6.0),
        "list-tube-used",
    ),
    S(
        "reserve-with-timeout-job-arrives",
        on("a", "reserve-with-timeout 3", 0),
        NoReply(300),
        on("b", put("x")),
        Read(1, "a"),
    ),
    S(
        "reserve-with-timeout-2-counts",
        on("a", "reserve-with-timeout 2", 0),
        NoReply(1500),
        Read(1, "a", timeout=6.0),
    ),
    S(
        "reserve-half-close-while-blocked",
        on("a", "reserve", 0),
        NoReply(200),
        HalfClose("a"),
        Read(1, "a"),
    ),
    S(
        "reserve-with-timeout-half-close",
        on("a", "reserve-with-timeout 100", 0),
        NoReply(200),
        HalfClose("a"),
        Read(1, "a"),
    ),
]

TTR: list[Session] = [
    S(
        "ttr-1-deadline-soon-immediately",
        put("a", ttr=1),
        "reserve",
        "reserve",
        "reserve-with-timeout 0",
        "reserve-with-timeout 5",
    ),
    S(
        "ttr-1-ready-job-beats-deadline-soon",
        put("a", ttr=1),
        put("b"),
        "reserve",
        "reserve",
        "delete {j2}",
        "reserve",
    ),
    S(
        "ttr-2-blocked-reserve-gets-deadline-soon",
        put("a", ttr=2),
        "reserve",
        raw("reserve\r\n", 0),
        NoReply(400),
        Read(1, timeout=6.0),
        "stats-job {j1}",
    ),
    S(
        "ttr-2-pipelined-reserve-reserve",
        put("a", ttr=2),
        raw("reserve\r\nreserve\r\n", 2, timeout=6.0),
        "delete {j1}",
    ),
    S(
        "ttr-2-reserve-with-timeout-deadline-soon",
        put("a", ttr=2),
        "reserve",
        raw("reserve-with-timeout 5\r\n", timeout=6.0),
    ),
    S(
        "ttr-soonest-of-several",
        put("long", ttr=10),
        put("short", ttr=2),
        ("reserve\r\nreserve", 2),
        raw("reserve\r\n", timeout=6.0),
        "stats-job {j1}",
    ),
    S(
        "ttr-job-arrives-before-margin",
        put("a", ttr=3),
        "reserve",
        raw("reserve\r\n", 0),
        NoReply(400),
        on("b", put("b")),
        Read(1),
    ),
    S(
        "ttr-expiry-released-after-command",
        put("a", ttr=1),
        "reserve",
        Sleep(1.4),
        "list-tube-used",
        on("b", "stats-job {j1}"),
        on("b", "reserve"),
        on("b", "stats-tube {t}"),
    ),
    S(
        "ttr-expiry-counted-in-stats",
        put("a", ttr=1),
        "reserve",
        Sleep(1.4),
        "list-tube-used",
        on("b", "stats"),
        fresh=True,
    ),
    S(
        "ttr-expiry-then-delete-not-found",
        put("a", ttr=1),
        "reserve",
        Sleep(1.4),
        "list-tube-used",
        "delete {j1}",
        "release {j1} 0 0",
        "touch {j1}",
        "bury {j1} 0",
    ),
    S(
        "touch-restarts-ttr",
        put("a", ttr=3),
        "reserve",
        Sleep(1.3),
        "stats-job {j1}",
        "touch {j1}",
        "stats-job {j1}",
    ),
    S(
        "touch-in-margin-avoids-deadline-soon",
        put("a", ttr=2),
        "reserve",
        Sleep(1.2),
        "reserve-with-timeout 0",
        "touch {j1}",
        "reserve-with-timeout 0",
    ),
    S("reserve-job-then-deadline-soon", put("a", ttr=1), "reserve-job {j1}", "reserve"),
    S("release-in-margin", put("a", ttr=1), "reserve", "release {j1} 0 0", "reserve"),
    S(
        "close-in-margin-returns-job",
        put("a", ttr=2),
        "reserve",
        Sleep(1.2),
        Close("a"),
        on("b", "stats-job {j1}"),
    ),
]

PAUSE: list[Session] = [
    S(
        "pause-1-then-reserve",
        put("a"),
        "pause-tube {t} 1",
        raw("reserve-with-timeout 3\r\n", timeout=6.0),
        "stats-tube {t}",
    ),
    S(
        "pause-time-left-counts-down",
        "pause-tube {t} 3",
        "stats-tube {t}",
        Sleep(1.3),
        "stats-tube {t}",
    ),
    S(
        "pause-expires-blocked-reserve-wakes",
        "pause-tube {t} 1",
        put("a"),
        raw("reserve\r\n", 0),
        NoReply(400),
        Read(1, timeout=6.0),
    ),
    S("pause-expired-stats-tube", "pause-tube {t} 1", Sleep(1.3), "stats-tube {t}"),
]

SESSIONS: list[Session] = check_unique(DELAY + RESERVE_TIMEOUT + TTR + PAUSE)
