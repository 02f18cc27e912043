from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beanpod.storage.framing import (
    HEADER_SIZE,
    VERSION,
    FormatError,
    VersionError,
    decode_header,
    encode_header,
    frame,
    iter_frames,
    next_nonzero,
    next_valid_frame,
    read_frame,
)


def test_header_round_trip() -> None:
    header = decode_header(encode_header(42))
    assert (header.version, header.index) == (VERSION, 42)


def test_version_1_segments_are_still_read() -> None:
    assert decode_header(encode_header(7, version=1)).version == 1


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda h: b"NOTAWAL!" + h[8:], "wrong magic"),
        (lambda h: h[:12] + bytes([h[12] ^ 1]) + h[13:], "checksum"),
        (lambda h: h[:10], "shorter"),
    ],
)
def test_bad_headers_are_refused(mutate, reason) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FormatError, match=reason):
        decode_header(mutate(encode_header(1)))


def test_newer_version_is_a_version_error() -> None:
    with pytest.raises(VersionError, match=f"version {VERSION + 1}"):
        decode_header(encode_header(1, version=VERSION + 1))


def test_frames_round_trip_and_stop_at_zeros() -> None:
    data = encode_header(1) + frame(b"\x01abc") + frame(b"\x03") + bytes(64)
    assert list(iter_frames(data)) == [(HEADER_SIZE, b"\x01abc"), (HEADER_SIZE + 12, b"\x03")]


def test_damaged_frames_raise_with_offset() -> None:
    good = frame(b"\x01payload")
    assert read_frame(good, 0) == (b"\x01payload", len(good))
    flipped = good[:-1] + bytes([good[-1] ^ 0xFF])
    with pytest.raises(FormatError, match="checksum") as err:
        read_frame(flipped, 0)
    assert err.value.offset == 0
    with pytest.raises(FormatError, match="past the end"):
        read_frame(good[:-2], 0)
    with pytest.raises(FormatError, match="cut short"):
        read_frame(good[:5], 0)


def test_next_valid_frame_skips_damage_and_zeros() -> None:
    data = b"\xff" * 5 + bytes(100) + frame(b"\x05after")
    assert next_valid_frame(data, 0) == 105
    assert next_valid_frame(b"\xff" * 5 + bytes(100), 0) is None


@given(
    st.integers(0, 200_000), st.lists(st.integers(0, 199_999), max_size=2), st.integers(0, 200_001)
)
def test_next_nonzero_finds_the_first_non_zero_byte(size: int, marks: list[int], pos: int) -> None:
    """Across 64 KiB blocks, from any position, as a byte-by-byte search would."""
    data = bytearray(size)
    for at in marks:
        if at < size:
            data[at] = 7
    raw = bytes(data)
    expected = next((i for i in range(pos, size) if raw[i]), None)
    assert next_nonzero(raw, pos) == expected
