"""The job <-> WAL record codec. Pure: bytes in, bytes out, no I/O.

Payload layouts (little-endian; the first byte is the record type; see docs/wal.md):

    PUT      id pri delay ttr created deadline state counters[5] ext_kind tube_len ext_len
             + tube name + ext bytes + body          (a job's full image; body stored once)
    UPDATE   id pri delay ttr deadline state counters[5] ext_kind ext_len + ext bytes
    DELETE   id
    PAUSE    pause_ms pause_until name_len + tube name
    NEXT_ID  next job id (leads every segment, so ids survive the segments they came from)
    STATE    key_len value_len + key + value     (format version 2: a named piece of state
             outside jobs, e.g. a qless config override; the latest record per key wins,
             an empty value removes the key)

Times are wall-clock milliseconds. ext_kind 0 means "no extension"; otherwise the bytes
are `job.ext.encode()` and are decoded with `EXT_DECODERS[ext_kind]`.
Type codes are never reused; a new field means a new type code or a new format version.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from beanpod.core.job import Job
    from beanpod.core.tube import Tube

# Final: compiled, each a constant (a module global is a dict lookup per record)
PUT: Final = 1
UPDATE: Final = 2
DELETE: Final = 3
PAUSE: Final = 4
NEXT_ID: Final = 5
STATE: Final = 6
TYPE_NAMES = {
    PUT: "put", UPDATE: "update", DELETE: "delete", PAUSE: "pause", NEXT_ID: "next-id",
    STATE: "state",
}  # fmt: skip

_PUT: Final = struct.Struct("<BQqqqqqB5IHHI")
# An ordinary put (no counters, no extension) packs the same bytes in two parts: its
# fields up to `state`, then a tail that depends only on the tube's name (zero counters,
# ext_kind 0, the name's length, ext_len 0, the name), made once per name. Packing 8
# fields instead of 16 is about half of the put's encoding.
_PUT_FRONT: Final = struct.Struct("<BQqqqqqB")
_pack_front: Final = _PUT_FRONT.pack  # bound once: a call, no method lookup per put
_PLAIN_TAIL: Final = struct.Struct("<20xHHI")
_tails: Final[dict[bytes, bytes]] = {}  # tube name -> its plain tail
MAX_TAILS: Final = 1024  # tails kept (tubes come and go: the cache starts over past it)
_UPDATE = struct.Struct("<BQqqqqB5IHI")
_DELETE: Final = struct.Struct("<BQ")
pack_delete: Final = _DELETE.pack  # pack_delete(DELETE, job_id): the journal's hot path
_PAUSE = struct.Struct("<BqqH")
_NEXT_ID = struct.Struct("<BQ")
_STATE = struct.Struct("<BHI")

PUT_FIXED = _PUT  # a PUT payload's fixed fields (replay decodes them in place)
DELETE_FIXED = _DELETE
DELETE_SIZE = _DELETE.size
UPDATE_SIZE = _UPDATE.size  # plus the extension's bytes
PUT_OVERHEAD = _PUT.size  # plus tube name, extension and body
STATE_OVERHEAD = _STATE.size  # plus key and value


class RecordError(Exception):
    """A payload this codec cannot decode."""


class PutRecord(NamedTuple):
    id: int
    tube: str
    pri: int
    delay: int
    ttr: int
    created: int
    deadline: int
    state: int
    counters: tuple[int, int, int, int, int]  # reserves timeouts releases buries kicks
    ext_kind: int
    ext: bytes
    body: bytes


class UpdateRecord(NamedTuple):
    id: int
    pri: int
    delay: int
    ttr: int
    deadline: int
    state: int
    counters: tuple[int, int, int, int, int]
    ext_kind: int
    ext: bytes


class DeleteRecord(NamedTuple):
    id: int


class PauseRecord(NamedTuple):
    tube: str
    pause_ms: int
    pause_until: int


class NextIdRecord(NamedTuple):
    next_id: int


class StateRecord(NamedTuple):
    key: str
    value: bytes  # b"" = the key was removed


Record = PutRecord | UpdateRecord | DeleteRecord | PauseRecord | NextIdRecord | StateRecord


def _ext(job: Job) -> tuple[int, bytes]:
    ext = job.ext
    return (0, b"") if ext is None else (ext.KIND, ext.encode())


_NO_COUNTS = (0, 0, 0, 0, 0)
_U32 = 0xFFFFFFFF


def _counts(job: Job) -> tuple[int, int, int, int, int]:
    """reserves, timeouts, releases, buries, kicks, unpacked from `Job.counters`."""
    c = job.counters
    if not c:
        return _NO_COUNTS
    return (c & _U32, (c >> 32) & _U32, (c >> 64) & _U32, (c >> 96) & _U32, c >> 128)


def encode_put_head(job: Job) -> bytes:
    """A put record up to its body (fixed fields, tube name, extension bytes): the framer
    appends the body, so it is copied once, into the framed record."""
    name = job.tube.name_bytes
    if job.ext is None and not job.counters:  # the common put: nothing to unpack
        tail = _tails.get(name)
        if tail is None:
            tail = plain_tail(name)
        return _pack_front(
            PUT, job.id, job.pri, job.delay, job.ttr, job.created, job.deadline, job.state
        ) + tail  # fmt: skip
    kind, ext = _ext(job)
    head = _PUT.pack(
        PUT, job.id, job.pri, job.delay, job.ttr, job.created, job.deadline, job.state,
        *_counts(job), kind, len(name), len(ext),
    )  # fmt: skip
    return head + name + ext


def plain_tail(name: bytes) -> bytes:
    """What follows `state` in a put of tube `name` without counters or extension."""
    if len(_tails) >= MAX_TAILS:
        _tails.clear()
    tail = _tails[name] = _PLAIN_TAIL.pack(0, len(name), 0) + name
    return tail


def encode_put(job: Job) -> bytes:
    return encode_put_head(job) + job.body


def encode_update(job: Job) -> bytes:
    kind, ext = _ext(job)
    head = _UPDATE.pack(
        UPDATE, job.id, job.pri, job.delay, job.ttr, job.deadline, job.state,
        *_counts(job), kind, len(ext),
    )  # fmt: skip
    return head + ext if ext else head


# encode_delete(job_id) -> bytes, as one C call (deletes are as frequent as puts).
encode_delete: Callable[[int], bytes] = partial(_DELETE.pack, DELETE)


def encode_pause(tube: Tube) -> bytes:
    name = tube.name_bytes
    return _PAUSE.pack(PAUSE, tube.pause_ms, tube.pause_until, len(name)) + name


def encode_next_id(next_id: int) -> bytes:
    return _NEXT_ID.pack(NEXT_ID, next_id)


def encode_state(key: str, value: bytes) -> bytes:
    """Set `key` to `value` (b"": remove it)."""
    name = key.encode()
    return _STATE.pack(STATE, len(name), len(value)) + name + value


def decode(payload: bytes) -> Record:
    """Decode one payload; raise RecordError if it is not a record this codec knows."""
    if not payload:
        raise RecordError("empty record")
    decoder = _DECODERS.get(payload[0])
    if decoder is None:
        raise RecordError(f"unknown record type {payload[0]}")
    try:
        return decoder(payload)
    except (struct.error, UnicodeDecodeError, ValueError) as exc:
        raise RecordError(f"malformed {TYPE_NAMES[payload[0]]} record: {exc}") from exc


def _decode_put(p: bytes) -> PutRecord:
    (_, jid, pri, delay, ttr, created, deadline, state, r, t, rel, b, k,
     kind, name_len, ext_len) = _PUT.unpack_from(p)  # fmt: skip
    at = _PUT.size
    name = p[at : at + name_len].decode()
    at += name_len
    ext = p[at : at + ext_len]
    at += ext_len
    if len(ext) != ext_len or len(name) != name_len:
        raise ValueError("record shorter than its lengths")
    counters = (r, t, rel, b, k)
    return PutRecord(
        jid, name, pri, delay, ttr, created, deadline, state, counters, kind, ext, p[at:]
    )


def _decode_update(p: bytes) -> UpdateRecord:
    _, jid, pri, delay, ttr, deadline, state, r, t, rel, b, k, kind, ext_len = _UPDATE.unpack_from(
        p
    )
    ext = p[_UPDATE.size :]
    if len(ext) != ext_len:
        raise ValueError("extension length mismatch")
    return UpdateRecord(jid, pri, delay, ttr, deadline, state, (r, t, rel, b, k), kind, ext)


def _decode_pause(p: bytes) -> PauseRecord:
    _, ms, until, name_len = _PAUSE.unpack_from(p)
    name = p[_PAUSE.size :]
    if len(name) != name_len:
        raise ValueError("name length mismatch")
    return PauseRecord(name.decode(), ms, until)


def _decode_delete(p: bytes) -> DeleteRecord:
    return DeleteRecord(_DELETE.unpack(p)[1])


def _decode_next_id(p: bytes) -> NextIdRecord:
    return NextIdRecord(_NEXT_ID.unpack(p)[1])


def _decode_state(p: bytes) -> StateRecord:
    _, key_len, value_len = _STATE.unpack_from(p)
    at = _STATE.size
    key = p[at : at + key_len]
    value = p[at + key_len :]
    if len(key) != key_len or len(value) != value_len:
        raise ValueError("key/value length mismatch")
    return StateRecord(key.decode(), value)


_DECODERS: dict[int, Callable[[bytes], Record]] = {
    PUT: _decode_put,
    UPDATE: _decode_update,
    DELETE: _decode_delete,
    PAUSE: _decode_pause,
    NEXT_ID: _decode_next_id,
    STATE: _decode_state,
}
