"""qless job features on the engine: an extension built only on the engine's public moves
and queries (docs/architecture.md). See docs/qless.md for the model and the state mapping.

Modules import one way: names/ext/errors at the bottom, moves and throttles above them,
the feature modules (put, pop, complete, ...) above those, store.Qless (the state, which
wires the engine hooks) and api (the function table) on top. No function-level imports."""

from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.store import Qless

__all__ = ["Qless", "QlessError"]
