"""The server as one node of a cluster (`beanpod serve --cluster etcd://.../NAME`): joins
(durability/cluster/node.py), serves followers' connections read-only, and on winning
the leader key turns the engine on; on losing it, re-executes itself and rejoins as a
follower (every client connection closes with the old process, nothing more is said).

A follower's beanstalkd connection answers `stats` (this node's own, read-only); any
other command closes it: a client (or HAProxy, checking GET /leader) reconnects to the
leader. beanstalkd has no reply that names another server, and an invented one would
break clients that expect the protocol's words only. Its Workq and Redis doors answer
every command with an error naming the leader (server/follower_doors.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from beanpod.durability.cluster import checkpoint
from beanpod.durability.cluster.etcd import parse_endpoints
from beanpod.durability.cluster.node import ClusterNode, ClusterSettings
from beanpod.protocols.beanstalkd import inspect
from beanpod.server.follower_doors import FollowerDoor, FollowerWorkq
from beanpod.server.http import read_token
from beanpod.server.startup import EXIT_USAGE, StartupError

if TYPE_CHECKING:
    from beanpod.protocols.beanstalkd.context import Context, Dialect
    from beanpod.server.app import App
    from beanpod.server.config import ServerConfig

log = logging.getLogger("beanpod.cluster")
SCHEME = "etcd://"


def parse_cluster(url: str) -> tuple[tuple[str, ...], str]:
    """etcd://HOST:PORT[,HOST:PORT...]/NAME -> (etcd URLs, NAME); ValueError if not."""
    if not url.startswith(SCHEME) or "/" not in url[len(SCHEME) :]:
        raise ValueError(f"--cluster {url!r}: expected etcd://HOST:PORT[,HOST:PORT...]/NAME")
    hosts, _, name = url[len(SCHEME) :].partition("/")
    endpoints = parse_endpoints(hosts)
    if not endpoints or not name or "/" in name:
        raise ValueError(f"--cluster {url!r}: expected etcd://HOST:PORT[,HOST:PORT...]/NAME")
    return tuple(endpoints), name


def door_addresses(config: ServerConfig) -> dict[str, str]:
    """This node's Workq and Redis doors as HOST:PORT, for its leader key ("workq",
    "redis"): those it serves on a port named (port 0's is not known yet when the node
    may first campaign)."""
    doors = {"workq": (config.address, config.workq_port),
             "redis": (config.redis_host, config.redis_port)}  # fmt: skip
    return {door: f"{host}:{port}" for door, (host, port) in doors.items() if port}


class FollowerSession(FollowerDoor):
    """A beanstalkd connection to a follower: `stats` is answered, anything else closes
    (the registry and the edge's admission and count are FollowerDoor's)."""

    def __init__(self, role: ClusterRole) -> None:
        super().__init__(role.followers, role.leader_seen, None, role.app.edge)
        self.role = role
        self.dialect: Dialect = role.app.dialect
        self.now = 0
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n" in self.buffer and self.transport is not None:
            line, _, self.buffer = self.buffer.partition(b"\r\n")
            if line.strip() != b"stats":
                self.transport.close()
                return
            self.now = self.role.app.clock.now()
            self.transport.write(inspect.stats(cast("Context", self), ()))


class ClusterRole:
    """The app's side of its ClusterNode."""

    def __init__(self, app: App, url: str, node_id: str) -> None:
        endpoints, name = parse_cluster(url)
        config = app.config
        directory = None if config.binlog_dir is None else Path(config.binlog_dir)
        if directory is not None:
            checkpoint.claim(directory, name)
        settings = ClusterSettings(
            endpoints, name, node_id, f"{config.address}:{config.port}", door_addresses(config),
            directory=directory,
            http=None if app.http is None else app.http.address,
            token=read_token(config.http_token_file), checkpoint_batches=config.checkpoint_batches,
            trim_every=config.trim_every, defrag_every=config.defrag_every,
        )  # fmt: skip
        self.app = app
        self.node = ClusterNode(app.engine, settings, app.clock.now, self.lead, self.step_down)
        self.followers: set[FollowerDoor] = set()  # closed on winning

    def follower_workq(self) -> FollowerWorkq:
        return FollowerWorkq(self.followers, self.leader_seen, self.app.edge)

    def leader_seen(self) -> dict[str, str] | None:
        return self.node.leader

    @property
    def leading(self) -> bool:
        return self.node.leading

    def leader(self) -> tuple[bool, dict[str, str] | None]:
        """For GET /leader: (this node leads, the leader as last seen)."""
        return self.node.leading, self.node.leader

    def checkpoint(self) -> str | None:
        """For GET /cluster/checkpoint: this node's latest checkpoint file, if any."""
        directory = self.node.settings.directory
        path = None if directory is None else checkpoint.path_of(directory)
        return str(path) if path is not None and path.exists() else None

    async def join(self) -> None:
        """Take the lease and fold the log; lead at once if nobody does."""
        try:
            await self.node.start()
        except Exception as exc:
            raise StartupError("cannot join the cluster", str(exc), EXIT_USAGE) from exc
        signal.signal(signal.SIGCONT, self._woken)
        await _briefly(self.node.won)  # a lone first node serves as the leader at once

    def lead(self) -> None:
        """The node won (called in the same loop turn as its journal took over the
        engine, so no connection or HTTP action sees the engine without `app.wal`)."""
        app, journal = self.app, self.node.journal
        assert journal is not None
        app.wal = app.info.wal = journal
        app.after_restore()  # as a restart's: cut reservations closed, extensions indexed
        for session in list(self.followers):  # they reconnect to a serving leader
            if session.transport is not None:
                session.transport.close()

    def _woken(self, signum: int, frame: Any) -> None:
        """SIGCONT (after SIGSTOP): runs before any command read meanwhile is served. A
        leader whose lease may have run out meanwhile hands out nothing: it steps down."""
        if self.node.leading and not self.node.lease_valid():
            self.step_down("woken after a pause longer than the lease")

    def step_down(self, why: str) -> None:
        """Leadership may be gone: answer nothing more. The process re-executes itself
        (every connection closes with it) and rejoins as a follower."""
        if self.app.stopping:  # (SIGTERM) the process exits: it must not come back
            log.error("cluster: leadership lost while stopping (%s)", why)
            return
        log.error("cluster: stepping down (%s); restarting as a follower", why)
        self.node.before_exec()
        logging.shutdown()
        sys.stdout.flush()
        os.execv(sys.executable, sys.orig_argv)


async def _briefly(event: asyncio.Event) -> None:
    """Until `event` happens, for a moment at most."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), 1.0)
