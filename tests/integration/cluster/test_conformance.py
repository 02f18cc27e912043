"""The beanstalkd conformance suite (tests/differential's sessions, byte for byte against
beanstalkd 1.12) through HAProxy to a three-node cluster: real etcd x3, real nodes, the
shipped HAProxy config. One cluster per `-z` for the whole module (conformance_target.py
says how sessions that want a fresh server run on it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from bench.etcd_members import EtcdMembers

from tests.differential.conftest import report_difference
from tests.differential.harness import Transcript
from tests.differential.model import Session
from tests.differential.servers import BEANSTALKD
from tests.differential.sessions_timing import SESSIONS as TIMED
from tests.differential.test_sessions import SESSIONS as UNTIMED
from tests.integration.cluster.conformance_target import Pair, start_pair
from tests.integration.cluster.marks import needs_etcd

pytestmark = [
    needs_etcd,
    pytest.mark.differential,
    pytest.mark.skipif(shutil.which("haproxy") is None,
                       reason="haproxy is not on PATH (Debian: apt-get install haproxy)"),
    pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd is not on PATH"),
]  # fmt: skip

FRESH = [s for s in UNTIMED + TIMED if s.fresh]
SHARED = [s for s in UNTIMED if not s.fresh]
SHARED_TIMED = [s for s in TIMED if not s.fresh]


class Pairs:
    """One pair per -z, started on first use."""

    def __init__(self, etcd: EtcdMembers, workdir: Path) -> None:
        self.etcd = etcd
        self.workdir = workdir
        self.pairs: dict[int | None, Pair] = {}

    def __call__(self, z: int | None) -> Pair:
        if z not in self.pairs:
            self.pairs[z] = start_pair(self.etcd, self.workdir / f"z{z}", z)
        return self.pairs[z]

    def stop(self) -> None:
        for pair in self.pairs.values():
            pair.stop()


@pytest.fixture(scope="module")
def pairs(etcd: EtcdMembers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pairs]:
    started = Pairs(etcd, tmp_path_factory.mktemp("conformance"))
    yield started
    started.stop()


def check(pairs: Pairs, session: Session) -> None:
    report_difference(session, *pairs(session.max_job_size).run(session))


# the fresh sessions first, in one order on both servers of a pair (see conformance_target)
@pytest.mark.parametrize("session", FRESH, ids=[s.id for s in FRESH])
def test_fresh_session(session: Session, pairs: Pairs) -> None:
    check(pairs, session)


@pytest.mark.parametrize("session", SHARED, ids=[s.id for s in SHARED])
def test_session(session: Session, pairs: Pairs) -> None:
    check(pairs, session)


Results = dict[str, Future[tuple[Transcript, Transcript]]]


@pytest.fixture(scope="module")
def timed_results(pairs: Pairs) -> Iterator[Results]:
    """The timed sessions all at once (as tests/differential/test_timing.py runs them)."""
    pair = pairs(None)
    with ThreadPoolExecutor(max_workers=len(SHARED_TIMED)) as pool:
        yield {s.id: pool.submit(pair.run, s) for s in SHARED_TIMED}


@pytest.mark.timeout(90)
@pytest.mark.parametrize("session", SHARED_TIMED, ids=[s.id for s in SHARED_TIMED])
def test_timed_session(session: Session, timed_results: Results, pairs: Pairs) -> None:
    """A timed session that differs is run once more, alone: its TTR and timeout windows
    are a second or two, and a reply held for the etcd commit on a loaded machine (tens of
    ms) can land across one of their edges; a real difference shows again."""
    ref, cand = timed_results[session.id].result(timeout=60)
    if ref != cand:
        ref, cand = pairs(None).run(session)
    report_difference(session, ref, cand)
