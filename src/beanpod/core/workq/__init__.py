"""Workq job features on the engine (an engine extension, built on its public moves and
queries). See docs/workq.md for the model and the state mapping.

The package exports the words the protocol layer speaks in: the refusals, the wait types
and the `Workq` operations themselves."""

from beanpod.core.workq.ops import Workq
from beanpod.core.workq.waits import (
    DRAINING,
    DUPLICATE_JOB,
    DUPLICATE_RESULT,
    NO_ROOM,
    NOT_FOUND,
    OUT_OF_MEMORY,
    TIMEOUT,
    DeliverResult,
    Result,
    Wait,
    WaitOutcome,
    WorkqError,
)

__all__ = [
    "DRAINING", "DUPLICATE_JOB", "DUPLICATE_RESULT", "NOT_FOUND", "NO_ROOM", "OUT_OF_MEMORY",
    "TIMEOUT",
    "DeliverResult", "Result", "Wait", "WaitOutcome", "Workq", "WorkqError",
]  # fmt: skip
