"""The `beanpod` command group. Each subcommand's module is imported only when that
subcommand runs (or help lists it), so `beanpod serve` does not pay for the admin
commands' greenstalk and rich, or for pyspark."""

from __future__ import annotations

import importlib

import click

from beanpod import __version__, build

CONTEXT = {"help_option_names": ["-h", "--help"]}
# name -> "module:attribute" of the click command
COMMANDS = {
    "analyze": "beanpod.cli.analyze:analyze",
    "delete": "beanpod.cli.admin:delete",
    "drain": "beanpod.cli.admin:drain",
    "kick": "beanpod.cli.admin:kick",
    "pause": "beanpod.cli.admin:pause",
    "peek": "beanpod.cli.admin:peek",
    "put": "beanpod.cli.admin:put",
    "serve": "beanpod.cli.serve:serve",
    "stats": "beanpod.cli.admin:stats",
    "top": "beanpod.cli.top:top",
    "tubes": "beanpod.cli.admin:tubes",
    "wal": "beanpod.cli.wal:wal",
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute = COMMANDS[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return self.commands.get(cmd_name)


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.version_option(
    f"{__version__} ({build.kind()} build)", "-v", "--version", prog_name="beanpod"
)
def main() -> None:
    """beanpod: a fast, durable work-queue server speaking the beanstalkd protocol."""
