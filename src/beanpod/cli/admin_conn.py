"""What every admin command shares: where the server is, how to reach it, how to print.

The admin commands speak the plain beanstalkd protocol (through greenstalk), so they work
against beanpod and against any beanstalkd 1.12."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click
import greenstalk

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 11300
EXIT_NOT_FOUND = 1  # a job or tube the server does not have
EXIT_UNREACHABLE = 2  # no server at HOST:PORT, or it stopped answering


def server_options(command: F) -> F:
    """-H HOST, -p PORT and --json on an admin command."""
    command = click.option("--json", "as_json", is_flag=True, help="Print JSON (for scripts).")(
        command
    )
    command = click.option(
        "-p", "--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(1, 65535),
        help="Server port.",
    )(command)  # fmt: skip
    return click.option(
        "-H", "--host", default=DEFAULT_HOST, show_default=True, help="Server address."
    )(command)


@contextmanager
def connect(host: str, port: int, use: str = "default") -> Iterator[greenstalk.Client[bytes]]:
    """A connected client; a server that cannot be reached or stops answering is one line
    on stderr and exit status 2, never a traceback."""
    try:
        client: greenstalk.Client[bytes] = greenstalk.Client((host, port), encoding=None, use=use)
    except OSError as exc:
        raise Unreachable(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from exc
    try:
        yield client
    except (ConnectionError, TimeoutError) as exc:
        raise Unreachable(f"lost the connection to {host}:{port}: {exc}") from exc
    finally:
        client.close()


class Unreachable(click.ClickException):
    exit_code = EXIT_UNREACHABLE


class NotFound(click.ClickException):
    exit_code = EXIT_NOT_FOUND


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
