"""The event log schema: the one definition shared by the writer and every reader.

The contract lives in ``docs/eventlog.md``. This module must stay importable without
pyspark: the server imports it, and only :func:`spark_schema` touches pyspark (lazily).

Reader rule (see :func:`normalise`): a line is an event when it is a strict JSON object
(no ``NaN``/``Infinity``) whose ``ts`` is an integer, ``event`` and ``queue`` are strings,
``job`` and ``conn`` are integers or null (absent counts as null), ``v`` is absent or an
integer >= 1, and ``event`` is a known name. Integer fields must fit in 64 bits. A line
whose known *integer* field holds another JSON type is malformed and skipped as a whole.
Known *string* fields (other than ``event`` and ``queue``) holding another scalar type
are taken as the JSON text of that value, as Spark's JSON reader does. Unknown fields
are ignored.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyspark.sql.types import StructType

SCHEMA_VERSION: Final = 1

PUT: Final = "put"
RESERVE: Final = "reserve"
RELEASE: Final = "release"
BURY: Final = "bury"
KICK: Final = "kick"
TOUCH: Final = "touch"
TIMEOUT: Final = "timeout"
DELETE: Final = "delete"
COMPLETE: Final = "complete"
FAIL: Final = "fail"
EVICT: Final = "evict"
PAUSE: Final = "pause"

#: Every event name, in the order of the contract's table.
EVENT_NAMES: Final[tuple[str, ...]] = (
    PUT,
    RESERVE,
    RELEASE,
    BURY,
    KICK,
    TOUCH,
    TIMEOUT,
    DELETE,
    COMPLETE,
    FAIL,
    EVICT,
    PAUSE,
)

#: Events that end a reservation (``delete`` only when its ``state`` is "reserved").
RESERVATION_ENDS: Final[frozenset[str]] = frozenset(
    {DELETE, RELEASE, BURY, TIMEOUT, COMPLETE, FAIL}
)

#: Values of ``kick``'s ``from`` and ``delete``'s ``state``.
KICK_FROM: Final[tuple[str, ...]] = ("buried", "delayed")
DELETE_STATES: Final[tuple[str, ...]] = ("reserved", "ready", "delayed", "buried")

INT: Final = "int"
STR: Final = "str"

#: Fields every event has: name -> (type, nullable).
COMMON_FIELDS: Final[dict[str, tuple[str, bool]]] = {
    "v": (INT, False),
    "ts": (INT, False),
    "event": (STR, False),
    "job": (INT, True),
    "queue": (STR, False),
    "conn": (INT, True),
}

#: Extra fields and their types (all nullable: absent or null when not applicable).
EXTRA_FIELD_TYPES: Final[dict[str, str]] = {
    "pri": INT,
    "delay_ms": INT,
    "ttr_ms": INT,
    "bytes": INT,
    "uuid": STR,
    "worker": STR,
    "peer": STR,
    "from": STR,
    "state": STR,
    "group": STR,
    "message": STR,
}

#: Extra fields carried by each event.
EXTRA_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    PUT: ("pri", "delay_ms", "ttr_ms", "bytes", "uuid"),
    RESERVE: ("worker", "peer"),
    RELEASE: ("pri", "delay_ms"),
    BURY: ("pri",),
    KICK: ("from",),
    TOUCH: (),
    TIMEOUT: (),
    DELETE: ("state",),
    COMPLETE: ("bytes",),
    FAIL: ("group", "message", "bytes"),
    EVICT: (),
    PAUSE: ("delay_ms",),
}

#: Column order of a normalised event (common fields, then extras).
FIELD_ORDER: Final[tuple[str, ...]] = (*COMMON_FIELDS, *EXTRA_FIELD_TYPES)

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_KNOWN_EVENTS: Final[frozenset[str]] = frozenset(EVENT_NAMES)


def field_type(name: str) -> str:
    """Return ``INT`` or ``STR`` for a known field name (KeyError for unknown ones)."""
    if name in COMMON_FIELDS:
        return COMMON_FIELDS[name][0]
    return EXTRA_FIELD_TYPES[name]


def spark_schema() -> StructType:
    """The Spark ``StructType`` of an event line (pyspark is imported here, lazily)."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    spark_type = {INT: LongType(), STR: StringType()}
    return StructType(
        [StructField(name, spark_type[field_type(name)], True) for name in FIELD_ORDER]
    )


def _is_int64(value: object) -> bool:
    return type(value) is int and _INT64_MIN <= value <= _INT64_MAX


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-standard JSON constant {name}")


def parse_line(line: str | bytes) -> dict[str, Any] | None:
    """Parse one log line strictly; None when it is not a JSON object."""
    try:
        obj = json.loads(line, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _as_text(value: object) -> str | None:
    """A known string field's value as Spark's JSON reader yields it."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


def normalise(obj: object) -> dict[str, Any] | None:
    """Validate a parsed line; return the event with every field of FIELD_ORDER, or None.

    None means "skip this line": not an object, a required field missing or mistyped, an
    integer field holding another type, a schema version below 1, or an unknown event.
    """
    if not isinstance(obj, dict):
        return None
    out: dict[str, Any] = {}
    for name in FIELD_ORDER:
        value = obj.get(name)
        if field_type(name) == INT:
            if value is not None and not _is_int64(value):
                return None
            out[name] = value
        elif name in ("event", "queue"):
            if not isinstance(value, str):
                return None
            out[name] = value
        else:
            out[name] = _as_text(value)
    if out["ts"] is None or out["event"] not in _KNOWN_EVENTS:
        return None
    if out["v"] is not None and out["v"] < SCHEMA_VERSION:
        return None
    return out


def read_line(line: str | bytes) -> dict[str, Any] | None:
    """Parse and validate one line: the event, or None when readers must skip it."""
    return normalise(parse_line(line))
