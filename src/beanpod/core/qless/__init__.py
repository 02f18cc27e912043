"""qless job features on the engine (a core extension: same layer as the engine, uses
its internals). See docs/qless.md for the model and the state mapping."""

from beanpod.core.qless.errors import QlessError
from beanpod.core.qless.store import Qless

__all__ = ["Qless", "QlessError"]
