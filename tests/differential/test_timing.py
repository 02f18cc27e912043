"""Time-dependent differential sessions, run concurrently to keep the suite fast.

A module-scoped fixture starts every session in a thread pool at once; each test
then waits for its own result and compares the transcripts.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from tests.differential import sessions_timing
from tests.differential.conftest import REFERENCE, report_difference
from tests.differential.harness import Transcript, run_pair
from tests.differential.model import Session
from tests.differential.servers import BEANSTALKD, CANDIDATE, ServerPool

pytestmark = [
    pytest.mark.differential,
    pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd is not on PATH"),
    pytest.mark.timeout(90),
]

SESSIONS: list[Session] = sessions_timing.SESSIONS
Results = dict[str, Future[tuple[Transcript, Transcript]]]


@pytest.fixture(scope="module")
def timed_results(server_pool: ServerPool) -> Iterator[Results]:
    # Start the shared servers first so that the threads do not race to do it.
    server_pool.shared("reference", REFERENCE, None)
    server_pool.shared("candidate", CANDIDATE, None)
    with ThreadPoolExecutor(max_workers=len(SESSIONS)) as pool:
        yield {s.id: pool.submit(run_pair, s, server_pool, REFERENCE, CANDIDATE) for s in SESSIONS}


@pytest.mark.parametrize("session", SESSIONS, ids=[s.id for s in SESSIONS])
def test_timed_session(session: Session, timed_results: Results) -> None:
    ref, cand = timed_results[session.id].result(timeout=60)
    report_difference(session, ref, cand)
