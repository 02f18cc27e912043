"""`beanpod wal verify|dump`, the lock file and start-up errors, as operators see them."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from beanpod.cli import main
from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability.wal import Durability, WalSettings
from tests.support.servers import SubprocessServer

FIXTURES = Path(__file__).parents[2] / "data" / "wal"


def test_verify_accepts_a_valid_log() -> None:
    result = CliRunner().invoke(main, ["wal", "verify", str(FIXTURES / "valid")])
    assert result.exit_code == 0, result.output
    assert "2 jobs" in result.output and "next id 4" in result.output


@pytest.mark.parametrize("name", ["bad_crc", "bad_header", "wrong_version"])
def test_verify_fails_on_corruption(name: str) -> None:
    result = CliRunner().invoke(main, ["wal", "verify", str(FIXTURES / name)])
    assert result.exit_code == 1
    assert "0000000001.wal offset" in result.output


def test_verify_salvage_repairs(tmp_path: Path) -> None:
    directory = shutil.copytree(FIXTURES / "bad_crc", tmp_path / "w")
    result = CliRunner().invoke(main, ["wal", "verify", "--salvage", str(directory)])
    assert result.exit_code == 0, result.output
    assert "rewrote" in result.output


def test_dump_prints_every_record() -> None:
    result = CliRunner().invoke(main, ["wal", "dump", str(FIXTURES / "torn_tail")])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[1].startswith("1:37 put id=1 tube='emails' pri=10")
    assert "2:113 delete id=1" in lines
    assert "torn tail at offset 163" in result.output


def test_second_server_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    first = SubprocessServer(["-b", str(tmp_path), "--workq-port", "off"]).start()
    try:
        second = SubprocessServer(["-b", str(tmp_path), "--workq-port", "off"])
        with pytest.raises(RuntimeError, match="in use by another beanpod"):
            second.start()
        assert second.proc is not None and second.proc.returncode == 10
    finally:
        first.stop()


def test_corrupt_log_stops_start_up_naming_file_and_offset(tmp_path: Path) -> None:
    directory = shutil.copytree(FIXTURES / "bad_crc", tmp_path / "w")
    with pytest.raises(RuntimeError, match=r"0000000001.wal at offset 37"):
        SubprocessServer(["-b", str(directory), "--workq-port", "off"]).start()


def test_torn_tail_is_truncated_with_a_warning(tmp_path: Path) -> None:
    directory = shutil.copytree(FIXTURES / "torn_tail", tmp_path / "w")
    server = SubprocessServer(["-b", str(directory), "--workq-port", "off"]).start()
    server.stop()
    assert any("torn tail at offset 163" in line for line in server.log)
    assert (Path(directory) / "0000000002.wal").stat().st_size == 163


def test_verify_and_dump_read_the_snapshot(tmp_path: Path) -> None:
    """A directory left by a clean shutdown: verify folds the snapshot in as start-up
    would, dump prints its jobs first."""
    directory = tmp_path / "w"

    async def fill() -> None:
        engine = Engine(MoveCheck())
        wal = Durability(engine, WalSettings(directory, snapshot_min_jobs=1))
        wal.open(0)
        conn = engine.connect()
        for _ in range(3):
            engine.put(conn, engine.tube("t"), 7, 0, 1000, b"abc", 0)
        await wal.aclose()

    asyncio.run(fill())
    verify = CliRunner().invoke(main, ["wal", "verify", str(directory)])
    assert verify.exit_code == 0, verify.output
    assert "snapshot  v2  3 jobs  covers segments 1..1" in verify.output
    assert "3 jobs" in verify.output.splitlines()[-1]
    dump = CliRunner().invoke(main, ["wal", "dump", str(directory)])
    lines = [line for line in dump.output.splitlines() if line.startswith("snapshot:")]
    assert (
        lines[0]
        == "snapshot:0 job id=1 tube='t' state=ready pri=7 delay=0 ttr=1000 file=1 body_bytes=3"
    )
    assert len(lines) == 3
