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


# `beanpod serve` switched the collector off at exec (`hold_until_serving`): tune_gc
# switches it back on. Anyone else's setting (a test process's) is left alone.
_held: set[str] = set()


def hold_until_serving() -> None:
    """At exec of `beanpod serve`: no collection until the server serves (`tune_gc`).
    Start-up allocates objects that are nearly all long-lived (the imports; with -b, the
    restored jobs) and little cyclic garbage: the default thresholds ran ~45 collections
    over them before the first reply (15 M instructions of 367 M, docs/performance.md)."""
    gc.disable()
    _held.add("serve")


def tune_gc() -> None:
    """Freeze everything start-up made and set the thresholds above."""
    gc.freeze()  # start-up objects never need collecting
    gc.set_threshold(YOUNG, MIDDLE, FULL)
    if _held:
        _held.clear()
        gc.enable()


def freeze_at_exit() -> None:
    """After the server stopped (the loop closed, the log flushed): the interpreter's exit
    collects every generation, walking each job still queued a few times (~1,850
    instructions a job compiled, seconds for millions) to find no garbage worth finding
    in a process about to end: frozen, they are not walked."""
    gc.freeze()
