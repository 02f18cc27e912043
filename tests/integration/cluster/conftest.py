from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.cluster_nodes import Nodes
from bench.etcd_members import EtcdMembers

_names = itertools.count()


@pytest.fixture(scope="package")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdMembers]:
    members = EtcdMembers(tmp_path_factory.mktemp("etcd")).start()
    yield members
    members.stop()


@pytest.fixture
def cluster(etcd: EtcdMembers, tmp_path: Path) -> Iterator[Nodes]:
    """Three nodes of a fresh cluster (its own name in the shared etcd)."""
    nodes = Nodes(etcd.endpoints, f"t{next(_names)}-{tmp_path.name}", tmp_path).start()
    yield nodes
    nodes.stop()
