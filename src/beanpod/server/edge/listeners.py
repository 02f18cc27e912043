"""The edge's listeners: TLS listeners for the beanstalkd and Workq protocols, and the
unix socket's mode and group (--unix-mode, --unix-group)."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from beanpod.server.edge.exposure import split_host_port
from beanpod.server.edge.settings import EdgeSettings
from beanpod.server.edge.tls import Tls
from beanpod.server.startup import EXIT_LISTENER, StartupError, cause, listener_error

if TYPE_CHECKING:
    from beanpod.server.app import App


async def open_tls_listeners(app: App) -> list[str]:
    """--tls-listen (beanstalkd) and --tls-workq-listen: their addresses, beanstalkd
    first. Each accepts for itself (server/edge/tls.py); its sessions are the plain
    listeners' (a cluster's follower serves them read-only, as there)."""
    tls, settings = app.edge.tls, app.config.edge.tls
    if tls is None or settings is None:
        return []
    addresses = []
    if settings.listen is not None:
        addresses.append(_listen(tls, app, "beanstalkd over TLS", app.beanstalkd_session,
                                 settings.listen))  # fmt: skip
    if settings.workq_listen is not None:
        addresses.append(_listen(tls, app, "Workq over TLS", app.workq_session,
                                 settings.workq_listen))  # fmt: skip
    return addresses


def _listen(tls: Tls, app: App, role: str, factory: Any, where: str) -> str:
    host, port = split_host_port(where)
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(1024)
    except OSError as exc:
        listener.close()
        raise listener_error(role, where, exc) from exc
    tls.serve(listener, factory, app.edge.gate)
    name = listener.getsockname()
    return f"{name[0]}:{name[1]}"


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
        raise StartupError(
            f"cannot set the permissions of unix:{path}", why, EXIT_LISTENER
        ) from exc


def _gid(group: str) -> int:
    import grp  # here: only a UNIX socket's group by name needs it

    return int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
