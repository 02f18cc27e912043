"""core/qless/flush.py: nothing of qless is left, and the configuration is back to its
defaults (what qless-py's suite expects after Redis's FLUSHDB)."""

from __future__ import annotations

from beanpod.core.engine import Engine
from beanpod.core.qless import Qless
from beanpod.core.qless.api import call
from beanpod.core.qless.config import DEFAULTS
from beanpod.core.qless.flush import flush

NOW = 1_700_000_000_000


def test_flush_forgets_everything() -> None:
    q = Qless(Engine())
    calls = [
        ("put", ["", "q", "j1", "K", "{}", 0]),
        ("put", ["", "q", "j2", "K", "{}", 0, "depends", '["j1"]', "tags", '["t"]']),
        ("pop", ["q", "w", 1]),
        ("complete", ["j1", "w", "q", "{}"]),
        ("recur", ["q", "r1", "K", "{}", "interval", 60, 0]),
        ("put", ["", "q", "j3", "K", "{}", 0]),
        ("pop", ["q", "w", 5]),
        ("fail", ["j3", "w", "g", "m"]),
        ("config.set", ["heartbeat", 5]),
        ("throttle.set", ["t1", 3]),
        ("track", ["track", "j2"]),
        ("put", ["", "q2", "j4", "K", "{}", 10]),
    ]
    for fn, args in calls:
        call(q, fn, args, NOW)
    assert call(q, "failed", [], NOW) == {"g": 1}
    flush(q, NOW + 1, None)
    assert not q.engine.jobs and not q.jobs and not q.completed
    for fn, args, empty in [("queues", [], []), ("workers", [], []), ("failed", [], {}),
                            ("tag", ["top"], []), ("track", [], {"jobs": [], "expired": []}),
                            ("jobs", ["complete"], []), ("config.get", [], DEFAULTS)]:  # fmt: skip
        assert call(q, fn, args, NOW + 2) == empty
    assert call(q, "throttle.get", ["t1"], NOW + 2) == {"id": "t1", "maximum": 0}
