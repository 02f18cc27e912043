"""The server's clocks: a manual clock moves only when told, never backwards."""

from __future__ import annotations

import pytest

from beanpod.server.clock import Clock, ManualClock, make_clock


def test_manual_clock_stands_still_until_moved() -> None:
    clock = ManualClock(1_000)
    assert clock.now() == 1_000
    assert clock.advance(250) == 1_250
    assert clock.now() == 1_250


def test_manual_clock_never_moves_backwards() -> None:
    clock = ManualClock(5_000)
    assert clock.move_to(4_000) == 5_000
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)
    assert clock.now() == 5_000


def test_manual_clock_tells_its_listener_of_each_move_forward() -> None:
    clock = ManualClock(0)
    moves: list[int] = []
    clock.on_move = moves.append
    clock.advance(10)
    clock.move_to(5)  # the past: no move, no call
    clock.move_to(30)
    clock.advance(0)  # no move
    assert moves == [10, 30]


def test_make_clock_names() -> None:
    assert not make_clock("real").manual
    assert isinstance(make_clock("manual"), ManualClock)
    assert type(make_clock("real")) is Clock
    with pytest.raises(ValueError, match="unknown clock"):
        make_clock("fast")


def test_a_manual_clock_may_start_at_a_given_second() -> None:
    assert make_clock("manual:0").now() == 0
    assert make_clock("manual:1700000000.5").now() == 1_700_000_000_500
    for bad in ("manual:", "manual:x", "manual:-1", "manual:inf", "manual:nan"):
        with pytest.raises(ValueError, match="starts at seconds"):
            make_clock(bad)
    with pytest.raises(ValueError, match="unknown clock"):
        make_clock("real:0")
