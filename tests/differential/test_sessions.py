"""Differential sessions that do not depend on wall time (run one after another)."""

from __future__ import annotations

import pytest

from tests.differential import (
    sessions_peek_kick,
    sessions_put,
    sessions_stats_parsing,
    sessions_tubes,
    sessions_worker,
)
from tests.differential.conftest import Checker
from tests.differential.model import Session, check_unique
from tests.differential.servers import BEANSTALKD

pytestmark = [
    pytest.mark.differential,
    pytest.mark.skipif(BEANSTALKD is None, reason="beanstalkd is not on PATH"),
    pytest.mark.timeout(60),
]

SESSIONS: list[Session] = check_unique(
    sessions_put.SESSIONS
    + sessions_worker.SESSIONS
    + sessions_tubes.SESSIONS
    + sessions_peek_kick.SESSIONS
    + sessions_stats_parsing.SESSIONS
)


@pytest.mark.parametrize("session", SESSIONS, ids=[s.id for s in SESSIONS])
def test_session(session: Session, check: Checker) -> None:
    check(session)
