"""Fixtures for the differential suite: servers, and a checker comparing transcripts.

The reference is always the real ``beanstalkd`` on PATH.  The candidate is beanpod
(``python -m beanpod serve``) unless ``BEANPOD_DIFF_CANDIDATE=beanstalkd`` is set,
which compares beanstalkd with itself to validate the harness and the sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.differential.harness import Transcript, format_diff, run_pair
from tests.differential.model import Session
from tests.differential.servers import CANDIDATE, KINDS, ServerPool

REFERENCE = "beanstalkd"
Checker = Callable[[Session], None]


@pytest.fixture(scope="session")
def server_pool() -> Iterator[ServerPool]:
    if CANDIDATE not in KINDS:
        raise pytest.UsageError(f"BEANPOD_DIFF_CANDIDATE must be one of {KINDS}")
    pool = ServerPool()
    try:
        yield pool
    finally:
        pool.close()


def report_difference(session: Session, ref: Transcript, cand: Transcript) -> None:
    """Fail the test with both transcripts if they differ."""
    if ref != cand:
        cand_name = CANDIDATE if CANDIDATE != REFERENCE else "beanstalkd#2"
        pytest.fail(format_diff(session, REFERENCE, ref, cand_name, cand), pytrace=False)


def assert_same(session: Session, pool: ServerPool) -> None:
    ref, cand = run_pair(session, pool, REFERENCE, CANDIDATE)
    report_difference(session, ref, cand)


@pytest.fixture
def check(server_pool: ServerPool) -> Checker:
    """``check(session)`` runs the session on both servers and compares byte for byte."""

    def _check(session: Session) -> None:
        assert_same(session, server_pool)

    return _check
