"""A journal that keeps the named states (STATE records) as the WAL would, so engine
tests can restart a Qless from them (jobs are not kept: tests restore states only)."""

from __future__ import annotations

import json
from typing import Any

from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.core.qless import Qless


class StateJournal:
    def __init__(self) -> None:
        self.state: dict[str, bytes] = {}
        self.writes: list[str] = []  # state keys in the order they were recorded

    def room(self, nbytes: int) -> bool:
        return True

    def record_put(self, job: Any) -> None: ...
    def record_update(self, job: Any) -> None: ...
    def record_delete(self, job: Any) -> None: ...
    def record_pause(self, tube: Any) -> None: ...

    def record_state(self, key: str, value: bytes) -> None:
        self.writes.append(key)
        if value:
            self.state[key] = value
        else:
            self.state.pop(key, None)

    def states(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, v in self.state.items() if k.startswith(prefix)}

    def value(self, key: str) -> Any:
        return json.loads(self.state[key])


def restarted(journal: StateJournal, now: int = 0) -> Qless:
    """A fresh engine and Qless that restore from `journal`'s states."""
    engine = Engine(MoveCheck())
    engine.journal = journal
    q = Qless(engine)
    q.reattach(now)
    return q
