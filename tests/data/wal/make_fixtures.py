"""Regenerate the golden WAL fixtures: `python -m tests.data.wal.make_fixtures`.

valid/          two segments: puts, an update (bury), a delete, a pause, next-id marks
torn_tail/      valid/ plus half of one more record at the end of the last segment
bad_crc/        valid/ with one byte of a record in the middle of segment 1 flipped
bad_header/     valid/ with segment 1's magic damaged
wrong_version/  valid/ with segment 1 claiming format version 99 (header CRC intact)

The files are committed: a change to the format that breaks them must bump the version.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability.records import (
    encode_delete,
    encode_next_id,
    encode_pause,
    encode_put,
    encode_update,
)
from beanpod.storage.framing import HEADER_SIZE, crc32, encode_header, frame
from beanpod.storage.segments import segment_name

HERE = Path(__file__).parent
T0 = 1_800_000_000_000


def valid_segments() -> list[bytes]:
    engine = Engine(MoveCheck())
    tube = engine.tube("emails")
    a = engine.put(None, tube, 10, 0, 60_000, b"first", T0)
    b = engine.put(None, tube, 20, 30_000, 60_000, b"second\r\nline", T0)
    c = engine.put(None, engine.default_tube, 0, 0, 1000, bytes(range(256)), T0)
    seg1 = [encode_next_id(1), encode_put(a), encode_put(b), encode_put(c)]
    conn = engine.connect()
    engine.reserve(conn, 0, T0, lambda _: None)
    engine.bury(conn, c.id, 5, T0)
    engine.pause_tube(None, "emails", 3_600_000, T0)
    seg2 = [encode_next_id(4), encode_update(c), encode_delete(a.id), encode_pause(tube)]
    return [encode_header(i + 1) + b"".join(frame(p) for p in seg) for i, seg in
            enumerate((seg1, seg2))]  # fmt: skip


def write(name: str, segments: list[bytes]) -> None:
    directory = HERE / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    for i, data in enumerate(segments):
        (directory / segment_name(i + 1)).write_bytes(data)


def main() -> None:
    seg1, seg2 = valid_segments()
    write("valid", [seg1, seg2])
    extra = frame(encode_delete(2))
    write("torn_tail", [seg1, seg2 + extra[: len(extra) // 2]])
    flipped = bytearray(seg1)
    flipped[HEADER_SIZE + 40] ^= 0x01  # inside the first put's payload
    write("bad_crc", [bytes(flipped), seg2])
    write("bad_header", [b"XXXXXXXX" + seg1[8:], seg2])
    head = struct.pack("<8sHHI", b"BPODWAL\n", 99, 0, 1)
    wrong = head + crc32(head).to_bytes(4, "little") + seg1[HEADER_SIZE:]
    write("wrong_version", [wrong, seg2])


if __name__ == "__main__":
    main()
