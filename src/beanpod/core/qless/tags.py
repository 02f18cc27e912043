"""Tags: add/remove on a job, jobs by tag (tagging order, paged), top tags. The index
keeps when each job was tagged, for qless's order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from beanpod.core.job import Job
from beanpod.core.qless import moves

if TYPE_CHECKING:
    from beanpod.core.qless.store import Qless


def index(q: Qless, jid: str, tags: list[str], now: int = 0) -> None:
    """File `jid` under `tags`, tagged at `now` (0 after a restart: unknown)."""
    for tag in tags:
        q.tags.setdefault(tag, {}).setdefault(jid, now)


def stamp(q: Qless, jid: str, tags: list[str], now: int) -> None:
    """qless-core re-scores a job's tags at `now` when it is put again or tagged again."""
    for tag in tags:
        jids = q.tags.get(tag)
        if jids is not None and jid in jids:
            jids[jid] = now


def unindex(q: Qless, jid: str, tags: list[str]) -> None:
    for tag in tags:
        jids = q.tags.get(tag)
        if jids is not None:
            jids.pop(jid, None)
            if not jids:
                del q.tags[tag]


def set_tags(q: Qless, job: Job, tags: list[str], now: int) -> None:
    """Replace `job`'s tags (deduplicated, order kept); tags it keeps keep their time."""
    ext = moves.ext_of(job)
    kept = list(dict.fromkeys(tags))
    unindex(q, ext.jid, [t for t in ext.tags if t not in set(kept)])
    ext.tags = kept
    index(q, ext.jid, kept, now)


def add(q: Qless, now: int, jid: str, tags: list[str]) -> list[str]:
    q.at(now)
    job, ext = moves.require(q, "Tag", jid)
    set_tags(q, job, [*ext.tags, *tags], now)
    stamp(q, jid, tags, now)
    q.save(job)
    return list(ext.tags)


def remove(q: Qless, now: int, jid: str, tags: list[str]) -> list[str]:
    q.at(now)
    job, ext = moves.require(q, "Tag", jid)
    drop = set(tags)
    set_tags(q, job, [t for t in ext.tags if t not in drop], now)
    q.save(job)
    return list(ext.tags)


def get(q: Qless, tag: str, offset: int = 0, count: int = 25) -> dict[str, Any]:
    """Jobs tagged `tag`, in tagging order (then by jid, as Redis orders equal scores):
    {total, jobs: [jid...]}."""
    jids = q.tags.get(tag, {})
    ordered = sorted(jids, key=lambda jid: (jids[jid], jid.encode()))
    return {"total": len(jids), "jobs": ordered[offset : offset + count]}


def top(q: Qless, offset: int = 0, count: int = 25) -> list[str]:
    """Tags used by at least two jobs, most used first."""
    used = [(len(jids), tag.encode(), tag) for tag, jids in q.tags.items() if len(jids) >= 2]
    used.sort(reverse=True)  # Redis's zrevrangebyscore: ties in reverse byte order
    return [tag for _, _, tag in used[offset : offset + count]]
