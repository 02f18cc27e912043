"""Suite-wide settings.

- Every test runs with the job state table checked (production leaves it off: see
  beanpod.core.job.TRANSITIONS): every engine built in process gets a `MoveCheck`, and
  the `beanpod serve` processes the tests start get `--check-moves` (its environment
  variable); a move the table does not declare raises IllegalMove.
- Servers started by tests (as processes, which inherit this environment) run without the
  HTTP listener, so many can run at once without fighting over its default port 11380.
  Tests of the HTTP surface pass `--http 127.0.0.1:0`, which wins over this.
"""

from __future__ import annotations

import os

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck

_build_engine = Engine.__init__


def _checked_engine(self: Engine, check: MoveCheck | None = None) -> None:
    """Every engine a test builds checks its moves unless the test gives its own check
    (production passes none: `beanpod serve --check-moves` turns it on)."""
    _build_engine(self, MoveCheck() if check is None else check)


Engine.__init__ = _checked_engine  # type: ignore[method-assign]
os.environ["BEANPOD_CHECK_MOVES"] = "1"
os.environ["BEANPOD_HTTP"] = "off"
