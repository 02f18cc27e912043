"""Job history (`{what, when, ...}` entries, capped by `max-job-history`, always keeping
the first entry) and user annotations (`log`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beanpod.core.qless.errors import QlessError

if TYPE_CHECKING:
    from beanpod.core.qless.ext import QlessExt
    from beanpod.core.qless.store import Qless


def append(q: Qless, ext: QlessExt, now: int, what: str, extra: dict[str, Any]) -> None:
    """Record `what` at `now` (whole seconds), then trim to the configured length."""
    entry = {**extra, "what": what, "when": now // 1000}
    history = ext.history
    history.append(entry)
    limit = int(q.config.number("max-job-history", 100))
    if limit > 0 and len(history) > limit:
        del history[1 : len(history) - limit + 1]  # keep the first and the newest


def log(q: Qless, now: int, jid: str, message: str, data: dict[str, Any] | None) -> None:
    """log(jid, message, [data]): a user annotation in the job's history."""
    q.at(now)
    job = q.require("Log", jid)
    if data is not None and not isinstance(data, dict):
        raise QlessError("Log(): Arg 'data' is not a JSON object")
    q.history(job, now, message, **(data or {}))
    q.save(job)
