"""The qless operator move of the HTTP admin API (retry of a failure group is `unfail`),
apart from core/admin.py so the beanstalkd verbs, which share admin's moves, do not load
the qless extension."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beanpod.core.qless.api import call
from beanpod.core.qless.errors import QlessError

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


class Refused(Exception):
    """A qless function refused (its qless wording in `message`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def qless_call(q: Qless, fn: str, args: list[Any], now: int) -> Any:
    """A qless function that changes state (`unfail`, `retry`, ...), run as the `qless`
    command runs it (the disk-space check first; Refused with qless's wording)."""
    try:
        return call(q, fn, args, now)
    except QlessError as exc:
        raise Refused(exc.message) from None
