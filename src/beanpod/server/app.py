"""The server: engine, listeners, the ticker that fires engine timers, signals."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import signal
import socket
import sys
from typing import TYPE_CHECKING

from beanpod import build
from beanpod.core.engine import Engine
from beanpod.core.job import MoveCheck
from beanpod.durability.progress import ReplayProgress
from beanpod.protocols.beanstalkd.context import Dialect
from beanpod.server import early_listen
from beanpod.server.background import off_the_loop
from beanpod.server.beanstalkd_session import BeanstalkdSession
from beanpod.server.clock import Clock, ManualClock, make_clock
from beanpod.server.config import ServerConfig
from beanpod.server.edge.exposure import check_exposure
from beanpod.server.edge.front import Edge
from beanpod.server.edge.listeners import open_tls_listeners
from beanpod.server.gc_policy import freeze_at_exit, tune_gc
from beanpod.server.http import start_http, web_settings
from beanpod.server.info import ProcessInfo
from beanpod.server.ports import ListenSockets
from beanpod.server.startup import (
    EXIT_EVENTS_DIR,
    EXIT_USAGE,
    EXIT_WAL_DIR,
    StartupError,
    cause,
    check_writable_dir,
)
from beanpod.server.ticker import Ticker
from beanpod.web.readiness import Readiness

if TYPE_CHECKING:  # the WAL and event-log modules load only when configured
    from beanpod.core.qless import Qless
    from beanpod.core.workq import Workq
    from beanpod.durability.log import DurableLog
    from beanpod.events.writer import EventWriter
    from beanpod.protocols.workq.context import Dialect as WorkqDialect
    from beanpod.server.cluster import ClusterRole
    from beanpod.server.extensions import Extensions
    from beanpod.server.memory_trim import MemoryTrimmer
    from beanpod.server.redis_session import RedisSession
    from beanpod.server.workq_session import WorkqSession
    from beanpod.storage.segments import FileIO
    from beanpod.web.listener import HttpListener

log = logging.getLogger("beanpod")
EVENT_ERROR_EVERY_MS = 60_000  # a failing event log is reported at most once a minute


class App:
    def __init__(self, config: ServerConfig, clock: Clock | None = None) -> None:
        self.config = config
        self.engine = Engine(MoveCheck() if config.check_moves else None)
        clock = make_clock(config.clock) if clock is None else clock  # tests share one
        # The loop timer for the engine's deadlines, and the clock (see `clock`).
        self.ticker = Ticker(self.engine, clock, self._tick, self._flush_events)
        if isinstance(clock, ManualClock):  # its moves fire the due timers at once
            clock.on_move = self._clock_moved
        self.started_at = self.clock.now()
        self.info = ProcessInfo(self.started_at)
        self.info.binlog_max_size = config.segment_size
        self.edge = Edge(config.edge, self.engine, self.clock.now)  # limits, TLS, audit
        self.info.edge_stats = self.edge.stats
        self._extensions: Extensions | None = None  # qless and Workq: see extensions()
        self.dialect = Dialect(self.engine, self.info, config.max_job_size, lambda: self.qless)
        self.dialect.output_limit = config.edge.output_hard_limit
        self.sessions: set[BeanstalkdSession] = set()
        if self.edge.audit.enabled:  # admin acts of the beanstalkd dialect go to --audit-log
            self.dialect.audit = self.edge.audit.record
        self.workq_sessions: set[WorkqSession] = set()
        self.workq_addresses: list[str] = []
        self.redis_sessions: set[RedisSession] = set()
        self.redis_addresses: list[str] = []
        self.tls_addresses: list[str] = []  # TLS listeners (beanstalkd, then Workq)
        self.servers: list[asyncio.Server] = []
        self.readiness = Readiness()  # /readyz: serving once start() has finished
        self.http: HttpListener | None = None  # the HTTP listener (web/), with --http
        self._stopped = asyncio.Event()
        self.wal: DurableLog | None = None  # the write-ahead log, with -b DIR
        self.cluster: ClusterRole | None = None  # with --cluster (its log: `wal` once leading)
        self.replay = ReplayProgress()  # start-up replay of the log, while it runs
        self.readiness.progress = self._replayed  # /readyz shows it
        # Gives freed job memory back to the OS; made once serving (ctypes: ~2 ms).
        self.trimmer: MemoryTrimmer | None = None
        self.wal_io: FileIO | None = None  # tests inject faulty files here
        self.events: EventWriter | None = None  # the job event log, with --events DIR
        self._events_error_at = -EVENT_ERROR_EVERY_MS  # when the last write failure was told
        if config.events_dir is not None:
            from beanpod.events.writer import EventWriter

            self.events = EventWriter(config.events_dir)
            self.info.events = self.events
            self.ticker.events = self.events
            # Connection ids must stay unique in the log across restarts.
            self.engine.keep_events(self.events, self.clock.now() * 1000)

    # ---- the engine's extensions (qless, Workq): built on first use -------------------

    def extensions(self) -> Extensions:
        """Built on first use (server/extensions.py says when): their ~40 modules load
        after beanstalkd serves, not before."""
        if self._extensions is None:
            from beanpod.server.extensions import Extensions

            self._extensions = Extensions(self)
        return self._extensions

    async def load_extensions(self) -> None:
        """Import the extensions on a worker thread (the loop answers meanwhile), then
        build them on the loop."""
        await off_the_loop(_import_extensions)
        self.extensions()

    @property
    def qless(self) -> Qless:
        return self.extensions().qless

    @property
    def workq(self) -> Workq:
        return self.extensions().workq

    @property
    def workq_dialect(self) -> WorkqDialect:
        return self.extensions().workq_dialect

    # ---- the ticker: one armed loop timer for the engine's earliest deadline ----------

    @property
    def clock(self) -> Clock:
        """The server's clock; the ticker holds it (sessions read it there)."""
        return self.ticker.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:  # a test sets its own
        self.ticker.clock = clock

    def rearm(self) -> None:
        """After engine work: make sure a loop timer fires by the engine's next deadline,
        and that this turn's lifecycle events are written once the turn ends."""
        self.ticker.rearm()

    def _flush_events(self) -> None:
        self.ticker.flush_due = False
        if self.events is not None:
            try:
                self.events.flush()
            except OSError as exc:  # the queue keeps working; the lost events are counted
                self._event_log_failed(exc)

    def _event_log_failed(self, exc: OSError) -> None:
        """Say so once a minute (not once per loop turn) while the event log fails."""
        now = self.clock.now()
        if now - self._events_error_at < EVENT_ERROR_EVERY_MS:
            return
        self._events_error_at = now
        dropped = self.events.dropped if self.events is not None else 0
        log.error("cannot write the event log under %s: %s (%d events dropped so far)",
                  self.config.events_dir, exc, dropped)  # fmt: skip

    def cancel_timer(self) -> None:
        """An app being replaced (the test harness's reset) must not tick on."""
        self.ticker.cancel()

    def _tick(self) -> None:
        self.ticker.fired()
        # Only what fell due before this millisecond: `now` is a floor, so a timer set
        # `d` ms after a command could otherwise fire up to 1 ms before `d` ms have passed
        # (a client timing a 1 s reserve timeout saw 0.9995 s); beanstalkd never fires early.
        self.engine.tick(self.clock.now() - 1)
        self.rearm()

    def _clock_moved(self, now: int) -> None:
        """A manual clock moved (on the loop's thread): fire what fell due."""
        self.engine.tick(now)
        self.rearm()

    # ---- lifecycle ---------------------------------------------------------------------

    async def prepare(self) -> None:
        """Everything before listening: the event log, the WAL's restore, the extensions'
        indexes and timers (the test harness opens its own listeners after this)."""
        if self.config.events_dir is not None:
            check_writable_dir(self.config.events_dir, "event-log directory", EXIT_EVENTS_DIR)
        if self.config.cluster is not None:
            await self._join_cluster()
            return
        if self.config.binlog_dir is None:
            return  # no jobs to restore: the extensions can load once beanstalkd serves
        await self.load_extensions()  # the log may hold their jobs
        await self._open_wal()
        self.after_restore()

    def after_restore(self) -> None:
        """What follows a restore of the engine from its log (the WAL's at start-up, a
        cluster node's takeover): the event log closes the reservations the last stop cut,
        the extensions index the jobs restored, and the loop's timer covers their timers."""
        now = self.clock.now()
        if self.events is not None:  # before qless takes its locks back (reserve events)
            from beanpod.server.cut_reservations import close_cut_reservations

            try:
                close_cut_reservations(self.engine, self.events, now)
            except OSError as exc:  # (a full disk) the queue must still serve every job
                self._event_log_failed(exc)
        self.qless.reattach(now)  # index qless jobs the log restored
        self.workq.reattach(now)  # index Workq jobs the log restored, if any
        self.rearm()  # their TTL timers

    async def start(self, install_signals: bool = True) -> list[str]:
        """Open the listeners; return their addresses. Their sockets are bound together
        (server/ports.py; `beanpod serve` binds them at exec) and connections wait in the
        backlog until each protocol is loaded: beanstalkd first, so an early client is
        answered while the HTTP listener loads (aiohttp is the heaviest import); with a
        WAL, HTTP comes before the replay, so /readyz can report it."""
        loop = asyncio.get_running_loop()
        check_exposure(self.config.address, self.config.edge)
        if self.config.redis_port is not None:  # a public door needs --allow too
            check_exposure(self.config.redis_host, self.config.edge)
        http_settings = web_settings(self)  # a bad --http setting fails before anything
        if install_signals:  # before the first command is answered (SIGUSR1 drains)
            self._install_signals(loop)
        ports = ListenSockets(self.config)
        if http_settings is not None and (self.config.binlog_dir or self.config.cluster):
            self.http = await start_http(self, http_settings, ports, ports.take("HTTP")["HTTP"])
        await self.prepare()
        self.edge.start(lambda: [*self.sessions, *self.workq_sessions, *self.redis_sessions])
        roles = ("beanstalkd", "Workq", "Redis") + (() if self.http else ("HTTP",))
        sockets = {"HTTP": None, **ports.take(*roles)}  # together: see above
        server = await ports.serve("beanstalkd", self.beanstalkd_session, sockets["beanstalkd"])
        assert server is not None  # never a default port that gives way
        self.servers.append(server)
        addresses = _addresses(server)
        await self.load_extensions()  # while beanstalkd is answered
        workq = await ports.serve("Workq", self.workq_session, sockets["Workq"])
        if workq is not None:
            self.servers.append(workq)
            self.workq_addresses = _addresses(workq)
        await self._start_redis(ports, sockets["Redis"])
        self.tls_addresses = await open_tls_listeners(self)
        if http_settings is not None and self.http is None:
            self.http = await start_http(self, http_settings, ports, sockets["HTTP"])
        # (with a WAL, HTTP serves during the replay: /readyz answers 503 meanwhile)
        self.readiness.serving = True
        tune_gc()
        from beanpod.server.memory_trim import MemoryTrimmer

        self.trimmer = MemoryTrimmer()
        self.trimmer.start()
        return addresses

    async def _start_redis(self, ports: ListenSockets, sock: socket.socket | None) -> None:
        """The Redis-protocol door (docs/qless.md "Using qless's own clients")."""
        if self.config.redis_port is None:
            return
        try:
            from beanpod.server.redis_door import redis_sessions
        except ImportError as exc:  # hiredis: `pip install 'beanpod[redis]'`
            raise StartupError(
                "cannot open the Redis-protocol door", f"{exc}; install beanpod[redis]", EXIT_USAGE
            ) from exc
        server = await ports.serve("Redis", redis_sessions(self), sock)
        assert server is not None  # named by --redis-port: never a port that gives way
        self.servers.append(server)
        self.redis_addresses = _addresses(server)

    def beanstalkd_session(self) -> asyncio.Protocol:
        """A connection's session: a cluster's follower serves `stats` only."""
        if self.cluster is not None and not self.cluster.leading:
            from beanpod.server.cluster import FollowerSession

            return FollowerSession(self.cluster)
        return BeanstalkdSession(self)

    def workq_session(self) -> asyncio.Protocol:
        """A Workq connection's session: a cluster's follower refuses every command."""
        if self.cluster is not None and not self.cluster.leading:
            return self.cluster.follower_workq()
        from beanpod.server.extensions import WorkqSession  # loaded with the extensions

        return WorkqSession(self, self.workq_dialect)

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        if sys.platform == "win32":  # pragma: no cover
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop)
        loop.add_signal_handler(signal.SIGUSR1, self.drain)
        if early_listen.drain_was_asked():  # while `beanpod serve` was starting
            self.drain()
        if self.edge.tls is not None:
            loop.add_signal_handler(signal.SIGHUP, self.edge.tls.reload)

    async def _open_wal(self) -> None:
        """With -b DIR: restore the engine from the log before anyone connects."""
        directory = self.config.binlog_dir
        if directory is not None and self.wal is None:
            check_writable_dir(directory, "WAL directory", EXIT_WAL_DIR)
            from pathlib import Path

            from beanpod.durability.wal import WalSettings, open_wal

            config = self.config
            fsync_ms = None if config.no_fsync else config.fsync_ms
            settings = WalSettings(Path(directory), fsync_ms, config.segment_size,
                                   checkpoint_floor=config.checkpoint_floor)  # fmt: skip
            try:
                self.wal = await open_wal(
                    self.engine, settings, self.clock.now(), self.wal_io, self.replay
                )
            except OSError as exc:
                raise StartupError(
                    f"cannot use the WAL directory {directory}", cause(exc), EXIT_WAL_DIR
                ) from exc
            self.info.wal = self.wal
            self.rearm()

    async def _join_cluster(self) -> None:
        """With --cluster: fold the log kept in etcd; lead when the leader key is free."""
        from beanpod.server.cluster import ClusterRole

        assert self.config.cluster is not None and self.config.node_id is not None
        await self.load_extensions()  # the log may hold their jobs
        try:
            self.cluster = ClusterRole(self, self.config.cluster, self.config.node_id)
        except ValueError as exc:
            raise StartupError("cannot join the cluster", str(exc), EXIT_USAGE) from exc
        self.readiness.leader = self.cluster.leader
        self.readiness.checkpoint = self.cluster.checkpoint
        await self.cluster.join()

    def _replayed(self) -> tuple[int, int]:
        """Bytes of the log replayed so far, of its total (for /readyz)."""
        return self.replay.bytes_done, self.replay.bytes_total

    def drain(self) -> None:
        """SIGUSR1: refuse new jobs (put answers DRAINING) until restart."""
        self.engine.start_draining()
        log.warning("entering drain mode: put now answers DRAINING")

    def stop(self) -> None:
        self._stopped.set()

    @property
    def stopping(self) -> bool:
        return self._stopped.is_set()

    async def serve_until_stopped(self) -> None:
        await self._stopped.wait()
        log.info("shutting down")
        self.readiness.serving = False
        self.edge.stop()
        if self.trimmer is not None:
            self.trimmer.stop()
        for server in self.servers:
            server.close()
        if self.http is not None:
            await self.http.stop()
        await self._close_log()
        for session in list(self.sessions):
            if session.transport is not None:
                session.transport.close()
        if self.events is not None:
            self.events.close()
        for other in [*self.workq_sessions, *self.redis_sessions]:
            if other.transport is not None:
                other.transport.close()
        for server in self.servers:
            await server.wait_closed()

    async def _close_log(self) -> None:
        if self.wal is not None:  # flush and fsync; held replies go out first
            from beanpod.durability.wal import close_wal

            # every door's sessions stop reading: a Workq or Redis command read after the
            # log's last append would append after it (on a cluster: after the lease went)
            await close_wal(self.wal, [*self.sessions, *self.workq_sessions, *self.redis_sessions])
        if self.cluster is not None:  # the leader key goes at once: a follower takes over
            await self.cluster.node.aclose()


