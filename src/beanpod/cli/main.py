"""The `beanpod` command group: one module per subcommand group."""

from __future__ import annotations

import click

from beanpod import __version__
from beanpod.cli.admin import COMMANDS as ADMIN_COMMANDS
from beanpod.cli.analyze import analyze
from beanpod.cli.serve import CONTEXT, serve
from beanpod.cli.top import top
from beanpod.cli.wal import wal


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-v", "--version", prog_name="beanpod")
def main() -> None:
    """beanpod: a fast, durable work-queue server speaking the beanstalkd protocol."""


main.add_command(serve)
main.add_command(wal)
main.add_command(analyze)
for command in (*ADMIN_COMMANDS, top):
    main.add_command(command)
