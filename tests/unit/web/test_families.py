"""The fast text writer says exactly what prometheus-client's own writer says."""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from beanpod.web.families import AnyFamily, Family, HistogramFamily, render, to_client_family


def sample_set(text: str) -> set[tuple[str, tuple[tuple[str, str], ...], float | str]]:
    found = set()
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            value = "nan" if math.isnan(s.value) else s.value
            found.add((s.name, tuple(sorted(s.labels.items())), value))
    return found


def families() -> list[AnyFamily]:
    gauge = Family("g", "gauge", 'a "doc"\nwith a break \\ slash', ("tube", "state"))
    gauge.add(("default", "ready"), 3)
    gauge.add(('we"ird\\na\nme', "buried"), 0.25)
    gauge.add(("inf", "x"), math.inf)
    gauge.add(("nan", "x"), math.nan)
    counter = Family("c", "counter", "counts", ("command",))
    counter.add(("put",), 12345678901234)
    single = Family("one", "gauge", "no labels")
    single.add((), -1.5)
    hist = HistogramFamily("h_seconds", "times", (0.005, 0.5, 60.0), ("tube",))
    hist.samples.append((("a",), [1, 4, 4, 9], 12.75))
    bare = HistogramFamily("f_seconds", "fsync", (0.001, 1.0))
    bare.samples.append(((), [0, 2, 2], 0.5))
    return [gauge, counter, single, hist, bare]


def test_fast_writer_matches_prometheus_client() -> None:
    class Fixed(Collector):
        def collect(self):  # type: ignore[no-untyped-def]
            return [to_client_family(f) for f in families()]

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())
    theirs = generate_latest(registry).decode()
    ours = render(families())
    assert sample_set(ours) == sample_set(theirs)
    help_lines = [line for line in ours.splitlines() if line.startswith("# ")]
    assert help_lines == [line for line in theirs.splitlines() if line.startswith("# ")]
    assert 'c_total{command="put"} 12345678901234\n' in ours
    assert 'h_seconds_bucket{tube="a",le="0.005"} 1\n' in ours
    assert "f_seconds_count 2\n" in ours
