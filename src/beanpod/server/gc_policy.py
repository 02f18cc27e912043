"""How the cyclic garbage collector runs in the server.

A queue server holds up to millions of long-lived jobs, and every job is a GC-tracked
object (it refers to its tube, connection and extras). With CPython's default thresholds
(700, 10, 10) the collector walked each new job several times and, every time the job
count grew by a quarter, walked *all* of them: a full pass over a million jobs pauses
the server for a few hundred milliseconds, and collection took ~2 µs of a ~6.5 µs
pipelined put (measured with gc.callbacks over 1M puts).

Jobs are freed by reference counting when deleted; the collector is only needed for
the few short-lived reference cycles (a closed connection's session and transport, an
exception's traceback). So young generations are collected in larger steps, and a full
pass happens only after very many allocations: jobs are then walked about twice in
their life, not at every growth step (0.5 µs per put).
"""

from __future__ import annotations

import gc

YOUNG = 20_000  # allocations between young collections (CPython: 700)
MIDDLE = 10  # young collections per middle collection (CPython: 10)
FULL = 10_000  # middle collections per full pass (CPython: 10): ~2e9 allocations


def early_thresholds() -> None:
    """At exec of `beanpod serve`: the thresholds below at once, so the start-up's imports
    (~100,000 allocations, mostly long-lived) are not walked by ~45 young collections
    (3-7 ms before the first reply); `tune_gc` freezes what start-up made later."""
    gc.set_threshold(YOUNG, MIDDLE, FULL)


def tune_gc() -> None:
    """Freeze everything start-up made and set the thresholds above."""
    gc.freeze()  # start-up objects never need collecting
    gc.set_threshold(YOUNG, MIDDLE, FULL)
