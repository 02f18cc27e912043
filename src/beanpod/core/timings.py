"""How long jobs wait and run, per tube, as fixed-bucket histograms (for /metrics).

Wait: put to first reserve. Run: reserve to delete (by the reserving connection). The
engine hands each time to its tube's `Tally` (compiled, like the engine): a time within
the first bound (5 ms: most jobs of a busy queue) is two integer adds, no object; a longer
one is appended to a pending list, which `fold()` bins (a sort and 16 bisections) at each
scrape and about once a second (the server's timer), so pending lists stay short.
Histograms live here by tube name, so they outlive a tube that empties and comes back. Off
unless the server turns it on (`Engine.keep_timings`): the hot path then pays one
attribute test. Tubes beyond `max_tubes` share OTHER's.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from beanpod.core.tube import Tube

# Upper bounds in ms (Prometheus `le`, inclusive), from 5 ms to an hour: few, since each
# is a series per tube.
BOUNDS_MS: tuple[int, ...] = (
    5, 50, 100, 500, 1000, 5000, 30000, 60000, 300000, 3600000,
)  # fmt: skip
OTHER = "_other"
FIRST_BOUND_MS: Final = 5  # BOUNDS_MS[0]: a Tally counts times up to it without a list


class Tally:
    """The times a histogram observed since its last fold: how many were within the first
    bound and their sum (plain integers: no object per job), and the longer ones."""

    __slots__ = ("fast", "fast_ms", "slow")

    def __init__(self) -> None:
        self.fast = 0
        self.fast_ms = 0
        self.slow: list[int] = []  # fold() empties it in place

    def add(self, ms: int) -> None:
        """Observe one time (the engine's hot path, when it keeps timings)."""
        if ms <= FIRST_BOUND_MS:
            self.fast += 1
            self.fast_ms += ms
        else:
            self.slow.append(ms)

    def __len__(self) -> int:
        return self.fast + len(self.slow)


class Histogram:
    """Counts per bucket (per bound, then +Inf; not cumulative), their sum in ms, and the
    times observed since the last fold."""

    __slots__ = ("buckets", "pending", "sum_ms")

    def __init__(self) -> None:
        self.buckets = [0] * (len(BOUNDS_MS) + 1)
        self.sum_ms = 0
        self.pending = Tally()  # the engine adds; fold() empties it

    def fold(self) -> None:
        pending = self.pending
        if pending.fast:
            self.buckets[0] += pending.fast
            self.sum_ms += pending.fast_ms
            pending.fast = pending.fast_ms = 0
        self._fold_slow(pending.slow)

    def _fold_slow(self, pending: list[int]) -> None:
        if not pending:
            return
        # Sorted (in C, fast for ints), each bucket is the gap between two bisections:
        # 17 steps per fold, whatever the number of times.
        pending.sort()
        buckets, below = self.buckets, 0
        for index, bound in enumerate(BOUNDS_MS):
            upto = bisect_right(pending, bound)
            buckets[index] += upto - below
            below = upto
        buckets[-1] += len(pending) - below
        self.sum_ms += sum(pending)
        pending.clear()

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

    def attach(self, tube: Tube) -> None:
        """Give `tube` the pending lists of its wait and run histograms (OTHER's past the
        limit); the engine calls this for every tube while it keeps timings."""
        tube.wait_times = _for(self.waits, tube.name, self.max_tubes).pending
        tube.run_times = _for(self.runs, tube.name, self.max_tubes).pending

    def fold(self) -> None:
        """Bring every histogram up to date (scrapes and a periodic timer call this)."""
        for hists in (self.waits, self.runs):
            for hist in hists.values():
                hist.fold()


def _for(hists: dict[str, Histogram], name: str, max_tubes: int) -> Histogram:
    hist = hists.get(name)
    if hist is not None:
        return hist
    if len(hists) >= max_tubes:
        name = OTHER
        if name in hists:
            return hists[name]
    hist = hists[name] = Histogram()
    return hist
