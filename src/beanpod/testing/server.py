"""`BeanpodServer`: a real beanpod in a background thread of the test process.

The engine, protocol code and WAL are the server's own; only the connection class is
the harness's (transcripts, counters, faults). Listeners belong to the harness, so a
`reset()` or `restart()` swaps the server behind them and the address stays the same.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from socket import socket as Socket
from socket import socketpair
from types import TracebackType
from typing import Any, TypeVar

import greenstalk

from beanpod.core import query
from beanpod.core.engine import Engine
from beanpod.server.app import App
from beanpod.server.beanstalkd_session import BeanstalkdSession
from beanpod.server.clock import Clock, ManualClock
from beanpod.server.config import ServerConfig
from beanpod.server.workq_session import WorkqSession
from beanpod.testing import assertions
from beanpod.testing.clock import REAL, VIRTUAL, TestClock
from beanpod.testing.endpoint import Endpoint
from beanpod.testing.errors import ServerStopped
from beanpod.testing.faults import Faults
from beanpod.testing.loop_thread import LoopThread
from beanpod.testing.observed import Observed
from beanpod.testing.session import HarnessSession
from beanpod.testing.transcript import Transcript
from beanpod.testing.views import SeenJob, seen_job, seen_jobs

T = TypeVar("T")
HOST = "127.0.0.1"
DEFAULT_PRIORITY = 2**16  # greenstalk's


class BeanpodServer(assertions.Assertions, Endpoint):
    """Start with `with BeanpodServer() as server:` (or `.start()` / `.stop()`)."""

    def __init__(
        self, *, clock: str = VIRTUAL, wal: str | Path | None = None, unix: bool = False,
        workq: bool = False, max_job_size: int = 65535,
    ) -> None:  # fmt: skip
        if clock not in (VIRTUAL, REAL):
            raise ValueError(f"clock must be {VIRTUAL!r} or {REAL!r}, not {clock!r}")
        self.options = {"clock": clock, "wal": wal, "unix": unix, "workq": workq,
                        "max_job_size": max_job_size}  # fmt: skip
        self._clock: Clock = ManualClock() if clock == VIRTUAL else Clock()
        self._wal = None if wal is None else str(wal)
        self._unix = unix
        self._unix_dir: str | None = None  # made at start
        self._workq = workq
        self._max_job_size = max_job_size
        self.faults = Faults()
        self.observed = Observed(self.faults)
        self._thread: LoopThread | None = None
        self._app: App | None = None
        self._listeners: list[asyncio.Server] = []
        self._admin: greenstalk.Client[bytes] | None = None
        self.host, self.port, self.workq_port = HOST, 0, 0
        self.stopped = False

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> BeanpodServer:
        if self._thread is not None or self.stopped:
            raise ServerStopped("a BeanpodServer starts once; make a new one")
        if self._unix:
            self._unix_dir = tempfile.mkdtemp(prefix="beanpod-test-")
        self._thread = LoopThread()
        try:
            self._thread.run(self._open())
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._thread is None or self.stopped:
            return
        self.stopped = True
        self._close_admin()
        try:
            self._thread.run(self._close())
        finally:
            self._thread.stop()
        if self._unix_dir is not None:
            shutil.rmtree(self._unix_dir, ignore_errors=True)

    def __enter__(self) -> BeanpodServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget everything: jobs, tubes, connections (closed), counters, transcripts,
        faults; a WAL directory is emptied. The address and the clock stay."""
        self._close_admin()
        self._loop_thread().run(self._swap(wipe=True))

    def restart(self) -> None:
        """As a server restart: connections drop, memory is lost, and with a WAL what
        was acknowledged comes back (counters and transcripts are kept)."""
        self._close_admin()
        self._loop_thread().run(self._swap(wipe=False))

    async def _open(self) -> None:
        self._app = await self._new_app()
        loop = asyncio.get_running_loop()
        tcp = await loop.create_server(self._session, HOST, 0)
        self._listeners.append(tcp)
        self.port = tcp.sockets[0].getsockname()[1]
        if self.unix_path is not None:
            self._listeners.append(await loop.create_unix_server(self._session, self.unix_path))
        if self._workq:
            workq = await loop.create_server(self._workq_session, HOST, 0)
            self._listeners.append(workq)
            self.workq_port = workq.sockets[0].getsockname()[1]

    async def _new_app(self) -> App:
        config = ServerConfig(
            address=HOST, port=0, max_job_size=self._max_job_size, use_uvloop=False,
            binlog_dir=self._wal, workq_port=None, no_fsync=True,  # restart() flushes
            clock="manual" if self._clock.manual else "real",
        )  # fmt: skip
        app = App(config, clock=self._clock)
        await app.prepare()
        return app

    def _session(self) -> HarnessSession:
        return HarnessSession(self._running_app(), self.observed)

    def _workq_session(self) -> WorkqSession:
        app = self._running_app()
        return WorkqSession(app, app.workq_dialect)

    async def _swap(self, wipe: bool) -> None:
        await self._retire(self._running_app())
        if wipe:
            self.observed.clear()
            self.faults.clear()
            if self._wal is not None:
                shutil.rmtree(self._wal, ignore_errors=True)
        self._app = await self._new_app()

    async def _retire(self, app: App) -> None:
        """Close the app's connections (their reserved jobs go back) and its WAL; its
        timer is cancelled (a real clock's would keep the old app alive)."""
        if app.wal is not None:
            from beanpod.durability.wal import close_wal  # loaded with the WAL

            await close_wal(app.wal, app.sessions)
        await _close_sessions(app)
        app.cancel_timer()  # last: a closing connection re-arms it

    async def _close(self) -> None:
        for listener in self._listeners:
            listener.close()
        if self._app is not None:  # None: the start failed before it was built
            await self._retire(self._app)
        for listener in self._listeners:
            await listener.wait_closed()

    # ---- where clients connect -------------------------------------------------------

    @property
    def unix_path(self) -> str | None:
        return None if self._unix_dir is None else str(Path(self._unix_dir) / "beanpod.sock")

    def socket(self) -> Socket:
        """A connected socket with no port at all (a socketpair); greenstalk takes it as
        its address: `greenstalk.Client(server.socket())`."""
        return self._pair(self._session)

    def _pair(self, factory: Any) -> Socket:
        client, server_end = socketpair()

        async def attach() -> None:
            await asyncio.get_running_loop().connect_accepted_socket(factory, server_end)

        self._loop_thread().run(attach())
        return client

    @property
    def clock(self) -> TestClock:
        return TestClock(self._clock, self._call)

    # ---- inspection (bypasses the protocol) -------------------------------------------

    def jobs(self, tube: str | None = None, state: str | None = None) -> list[SeenJob]:
        return self._call(lambda: seen_jobs(self._engine(), tube, state, self._clock.now()))

    def job(self, job_id: int) -> SeenJob | None:
        return self._call(lambda: seen_job(self._engine(), job_id, self._clock.now()))

    def tube(self, name: str) -> query.TubeView | None:
        return self._call(lambda: query.tube_view(self._engine(), name, self._clock.now()))

    def tubes(self) -> list[str]:
        return self._call(lambda: query.tube_names(self._engine()))

    @property
    def counts(self) -> dict[str, int]:
        """Commands clients sent since the reset, by name (`put`, `reserve`, ...)."""
        return self._call(lambda: dict(self.observed.counts))

    @property
    def transcripts(self) -> list[Transcript]:
        """One per client connection since the reset, in connection order."""
        return self._call(lambda: list(self.observed.transcripts))

    def put(
        self, body: bytes | str, tube: str = "default", pri: int = DEFAULT_PRIORITY,
        delay: int = 0, ttr: int = 60,
    ) -> int:  # fmt: skip
        """Seed a job the way a client would (through the engine and the WAL); it is not
        counted as a client's put. Returns its id."""
        admin = self._admin_client()
        self._call(lambda: self.observed.name_tube(tube))
        admin.use(tube)
        data = body.encode() if isinstance(body, str) else body
        return admin.put(data, priority=pri, delay=delay, ttr=ttr)

    def _admin_client(self) -> greenstalk.Client[bytes]:
        if self._admin is None:
            self._admin = greenstalk.Client(self._pair(self._plain_session), encoding=None)
        return self._admin

    def _plain_session(self) -> BeanstalkdSession:
        return BeanstalkdSession(self._running_app())

    def _close_admin(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    # ---- faults ------------------------------------------------------------------------

    def fail_next(self, command: str, word: str, times: int = 1) -> None:
        """The next `times` runs of `command` answer `word` (e.g. OUT_OF_MEMORY) instead."""
        self._call(lambda: self.faults.fail_next(command, word, times))

    @property
    def latency(self) -> float:
        return self.faults.latency_s

    @latency.setter
    def latency(self, seconds: float) -> None:
        """Seconds added before each request from a client is handled (0: none)."""
        self._call(lambda: setattr(self.faults, "latency_s", float(seconds)))

    def drain(self) -> None:
        """Drain mode, as SIGUSR1: every put answers DRAINING until reset or restart."""
        self._call(lambda: self._running_app().drain())

    def drop_connections(self) -> None:
        """Close every client connection; their reserved jobs return to ready."""
        self._close_admin()
        self._loop_thread().run(_close_sessions(self._running_app()))

    # ---- plumbing ----------------------------------------------------------------------

    def _loop_thread(self) -> LoopThread:
        if self._thread is None or self.stopped:
            state = "has stopped" if self.stopped else "was never started"
            raise ServerStopped(
                f"this beanpod test server {state}; a fixture's server lives only as long "
                "as its scope (do not keep it past its test)"
            )
        return self._thread

    def _call(self, fn: Callable[[], T]) -> T:
        return self._loop_thread().call(fn)

    def _running_app(self) -> App:
        if self._app is None:
            raise ServerStopped("this beanpod test server was never started")
        return self._app

    def _engine(self) -> Engine:
        return self._running_app().engine

    def _inserted(self) -> list[tuple[str, int, bytes]]:
        return self._call(lambda: list(self.observed.inserted))

    def _tube_known(self, name: str) -> bool:
        return self._call(lambda: name in self.observed.tubes_named) or name in self.tubes()


async def _close_sessions(app: App) -> None:
    """Close every connection and wait until the engine has seen each one go."""
    sessions = [*app.sessions, *app.workq_sessions]
    for session in sessions:
        if session.transport is not None:
            session.transport.close()
    for _ in range(100):  # connection_lost runs on a later loop turn
        if not app.sessions and not app.workq_sessions:
            return
        await asyncio.sleep(0)