async def run(config: ServerConfig) -> None:
    app = App(config)
    addresses = await app.start()
    for address in addresses:
        log.info(
            "beanpod %s (%s build) listening on %s (beanstalkd protocol)",
            app.info.version,
            build.kind(),
            address,
        )
    for address in app.workq_addresses:
        log.info("beanpod %s listening on %s (Workq protocol)", app.info.version, address)
    for address in app.redis_addresses:
        log.info("beanpod %s listening on %s (Redis protocol, qless)", app.info.version, address)
    for address in app.tls_addresses:
        log.info("beanpod %s listening on %s (TLS)", app.info.version, address)
    if app.http is not None:
        scheme = "https" if app.http.ssl_context is not None else "http"
        log.info(
            "beanpod %s listening on %s://%s (HTTP)", app.info.version, scheme, app.http.address
        )
    await app.serve_until_stopped()


def _import_extensions() -> None:
    # The `qless` command's module first: a request that arrives meanwhile imports it on
    # the loop's thread, and both threads taking the module locks in one order cannot
    # deadlock (one waits for the other's import to finish).
    importlib.import_module("beanpod.protocols.beanstalkd.qless")
    importlib.import_module("beanpod.server.extensions")


def _addresses(server: asyncio.Server) -> list[str]:
    addresses = []
    for sock in server.sockets:
        name = sock.getsockname()
        addresses.append(name if isinstance(name, str) else f"{name[0]}:{name[1]}")
    return addresses


def raise_fd_limit() -> None:
    """Allow as many connections as the hard limit permits (beanstalkd spins at 100% CPU
    when accept() hits EMFILE; we would rather not get there)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):  # some sandboxes refuse
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def serve(config: ServerConfig) -> None:
    """Run the server until SIGTERM/SIGINT."""
    raise_fd_limit()
    if config.use_uvloop:
        try:
            import uvloop
        except ImportError:  # pragma: no cover - uvloop is optional off Linux/macOS
            pass
        else:
            uvloop.run(run(config))
            freeze_at_exit()
            return
    asyncio.run(run(config))
    freeze_at_exit()
