"""`beanpod serve --cluster`: what cannot apply on a cluster's node is refused in one
line, before anything starts (no etcd needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bench.etcd_members import free_port

from beanpod.server.cluster import parse_cluster

URL = "etcd://127.0.0.11:2379,127.0.0.12:2379/jobs"


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "beanpod", "serve", *args],
                          capture_output=True, text=True, timeout=60)  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-s", "1048576"], "--segment-size cannot be used with --cluster"),
        (["-f", "0"], "--fsync-ms cannot be used with --cluster"),
        (["-p", "0"], "--cluster needs -l HOST -p PORT"),
        (["--clock", "manual"], "--clock cannot be used with --cluster"),
    ],
)
def test_options_that_cannot_apply_are_refused(args: list[str], says: str) -> None:
    done = serve("--cluster", URL, "--node-id", "n1", "-l", "127.0.0.11", "-p", "11300", *args)
    assert done.returncode == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr


def test_node_id_is_required_and_needs_cluster() -> None:
    assert "--cluster needs --node-id" in serve("--cluster", URL).stderr
    assert "--node-id needs --cluster" in serve("--node-id", "n1").stderr
    assert "--trim-every needs --cluster" in serve("--trim-every", "1").stderr
    assert "--checkpoint-batches needs --cluster" in serve("--checkpoint-batches", "5").stderr


def test_the_cluster_address_is_parsed() -> None:
    endpoints, name = parse_cluster(URL)
    assert endpoints == ("http://127.0.0.11:2379", "http://127.0.0.12:2379") and name == "jobs"
    for bad in ("http://h:1/x", "etcd://h:1", "etcd://h:1/", "etcd:///x", "etcd://h:1/a/b"):
        with pytest.raises(ValueError, match="expected etcd://"):
            parse_cluster(bad)


def test_a_bad_cluster_address_is_one_line() -> None:
    done = serve("--cluster", "etcd://nowhere", "--node-id", "n1", "-l", "127.0.0.11",
                 "-p", "11300")  # fmt: skip
    assert done.returncode == 2 and "expected etcd://" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_checkpoint_directory_of_another_cluster_is_refused(tmp_path: Path) -> None:
    (tmp_path / "cluster").write_text("other\n")
    port = str(free_port("127.0.0.11"))
    done = serve("--cluster", URL, "--node-id", "n1", "-l", "127.0.0.11", "-p", port,
                 "--http", "off", "-b", str(tmp_path))  # fmt: skip
    assert done.returncode == 2
    assert f"{tmp_path} holds checkpoints of cluster 'other'" in done.stderr
    assert "Traceback" not in done.stderr
