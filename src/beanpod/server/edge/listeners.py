"""The edge's listeners: TLS listeners for the beanstalkd and Workq protocols, and the
unix socket's mode and group (--unix-mode, --unix-group)."""

from __future__ import annotations

import contextlib
import grp
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from beanpod.server.edge.exposure import split_host_port
from beanpod.server.edge.settings import EdgeSettings
from beanpod.server.startup import EXIT_LISTENER, StartupError, cause, listener_error

if TYPE_CHECKING:
    from beanpod.server.app import App


async def open_tls_listeners(app: App) -> list[str]:
    """--tls-listen (beanstalkd) and --tls-workq-listen: plain accept, then admission,
    then the handshake (server/edge/front.py); their addresses, beanstalkd first."""
    from beanpod.server.beanstalkd_session import BeanstalkdSession
    from beanpod.server.workq_session import WorkqSession

    tls = app.config.edge.tls
    if tls is None:
        return []

    def beanstalkd() -> Any:
        return _tls(BeanstalkdSession(app))

    def workq() -> Any:
        return _tls(WorkqSession(app, app.workq_dialect))

    addresses = await _listen(app, "beanstalkd over TLS", beanstalkd, tls.listen)
    if tls.workq_listen is not None:
        addresses += await _listen(app, "Workq over TLS", workq, tls.workq_listen)
    return addresses


def _tls(session: Any) -> Any:
    session.tls = True
    return session


async def _listen(app: App, role: str, factory: Any, where: str) -> list[str]:
    import asyncio

    host, port = split_host_port(where)
    try:
        server = await asyncio.get_running_loop().create_server(
            factory, host, port, backlog=1024, reuse_address=True
        )
    except OSError as exc:
        raise listener_error(role, where, exc) from exc
    app.servers.append(server)
    names = [sock.getsockname() for sock in server.sockets]
    return [f"{name[0]}:{name[1]}" for name in names]


@contextlib.contextmanager
def private_umask(settings: EdgeSettings) -> Iterator[None]:
    """With --unix-mode: create the socket file unreachable by others until chmod."""
    if settings.unix_mode is None:
        yield
        return
    old = os.umask(0o177)
    try:
        yield
    finally:
        os.umask(old)


def secure_unix_socket(path: str, settings: EdgeSettings) -> None:
    """Apply --unix-group then --unix-mode to the socket file."""
    try:
        if settings.unix_group is not None:
            os.chown(path, -1, _gid(settings.unix_group))
        if settings.unix_mode is not None:
            os.chmod(path, settings.unix_mode)
    except (OSError, KeyError) as exc:
        why = cause(exc) if isinstance(exc, OSError) else f"no group {settings.unix_group!r}"
        raise StartupError(f"cannot set the permissions of unix:{path}", why,
                           EXIT_LISTENER) from exc  # fmt: skip


def _gid(group: str) -> int:
    return int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
