"""Tags: add/remove on a job, jobs by tag (tagging order, paged), top tags."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beanpod.core.job import Job
from beanpod.core.qless import moves

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def index(q: Qless, jid: str, tags: list[str]) -> None:
    for tag in tags:
        q.tags.setdefault(tag, {})[jid] = None


def unindex(q: Qless, jid: str, tags: list[str]) -> None:
    for tag in tags:
        jids = q.tags.get(tag)
        if jids is not None:
            jids.pop(jid, None)
            if not jids:
                del q.tags[tag]


def set_tags(q: Qless, job: Job, tags: list[str]) -> None:
    """Replace `job`'s tags (deduplicated, order kept)."""
    ext = moves.ext_of(job)
    unindex(q, ext.jid, ext.tags)
    ext.tags = list(dict.fromkeys(tags))
    index(q, ext.jid, ext.tags)


def add(q: Qless, now: int, jid: str, tags: list[str]) -> list[str]:
    q.at(now)
    job, ext = moves.adopt_required(q, "Tag", jid)
    set_tags(q, job, [*ext.tags, *tags])
    q.save(job)
    return list(ext.tags)


def remove(q: Qless, now: int, jid: str, tags: list[str]) -> list[str]:
    q.at(now)
    job, ext = moves.adopt_required(q, "Tag", jid)
    drop = set(tags)
    set_tags(q, job, [t for t in ext.tags if t not in drop])
    q.save(job)
    return list(ext.tags)


def get(q: Qless, tag: str, offset: int = 0, count: int = 25) -> dict[str, Any]:
    """Jobs tagged `tag`, in tagging order: {total, jobs: [jid...]}."""
    jids = q.tags.get(tag, {})
    return {"total": len(jids), "jobs": list(jids)[offset : offset + count]}


def top(q: Qless, offset: int = 0, count: int = 25) -> list[str]:
    """Tags used by at least two jobs, most used first."""
    used = [(len(jids), tag) for tag, jids in q.tags.items() if len(jids) >= 2]
    used.sort(key=lambda pair: -pair[0])
    return [tag for _, tag in used[offset : offset + count]]
