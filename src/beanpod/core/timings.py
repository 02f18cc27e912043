"""How long jobs wait and run, per tube, as fixed-bucket histograms (for /metrics).

Wait: put to first reserve. Run: reserve to delete (by the reserving connection). One
bisect and two adds per observation, O(1) per job. Off unless the server turns it on
(the engine's `timings` is None), so the hot path pays one attribute test without it.
Tubes beyond `max_tubes` share one histogram per kind, labelled OTHER.
"""

from __future__ import annotations

from bisect import bisect_left

# Upper bounds in ms (Prometheus `le`, inclusive), from 5 ms to an hour.
BOUNDS_MS: tuple[int, ...] = (
    5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000,
    3600000,
)  # fmt: skip
OTHER = "_other"


class Histogram:
    __slots__ = ("buckets", "sum_ms")

    def __init__(self) -> None:
        self.buckets = [0] * (len(BOUNDS_MS) + 1)  # per bound, then +Inf (not cumulative)
        self.sum_ms = 0

    def observe(self, ms: int) -> None:
        self.buckets[bisect_left(BOUNDS_MS, ms)] += 1
        self.sum_ms += ms

    def cumulative(self) -> list[int]:
        """Counts at or below each bound, then the total (Prometheus' shape)."""
        total, out = 0, []
        for count in self.buckets:
            total += count
            out.append(total)
        return out


class JobTimings:
    def __init__(self, max_tubes: int = 500) -> None:
        self.max_tubes = max_tubes
        self.waits: dict[str, Histogram] = {}
        self.runs: dict[str, Histogram] = {}

    def waited(self, tube: str, ms: int) -> None:
        hist = self.waits.get(tube)
        if hist is None:
            hist = _new(self.waits, tube, self.max_tubes)
        hist.observe(ms)

    def ran(self, tube: str, ms: int) -> None:
        hist = self.runs.get(tube)
        if hist is None:
            hist = _new(self.runs, tube, self.max_tubes)
        hist.observe(ms)


def _new(hists: dict[str, Histogram], tube: str, max_tubes: int) -> Histogram:
    """A histogram for a tube seen for the first time, or the shared OTHER one when
    `max_tubes` tubes already have their own."""
    if len(hists) >= max_tubes:
        other = hists.get(OTHER)
        if other is None:
            other = hists[OTHER] = Histogram()
        return other
    hist = hists[tube] = Histogram()
    return hist
