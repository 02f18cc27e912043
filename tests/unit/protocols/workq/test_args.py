"""Argument checks: accepted UUID forms, names, limits, times."""

from __future__ import annotations

import pytest

from beanpod.protocols.workq import args
from beanpod.protocols.workq import wire as w

CANON = b"6ba7b810-9dad-41d1-80b4-00c04fd430c4"


@pytest.mark.parametrize(
    "raw",
    [
        CANON,
        CANON.upper(),
        CANON.replace(b"-", b""),
        b"{" + CANON + b"}",
        b"{" + CANON.replace(b"-", b"").upper() + b"}",
        b"urn:uuid:" + CANON,
    ],
)
def test_accepted_uuid_forms_normalise_to_canonical(raw: bytes) -> None:
    assert args.uuid(raw) == CANON


@pytest.mark.parametrize(
    "raw",
    [
        b"6ba7b810-9dad-11d1-80b4-00c04fd430c4",  # version 1
        b"6ba7b810-9dad-41d1-c0b4-00c04fd430c4",  # not the RFC 4122 variant
        b"00000000-0000-0000-0000-000000000000",  # nil
        CANON + b"0",  # trailing garbage
        CANON[:-1],
        b"{" + CANON,
        b"urn:uuid:" + CANON.replace(b"-", b""),
        b"6ba7b8109-dad-41d1-80b4-00c04fd430c4",  # hyphens misplaced
        b"6ba7b810-9dad-41d1-80b4-00c04fd430cg",
    ],
)
def test_rejected_uuids(raw: bytes) -> None:
    with pytest.raises(args.BadArg, match=w.INVALID_ID):
        args.uuid(raw)


def test_names() -> None:
    assert args.name(b"a.B-c_9") == "a.B-c_9"
    assert args.name(b"x" * 255) == "x" * 255
    for bad in (b"", b"x" * 256, b"a/b", b"a+b", b"caf\xc3\xa9"):
        with pytest.raises(args.BadArg, match=w.INVALID_NAME):
            args.name(bad)


@pytest.mark.parametrize(
    ("fn", "good", "bad", "text"),
    [
        (args.ttr, [b"1", b"86400000"], [b"0", b"86400001", b"-1", b"x", b""], w.INVALID_TTR),
        (args.ttl, [b"1", b"2592000000"], [b"0", b"2592000001"], w.INVALID_TTL),
        (args.wait_timeout, [b"0", b"86400000"], [b"-1", b"86400001"], w.INVALID_WAIT),
        (args.cursor, [b"0", b"4294967295"], [b"4294967296"], w.INVALID_CURSOR),
        (args.limit, [b"1", b"100"], [b"0", b"101"], w.INVALID_LIMIT),
    ],
)
def test_limits(fn: object, good: list[bytes], bad: list[bytes], text: str) -> None:
    assert callable(fn)
    for raw in good:
        fn(raw)
    for raw in bad:
        with pytest.raises(args.BadArg, match=text):
            fn(raw)


def test_job_flags() -> None:
    assert args.job_flags({}) == (0, 0, 0)
    flags = {b"priority": b"-2147483648", b"max-attempts": b"255", b"max-fails": b"0", b"z": b"1"}
    assert args.job_flags(flags) == (-(2**31), 255, 0)
    for key, value, text in [
        (b"priority", b"2147483648", w.INVALID_PRIORITY),
        (b"max-attempts", b"256", w.INVALID_MAX_ATTEMPTS),
        (b"max-fails", b"-1", w.INVALID_MAX_FAILS),
    ]:
        with pytest.raises(args.BadArg, match=text):
            args.job_flags({key: value})


def test_times() -> None:
    assert args.utc_time(b"2016-06-14T06:46:46Z") == 1465886806000
    assert args.format_time(1465886806999) == b"2016-06-14T06:46:46Z"
    for bad in (b"2016-06-14T06:46:46", b"2016-06-14 06:46:46Z", b"2016-13-01T00:00:00Z",
                b"2016-06-14T06:46:46.5Z", b"2016-06-14T06:46:46+00:00"):  # fmt: skip
        with pytest.raises(args.BadArg, match=w.INVALID_TIME):
            args.utc_time(bad)
