"""TimerHeap (run + heap, lazy invalidation) against a simple model."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from beanpod.core.timers import TimerHeap


class Target:
    __slots__ = ("name", "timer")

    def __init__(self, name: int) -> None:
        self.name = name
        self.timer: Any = None


OPS = st.lists(
    st.tuples(st.sampled_from(["arm", "cancel", "pop"]), st.integers(0, 7), st.integers(0, 40)),
    max_size=150,
)


@settings(max_examples=300)
@given(OPS)
def test_fires_in_time_then_arming_order(ops: list[tuple[str, int, int]]) -> None:
    timers = TimerHeap()
    targets = [Target(i) for i in range(8)]
    model: dict[int, tuple[int, int]] = {}  # target -> (when, arming order)
    order = 0
    for op, which, when in ops:
        target = targets[which]
        if op == "arm":
            timers.arm(when, 1, target)
            model[which] = (when, order)
            order += 1
        elif op == "cancel":
            timers.cancel(target)
            model.pop(which, None)
        else:
            due = sorted((w, o, t) for t, (w, o) in model.items() if w <= when)
            entry = timers.pop_due(when)
            assert (entry[3].name if entry else None) == (due[0][2] if due else None)
            if due:
                del model[due[0][2]]
                assert targets[due[0][2]].timer is None
        assert len(timers) == len(model)
        soonest = min((w for w, _ in model.values()), default=None)
        assert timers.next_due() == soonest


def test_dead_entries_are_compacted() -> None:
    timers = TimerHeap()
    targets = [Target(i) for i in range(10_000)]
    for i, target in enumerate(targets):
        timers.arm(10_000 - i, 1, target)  # falling times: the heap
        timers.arm(20_000 + i, 1, target)  # rising: the run
    for target in targets[:9_990]:
        timers.cancel(target)
    assert len(timers) == 10 and timers.stored < 5_000
    fired = [timers.pop_due(10**9) for _ in range(10)]
    assert [e[3].name for e in fired if e] == list(range(9_990, 10_000))


def test_cancels_at_either_end_of_the_run_leave_nothing_behind() -> None:
    """TTRs of one length cancelled in reservation order (FIFO) or newest first (LIFO),
    as reserve+delete does, are removed at once instead of left for lazy deletion."""
    timers = TimerHeap()
    targets = [Target(i) for i in range(10)]
    for when, target in enumerate(targets):
        timers.arm(when, 1, target)
    for target in targets[:4]:  # oldest first
        timers.cancel(target)
    for target in reversed(targets[6:]):  # newest first
        timers.cancel(target)
    assert timers.stored == 2 and len(timers) == 2
    timers.cancel(targets[4])
    timers.arm(5, 1, targets[5])  # re-armed: its old entry is dead, in the middle
    assert len(timers) == 1 and timers.next_due() == 5
