"""The `beanpod` command line."""

from __future__ import annotations

import logging
import sys

import click

from beanpod import __version__
from beanpod.protocols.beanstalkd.wire import MAX_JOB_SIZE_CAP
from beanpod.server.config import DEFAULT_ADDRESS, DEFAULT_PORT, ServerConfig

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-v", "--version", prog_name="beanpod")
def main() -> None:
    """beanpod: a fast, durable work-queue server speaking the beanstalkd protocol."""


def _warn_removed(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        click.echo(f"beanpod: -{param.opts[0][-1]} flag was removed. binlog is always compacted.",
                   err=True)  # fmt: skip
    return value


@main.command(context_settings=CONTEXT)
@click.option(
    "-l",
    "--listen",
    "address",
    default=DEFAULT_ADDRESS,
    show_default=True,
    help="Address to listen on, or unix:/path for a UNIX socket.",
)
@click.option(
    "-p",
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port for the beanstalkd protocol (0 picks a free port).",
)
@click.option(
    "-z",
    "--max-job-size",
    default=65535,
    show_default=True,
    type=click.IntRange(0, MAX_JOB_SIZE_CAP),
    help="Largest job body in bytes.",
)
@click.option("-V", "--verbose", count=True, help="More log output (repeatable).")
@click.option(
    "-c",
    "compact",
    is_flag=True,
    callback=_warn_removed,
    expose_value=False,
    help="Accepted for beanstalkd compatibility; does nothing.",
)
@click.option(
    "-n",
    "no_compact",
    is_flag=True,
    callback=_warn_removed,
    expose_value=False,
    help="Accepted for beanstalkd compatibility; does nothing.",
)
@click.option("--no-uvloop", is_flag=True, help="Use the standard asyncio event loop.")
@click.version_option(__version__, "-v", "--version", prog_name="beanpod")
def serve(address: str, port: int, max_job_size: int, verbose: int, no_uvloop: bool) -> None:
    """Start the server (in memory) on 127.0.0.1:11300."""
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if verbose > 1 else logging.INFO,
        format="%(asctime)s beanpod %(levelname)s %(message)s",
    )
    from beanpod.server.app import serve as run_server

    config = ServerConfig(
        address=address, port=port, max_job_size=max_job_size, verbose=verbose,
        use_uvloop=not no_uvloop,
    )  # fmt: skip
    try:
        run_server(config)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {address}:{port}: {exc.strerror}") from exc
    except KeyboardInterrupt:  # pragma: no cover - SIGINT is handled by the server
        pass
