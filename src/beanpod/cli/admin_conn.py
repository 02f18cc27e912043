"""What every admin command shares: where the server is, how to reach it, how to print.

The admin commands speak the plain beanstalkd protocol (through greenstalk), so they work
against beanpod and against any beanstalkd 1.12."""

from __future__ import annotations

import base64
import functools
import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import click
import greenstalk

from beanpod.cli.admin_errors import bad_name, connect_failed, session_failed
from beanpod.core.admin import valid_tube_name

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 11300
DEFAULT_TIMEOUT = 10.0  # seconds to connect, and for each reply
UNIX = "unix:"


@dataclass(frozen=True)
class Server:
    """Where the server is (-H HOST -p PORT, or -H unix:PATH) and how long to wait."""

    host: str
    port: int
    timeout: float

    @property
    def where(self) -> str:
        return self.host if self.host.startswith(UNIX) else f"{self.host}:{self.port}"

    def open(self) -> socket.socket:
        """A connected socket with the timeout set (greenstalk takes it as it is)."""
        if not self.host.startswith(UNIX):
            sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            return sock
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.host.removeprefix(UNIX))
        except OSError:
            sock.close()
            raise
        return sock


def server_options(command: F) -> F:
    """-H, -p, --timeout and --json on an admin command, which gets `server` and `as_json`."""

    @functools.wraps(command)
    def with_server(*args: Any, host: str, port: int, timeout: float, **kwargs: Any) -> Any:
        return command(*args, server=Server(host, port, timeout), **kwargs)

    options = (
        click.option("-H", "--host", default=DEFAULT_HOST, show_default=True,
                     help="Server address, or unix:PATH for a unix socket."),
        click.option("-p", "--port", default=DEFAULT_PORT, show_default=True,
                     type=click.IntRange(1, 65535), help="Server port (not with unix:)."),
        click.option("--timeout", default=DEFAULT_TIMEOUT, show_default=True,
                     type=click.FloatRange(0, min_open=True),
                     help="Seconds to wait for the connection and for each reply."),
        click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts)."),
    )  # fmt: skip
    decorated: Any = with_server
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def tube_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback: a tube name beanstalkd would refuse is one line, before any I/O."""
    if value is not None and not valid_tube_name(value):
        raise bad_name(value)
    return value


@contextmanager
def connect(server: Server, use: str = "default") -> Iterator[greenstalk.Client[bytes]]:
    """A connected client; every failure to reach the server or to get a usable reply is
    one line on stderr with its own exit status (admin_errors), never a traceback."""
    try:
        sock = server.open()
    except OSError as exc:
        raise connect_failed(exc, server.where, server.timeout) from exc
    try:
        client: greenstalk.Client[bytes] = greenstalk.Client(sock, encoding=None, use=use)
        try:
            yield client
        finally:
            client.close()
    except Exception as exc:
        error = session_failed(exc, server.where, server.timeout)
        if error is None:
            raise
        raise error from exc
    finally:
        sock.close()


def body_text(body: bytes) -> dict[str, str]:
    """A body for JSON output: text when it is UTF-8, else base64."""
    try:
        return {"body": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(body).decode("ascii")}


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, sort_keys=False))


def emit_mapping(mapping: dict[str, Any]) -> None:
    """`key: value` lines with the values aligned, in the server's order."""
    width = max((len(key) for key in mapping), default=0)
    for key, value in mapping.items():
        click.echo(f"{key + ':':<{width + 1}} {value}")
