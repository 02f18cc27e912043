"""Recovery against the golden fixtures in tests/data/wal (see make_fixtures.py)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from beanpod.durability.records import decode, encode_next_id
from beanpod.storage.framing import encode_header, frame
from beanpod.storage.recovery import CorruptLog, LogReader, salvage

FIXTURES = Path(__file__).parents[2] / "data" / "wal"


def copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def read(directory: Path) -> list[str]:
    return [type(decode(p)).__name__ for _, _, p in LogReader(directory).records()]


def test_valid_fixture_reads_every_record() -> None:
    assert read(FIXTURES / "valid") == [
        "NextIdRecord", "PutRecord", "PutRecord", "PutRecord",
        "NextIdRecord", "UpdateRecord", "DeleteRecord", "PauseRecord",
    ]  # fmt: skip


def test_torn_tail_is_reported_and_the_rest_read(caplog: pytest.LogCaptureFixture) -> None:
    reader = LogReader(FIXTURES / "torn_tail")
    with caplog.at_level(logging.WARNING):
        assert len(list(reader.records())) == 8
    assert reader.reports[-1].torn and reader.reports[-1].end == 163
    assert "torn tail at offset 163" in caplog.text


def test_bad_crc_in_the_middle_stops_with_file_and_offset() -> None:
    with pytest.raises(CorruptLog) as err:
        list(LogReader(FIXTURES / "bad_crc").records())
    assert err.value.path.name == "0000000001.wal" and err.value.offset == 37
    assert "checksum" in str(err.value) and "--salvage" in str(err.value)


@pytest.mark.parametrize(
    ("name", "reason"), [("bad_header", "wrong magic"), ("wrong_version", "version 99")]
)
def test_bad_header_stops_start_up(name: str, reason: str) -> None:  # fmt: skip
    with pytest.raises(CorruptLog, match=reason) as err:
        list(LogReader(FIXTURES / name).records())
    assert err.value.offset == 0


def test_salvage_keeps_every_readable_record(tmp_path: Path) -> None:
    directory = copy("bad_crc", tmp_path)
    actions = salvage(directory)
    assert len(actions) == 1 and "rewrote" in actions[0]
    assert (directory / "0000000001.wal.corrupt").exists()
    assert read(directory) == [
        "NextIdRecord", "PutRecord", "PutRecord",
        "NextIdRecord", "UpdateRecord", "DeleteRecord", "PauseRecord",
    ]  # fmt: skip


def test_salvage_moves_a_bad_header_segment_aside(tmp_path: Path) -> None:
    directory = copy("bad_header", tmp_path)
    salvage(directory)
    assert not (directory / "0000000001.wal").exists()
    assert len(read(directory)) == 4


def test_zero_filled_last_segment_is_an_unused_spare_not_damage(tmp_path: Path) -> None:
    directory = copy("valid", tmp_path)
    (directory / "0000000003.wal").write_bytes(bytes(4096))  # preallocated, header unwritten
    (directory / "0000000004.wal").write_bytes(b"")  # created, not yet allocated
    reader = LogReader(directory)
    assert len(list(reader.records())) == 8
    for spare in reader.reports[-2:]:
        assert spare.unused and not spare.damage and spare.records == 0
    assert not reader.damaged


def test_zero_filled_segment_before_records_is_still_corruption(tmp_path: Path) -> None:
    directory = copy("valid", tmp_path)
    (directory / "0000000003.wal").write_bytes(bytes(4096))  # records follow in 4
    (directory / "0000000004.wal").write_bytes(encode_header(4) + frame(encode_next_id(9)))
    reader = LogReader(directory)
    list(reader.records(strict=False))
    assert [r.index for r in reader.damaged] == [3]
    assert "wrong magic" in reader.damaged[0].damage[0].reason
