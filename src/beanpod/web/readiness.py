"""What the server hands the web layer before the HTTP listener loads: its readiness
(/readyz) and the listener's settings. Apart from web/context.py so that a server answers
beanstalkd before importing the rest of the web layer (its dataclasses and protocols)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Readiness:
    """/readyz: ready once the WAL is replayed and the listeners serve; not while draining.
    The server flips `serving` and gives `progress`: bytes of the log replayed, of its
    total ((0, 0): none shown)."""

    serving: bool = False
    progress: Callable[[], tuple[int, int]] = lambda: (0, 0)
    # GET /leader, on a cluster's node: (this node leads, the leader's {"node", "address", ...}
    # as last seen); None on a single node
    leader: Callable[[], tuple[bool, dict[str, str] | None]] | None = None
    # GET /cluster/checkpoint, on a cluster's node: the file of its latest checkpoint
    # (None: it has none yet)
    checkpoint: Callable[[], str | None] | None = None


@dataclass(frozen=True)
class WebSettings:
    """The HTTP listener's settings. (Written out: dataclasses would format a docstring
    from inspect.signature at import.)"""

    metrics_max_tubes: int = 500  # tubes exported by name; the rest fold into "_other"
    token: str | None = None  # every request needs it when set (--http-token FILE)
    analytics_dir: str | None = None  # --analytics DIR: the dashboard's analytics page
