"""The checkpoint's builder (`python -m beanpod.durability.snapshot_builder DIR`) on its own:
what it refuses to write, and how it says so."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability import checkpoint, snapshot_builder
from beanpod.durability.wal import Durability, WalSettings
from beanpod.storage import snapshot as snapshot_file
from beanpod.storage.segments import list_segments

NOW = 1_700_000_000_000


def logged(directory: Path, jobs: int) -> dict[int, int]:
    """A directory with `jobs` puts (and a delete of every fourth), sealed: what a
    checkpoint started then would cover."""

    async def scenario() -> dict[int, int]:
        engine = Engine(MoveCheck())
        wal = Durability(engine, WalSettings(directory, segment_size=1 << 13))
        await wal.open_async(NOW)
        conn = engine.connect()
        tube = engine.tube("default")
        for i in range(jobs):
            engine.put(conn, tube, i % 7, 0, 60_000, b"b%d" % i, NOW)
        for job_id in list(engine.jobs)[::4]:
            engine.delete(conn, job_id, NOW)
        await asyncio.sleep(0)  # written
        covered = wal.writer.seal()
        await wal.commit.aclose()
        wal.writer.close()
        assert wal.lock is not None
        wal.lock.release()
        return covered

    return asyncio.run(scenario())


def run_builder(directory: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "beanpod.durability.snapshot_builder", str(directory)],
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_it_writes_the_snapshot_of_what_it_covers_and_prints_jobs_and_size(
    tmp_path: Path,
) -> None:
    covered = logged(tmp_path, 200)
    got = run_builder(tmp_path, "".join(f"{i} {end}\n" for i, end in covered.items()))
    assert got.returncode == 0, got.stderr
    jobs, size = map(int, got.stdout.split())
    assert jobs == 150
    snap = snapshot_file.read(tmp_path)
    assert snap is not None and snap.covered == covered and size == len(snap.data)
    snap.close()


def test_a_segment_that_does_not_end_where_it_was_sealed_writes_nothing(tmp_path: Path) -> None:
    covered = logged(tmp_path, 200)
    last = max(covered)
    covered[last] += 100  # records the server would have sealed but the file lacks
    with pytest.raises(snapshot_builder.BuildFailed, match=f"segment {last} ends at offset"):
        snapshot_builder.build(tmp_path, covered)
    assert not snapshot_file.path_of(tmp_path).exists()


def test_a_damaged_record_fails_the_build_naming_the_segment(tmp_path: Path) -> None:
    covered = logged(tmp_path, 200)
    first = list_segments(tmp_path)[0][1]
    data = bytearray(first.read_bytes())
    data[28] ^= 0xFF  # the first record's first payload byte (its header is 20, framing 8)
    first.write_bytes(bytes(data))
    got = run_builder(tmp_path, "".join(f"{i} {end}\n" for i, end in covered.items()))
    assert got.returncode == 1
    assert f"BuildFailed: corrupt WAL segment {first} at offset 20" in got.stderr
    assert not snapshot_file.path_of(tmp_path).exists()


def test_it_gives_up_before_the_rename_when_told_to(tmp_path: Path) -> None:
    covered = logged(tmp_path, 50)
    assert snapshot_builder.build(tmp_path, covered, lambda: False) == (37, 0)
    assert not snapshot_file.path_of(tmp_path).exists()
    assert not (tmp_path / snapshot_file.TMP_NAME).exists()


@pytest.mark.parametrize(("argv", "stdin", "status", "said"), [
    ([], "", 2, "usage: python -m beanpod.durability.snapshot_builder DIR"),
    (["DIR"], "", 1, "ValueError: no segment to cover"),
    (["DIR"], "3\n", 1, "ValueError: not enough values to unpack"),
])  # fmt: skip
def test_bad_invocations_exit_non_zero_saying_why(
    tmp_path: Path, argv: list[str], stdin: str, status: int, said: str
) -> None:
    got = subprocess.run(
        [sys.executable, "-m", "beanpod.durability.snapshot_builder",
         *[str(tmp_path) if a == "DIR" else a for a in argv]],
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert got.returncode == status
    assert said in got.stderr


@pytest.mark.parametrize(("membership", "files", "room"), [
    ("0::/app\n", {"app/memory.max": "1000\n", "app/memory.current": "400\n"}, 600),
    ("0::/app\n", {"app/memory.max": "max\n", "app/memory.current": "400\n"}, None),
    ("0::/host/path\n", {"memory.max": "1000\n", "memory.current": "900\n"}, 100),
    ("4:memory:/c1\n0::/\n", {"memory/c1/memory.limit_in_bytes": "2048\n",
                              "memory/c1/memory.usage_in_bytes": "48\n"}, 2000),
    ("4:memory:/c1\n", {"memory/c1/memory.limit_in_bytes": "9223372036854771712\n",
                        "memory/c1/memory.usage_in_bytes": "48\n"}, None),
    ("3:cpu:/x\n", {}, None),
])  # fmt: skip
def test_the_memory_cgroup_bounds_what_a_builder_may_take(
    tmp_path: Path, membership: str, files: dict[str, str], room: int | None
) -> None:
    """cgroup v2 (its own path, or the container's root), v1's memory controller, no
    limit: MemAvailable alone would let a builder get a container OOM-killed."""
    (tmp_path / "cgroup").write_text(membership)
    for name, text in files.items():
        (tmp_path / "fs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fs" / name).write_text(text)
    assert checkpoint.cgroup_room(tmp_path / "cgroup", tmp_path / "fs") == room


def test_the_builder_is_the_out_of_memory_killers_first_choice(tmp_path: Path) -> None:
    script = ("from beanpod.durability import snapshot_builder as b; b.lower_priority(); "
              "print(open('/proc/self/oom_score_adj').read())")  # fmt: skip
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=True)  # fmt: skip
    assert got.stdout.strip() == "1000"
