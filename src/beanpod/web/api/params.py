"""Reading a request: path and query parameters, JSON bodies and filters, each checked
(a bad value is a 400, an unknown tube or job a 404, before anything changes)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from beanpod.core import query
from beanpod.web.context import WebContext
from beanpod.web.errors import ApiError

MAX_PAGE = 1000  # jobs per page
MAX_NEEDLE = 1024  # bytes of a body search
STATES = query.QUEUED_STATES


def tube_name(request: web.Request, ctx: WebContext) -> str:
    """The {tube} of the path: an existing tube, else 404."""
    name = request.match_info["tube"]
    if query.tube_view(ctx.engine, name, 0) is None:
        raise ApiError(404, f"no tube {name!r}")
    return name


def job_id(request: web.Request, ctx: WebContext) -> int:
    """The {id} of the path: an existing job, else 400 (not a number) or 404."""
    raw = request.match_info["id"]
    if not raw.isdigit() or len(raw) > 20:
        raise ApiError(400, f"job id must be a positive integer, not {raw!r}")
    if query.job_view(ctx.engine, int(raw), 0) is None:
        raise ApiError(404, f"no job {raw}")
    return int(raw)


def state(value: str | None, allowed: tuple[str, ...] = STATES, default: str = "ready") -> str:
    value = default if value is None else value
    if value not in allowed:
        raise ApiError(400, f"state must be one of {', '.join(allowed)}, not {value!r}")
    return value


def integer(raw: Any, name: str, low: int, high: int) -> int:
    """An integer parameter in [low, high] (JSON numbers or query strings)."""
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise ApiError(400, f"{name} must be an integer")
    text = str(raw)
    if not text.lstrip("-").isdigit() or len(text) > 20:
        raise ApiError(400, f"{name} must be an integer, not {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be between {low} and {high}, not {value}")
    return value


def needle(raw: Any) -> bytes | None:
    """A body-substring search (UTF-8 text), or None for none."""
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str):
        raise ApiError(400, "contains must be a string")
    data = raw.encode()
    if len(data) > MAX_NEEDLE:
        raise ApiError(413, f"contains is longer than {MAX_NEEDLE} bytes")
    return data


ORDERS = ("reserve", "oldest", "newest")  # reserve: (priority, id), ready jobs only


def default_order(state: str) -> str:
    """The listing's order when none is asked (the console shows the answer's "order"):
    reserve order for ready jobs, else oldest first."""
    return "reserve" if state == "ready" else "oldest"


def order(raw: str | None, state: str) -> str:
    value = raw or default_order(state)
    if value not in ORDERS or (value == "reserve" and state != "ready"):
        allowed = ORDERS if state == "ready" else ORDERS[1:]
        wanted = ", ".join(allowed)
        raise ApiError(400, f"order of {state} jobs must be one of {wanted}, not {value!r}")
    return value


def listing_filter(tube: str, q: Mapping[str, str]) -> query.JobFilter:
    """A listing's filter: ?state=, ?contains=, ?exclude=qless (leave qless jobs out)."""
    return query.JobFilter(tube, state(q.get("state")), needle(q.get("contains")),
                           skip_qless=_exclude(q.get("exclude")))  # fmt: skip


def key_cursor(raw: str | None) -> int | None:
    """A reserve-order page cursor: the ready key of the previous page's last job."""
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or len(raw) > 60:
        raise ApiError(400, f"cursor must be the next_cursor of a reserve-order page, not {raw!r}")
    return int(raw)


def cursor(raw: str | None) -> int | None:
    """A page cursor: the id of the last job of the previous page."""
    if raw is None or raw == "":
        return None
    return integer(raw, "cursor", 0, 2**64)


async def body(request: web.Request) -> dict[str, Any]:
    """The JSON object of a POST (an empty body is {})."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"body is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ApiError(400, "body must be a JSON object")
    return doc


def job_filter(tube: str, doc: dict[str, Any], allowed: tuple[str, ...]) -> query.JobFilter:
    """The jobs a bulk action names: {"state", "contains", "limit", "exclude"} (unknown
    keys: 400)."""
    unknown = set(doc) - {"state", "contains", "limit", "exclude", "to", "confirm"}
    if unknown:
        raise ApiError(400, f"unknown field {sorted(unknown)[0]!r}")
    limit = doc.get("limit")
    return query.JobFilter(
        tube,
        state(doc.get("state"), allowed, allowed[0]),
        needle(doc.get("contains")),
        None if limit is None else integer(limit, "limit", 1, 10**9),
        skip_qless=_exclude(doc.get("exclude")),
    )


def _exclude(raw: Any) -> bool:
    """exclude=qless: leave qless jobs out (its failed jobs are buried too)."""
    if raw not in (None, "", "qless"):
        raise ApiError(400, f"exclude must be qless, not {raw!r}")
    return bool(raw == "qless")
