"""Suite-wide settings.

- Every test runs with the job state table checked (production leaves it off: see
  beanpod.core.job.TRANSITIONS): the engines the tests build get one as an argument
  (`Engine(MoveCheck())`, `ServerConfig(check_moves=True)` in process), and the
  `beanpod serve` processes the tests start get `--check-moves` (its environment
  variable); a move the table does not declare raises IllegalMove.
- Servers started by tests (as processes, which inherit this environment) run without the
  HTTP listener, so many can run at once without fighting over its default port 11380.
  Tests of the HTTP surface pass `--http 127.0.0.1:0`, which wins over this.
"""

from __future__ import annotations

import os

import pytest

from beanpod import build

pytest_plugins = ["tests.qless_clients"]  # the qless_clients fixture

os.environ["BEANPOD_CHECK_MOVES"] = "1"
os.environ["BEANPOD_HTTP"] = "off"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A compiled module older than its source would test the old code: refuse to run."""
    stale = [] if build.pure_requested() else build.stale()
    if stale:
        pytest.exit("stale compiled modules (run `pip install -e .` again, or set "
                    "BEANPOD_PURE=1): " + "; ".join(stale), returncode=4)  # fmt: skip
