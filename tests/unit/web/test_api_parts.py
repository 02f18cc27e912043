"""The API's building blocks: body previews, confirmation tokens, parameter checks,
sliced runs and the throughput ring."""

from __future__ import annotations

import asyncio
import base64

import pytest

from beanpod.web.api import chunks, params, views
from beanpod.web.api.confirm import Confirmations
from beanpod.web.errors import ApiError
from beanpod.web.ui.throughput import Throughput


def test_preview_is_text_or_base64() -> None:
    assert views.body_preview(b"hello\nworld") == {
        "size": 11, "truncated": False, "encoding": "utf-8", "data": "hello\nworld"}  # fmt: skip
    binary = views.body_preview(b"\x00\x01\xff" * 10, 4)
    assert (binary["encoding"], binary["truncated"]) == ("base64", True)
    assert base64.b64decode(binary["data"]) == b"\x00\x01\xff\x00"
    # a cut inside a multi-byte character drops the partial character, stays text
    euro = views.body_preview("€€".encode(), 4)
    assert (euro["encoding"], euro["data"]) == ("utf-8", "€")
    # invalid UTF-8 that is not at the cut is binary
    assert views.body_preview(b"ab\xe2cd", 10)["encoding"] == "base64"
    assert views.body_preview(b"\x1b[31mred", 100)["encoding"] == "base64"  # control bytes


def test_confirmation_tokens_bind_action_and_selection() -> None:
    confirm = Confirmations(b"k" * 32)
    what = {"tube": "t", "state": "buried", "contains": None, "limit": None, "to": None}
    token = confirm.issue("kick", what)
    assert confirm.check(token, "kick", what)
    assert not confirm.check(token, "delete", what)
    assert not confirm.check(token, "kick", {**what, "limit": 5})
    assert not Confirmations(b"x" * 32).check(token, "kick", what)
    expired = "1." + token.split(".")[1]
    for bad in (expired, "nonsense", 7, None, token + "0"):
        assert not confirm.check(bad, "kick", what)


@pytest.mark.parametrize(
    ("raw", "ok"),
    [(5, True), ("5", True), ("-1", False), ("x", False), (True, False), (1.5, False),
     ("9" * 30, False), (None, False)],
)  # fmt: skip
def test_integer_parameters(raw: object, ok: bool) -> None:
    if ok:
        assert params.integer(raw, "n", 0, 10) == 5
    else:
        with pytest.raises(ApiError) as err:
            params.integer(raw, "n", 0, 10)
        assert err.value.status == 400


def test_filters_refuse_unknown_fields_states_and_long_needles() -> None:
    flt = params.job_filter("t", {"state": "delayed", "contains": "ab", "limit": 3},
                            ("buried", "delayed"))  # fmt: skip
    assert (flt.state, flt.contains, flt.limit) == ("delayed", b"ab", 3)
    assert params.job_filter("t", {}, ("buried", "delayed")).state == "buried"
    for doc, status in (({"state": "ready"}, 400), ({"x": 1}, 400), ({"contains": 5}, 400),
                        ({"contains": "a" * 2000}, 413)):  # fmt: skip
        with pytest.raises(ApiError) as err:
            params.job_filter("t", doc, ("buried", "delayed"))
        assert err.value.status == status


def test_sliced_run_yields_and_stops_on_none() -> None:
    turns = []

    def step(item: int) -> bool | None:
        return None if item == 500 else item % 2 == 0

    async def main() -> int:
        return await chunks.run_sliced(range(1000), step, lambda: turns.append(1))

    assert asyncio.run(main()) == 250  # evens below 500
    assert turns  # after_slice ran at least once (the last slice)


def test_throughput_rates_between_samples() -> None:
    totals, clock = [(0, 0, 0)], [1000.0]
    meter = Throughput(lambda: totals[-1], interval=10, clock=lambda: clock[-1])
    totals.append((100, 50, 20))
    clock.append(1010.0)
    meter.sample()
    _, put, reserve, delete = meter.points[-1]
    assert (round(put), round(reserve), round(delete)) == (10, 5, 2)
    doc = meter.as_json()
    assert doc["totals"] == {"put": 100, "reserve": 50, "delete": 20}
    assert doc["series"] == ["put", "reserve", "delete"]


def test_async_pages_walk_every_match_once_in_either_order() -> None:
    from beanpod.core import query
    from beanpod.core.engine import Engine
    from beanpod.core.job import MoveCheck
    from beanpod.web.api import pages

    engine = Engine(MoveCheck())
    conn = engine.connect()
    tube = engine.use(conn, "t")
    ids = [engine.put(conn, tube, 5, 0, 1000, b"x%d" % i, 0).id for i in range(40)]
    flt = query.JobFilter("t", "ready", contains=b"1")
    expected = [i for n, i in enumerate(ids) if b"1" in b"x%d" % n]

    async def walk(newest: bool) -> list[int]:
        seen: list[int] = []
        after = None
        while True:
            page, after = await pages.job_page(engine, flt, 0, after, newest, 3)
            seen += [view.id for view in page]
            if after is None:
                return seen

    assert asyncio.run(walk(False)) == expected
    assert asyncio.run(walk(True)) == expected[::-1]
