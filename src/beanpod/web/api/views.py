"""JSON shapes of tubes and jobs (beanstalkd's stats names, times in seconds and ms)."""

from __future__ import annotations

import base64
from dataclasses import asdict
from typing import Any

from beanpod.core import query

PREVIEW_BYTES = 4096  # body bytes shown by default
MAX_PREVIEW = 1 << 20


def tube(view: query.TubeView) -> dict[str, Any]:
    doc = asdict(view)
    doc["paused"] = view.pause_ms > 0
    return doc


def job(view: query.JobView) -> dict[str, Any]:
    """One job as `stats-job` knows it; *_ms fields in ms, the rest as stats-job."""
    return asdict(view)


def summary(view: query.JobView) -> dict[str, Any]:
    """What names a job in a list (Busy, Find): its id, tube, state, dialect and the id
    its application knows (qless jid or Workq UUID)."""
    return {"id": view.id, "tube": view.tube, "state": view.state, "dialect": view.dialect,
            "key": view.key}  # fmt: skip


def body_preview(data: bytes, cap: int = PREVIEW_BYTES) -> dict[str, Any]:
    """At most `cap` bytes of a body: UTF-8 text when it is text, else base64."""
    shown = data[:cap]
    text = _as_text(shown, truncated=len(data) > cap)
    preview: dict[str, Any] = {"size": len(data), "truncated": len(data) > cap}
    if text is None:
        preview.update(encoding="base64", data=base64.b64encode(shown).decode())
    else:
        preview.update(encoding="utf-8", data=text)
    return preview


def _as_text(data: bytes, truncated: bool) -> str | None:
    """UTF-8 text without control bytes (tab and line breaks allowed), or None. A cut
    may split the last character: that partial character is dropped."""
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        if not (truncated and exc.reason == "unexpected end of data"):
            return None
        text = data[: exc.start].decode()
    return text if text.isprintable() or _printable_lines(text) else None


def _printable_lines(text: str) -> bool:
    return all(line.isprintable() for line in text.replace("\t", " ").splitlines())
