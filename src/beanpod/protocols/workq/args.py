"""Value checks for Workq arguments: each returns the typed value or raises `BadArg`
carrying the reference server's error text."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from beanpod.protocols.workq import wire as w


class BadArg(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


_HEX32 = re.compile(rb"[0-9a-fA-F]{32}")
# The common case, already canonical: checked with one match.
_CANONICAL_V4 = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_NAME_RE = re.compile(rb"[a-zA-Z0-9_.\-]{1,%d}" % w.MAX_NAME)
_INT_RE = re.compile(rb"[+-]?[0-9]{1,20}")
_TIME_RE = re.compile(rb"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")


def uuid(raw: bytes) -> bytes:
    """A version-4, RFC 4122 variant UUID, returned in canonical lower-case form.

    Accepted: canonical 8-4-4-4-12 hex (any case), the same 32 digits without hyphens,
    either of those in {braces}, or the canonical form after a `urn:uuid:` prefix.
    """
    if _CANONICAL_V4.fullmatch(raw) is not None:
        return raw
    text = raw
    if text.startswith(b"urn:uuid:"):
        text = text[9:]
        if len(text) != 36:
            raise BadArg(w.INVALID_ID)
    elif text[:1] == b"{" and text[-1:] == b"}":
        text = text[1:-1]
    if len(text) == 36:
        if text[8:9] + text[13:14] + text[18:19] + text[23:24] != b"----":
            raise BadArg(w.INVALID_ID)
        text = text.replace(b"-", b"")
    if _HEX32.fullmatch(text) is None:
        raise BadArg(w.INVALID_ID)
    h = text.lower()
    if h[12:13] != b"4" or h[16:17] not in (b"8", b"9", b"a", b"b"):
        raise BadArg(w.INVALID_ID)  # not version 4 / not the RFC 4122 variant (nor nil)
    return b"-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:]))


def name(raw: bytes) -> str:
    if _NAME_RE.fullmatch(raw) is None:
        raise BadArg(w.INVALID_NAME)
    return raw.decode("ascii")


def integer(raw: bytes, low: int, high: int, error: str) -> int:
    if not (raw.isdigit() and len(raw) <= 20) and _INT_RE.fullmatch(raw) is None:
        raise BadArg(error)
    value = int(raw)
    if not low <= value <= high:
        raise BadArg(error)
    return value


def ttr(raw: bytes) -> int:
    return integer(raw, 1, w.MAX_TTR, w.INVALID_TTR)


def ttl(raw: bytes) -> int:
    return integer(raw, 1, w.MAX_TTL, w.INVALID_TTL)


def wait_timeout(raw: bytes) -> int:
    return integer(raw, 0, w.MAX_WAIT, w.INVALID_WAIT)


def utc_time(raw: bytes) -> int:
    """`YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds) as epoch milliseconds."""
    m = _TIME_RE.fullmatch(raw)
    if m is None:
        raise BadArg(w.INVALID_TIME)
    try:
        year, month, day, hour, minute, second = map(int, m.groups())
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        raise BadArg(w.INVALID_TIME) from None
    return int(moment.timestamp()) * 1000


def format_time(ms: int) -> bytes:
    """Epoch milliseconds as `YYYY-MM-DDTHH:MM:SSZ`."""
    return datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ").encode()


def job_flags(flags: dict[bytes, bytes]) -> tuple[int, int, int]:
    """(priority, max-attempts, max-fails) from add/schedule flags; unknown flags are
    ignored, as the reference server does."""
    pri = flags.get(w.PRIORITY)
    attempts = flags.get(w.MAX_ATTEMPTS)
    fails = flags.get(w.MAX_FAILS)
    return (
        0 if pri is None else integer(pri, w.PRIORITY_MIN, w.PRIORITY_MAX, w.INVALID_PRIORITY),
        0 if attempts is None else integer(attempts, 0, 255, w.INVALID_MAX_ATTEMPTS),
        0 if fails is None else integer(fails, 0, 255, w.INVALID_MAX_FAILS),
    )


def cursor(raw: bytes) -> int:
    return integer(raw, 0, w.MAX_CURSOR, w.INVALID_CURSOR)


def limit(raw: bytes) -> int:
    return integer(raw, 1, w.MAX_LIMIT, w.INVALID_LIMIT)
