"""The collector of `beanpod serve`: off from exec until the server serves, then on with
the server's thresholds, everything start-up made frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from beanpod.server import gc_policy


@pytest.fixture
def restored() -> Iterator[None]:
    before, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)
    (gc.enable if enabled else gc.disable)()


@pytest.mark.usefixtures("restored")
def test_serving_switches_the_held_collector_back_on() -> None:
    gc_policy.hold_until_serving()
    assert not gc.isenabled()
    gc_policy.tune_gc()
    assert gc.isenabled()
    assert gc.get_threshold() == (gc_policy.YOUNG, gc_policy.MIDDLE, gc_policy.FULL)
    assert gc.get_freeze_count() > 0


@pytest.mark.usefixtures("restored")
def test_a_collector_switched_off_by_someone_else_stays_off() -> None:
    """In-process servers (beanpod.testing) leave the test process's setting alone."""
    gc.disable()
    gc_policy.tune_gc()
    assert not gc.isenabled()


@pytest.mark.usefixtures("restored")
def test_at_exit_what_serving_made_is_frozen_too() -> None:
    """The jobs queued when the server stops are not walked by the exit's collections."""
    gc_policy.tune_gc()
    made = [[i] for i in range(1000)]  # tracked objects made while serving
    before = gc.get_freeze_count()
    gc_policy.freeze_at_exit()
    assert gc.get_freeze_count() >= before + len(made)
