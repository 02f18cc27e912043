"""qless engine tests in qless-core's style: `lua(fn, now_seconds, *args)` runs one API
call on an engine driven by a fake clock (the explicit `now`)."""

from __future__ import annotations

from typing import Any

import pytest

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.qless import Qless, QlessError
from beanpod.core.qless.api import call


class Lua:
    def __init__(self) -> None:
        self.engine = Engine(MoveCheck())
        self.q = Qless(self.engine)

    def __call__(self, fn: str, now: float, *args: Any) -> Any:
        return call(self.q, fn, list(args), round(now * 1000))

    def raises(self, pattern: str, fn: str, now: float, *args: Any) -> None:
        with pytest.raises(QlessError, match=pattern):
            self(fn, now, *args)


@pytest.fixture
def lua() -> Lua:
    return Lua()
