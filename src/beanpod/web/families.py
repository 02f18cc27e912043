"""Metric families as plain data, and a fast writer of Prometheus' text format 0.0.4.

prometheus-client's own writer validates and escapes every sample (~20 µs each); a busy
server has tens of thousands (1,000 tubes), so /metrics writes them here (~1 µs each).
Label values are escaped only when they need it (tube names never do: beanstalkd allows
no quote, backslash or newline in them). `to_client_family` gives the same family as a
prometheus-client object, for registries and for the tests that compare both writers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

Number = int | float


@dataclass
class Family:
    """A gauge or counter: `samples` are (label values, their text `a="x",b="y"`, value).
    Counter names omit the `_total` their samples carry."""

    name: str
    kind: str  # "gauge" or "counter"
    doc: str
    labels: tuple[str, ...] = ()
    samples: list[tuple[Sequence[str], str, Number]] = field(default_factory=list)

    def add(self, values: Sequence[str], value: Number, text: str | None = None) -> None:
        """`text`: the label text, when the caller already has it (one per tube)."""
        if text is None:
            text = label_text(self.labels, values)
        self.samples.append((values, text, value))


@dataclass
class HistogramFamily:
    """`samples` are (label values, cumulative count per bound then +Inf, sum)."""

    name: str
    doc: str
    bounds: tuple[float, ...]  # upper bounds (`le`), in the family's unit
    labels: tuple[str, ...] = ()
    samples: list[tuple[Sequence[str], list[int], float]] = field(default_factory=list)
    kind: str = "histogram"


AnyFamily = Family | HistogramFamily


def render(families: Iterable[AnyFamily]) -> str:
    out: list[str] = []
    for family in families:
        name = family.name + "_total" if family.kind == "counter" else family.name
        out.append(f"# HELP {name} {_escape_doc(family.doc)}\n# TYPE {name} {family.kind}\n")
        if isinstance(family, HistogramFamily):
            _histogram_lines(family, out)
            continue
        for _, text, value in family.samples:
            if text:
                out.append(f"{name}{{{text}}} {_number(value)}\n")
            else:
                out.append(f"{name} {_number(value)}\n")
    return "".join(out)


def _histogram_lines(family: HistogramFamily, out: list[str]) -> None:
    name = family.name
    les = [f'le="{_number(bound)}"' for bound in family.bounds] + ['le="+Inf"']
    for values, counts, total in family.samples:
        pairs = label_text(family.labels, values)
        prefix = "{" + pairs + "," if pairs else "{"
        for le, count in zip(les, counts, strict=True):
            out.append(f"{name}_bucket{prefix}{le}}} {count}\n")
        braced = "{" + pairs + "}" if pairs else ""
        out.append(f"{name}_count{braced} {counts[-1]}\n{name}_sum{braced} {_number(total)}\n")


def label_text(names: Sequence[str], values: Sequence[str]) -> str:
    """`a="x",b="y"`, values escaped as the text format wants."""
    return ",".join(f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True))


def _escape(value: str) -> str:
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def _escape_doc(doc: str) -> str:
    return doc.replace("\\", "\\\\").replace("\n", "\\n")


def _number(value: Number) -> str:
    if isinstance(value, int):
        return str(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


def to_client_family(family: AnyFamily) -> Metric:
    """The same family as prometheus-client's object (for a CollectorRegistry)."""
    if isinstance(family, HistogramFamily):
        histogram = HistogramMetricFamily(family.name, family.doc, labels=family.labels)
        les = [_number(bound) for bound in family.bounds] + ["+Inf"]
        for values, counts, total in family.samples:
            histogram.add_metric(list(values), list(zip(les, counts, strict=True)), total)
        return histogram
    kind = CounterMetricFamily if family.kind == "counter" else GaugeMetricFamily
    metric = kind(family.name, family.doc, labels=family.labels)
    for values, _, value in family.samples:
        metric.add_metric(list(values), value)
    return metric
